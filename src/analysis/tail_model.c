/* The dispatch model of the tail-effect estimate (tail_model.h): grid time from waves, block time
 * and late starts, the block time solved back from a measured duration, and the whole-wave fix. */
#include "analysis/tail_model.h"

#include <math.h>

static double remainder_q(const wl_tail_shape *s, int64_t rest)
{
    double q = s->sms > 0 ? (double)rest / (double)s->sms : 1.0;
    return q > 1.0 ? 1.0 : q;
}

double wl_tail_time_ns(const wl_tail_shape *s, double block_ns, double delay_ns, double q)
{
    if (s->blocks_per_wave <= 0 || block_ns <= 0)
        return 0;
    int64_t n = s->grid / s->blocks_per_wave, rest = s->grid % s->blocks_per_wave;
    int staggered = s->occupancy_pct > WL_TAIL_STAGGER_ABOVE_PCT;
    double r = staggered ? fmin(block_ns, delay_ns) : 0.0;
    if (q < 0)
        q = remainder_q(s, rest);
    if (n == 0) /* one partial wave: its blocks start at once, the late ones up to R later */
        return block_ns + r * q;
    double t = (double)n * (block_ns + r);
    if (rest > 0) /* the partial wave starts as the full waves' prompt blocks end */
        t += block_ns - r + q * r;
    return t;
}

/* the block time for which the model gives launch_ns (the model grows with the block time) */
static double solve_block_ns(const wl_tail_shape *s, double launch_ns, double delay_ns, double q)
{
    double lo = 0, hi = launch_ns;
    for (int i = 0; i < 100; i++) {
        double mid = 0.5 * (lo + hi);
        if (wl_tail_time_ns(s, mid, delay_ns, q) < launch_ns)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* gain fraction of the fix for one q; *b and *fixed get the block time and the fix's time */
static double fix_gain(const wl_tail_shape *s, double launch_ns, double q, double *b, double *fixed)
{
    int64_t n = s->grid / s->blocks_per_wave;
    wl_tail_shape f = *s;
    f.grid = n * s->blocks_per_wave;
    *b = solve_block_ns(s, launch_ns, WL_TAIL_DELAY_TRACED_NS, q);
    /* the same block-ns in n whole waves: each block does grid / (n x per wave) of a block's work */
    *fixed = wl_tail_time_ns(&f, *b * (double)s->grid / (double)f.grid, WL_TAIL_DELAY_TRACED_NS, 0);
    double g = launch_ns > 0 ? 1.0 - *fixed / launch_ns : 0;
    return g > 0 ? g : 0;
}

int wl_tail_estimate_fix(const wl_tail_shape *s, double launch_ns, wl_tail_estimate *out)
{
    if (s->blocks_per_wave <= 0 || s->grid <= s->blocks_per_wave || s->grid % s->blocks_per_wave == 0 ||
        launch_ns <= 0)
        return -1;
    int64_t n = s->grid / s->blocks_per_wave, rest = s->grid % s->blocks_per_wave;
    out->staggered = s->occupancy_pct > WL_TAIL_STAGGER_ABOVE_PCT;
    double q = remainder_q(s, rest), b0, f0, b1, f1;
    out->gain_frac = fix_gain(s, launch_ns, q, &out->block_ns, &out->fixed_ns);
    double g0 = fix_gain(s, launch_ns, 0, &b0, &f0), g1 = fix_gain(s, launch_ns, 1, &b1, &f1);
    out->gain_frac_low = fmin(g0, g1);
    out->gain_frac_high = fmax(g0, g1);
    /* without a profiler the late blocks start sooner: the same blocks, the untraced delay */
    wl_tail_shape f = *s;
    f.grid = n * s->blocks_per_wave;
    double planted = wl_tail_time_ns(s, out->block_ns, WL_TAIL_DELAY_UNTRACED_NS, q);
    double fixed = wl_tail_time_ns(&f, out->block_ns * (double)s->grid / (double)f.grid, WL_TAIL_DELAY_UNTRACED_NS, 0);
    out->gain_frac_untraced = planted > 0 && fixed < planted ? 1.0 - fixed / planted : 0;
    return 0;
}
