/* One row per kernel name for `warplens kernels` and exporters: GPU time statistics with
 * percentiles (wl_session_kernel_summaries), full names, the most frequent launch configuration
 * and its theoretical occupancy, limiter and waves. */
#ifndef WARPLENS_ANALYSIS_KERNEL_TABLE_H
#define WARPLENS_ANALYSIS_KERNEL_TABLE_H

#include "analysis/kernel_occupancy.h"
#include "store/session.h"
#include "store/session_kernels.h"

typedef struct wl_kernel_table_row {
    wl_kernel_summary sum;   /* its name fields are truncated: use name/short_name below */
    char *name, *short_name, *mangled; /* full, malloc'd */
    double time_pct;         /* share of all kernels' GPU time */
    int has_config;
    wl_kernel_config top;    /* the configuration with the most calls */
    int configs;             /* distinct configurations (grid, block, registers, shared memory) */
    wl_kernel_occ occ;       /* occupancy of `top` (status WL_OCC_ERR_DEVICE: device unknown) */
} wl_kernel_table_row;

/* Rows by total GPU time, descending; *out is malloc'd. Returns the count or -1. */
int wl_kernel_table(wl_session *s, wl_occ_cache *cache, wl_kernel_table_row **out);
void wl_kernel_table_free(wl_kernel_table_row *rows, int n);

#endif
