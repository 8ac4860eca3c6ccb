/* Placing decoded in-kernel lanes on the global timeline (see wl_ik_place in inkernel_decode.h).
 *
 * Why not "align the first event with the kernel start": the first record is written some
 * unknown time after the kernel starts (launch ramp, prologue, waiting for a barrier), so that
 * guess is biased by a different amount in every kernel. What can be measured is the offset
 * between the clocks (realtime - %globaltimer), once per process, by a ping-pong between host and
 * GPU; the kernel's CUPTI [start, end] then only serves to pick the 2^32 ns epoch of the 32-bit
 * timer and to check the result: every event must lie inside the kernel. */
#include "analysis/inkernel_decode.h"

#include <string.h>

#define EPOCH (INT64_C(1) << 32)
#define TIMER_STEP_NS 64 /* %globaltimer advances in 32 ns steps, sometimes 64 (docs) */

static void perr(wl_ik_error *err, const char *msg)
{
    if (!err)
        return;
    err->word = 0;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
}

/* floor(a / b) for b > 0 */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b) != 0 && a < 0)
        q--;
    return q;
}

int wl_ik_place(const wl_ik_result *r, uint64_t kernel_start_ns, uint64_t kernel_end_ns,
                const wl_ik_calibration *calib, wl_ik_placement *out, wl_ik_error *err)
{
    memset(out, 0, sizeof *out);
    if (!r || r->counts.lanes_seen == 0) {
        perr(err, "no decoded events to place");
        return -1;
    }
    if (kernel_end_ns < kernel_start_ns) {
        perr(err, "kernel end precedes kernel start");
        return -1;
    }
    const uint64_t lim = UINT64_C(1) << 62;
    if (kernel_end_ns >= lim || r->max_ts >= lim) {
        perr(err, "timestamps out of range for placement");
        return -1;
    }
    const int64_t first = (int64_t)r->min_ts, last = (int64_t)r->max_ts;
    out->feasible_lo_ns = (int64_t)kernel_start_ns - first;
    out->feasible_hi_ns = (int64_t)kernel_end_ns - last;
    const int64_t lo = out->feasible_lo_ns, hi = out->feasible_hi_ns;

    if (!calib) {
        out->method = WL_IK_PLACE_WINDOW;
        out->delta_ns = lo + (hi - lo) / 2;
        out->uncertainty_ns = (uint64_t)(hi >= lo ? hi - lo : lo - hi) / 2;
        return 0;
    }
    /* The decoded times are %globaltimer mod 2^32 (unwrapped): choose the epoch that puts the
     * first event nearest the kernel start on the GPU clock. */
    const int64_t c = calib->realtime_minus_globaltimer_ns;
    const int64_t g_start = (int64_t)kernel_start_ns - c;
    const int64_t n = floor_div(g_start - first + EPOCH / 2, EPOCH);
    int64_t delta = n * EPOCH + c;
    const int64_t tol = (int64_t)(calib->uncertainty_ns > (uint64_t)INT32_MAX
                                      ? INT32_MAX
                                      : calib->uncertainty_ns) + TIMER_STEP_NS;
    out->method = WL_IK_PLACE_CALIBRATED;
    out->uncertainty_ns = calib->uncertainty_ns;
    if (lo <= hi) {
        int64_t target = delta;
        if (delta < lo - tol)
            target = lo;
        else if (delta > hi + tol)
            target = hi;
        if (target != delta) {
            /* the calibration disagrees with the kernel record: trust the record's bounds */
            out->method = WL_IK_PLACE_CLAMPED;
            out->clamp_ns = target - delta;
            out->uncertainty_ns = (uint64_t)(hi - lo);
            delta = target;
        } else if (delta < lo || delta > hi) {
            /* agrees within its uncertainty but would put events just outside the kernel: move to
             * the nearest bound (still CALIBRATED; the move is in clamp_ns) */
            target = delta < lo ? lo : hi;
            out->clamp_ns = target - delta;
            delta = target;
        }
    }
    out->delta_ns = delta;
    return 0;
}
