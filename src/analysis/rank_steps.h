/* Cross-rank step analysis (`warplens ranks`): for each rank of one or several sessions (a merged
 * one, or one per rank: clocks need not agree, only durations are compared) and each step (the
 * k-th range named `step` on the rank): its time, GPU busy (union of kernels, copies and sets in
 * the step), time in collective kernels (NCCL's), time waiting in collectives for the slowest
 * rank (the k-th collective's duration on the rank minus its shortest duration on any rank) and
 * copies. Per step, the straggler is the rank with the most time outside that waiting (it
 * arrives last), and the imbalance is that time's maximum over its mean across ranks, minus 1.
 *
 * Memory: one row per rank and step, and each rank's collectives (16 bytes each). */
#ifndef WARPLENS_ANALYSIS_RANK_STEPS_H
#define WARPLENS_ANALYSIS_RANK_STEPS_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_rank_step {
    uint64_t start_ns, end_ns;
    uint64_t busy_ns, collective_ns, wait_ns;
    uint64_t copies, copy_bytes, copy_ns;
} wl_rank_step;

typedef struct wl_rank_collective {
    uint64_t ns;
    int32_t step; /* the step it started in, -1 none */
} wl_rank_collective;

typedef struct wl_rank {
    int rank;            /* the launcher's rank; -1: none (pid names it) */
    uint32_t pid;        /* its first process */
    char host[128];
    int nsteps;
    wl_rank_step *steps;
    uint64_t ncoll;
    wl_rank_collective *coll; /* its collectives, in start order */
} wl_rank;

typedef struct wl_step_summary {
    int step;
    uint64_t mean_ns, max_ns;     /* step time over the ranks */
    int straggler;                /* index into ranks */
    double imbalance_pct;
} wl_step_summary;

typedef struct wl_rank_report {
    char step_name[256];
    int nranks, nsteps;           /* nsteps: steps every rank has */
    wl_rank *ranks;               /* by rank */
    wl_step_summary *steps;
} wl_rank_report;

/* A rank's steps summed (its straggler_steps: steps where it was the straggler). */
typedef struct wl_rank_total {
    uint64_t time_ns, busy_ns, collective_ns, wait_ns, copies;
    int straggler_steps;
} wl_rank_total;
void wl_rank_total_of(const wl_rank_report *r, int i, wl_rank_total *t);

/* step NULL: the most frequent top-level NVTX range of the first session. 0, or -1 with err. */
int wl_rank_report_build(const char *const *paths, int n, const char *step, wl_rank_report *r, char *err,
                         size_t err_size);
void wl_rank_report_free(wl_rank_report *r);

#endif
