/* Synthetic sessions of one rank of a data-parallel job, for the tests and the benchmark of
 * `warplens merge` and `warplens ranks`: every rank runs the same steps (an NVTX range "step"
 * around compute kernels, a host-to-device copy and one NCCL all-reduce). The ranks' timelines
 * are one deterministic function of (step, rank), so each rank's session is written alone and
 * still agrees with the others: each rank's all-reduce starts when its compute is done and ends
 * when the last rank's compute is done plus the transfer (within 1 us on every rank), as NCCL's
 * do. A planted straggler computes longer; a host's clock offset shifts every time written. */
#ifndef WARPLENS_STORE_SESSION_SYNTH_RANKS_H
#define WARPLENS_STORE_SESSION_SYNTH_RANKS_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_synth_rank_options {
    const char *host;
    uint32_t pid;
    int rank, local_rank, world_size;
    int64_t clock_offset_ns;  /* this host's clock minus the true time */
    int steps;                /* >= 1 */
    int kernels_per_step;     /* compute kernels per step (>= 1); each step also has one all-reduce */
    int straggler;            /* the rank that computes longer, -1 none */
    double slowdown;          /* its compute takes (1 + slowdown) times as long */
} wl_synth_rank_options;

void wl_synth_rank_defaults(wl_synth_rank_options *o);
/* Writes the rank's session to path (atomically). 0, or -1 with err. */
int wl_synth_rank_session(const char *path, const wl_synth_rank_options *o, char *err, size_t err_size);

/* The NCCL kernel's name in these sessions. */
#define WL_SYNTH_NCCL_KERNEL "ncclDevKernel_AllReduce_Sum_f32_RING_LL"

#endif
