/* Hardware metrics of a session (`warplens run --metrics`), combined per group of kernels from
 * summed counters (analysis/metric_agg.h): per kernel name or per user scope. Sessions made
 * before metrics existed have no metric tables: they read as "no metrics". */
#ifndef WARPLENS_STORE_SESSION_METRICS_H
#define WARPLENS_STORE_SESSION_METRICS_H

#include <stdint.h>

#include "analysis/metric_agg.h"
#include "store/session.h"

enum wl_metric_group_by { WL_METRICS_BY_NAME = 0, WL_METRICS_BY_SCOPE = 1, WL_METRICS_BY_KERNEL = 2 };

typedef struct wl_metric_set {
    int n;                                         /* metrics (0: the session has none) */
    char names[WL_METRICS_MAX][WL_METRIC_NAME_MAX];
    int max_passes;                                /* replay passes (largest over devices) */
    int kernel_replay;                             /* 1: some device replayed kernels (or the session
                                                    * predates the replay column): no kernel timestamps */
    uint64_t ranges, unlinked;                     /* ranges recorded; those without a kernel */
    char status[200];                              /* why metrics were off somewhere ("" if not) */
    int ngroups;
    int64_t *keys;                                 /* kernel_name id, scope id or kernel id */
    wl_metric_acc *accs;
} wl_metric_set;

/* Reads and combines; 0 on success (also when there are no metrics), -1 on a database error. */
int wl_session_metrics(wl_session *s, enum wl_metric_group_by by, wl_metric_set *out);
const wl_metric_acc *wl_metric_set_find(const wl_metric_set *m, int64_t key);
void wl_metric_set_free(wl_metric_set *m);

#endif
