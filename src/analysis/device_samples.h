/* Attribution of NVML device samples to kernels by time overlap. A sample's value describes its
 * whole window (the time since the previous sample of that device): idle, exact or shared (an
 * upper bound for each kernel), as window_overlap.h explains. */
#ifndef WARPLENS_ANALYSIS_DEVICE_SAMPLES_H
#define WARPLENS_ANALYSIS_DEVICE_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/window_overlap.h"
#include "store/session_samples.h"

typedef struct wl_sample_attribution {
    wl_device_sample_row sample;
    wl_sample_attr_kind kind;
    uint64_t kernels;          /* kernels overlapping the window */
    int64_t kernel_id;         /* exact: the kernel; shared: the one overlapping the window longest; else -1 */
    char kernel_name[256];     /* short name of kernel_id */
    uint64_t busy_ns;          /* union of the kernels' time inside the window */
    wl_window_overlap overlap; /* the computation behind the fields above */
} wl_sample_attribution;

/* Attributes one sample window. Returns 0 or -1 (read error). */
int wl_sample_attribute(wl_session *s, const wl_device_sample_row *r, wl_sample_attribution *out);

/* Every sample of the session in (pid, device, time) order; fn returns non-zero to stop.
 * Returns the number of samples or -1. */
int wl_device_samples_attribute(wl_session *s, int (*fn)(const wl_sample_attribution *, void *), void *arg);

/* The samples whose window overlaps one kernel, attributed; -1 when the kernel has no timestamps. */
int wl_kernel_device_samples(wl_session *s, int64_t kernel_id, int (*fn)(const wl_sample_attribution *, void *),
                             void *arg);

/* Per (pid, device) summary of the samples, for `warplens stats`. */
typedef struct wl_device_sample_summary {
    uint32_t pid, device_id;
    uint64_t samples, exact, shared, idle;
    double gpu_util_mean, mem_util_mean;     /* -1 when never read */
    int64_t gpu_util_max, sm_clock_min, sm_clock_max, mem_clock_max, temperature_max, memory_used_max;
    double power_mean_w, power_max_w;        /* -1 when never read */
    double energy_j;                         /* last - first energy reading, -1 when not read */
} wl_device_sample_summary;
/* *out is malloc'd; returns the number of devices (0 without samples) or -1. */
int wl_device_sample_summaries(wl_session *s, wl_device_sample_summary **out);

#endif
