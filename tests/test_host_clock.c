/* The recorder's hot-path clock (src/capture/host_clock.c): the tick-to-realtime map on made-up
 * pairs (interpolation, a slewed segment, extrapolation, spacing, a clock stepped back, the ring
 * wrapping, implausible rates), then the live clock of this machine against clock_gettime, and the
 * realtime fallback chosen through WARPLENS_HOST_CLOCK. */
#include <stdlib.h>
#include <time.h>

#include "capture/host_clock.h"
#include "common/clock.h"
#include "test.h"

static wl_tick_pair P(uint64_t ticks, uint64_t ns) { return (wl_tick_pair){ticks, ns}; }

static long long diff(uint64_t a, uint64_t b) { return (long long)(a - b); }

static wl_tick_map m; /* 16 KiB: static, not on the stack */

static void test_interpolation(void)
{
    /* 3 GHz: 3 ticks per ns */
    CHECK_EQ_INT(wl_tick_map_init(&m, P(3000, 1000000000ull), P(3003000, 1001000000ull)), 0);
    CHECK_EQ_INT(m.count, 2);
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 3000), 1000000000ull);
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 3000 + 1500000), 1000500000ull);
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 3003000), 1001000000ull);
    /* after the newest pair and before the oldest: the long-run rate */
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 3003000 + 300), 1001000100ull);
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 300), 1000000000ull - 900);
    /* before the epoch of the clock: clamped, no wrap-around */
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 0), 1000000000ull - 1000);
    wl_tick_map small;
    CHECK_EQ_INT(wl_tick_map_init(&small, P(3000000, 100), P(6000000, 1000100)), 0);
    CHECK_EQ_INT(wl_tick_map_to_ns(&small, 0), 0);
}

static void test_slew(void)
{
    CHECK_EQ_INT(wl_tick_map_init(&m, P(0, 1000000000ull), P(3000000, 1001000000ull)), 0);
    /* the next millisecond of ticks took 1.0005 ms of realtime (NTP slewing the clock) */
    wl_tick_map_add(&m, P(6000000, 1002000500ull), 1000000);
    CHECK_EQ_INT(m.count, 3);
    /* inside the slewed segment its own rate applies, not the first one's */
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 4500000), 1001500250ull);
    /* the first segment is unchanged */
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 1500000), 1000500000ull);
    /* the long-run rate now spans both: 2.0005 ms over 6e6 ticks */
    long long after = diff(wl_tick_map_to_ns(&m, 9000000), 1002000500ull);
    CHECK(after >= 1000249 && after <= 1000251);
    /* monotonic across the whole map and beyond it */
    uint64_t last = 0;
    int monotonic = 1;
    for (uint64_t t = 0; t < 12000000; t += 997) {
        uint64_t ns = wl_tick_map_to_ns(&m, t);
        monotonic &= ns >= last;
        last = ns;
    }
    CHECK(monotonic);
}

static void test_spacing_and_order(void)
{
    CHECK_EQ_INT(wl_tick_map_init(&m, P(0, 1000000000ull), P(3000000, 1001000000ull)), 0);
    wl_tick_map_add(&m, P(3000300, 1001000100ull), 1000000); /* 100 ns later: too close */
    CHECK_EQ_INT(m.count, 2);
    wl_tick_map_add(&m, P(3000000, 1009000000ull), 1000000); /* ticks did not advance */
    CHECK_EQ_INT(m.count, 2);
    wl_tick_map_add(&m, P(6000000, 1002000000ull), 1000000);
    CHECK_EQ_INT(m.count, 3);
}

static void test_step_back(void)
{
    CHECK_EQ_INT(wl_tick_map_init(&m, P(0, 1000000000ull), P(3000000, 1001000000ull)), 0);
    /* someone set the clock 10 s back: later ticks map onto the new clock */
    wl_tick_map_add(&m, P(6000000, 992000000000ull / 1000), 1000000);
    CHECK_EQ_INT(m.count, 1);
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 6000000), 992000000ull);
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 6000300), 992000100ull); /* the rate is kept */
    wl_tick_map_add(&m, P(9000000, 993000000ull), 1000000);
    CHECK_EQ_INT(m.count, 2);
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, 7500000), 992500000ull);
}

static void test_ring_wraps(void)
{
    CHECK_EQ_INT(wl_tick_map_init(&m, P(0, 1000000000ull), P(3000000, 1001000000ull)), 0);
    /* 3000 more pairs a millisecond apart, every tenth segment slewed by +1 us */
    uint64_t ticks = 3000000, ns = 1001000000ull;
    for (int i = 0; i < 3000; i++) {
        ticks += 3000000;
        ns += 1000000 + (i % 10 == 0 ? 1000 : 0);
        wl_tick_map_add(&m, P(ticks, ns), 1000000);
    }
    CHECK_EQ_INT(m.count, WL_TICK_MAP_PAIRS);
    const wl_tick_pair *oldest = &m.pairs[m.oldest];
    CHECK_EQ_INT(oldest->ticks, ticks - (uint64_t)(WL_TICK_MAP_PAIRS - 1) * 3000000);
    /* every kept pair maps to itself, and the midpoint of a slewed segment to its own middle */
    int exact = 1;
    for (unsigned i = 0; i < m.count; i++) {
        const wl_tick_pair *p = &m.pairs[(m.oldest + i) % WL_TICK_MAP_PAIRS];
        exact &= wl_tick_map_to_ns(&m, p->ticks) == p->ns;
    }
    CHECK(exact);
    /* the last segment (i = 2999) was not slewed, the one before the tenth-last (i = 2990) was */
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, ticks - 1500000), ns - 500000);
    uint64_t seg_end_ticks = ticks - 9ull * 3000000, seg_end_ns = ns - 9ull * 1000000;
    CHECK_EQ_INT(wl_tick_map_to_ns(&m, seg_end_ticks - 1500000), seg_end_ns - 500500);
    /* older than the ring: extrapolated from its oldest pair, still before it */
    CHECK(wl_tick_map_to_ns(&m, 3000000) < oldest->ns);
}

static void test_implausible(void)
{
    CHECK_EQ_INT(wl_tick_map_init(&m, P(100, 1000), P(100, 2000)), -1);    /* ticks stood still */
    CHECK_EQ_INT(wl_tick_map_init(&m, P(100, 2000), P(200, 1000)), -1);    /* clock ran back */
    CHECK_EQ_INT(wl_tick_map_init(&m, P(0, 0), P(1000, 1000000)), -1);     /* 1 MHz */
    CHECK_EQ_INT(wl_tick_map_init(&m, P(0, 0), P(1000000000, 10)), -1);    /* 100 THz */
    CHECK_EQ_INT(wl_tick_map_init(&m, P(0, 0), P(1000000, 1000000)), 0);   /* 1 GHz */
}

/* The machine's own clock: ticks taken next to clock_gettime map back onto it. */
static void test_live(void)
{
    unsetenv("WARPLENS_HOST_CLOCK");
    wl_host_clock_init();
    printf("live clock: %s\n", wl_host_clock_name());
    enum { N = 2000 };
    static uint64_t ticks[N], before[N], after[N];
    for (int i = 0; i < N; i++) {
        before[i] = wl_realtime_ns();
        ticks[i] = wl_host_ticks();
        after[i] = wl_realtime_ns();
        if (i % 100 == 0) {
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
            wl_host_clock_sample();
        }
    }
    wl_host_clock_sample();
    int inside = 0, monotonic = 1;
    long long worst = 0;
    uint64_t last = 0;
    for (int i = 0; i < N; i++) {
        uint64_t ns = wl_host_clock_to_ns(ticks[i]);
        /* a 2 us allowance for the pairs' own width on a virtual machine */
        inside += ns + 2000 >= before[i] && ns <= after[i] + 2000;
        long long off = ns < before[i] ? diff(before[i], ns) : ns > after[i] ? diff(ns, after[i]) : 0;
        worst = off > worst ? off : worst;
        monotonic &= ns >= last;
        last = ns;
    }
    printf("live clock: %d of %d timestamps within 2 us of their clock_gettime bracket (worst %lld ns)\n", inside,
           N, worst);
    CHECK_EQ_INT(inside, N);
    CHECK(monotonic);

    setenv("WARPLENS_HOST_CLOCK", "realtime", 1);
    wl_host_clock_init();
    CHECK_EQ_STR(wl_host_clock_name(), "realtime");
    uint64_t a = wl_realtime_ns(), t = wl_host_ticks(), b = wl_realtime_ns();
    CHECK(t >= a && t <= b);
    CHECK_EQ_INT(wl_host_clock_to_ns(t), t);
    unsetenv("WARPLENS_HOST_CLOCK");
}

int main(void)
{
    test_interpolation();
    test_slew();
    test_spacing_and_order();
    test_step_back();
    test_ring_wraps();
    test_implausible();
    test_live();
    return test_report("host_clock");
}
