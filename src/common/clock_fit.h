/* The offset between %globaltimer and CUPTI's clock, from kernels whose CUPTI [start, end] bound
 * two %globaltimer reads they made (their first and last instructions), and its drift between two
 * calibrations. Pure arithmetic, shared by the recorder (capture/clock_calibration.c measures) and
 * the importer (analysis/inkernel_session.c places lanes with it).
 *
 * A kernel read g_first and g_last; CUPTI says it ran within [start, end]. With
 * c = cupti_clock - globaltimer: start <= g_first + c + step and g_last + c <= end (a read is the
 * timer's value, up to one step below the true time), so c lies in
 * [start - g_first - step, end - g_last]. Every kernel gives such an interval; c lies in their
 * intersection, whose midpoint is the estimate and half-width the uncertainty (a bound, not a
 * standard deviation).
 *
 * The floors tighten this: CUPTI's start and end are semaphore timestamps the front end writes
 * before and after the kernel (on the H100, raw %globaltimer values mapped to CLOCK_REALTIME), so
 * g_first - start >= F_s and end - g_last >= F_e for floors measured once per GPU (the probe's
 * launch latency and drain, bench/bench_ik_probe_gaps.cu; common/probe_floors.c), and
 * c lies in [start - g_first + F_s, end - g_last - F_e]: without floors (F_s = -step, F_e = 0) the
 * interval is ~900 ns wide on the H100, with them the width left is the gaps' jitter. Floors that
 * do not hold on a device show as an empty intersection (the caller falls back). */
#ifndef WARPLENS_COMMON_CLOCK_FIT_H
#define WARPLENS_COMMON_CLOCK_FIT_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_clock_sample {
    uint64_t cupti_start_ns, cupti_end_ns; /* the kernel's CUPTI record */
    uint64_t gpu_first_ns, gpu_last_ns;    /* its %globaltimer reads */
} wl_clock_sample;

typedef struct wl_clock_fit {
    int64_t offset_ns;        /* cupti_clock - globaltimer: midpoint of the intersection */
    uint64_t uncertainty_ns;  /* half its width, rounded up */
    int64_t lo_ns, hi_ns;     /* the intersection (lo > hi when it is empty and used > 0) */
    uint32_t used;            /* samples that were usable (a record, reads in order) */
} wl_clock_fit;

/* Intersects the samples' intervals. Returns 0, or -1 when no sample is usable or the intervals
 * do not intersect (a clock assumption broke: the caller falls back to another method). */
int wl_clock_intersect(const wl_clock_sample *s, size_t n, uint64_t step_ns, wl_clock_fit *out);

/* The same with floors (clock_fit.h's header): sample i bounds c to
 * [start - g_first + start_floor_ns, end - g_last - end_floor_ns]. */
int wl_clock_intersect_floors(const wl_clock_sample *s, size_t n, int64_t start_floor_ns, int64_t end_floor_ns,
                              wl_clock_fit *out);

/* One batch of probes, as the recorder calibrates (and bench/bench_ik_probe_gaps.cu checks): the
 * intersection with `floors` {start, end} when given, less `rounding_ns` on each side (CUPTI's
 * conversion rounds), each side widened by the drift the offset may have had over the batch
 * (drift_bound_ppb x half the batch's span on the CUPTI clock: c at the batch's middle lies within
 * that of every probe's own c); without floors, or when they leave the intersection empty, the
 * plain one (wl_clock_intersect with step_ns, widened the same way). *floors_used says which;
 * *empty_by_ns how far apart the floors' bounds were when they were dropped (else 0). at_ns: the
 * batch's middle on the CUPTI clock, the time the offset belongs to. 0, or -1 as
 * wl_clock_intersect. */
int wl_clock_fit_batch(const wl_clock_sample *s, size_t n, uint64_t step_ns, const int64_t *floors, int64_t rounding_ns,
                       uint32_t drift_bound_ppb, wl_clock_fit *out, uint64_t *at_ns, int *floors_used,
                       int64_t *empty_by_ns);

/* Drift between two calibrations (offsets c0 at t0, c1 at t1 on the CUPTI clock) in ns per second
 * (parts per billion), saturated to +-1e6 (1 ms/s: beyond that it is not drift but a broken clock);
 * 0 when t1 <= t0. */
int32_t wl_clock_drift_ppb(uint64_t t0_ns, int64_t c0_ns, uint64_t t1_ns, int64_t c1_ns);

/* The offset at time t_ns for a calibration (c_ns measured at at_ns, drifting drift_ppb). */
int64_t wl_clock_offset_at(int64_t c_ns, uint64_t at_ns, int32_t drift_ppb, uint64_t t_ns);

#endif
