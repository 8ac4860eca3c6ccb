/* PM samples of a session (`warplens run --pm-sampling`: tables pm_config, pm_metric, pm_sample)
 * and the kernels of a physical GPU in start order, the two streams the attribution sweeps
 * together. Sessions recorded before the tables existed have no PM samples: every function here
 * checks for the tables first. */
#ifndef WARPLENS_STORE_SESSION_PM_H
#define WARPLENS_STORE_SESSION_PM_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"
#include "store/session_samples.h"

#define WL_PM_SAMPLE_METRICS 64

/* 1 when the session has the pm_sample table with at least one row. */
int wl_session_has_pm_samples(wl_session *s);

typedef struct wl_pm_metric_row {
    uint32_t pid, device_id, metric_index;
    char name[128], unit[40], metric_type[16];
    int additive;                       /* values add up over time (wl_pm_metric_additive) */
    uint64_t interval_ns;               /* the device's configured interval, 0 unknown */
} wl_pm_metric_row;
/* Every metric in (pid, device, index) order; *out malloc'd (NULL when none). Returns count or -1. */
int wl_session_pm_metrics(wl_session *s, wl_pm_metric_row **out);

typedef struct wl_pm_config_row {
    uint32_t pid, device_id;
    uint64_t interval_ns;
    char status[8];                     /* "on" or "off" */
    char detail[2048];                  /* the recorder's status lines, newline-separated */
} wl_pm_config_row;
int wl_session_pm_configs(wl_session *s, wl_pm_config_row **out);

/* One window with every metric value of it. */
typedef struct wl_pm_sample_row {
    uint32_t pid, device_id;
    uint64_t sample_index, start_ns, end_ns;
    uint64_t valid;                     /* bit i: values[i] was given (not NULL) */
    double values[WL_PM_SAMPLE_METRICS];
} wl_pm_sample_row;

typedef struct wl_pm_cursor wl_pm_cursor;
/* Windows in (pid, device, start) order; pid < 0: every device, else only (pid, device) and only
 * windows overlapping [from_ns, to_ns) (windows last at most 2 s: the recorder's interval is at
 * most 1 s). NULL when there is no table or the query fails. */
wl_pm_cursor *wl_pm_cursor_open(wl_session *s, int64_t pid, uint32_t device, uint64_t from_ns, uint64_t to_ns);
/* 1 with the next window, 0 at the end, -1 on a read error. */
int wl_pm_cursor_next(wl_pm_cursor *c, wl_pm_sample_row *out);
void wl_pm_cursor_close(wl_pm_cursor *c);

typedef struct wl_gpu_kernel_cursor wl_gpu_kernel_cursor;
/* Kernels with timestamps on the physical GPU of (pid, device) (same PCI bus id in any process;
 * the same (pid, device) when the bus id is unknown) that end after from_ns, in start order. */
wl_gpu_kernel_cursor *wl_gpu_kernels_open(wl_session *s, uint32_t pid, uint32_t device, uint64_t from_ns);
/* 1 with the next kernel (short_name valid until the next call), 0 at the end, -1 on error. */
int wl_gpu_kernels_next(wl_gpu_kernel_cursor *c, wl_window_kernel *out);
void wl_gpu_kernels_close(wl_gpu_kernel_cursor *c);

typedef struct wl_pm_metric_stats {
    uint64_t windows;                   /* windows with a value */
    double min, median, max, mean, sum;
} wl_pm_metric_stats;
/* Statistics of one metric's per-window values (median: the lower middle value). 0 or -1. */
int wl_session_pm_metric_stats(wl_session *s, uint32_t pid, uint32_t device, uint32_t index, wl_pm_metric_stats *out);

typedef struct wl_pm_long_windows {
    uint64_t count;                     /* windows of (pid, device) longer than the limit */
    uint64_t longest_ns, longest_start_ns;
} wl_pm_long_windows;
/* Windows longer than longer_than_ns: where the GPU-time trigger fired late (seen on the H100 for the
 * first window when the GPU idles as sampling starts). Their counters cover their whole span. 0 or -1. */
int wl_session_pm_long_windows(wl_session *s, uint32_t pid, uint32_t device, uint64_t longer_than_ns,
                               wl_pm_long_windows *out);

/* PM samples the recorder lost (lost table, source pm_samples), per process and device summed. */
uint64_t wl_session_pm_lost(wl_session *s);

#endif
