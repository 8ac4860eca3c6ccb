/* %globaltimer <-> CUPTI clock offset by interval intersection, and drift (clock_fit.h). */
#include "common/clock_fit.h"

#include <string.h>

#define LIM (INT64_C(1) << 62) /* timestamps beyond this are not nanoseconds since 1970 */

int wl_clock_intersect(const wl_clock_sample *s, size_t n, uint64_t step_ns, wl_clock_fit *out)
{
    if (step_ns > 1000000) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return wl_clock_intersect_floors(s, n, -(int64_t)step_ns, 0, out);
}

int wl_clock_intersect_floors(const wl_clock_sample *s, size_t n, int64_t start_floor_ns, int64_t end_floor_ns,
                              wl_clock_fit *out)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    uint32_t used = 0;
    out->offset_ns = 0;
    out->uncertainty_ns = 0;
    out->lo_ns = out->hi_ns = 0;
    out->used = 0;
    if (start_floor_ns < -1000000 || start_floor_ns > 1000000 || end_floor_ns < -1000000 || end_floor_ns > 1000000)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const wl_clock_sample *x = &s[i];
        /* no record (0, 0), reads out of order, or values that are not nanosecond clocks */
        if (x->cupti_start_ns == 0 || x->cupti_end_ns < x->cupti_start_ns ||
            x->gpu_last_ns < x->gpu_first_ns || x->cupti_end_ns >= (uint64_t)LIM ||
            x->gpu_last_ns >= (uint64_t)LIM)
            continue;
        const int64_t l = (int64_t)x->cupti_start_ns - (int64_t)x->gpu_first_ns + start_floor_ns;
        const int64_t h = (int64_t)x->cupti_end_ns - (int64_t)x->gpu_last_ns - end_floor_ns;
        if (l > lo)
            lo = l;
        if (h < hi)
            hi = h;
        used++;
    }
    out->used = used;
    if (!used)
        return -1;
    out->lo_ns = lo; /* also when empty (lo > hi): by how much the samples disagree */
    out->hi_ns = hi;
    if (lo > hi)
        return -1;
    const uint64_t width = (uint64_t)(hi - lo);
    out->offset_ns = lo + (int64_t)(width / 2);
    out->uncertainty_ns = (width + 1) / 2;
    return 0;
}

int wl_clock_fit_batch(const wl_clock_sample *s, size_t n, uint64_t step_ns, const int64_t *floors, int64_t rounding_ns,
                       uint32_t drift_bound_ppb, wl_clock_fit *out, uint64_t *at_ns, int *floors_used,
                       int64_t *empty_by_ns)
{
    *floors_used = 0;
    *empty_by_ns = 0;
    *at_ns = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].cupti_start_ns && s[i].cupti_end_ns >= s[i].cupti_start_ns) {
            first = s[i].cupti_start_ns < first ? s[i].cupti_start_ns : first;
            last = s[i].cupti_end_ns > last ? s[i].cupti_end_ns : last;
        }
    if (last < first || step_ns > 1000000) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    *at_ns = first + (last - first) / 2;
    /* ceil(bound x half span): the offset moved at most this far from any probe's to the middle's */
    const double half = (double)(last - first) / 2.0;
    const int64_t drift = (int64_t)(half * (double)drift_bound_ppb / 1e9) + 1;
    const int64_t slack = drift + (rounding_ns > 0 ? rounding_ns : 0);
    if (floors && wl_clock_intersect_floors(s, n, floors[0] - slack, floors[1] - slack, out) == 0) {
        *floors_used = 1;
        return 0;
    }
    if (floors && out->used)
        *empty_by_ns = out->lo_ns - out->hi_ns;
    return wl_clock_intersect_floors(s, n, -(int64_t)step_ns - slack, -slack, out);
}

int32_t wl_clock_drift_ppb(uint64_t t0_ns, int64_t c0_ns, uint64_t t1_ns, int64_t c1_ns)
{
    if (t1_ns <= t0_ns)
        return 0;
    const double ppb = (double)(c1_ns - c0_ns) * 1e9 / (double)(t1_ns - t0_ns);
    if (ppb > 1e6)
        return 1000000;
    if (ppb < -1e6)
        return -1000000;
    return (int32_t)(ppb < 0 ? ppb - 0.5 : ppb + 0.5);
}

int64_t wl_clock_offset_at(int64_t c_ns, uint64_t at_ns, int32_t drift_ppb, uint64_t t_ns)
{
    if (!drift_ppb)
        return c_ns;
    const double dt = (double)(int64_t)(t_ns - at_ns); /* signed: before or after the calibration */
    const double d = dt * (double)drift_ppb / 1e9;
    return c_ns + (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}
