/* Hardware metrics of a session (`warplens run --metrics`): combined per group of kernels from
 * summed counters (store/metric_agg.h) per kernel name or per kernel, and each kernel's own
 * values in one compact table for views that form their own groups (user ranges, exports).
 * Sessions made before metrics existed have no metric tables: they read as "no metrics". */
#ifndef WARPLENS_STORE_SESSION_METRICS_H
#define WARPLENS_STORE_SESSION_METRICS_H

#include <stdint.h>

#include "store/metric_agg.h"
#include "store/session.h"

enum wl_metric_group_by { WL_METRICS_BY_NAME = 0, WL_METRICS_BY_KERNEL = 2 };

typedef struct wl_metric_set {
    int n;                                         /* metrics (0: the session has none) */
    char names[WL_METRICS_MAX][WL_METRIC_NAME_MAX];
    int max_passes;                                /* replay passes (largest over devices) */
    int kernel_replay;                             /* 1: some device replayed kernels (or the session
                                                    * predates the replay column): no kernel timestamps */
    uint64_t ranges, unlinked;                     /* ranges recorded; those not tied to an activity */
    char status[200];                              /* why metrics were off somewhere ("" if not) */
    int ngroups;
    int64_t *keys;                                 /* kernel_name id or kernel id */
    wl_metric_acc *accs;
} wl_metric_set;

/* 1 when at least one kernel has hardware metrics (an index probe; 0 for sessions without the
 * metric tables). */
int wl_session_has_metrics(wl_session *s);

/* Reads and combines; 0 on success (also when there are no metrics), -1 on a database error. */
int wl_session_metrics(wl_session *s, enum wl_metric_group_by by, wl_metric_set *out);
const wl_metric_acc *wl_metric_set_find(const wl_metric_set *m, int64_t key);
void wl_metric_set_free(wl_metric_set *m);

/* Hardware metrics of copies and sets (ranges tied to a copy or set call), one group per label
 * ("memcpy HtoD", "memcpy DtoD", "memset device", ...; keys 0..n-1 in labels' order); a group's
 * count is its calls, their ranges' counters summed. 0 also when there are none (m->ngroups 0). */
int wl_session_copy_metrics(wl_session *s, wl_metric_set *m, char (*labels)[32], int max_labels);

/* What the session's metric ranges measured (docs/schema.md, metric_range); zeros for sessions
 * made before metric_range. */
typedef struct wl_metric_ranges {
    uint64_t ranges;
    uint64_t kernels, graph_nodes, copies, sets, graph_launches, internal; /* tied, by kind */
    uint64_t untied;                                                       /* kept, not tied */
    uint64_t by_order, isolated, by_signature;                             /* how they were tied */
    uint64_t launches_without;   /* profiled kernel launches that got no range of their own */
} wl_metric_ranges;
int wl_session_metric_ranges(wl_session *s, wl_metric_ranges *out);

/* Each measured kernel's values: row i is kernel_ids[i] (ascending), values[i*n .. i*n+n-1] in
 * the order of names, NaN where CUPTI gave none. Memory: 8 bytes per metric and kernel (metrics
 * mode replays every kernel, so sessions with metrics hold thousands of kernels, not millions). */
typedef struct wl_kernel_metrics {
    int n;                                         /* metrics (0: the session has none) */
    char names[WL_METRICS_MAX][WL_METRIC_NAME_MAX];
    int max_passes;
    size_t count;                                  /* kernels with values */
    int64_t *kernel_ids;
    double *values;
} wl_kernel_metrics;

/* 0 on success (also without metrics: n = 0), -1 on a database error or out of memory. */
int wl_session_kernel_metrics(wl_session *s, wl_kernel_metrics *out);
/* The values of one kernel, NULL when it has none. */
const double *wl_kernel_metrics_find(const wl_kernel_metrics *km, int64_t kernel_id);
void wl_kernel_metrics_free(wl_kernel_metrics *km);

#endif
