/* The ranks of a job in the HTML report (a merged session, or a session of several ranks): the
 * table `warplens ranks` prints (per rank: steps, mean step time, GPU busy, collectives, waiting
 * for the slowest rank, copies, steps as the straggler) and each step's straggler and imbalance
 * (analysis/rank_steps.h), for the report's rank table and per-step imbalance chart. */
#ifndef WARPLENS_EXPORT_REPORT_RANKS_H
#define WARPLENS_EXPORT_REPORT_RANKS_H

#include "export/json_out.h"
#include "store/session.h"

/* Writes ,"ranks":{...} into the report's data when s has two ranks or more with steps (the
 * most frequent top-level NVTX range); nothing otherwise. Returns 1 when written, else 0. */
int wl_report_ranks(wl_json_out *j, wl_session *s);

#endif
