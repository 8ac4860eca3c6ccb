/* The dispatch model behind the tail-effect estimate of `warplens advise` (docs/advise.md, "Tail
 * effect"): how long a grid of equal blocks takes, in terms of its waves, the block time and how the
 * GPU starts the blocks of a wave, measured on the H100 by bench/bench_tail_dispatch.cu.
 *
 * A kernel whose theoretical occupancy leaves at least half the SM's warp slots free
 * (occupancy <= 50 %) starts every block of a wave at once: a grid of x waves of blocks of b ns
 * takes ceil(x) * b (the ideal wave model; measured within 1 % at 1 and 4 blocks per SM).
 * A kernel that fills more of the SM (measured at 75 % and 100 %) starts only part of each SM's
 * blocks at once; the others start up to R = min(b, D) later, so each full wave takes b + R, and a
 * last partial wave of `rest` blocks ends b - R + q R after the full waves, q = min(1, rest / SMs)
 * (one block: q = 0, absorbed in the late starts; a tenth of a wave: q ~ 1). D is the late-start
 * delay: 93 us under CUPTI kernel tracing (what a session's durations are measured under), 33 us
 * without a profiler. The block time b is not recorded: it is solved from the measured duration. */
#ifndef WARPLENS_ANALYSIS_TAIL_MODEL_H
#define WARPLENS_ANALYSIS_TAIL_MODEL_H

#include <stdint.h>

/* Late-start delays measured on the H100 (bench/results/tail-dispatch-h100.md). */
#define WL_TAIL_DELAY_TRACED_NS 93000.0
#define WL_TAIL_DELAY_UNTRACED_NS 33000.0
/* Above this theoretical occupancy (% of the SM's warps) the blocks of a wave start staggered. */
#define WL_TAIL_STAGGER_ABOVE_PCT 50.0

typedef struct wl_tail_shape {
    int64_t grid;          /* blocks */
    int64_t blocks_per_wave;
    int sms;
    double occupancy_pct;  /* theoretical, of the SM's warps */
} wl_tail_shape;

typedef struct wl_tail_estimate {
    int staggered;         /* 1 when the blocks of a wave start staggered (occupancy > 50 %) */
    double block_ns;       /* block time solved from the measured duration */
    double fixed_ns;       /* the whole-wave grid's time per launch (same block-ns, floor(waves) waves) */
    double gain_frac;      /* 1 - fixed / measured, >= 0 */
    double gain_frac_low;  /* the same with q = 1 and q = 0: the range the model's q spans */
    double gain_frac_high;
    double gain_frac_untraced; /* the gain the model gives without a profiler (D = 33 us) */
} wl_tail_estimate;

/* Model time of a grid of `shape` with blocks of block_ns, late-start delay delay_ns and the
 * remainder's share q (negative: min(1, rest / SMs)). */
double wl_tail_time_ns(const wl_tail_shape *shape, double block_ns, double delay_ns, double q);

/* Estimate of the whole-wave fix for a launch of `shape` measured at launch_ns under CUPTI.
 * Returns 0, or -1 when the shape has no partial wave after at least one full wave. */
int wl_tail_estimate_fix(const wl_tail_shape *shape, double launch_ns, wl_tail_estimate *out);

#endif
