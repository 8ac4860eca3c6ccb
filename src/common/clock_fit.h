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
 * standard deviation). */
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
    int64_t lo_ns, hi_ns;     /* the intersection */
    uint32_t used;            /* samples that were usable (a record, reads in order) */
} wl_clock_fit;

/* Intersects the samples' intervals. Returns 0, or -1 when no sample is usable or the intervals
 * do not intersect (a clock assumption broke: the caller falls back to another method). */
int wl_clock_intersect(const wl_clock_sample *s, size_t n, uint64_t step_ns, wl_clock_fit *out);

/* Drift between two calibrations (offsets c0 at t0, c1 at t1 on the CUPTI clock) in ns per second
 * (parts per billion), saturated to +-1e6 (1 ms/s: beyond that it is not drift but a broken clock);
 * 0 when t1 <= t0. */
int32_t wl_clock_drift_ppb(uint64_t t0_ns, int64_t c0_ns, uint64_t t1_ns, int64_t c1_ns);

/* The offset at time t_ns for a calibration (c_ns measured at at_ns, drifting drift_ppb). */
int64_t wl_clock_offset_at(int64_t c_ns, uint64_t at_ns, int32_t drift_ppb, uint64_t t_ns);

#endif
