/* CUPTI's profiler host API, as the range profiler (--metrics) and PM sampling (--pm-sampling) both
 * use it: a host object per chip, the metric configuration image and its pass count, why a device
 * is unsupported, and close names for a metric the chip does not know. */
#ifndef WARPLENS_CAPTURE_PROFILER_HOST_H
#define WARPLENS_CAPTURE_PROFILER_HOST_H

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <stddef.h>
#include <stdint.h>

/* The common start of a profiler's set-up on one device: CUPTI's profiler interface initialised
 * (once per process), the support check for `api`, the chip name into chip. CUPTI_SUCCESS, or the
 * failing result with the step that failed in words into step (CUPTI_ERROR_NOT_SUPPORTED when the
 * device is not supported, the step then saying why). */
CUptiResult wl_profiler_device_begin(uint32_t device, CUpti_Profiler_API api, char *chip, size_t chip_size, char *step,
                                     size_t step_size);
/* A host object of `type` for `chip`. `availability` (the counter availability image) must outlive
 * the object: CUPTI reads it later (freeing it early crashed ConfigAddMetrics on the H100). */
CUptiResult wl_profiler_host_new(CUpti_ProfilerType type, const char *chip, const uint8_t *availability, void **host);
/* NULL is ignored; a failure is logged once, naming `who` (e.g. "PM sampling"). */
void wl_profiler_host_free(void *host, const char *who);
/* Adds the metrics to the host object (this cannot be undone) and builds the configuration image,
 * malloc'd into *image. */
CUptiResult wl_profiler_config(void *host, const char *const *names, size_t n, uint8_t **image, size_t *size);
CUptiResult wl_profiler_passes(const uint8_t *image, size_t size, size_t *passes);

/* host_metric_names.c: up to 3 names of the chip's own base metrics close to `name`, comma-separated
 * with name's submetric suffix, into out ("" when none). */
void wl_host_close_metric_names(void *host, const char *name, char *out, size_t n);

#endif
