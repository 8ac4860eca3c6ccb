/* Warp stall reasons in the CLI (`warplens run --stalls` sessions): the kernel panel's section,
 * the per-kernel-name table and CSV of `warplens kernels --stalls`, the JSON object of
 * `warplens kernels --json`, and the run summary's note. */
#ifndef WARPLENS_TOOLS_STALLS_PRINT_H
#define WARPLENS_TOOLS_STALLS_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "store/session_stalls.h"

/* The table for these kernel names (in this order, the first `shown`); says so when the session
 * has no stall samples. */
void print_stall_table(const wl_stall_set *m, const int64_t *name_ids, char *const *names, const uint64_t *calls,
                       int shown);
/* One CSV row per (kernel name, reason): name,short_name,name_id,launches_sampled,samples,reason,
 * cupti_name,reason_samples,pct,not_issued. */
void print_stall_csv(const wl_stall_set *m, const int64_t *name_ids, char *const *names,
                     char *const *short_names, int shown);
/* ,"stalls":{...} for one group (nothing when it has no samples). */
void print_stall_json(FILE *o, const wl_stall_set *m, int64_t key);
/* Panel lines for one kernel call and for all calls of its name (nothing without stall data). */
void print_stall_panel(wl_session *s, int64_t kernel_id, int64_t name_id);
/* The run summary's lines: samples collected, the period, the serialisation caveat, or why none. */
void print_stall_run_note(wl_session *s, const char *path);

#endif
