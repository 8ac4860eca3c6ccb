/* User ranges in the CLI: the label a range is shown under and the per-name hardware metric
 * table, shared by `warplens ranges` and `warplens stats` (NVTX and scope sections). */
#ifndef WARPLENS_TOOLS_RANGE_PRINT_H
#define WARPLENS_TOOLS_RANGE_PRINT_H

#include <stddef.h>

#include "analysis/range_view.h"

/* "nvtx", "scope" */
const char *range_kind_name(int kind);
/* "name" or "name [domain]" */
const char *range_label(const wl_range_name *n, char *buf, size_t size);
/* The metric table of every range name of one kind (0: both) that holds a measured kernel, by
 * the kernels' GPU time; prints nothing when there is none. */
void print_range_metric_table(wl_range_view *v, int kind);

#endif
