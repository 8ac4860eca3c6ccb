/* The summary tables printed by `warplens stats` and after `warplens run` (fit 100 columns). */
#ifndef WARPLENS_TOOLS_STATS_PRINT_H
#define WARPLENS_TOOLS_STATS_PRINT_H

#include "store/session.h"

#define STATS_WIDTH 100

typedef struct stats_options {
    int kernel_limit; /* rows of the kernels table; 0 = all */
    int csv;          /* machine-readable output instead of tables */
} stats_options;

void print_overview(wl_session *s);
void print_kernel_table(wl_session *s, const stats_options *o);
void print_copy_table(wl_session *s, const stats_options *o);
void print_api_table(wl_session *s, const stats_options *o);
void print_nvtx_table(wl_session *s, const stats_options *o);
void print_scope_table(wl_session *s, const stats_options *o);
void print_sync_table(wl_session *s, const stats_options *o);
void print_lost_table(wl_session *s, const stats_options *o);
/* Timer API intervals; prints nothing when the session has none. Returns the row count. */
int print_timer_table(wl_session *s, const stats_options *o);

#endif
