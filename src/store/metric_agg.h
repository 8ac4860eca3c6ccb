/* Hardware metrics of many kernels combined from summed raw counters (`warplens kernels`, the
 * kernel panel, scopes): a counter is added; a catalog ratio value = num/den is combined as
 * sum(value*den)/sum(den), which is sum(num)/sum(den) exactly; a metric without a catalog rule
 * (and not a .sum counter) is weighted by GPU time. Averaging per-kernel ratios never happens:
 * DRAM bandwidth is sum(bytes) / sum(time). */
#ifndef WARPLENS_STORE_METRIC_AGG_H
#define WARPLENS_STORE_METRIC_AGG_H

#include <stdint.h>

#include "capfile/metric_spec.h"

typedef struct wl_metric_acc {
    int n;
    const char *names[WL_METRICS_MAX]; /* the caller's strings, kept alive by it */
    int den[WL_METRICS_MAX][2];  /* indices of the denominators; -1 none; -2 for "weight by time" */
    int time_idx;                /* gpu__time_duration.sum, -1 if absent */
    double num[WL_METRICS_MAX];  /* SUM: sum of values; ratio: sum of value*den */
    double wsum[WL_METRICS_MAX]; /* ratio: sum of den */
    uint64_t kernels;            /* kernels added */
} wl_metric_acc;

/* Values of the common metrics, NaN where the metrics were not collected. */
typedef struct wl_metric_summary {
    double gpu_time_ns, occupancy_pct, dram_read_bytes, dram_write_bytes, dram_bytes_per_s, dram_pct;
    double l1_hit_pct, l2_hit_pct, fp32_flop, fp16_flop, fp64_flop, tensor_inst, tensor_pct, inst_executed;
} wl_metric_summary;

/* The summary's fields by name, in the struct's order: the keys of JSON, CSV and report output. */
enum { WL_METRIC_SUMMARY_FIELDS = 14 };
extern const char *const WL_METRIC_SUMMARY_KEYS[WL_METRIC_SUMMARY_FIELDS];
void wl_metric_summary_values(const wl_metric_summary *s, double out[WL_METRIC_SUMMARY_FIELDS]);

void wl_metric_acc_init(wl_metric_acc *a, const char *const *names, int n);
int wl_metric_acc_index(const wl_metric_acc *a, const char *name); /* -1 if absent */
/* One kernel's values (index as in names; NaN = not available). */
void wl_metric_acc_add(wl_metric_acc *a, const double *values);
double wl_metric_acc_value(const wl_metric_acc *a, int i); /* NaN when nothing was added */
void wl_metric_acc_summary(const wl_metric_acc *a, wl_metric_summary *out);

#endif
