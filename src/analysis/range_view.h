/* User ranges with what they contain (`warplens ranges`, `warplens stats`, the trace exports and
 * the report): per range and per range name (kind, domain, name), the kernels launched inside
 * (range_attrib.h) with their GPU time, and their hardware metrics combined from summed raw
 * counters (metric_agg.h: ratios as sum(num)/sum(den), never a mean of per-kernel ratios). A name
 * counts each kernel once, even when ranges of that name nest. Memory grows with the ranges,
 * the kernels read and the (range, kernel) pairs. */
#ifndef WARPLENS_ANALYSIS_RANGE_VIEW_H
#define WARPLENS_ANALYSIS_RANGE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "store/metric_agg.h"
#include "analysis/range_attrib.h"
#include "store/session_metrics.h"
#include "store/session_ranges.h"

typedef struct wl_range_totals {
    uint64_t ranges, open;              /* instances; those never closed */
    uint64_t total_ns, min_ns, max_ns;  /* durations of the closed instances (0 when none closed) */
    double mean_ns;
    uint64_t kernels;                   /* distinct kernels launched inside */
    uint64_t timed_kernels, gpu_ns;     /* those with GPU timestamps, their summed GPU time */
    uint64_t measured;                  /* those with hardware metrics */
} wl_range_totals;

typedef struct wl_range_view {
    wl_user_ranges r;
    wl_kernel_launch *launches;         /* in kernel id order */
    size_t n_launches;
    wl_range_members members;
    wl_kernel_metrics metrics;          /* metrics.n == 0: the session has none */
    const char *metric_names[WL_METRICS_MAX];
    wl_metric_acc blank;                /* initialised once; copied to start each accumulator */
    long *metric_row;                   /* per launch: its row in metrics, -1 none */
    size_t *name_first;                 /* n_names + 1 offsets into by_name */
    uint32_t *by_name;                  /* range indices grouped by name */
    uint32_t *by_key;                   /* range indices ordered by (kind, pid, id) */
    uint32_t *stamp, gen;               /* per launch: last name that counted it */
} wl_range_view;

/* only_measured: read only the kernels with hardware metrics (the exports need no more); the
 * totals then count those. 0, or -1 with err set. */
int wl_range_view_open(wl_session *s, int only_measured, wl_range_view *v, char *err, size_t err_size);
void wl_range_view_close(wl_range_view *v);

/* The range of that kind, pid and id (nvtx_range.id or scope_id), -1 when there is none. */
long wl_range_view_find(const wl_range_view *v, wl_range_kind kind, uint32_t pid, int64_t id);
/* Totals of one range / of every range of a name; acc (may be NULL) gets their kernels' metrics
 * (initialised here; acc->kernels = 0 when none was measured). */
void wl_range_view_instance(wl_range_view *v, size_t range, wl_range_totals *t, wl_metric_acc *acc);
void wl_range_view_name(wl_range_view *v, size_t name_idx, wl_range_totals *t, wl_metric_acc *acc);

#endif
