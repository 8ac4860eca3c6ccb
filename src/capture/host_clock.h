/* The clock of the hot path: API-call timestamps taken on the application's threads. Where the
 * kernel itself keeps time with the CPU's invariant time-stamp counter (clocksource "tsc"), a
 * timestamp is one rdtsc (about half the cost of a vDSO clock_gettime on the H100 host); elsewhere,
 * or with WARPLENS_HOST_CLOCK=realtime, it is CLOCK_REALTIME in ns. The consumer (the writer thread,
 * or the thread that stopped it: one at a time) maps ticks to CLOCK_REALTIME, CUPTI's activity
 * clock, by interpolating between (ticks, realtime) pairs it takes before every drain, so the
 * mapping follows NTP's slewing of the realtime clock. */
#ifndef WARPLENS_CAPTURE_HOST_CLOCK_H
#define WARPLENS_CAPTURE_HOST_CLOCK_H

#include <stdint.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "common/clock.h"

extern int wl_host_clock_tsc; /* 1: wl_host_ticks() reads the TSC; 0: it returns realtime ns */

/* Chooses the clock; once, before any callback that takes timestamps is enabled. May spin ~1 ms
 * to measure the counter's rate (CUDA's own initialisation, where it runs, takes far longer). */
void wl_host_clock_init(void);
const char *wl_host_clock_name(void); /* "tsc" or "realtime" */

static inline uint64_t wl_host_ticks(void)
{
#if defined(__x86_64__)
    if (wl_host_clock_tsc)
        return __rdtsc();
#endif
    return wl_realtime_ns();
}

/* Consumer side. sample: records a pair (cheap; kept at most every millisecond); call it before
 * draining ticks. to_ns: CLOCK_REALTIME ns of a tick value (the identity on the realtime clock). */
void wl_host_clock_sample(void);
uint64_t wl_host_clock_to_ns(uint64_t ticks);

/* The mapping itself, separate from the hardware so that it can be tested with made-up pairs: a
 * ring of (ticks, ns) pairs in time order and the long-run rate from the first one. */
#define WL_TICK_MAP_PAIRS 1024u /* >= 1 s of history at one pair per ms, ~50 s at the writer's pace */
typedef struct wl_tick_pair {
    uint64_t ticks, ns;
} wl_tick_pair;
typedef struct wl_tick_map {
    wl_tick_pair pairs[WL_TICK_MAP_PAIRS]; /* pairs[(oldest + i) % N], i < count */
    unsigned oldest, count;
    wl_tick_pair origin;
    double ns_per_tick;
} wl_tick_map;
/* starts the map with two pairs (b later than a); 0, or -1 when they give no plausible rate */
int wl_tick_map_init(wl_tick_map *m, wl_tick_pair a, wl_tick_pair b);
/* adds a pair taken after the newest (kept if >= min_spacing_ns later; a realtime clock stepped
 * back restarts the map at the pair) */
void wl_tick_map_add(wl_tick_map *m, wl_tick_pair p, uint64_t min_spacing_ns);
uint64_t wl_tick_map_to_ns(const wl_tick_map *m, uint64_t ticks);

#endif
