/* PM sampling metrics (`warplens run --pm-sampling`): the presets, the expansion of a user's list,
 * short labels for tables and trace tracks, and how a metric's per-window values combine over time.
 * Shared by the CLI (checks the list before the run), the recorder (expands it again) and the
 * analysis and exporters (labels, sums or averages). Pure C, no CUDA. */
#ifndef WARPLENS_CAPFILE_PM_METRIC_SPEC_H
#define WARPLENS_CAPFILE_PM_METRIC_SPEC_H

#include <stddef.h>

#include "capfile/metric_spec.h"

#define WL_PM_METRICS_MAX 64 /* metrics sampled at once (the capture's index limit) */
#define WL_PM_DEFAULT_INTERVAL_US 100u
#define WL_PM_MIN_INTERVAL_US 10u
#define WL_PM_MAX_INTERVAL_US 1000000u

/* The preset names, NULL-terminated: default, memory, compute. */
extern const char *const WL_PM_PRESETS[];

/* Expands "default", "memory,dram__bytes_read.sum" ... into CUPTI metric names (presets expanded,
 * duplicates removed). from_preset[i] (may be NULL) says whether names[i] came from a preset only:
 * the recorder leaves out preset metrics that do not fit one pass on the GPU at hand but refuses a
 * list the user named. Words without "__" are presets. Returns the count, or -1 with one line in
 * err (an unknown preset gets the close names and the list of presets). */
int wl_pm_metrics_expand(const char *spec, char names[][WL_METRIC_NAME_MAX], int *from_preset, int max, char *err,
                         size_t err_size);

/* Short label for tables and trace tracks ("SM active", "DRAM read"), else the name itself. */
const char *wl_pm_metric_label(const char *name);

/* 1 when a metric's per-window values add up over time (a raw counter such as bytes or cycles:
 * `<base>.sum|avg|max|min` of a counter), 0 when they are levels to be averaged (percentages,
 * ratios, throughputs, rates). metric_type: CUPTI's (0 counter, 1 ratio, 2 throughput), -1 unknown. */
int wl_pm_metric_additive(const char *name, int metric_type);

#endif
