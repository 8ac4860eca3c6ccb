/* Hardware metrics in the CLI (`warplens run --metrics` sessions): the per-kernel-name table of
 * `warplens kernels` (its columns and rows also serve the per-range tables), the kernel panel's
 * section, the JSON object, and the run summary's note. */
#ifndef WARPLENS_TOOLS_METRICS_PRINT_H
#define WARPLENS_TOOLS_METRICS_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "store/session_metrics.h"

/* The table for these kernel names (in this order); prints nothing when the session has no metrics. */
void print_metric_table(const wl_metric_set *m, const int64_t *name_ids, char *const *names, int n);
/* The header line of a metric table (lead: the header of the count column) and one row: the
 * count of measured kernels, the combined metrics, the label (shortened). */
void print_metric_columns(const char *lead);
void print_metric_row(const wl_metric_acc *a, const char *label);
/* The same, narrower (the overview keeps to 100 columns; the full table is one command away). */
void print_metric_columns_compact(const char *lead);
void print_metric_row_compact(const wl_metric_acc *a, const char *label);
/* ,"metrics":{...} of one accumulator; of one group of a set (nothing when absent). */
void print_metric_acc_json(FILE *o, const wl_metric_acc *a, int passes);
void print_metric_json(FILE *o, const wl_metric_set *m, int64_t key);
/* Panel lines for one kernel call and for all calls of its name. */
void print_metric_panel(wl_session *s, int64_t kernel_id, int64_t name_id);
/* The run summary's lines: metrics collected, passes, what the ranges measured, the timing
 * caveat, or why none. */
void print_metric_run_note(wl_session *s);
/* `warplens stats`: hardware metrics of copies and sets, per kind (nothing when none). */
void print_copy_metric_table(wl_session *s);

#endif
