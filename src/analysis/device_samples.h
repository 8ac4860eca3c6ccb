/* Attribution of NVML device samples to kernels by time overlap. A sample's value describes its
 * whole window (the time since the previous sample of that device), so:
 *  - idle:   no kernel ran on the device during the window;
 *  - exact:  one kernel ran in it: the value belongs to that kernel (diluted by the window's idle
 *            part, which busy_ns shows);
 *  - shared: several kernels overlapped the window: each is given the whole value, flagged as an
 *            upper bound, because NVML cannot say how the device was split between them. */
#ifndef WARPLENS_ANALYSIS_DEVICE_SAMPLES_H
#define WARPLENS_ANALYSIS_DEVICE_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "store/session_samples.h"

typedef enum wl_sample_attr_kind { WL_SAMPLE_IDLE = 0, WL_SAMPLE_EXACT = 1, WL_SAMPLE_SHARED = 2 } wl_sample_attr_kind;

typedef struct wl_sample_attribution {
    wl_device_sample_row sample;
    wl_sample_attr_kind kind;
    uint64_t kernels;          /* kernels overlapping the window */
    int64_t kernel_id;         /* exact: the kernel; shared: the one overlapping the window longest; else -1 */
    char kernel_name[256];     /* short name of kernel_id */
    uint64_t busy_ns;          /* union of the kernels' time inside the window */
} wl_sample_attribution;

const char *wl_sample_attr_name(wl_sample_attr_kind k); /* "idle", "exact", "shared (upper bound)" */

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
