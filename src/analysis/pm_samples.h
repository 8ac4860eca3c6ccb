/* Attribution of CUPTI PM samples (`warplens run --pm-sampling`) to kernels by time overlap, the
 * rule of window_overlap.h: a window is exact when one kernel ran on that physical GPU during it,
 * shared (an upper bound for each kernel) when several did, idle when none. Copies and memsets
 * are not kernels: DRAM or PCIe bytes of a window include any copy that ran in it.
 *
 * Per kernel, the windows overlapping it are combined: metrics whose values add up over time
 * (bytes, cycles, instructions: wl_pm_metric_additive) are summed over those windows, whole, since
 * an exact window's count belongs to the one kernel even where it covers only part of the window;
 * levels (percentages, ratios) are averaged weighted by the kernel's time inside each window. The
 * kernel is exact when every one of its windows was, else shared and its values upper bounds.
 *
 * One sweep per device: windows in time order against the GPU's kernels in start order, holding
 * only the kernels running at the time. */
#ifndef WARPLENS_ANALYSIS_PM_SAMPLES_H
#define WARPLENS_ANALYSIS_PM_SAMPLES_H

#include <stdint.h>

#include "analysis/window_overlap.h"
#include "store/session_pm.h"

typedef struct wl_pm_attribution {
    const wl_pm_sample_row *sample;
    wl_sample_attr_kind kind;
    uint64_t kernels, busy_ns;
    int64_t kernel_id;                 /* exact: the kernel; shared: the longest overlap; else -1 */
    const char *kernel_name;           /* its short name ("" none); valid during the callback */
} wl_pm_attribution;

typedef struct wl_pm_kernel_values {
    int64_t kernel_id;
    uint32_t pid, device_id;           /* the kernel's process and device */
    uint32_t sample_pid, sample_device;/* whose PM samples (metric indices refer to them) */
    char name[256];
    uint64_t start_ns, end_ns;
    uint64_t windows, exact_windows, shared_windows;
    wl_sample_attr_kind kind;          /* exact: all its windows exact; shared: values are upper bounds */
    uint64_t valid;                    /* bit i: values[i] has data */
    double values[WL_PM_SAMPLE_METRICS];
    double weight_ns[WL_PM_SAMPLE_METRICS]; /* levels: the time the average is over */
} wl_pm_kernel_values;

typedef struct wl_pm_walk {
    /* each may be NULL; non-zero return stops the walk */
    int (*window)(const wl_pm_attribution *a, void *arg);
    int (*kernel)(const wl_pm_kernel_values *k, void *arg); /* when the sweep has passed the kernel */
    void *arg;
    uint64_t from_ns, to_ns;           /* only windows overlapping [from, to); to = 0: all */
} wl_pm_walk;

/* Sweeps the windows of every (pid, device) that has PM metrics. metrics: wl_session_pm_metrics.
 * Returns the number of windows visited or -1 (read error, out of memory). */
int wl_pm_attribute(wl_session *s, const wl_pm_metric_row *metrics, int nmetrics, const wl_pm_walk *walk);

#endif
