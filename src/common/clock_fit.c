/* %globaltimer <-> CUPTI clock offset by interval intersection, and drift (clock_fit.h). */
#include "common/clock_fit.h"

#define LIM (INT64_C(1) << 62) /* timestamps beyond this are not nanoseconds since 1970 */

int wl_clock_intersect(const wl_clock_sample *s, size_t n, uint64_t step_ns, wl_clock_fit *out)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    uint32_t used = 0;
    out->offset_ns = 0;
    out->uncertainty_ns = 0;
    out->lo_ns = out->hi_ns = 0;
    out->used = 0;
    if (step_ns > 1000000)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const wl_clock_sample *x = &s[i];
        /* no record (0, 0), reads out of order, or values that are not nanosecond clocks */
        if (x->cupti_start_ns == 0 || x->cupti_end_ns < x->cupti_start_ns ||
            x->gpu_last_ns < x->gpu_first_ns || x->cupti_end_ns >= (uint64_t)LIM ||
            x->gpu_last_ns >= (uint64_t)LIM)
            continue;
        const int64_t l = (int64_t)x->cupti_start_ns - (int64_t)x->gpu_first_ns - (int64_t)step_ns;
        const int64_t h = (int64_t)x->cupti_end_ns - (int64_t)x->gpu_last_ns;
        if (l > lo)
            lo = l;
        if (h < hi)
            hi = h;
        used++;
    }
    out->used = used;
    if (!used || lo > hi)
        return -1;
    out->lo_ns = lo;
    out->hi_ns = hi;
    const uint64_t width = (uint64_t)(hi - lo);
    out->offset_ns = lo + (int64_t)(width / 2);
    out->uncertainty_ns = (width + 1) / 2;
    return 0;
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
