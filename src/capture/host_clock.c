/* Ticks on the application's threads, realtime nanoseconds in the session (see host_clock.h). */
#include "capture/host_clock.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

int wl_host_clock_tsc;

#define PAIR_SPACING_NS 1000000ull  /* a new pair at most every millisecond */
#define RATE_BASELINE_NS 1000000ull /* the first rate is measured over this long */
#define PAIR_TRIES 5

static wl_tick_map g_map; /* the consumer's: one thread at a time */

static const wl_tick_pair *pair_at(const wl_tick_map *m, unsigned i)
{
    return &m->pairs[(m->oldest + i) % WL_TICK_MAP_PAIRS];
}

int wl_tick_map_init(wl_tick_map *m, wl_tick_pair a, wl_tick_pair b)
{
    memset(m, 0, sizeof *m);
    if (b.ticks <= a.ticks || b.ns <= a.ns)
        return -1;
    double rate = (double)(b.ns - a.ns) / (double)(b.ticks - a.ticks);
    if (rate < 0.05 || rate > 20.0) /* a counter between 50 MHz and 20 GHz */
        return -1;
    m->pairs[0] = a;
    m->pairs[1] = b;
    m->count = 2;
    m->origin = a;
    m->ns_per_tick = rate;
    return 0;
}

void wl_tick_map_add(wl_tick_map *m, wl_tick_pair p, uint64_t min_spacing_ns)
{
    const wl_tick_pair *newest = pair_at(m, m->count - 1);
    if (p.ticks <= newest->ticks)
        return;
    if (p.ns < newest->ns) {
        /* the realtime clock was stepped back: the older pairs no longer describe it */
        m->oldest = 0;
        m->count = 1;
        m->pairs[0] = p;
        m->origin = p;
        return;
    }
    if (p.ns - newest->ns < min_spacing_ns)
        return;
    if (m->count == WL_TICK_MAP_PAIRS) {
        m->oldest = (m->oldest + 1) % WL_TICK_MAP_PAIRS;
        m->count--;
    }
    m->pairs[(m->oldest + m->count) % WL_TICK_MAP_PAIRS] = p;
    m->count++;
    if (p.ns > m->origin.ns)
        m->ns_per_tick = (double)(p.ns - m->origin.ns) / (double)(p.ticks - m->origin.ticks);
}

static uint64_t shift_ns(uint64_t ns, double delta)
{
    if (delta < 0)
        return (double)ns <= -delta ? 0 : ns - (uint64_t)(-delta);
    return ns + (uint64_t)delta;
}

uint64_t wl_tick_map_to_ns(const wl_tick_map *m, uint64_t ticks)
{
    const wl_tick_pair *oldest = pair_at(m, 0), *newest = pair_at(m, m->count - 1);
    /* outside the pairs (drained after the last one, or older than the ring): the long-run rate */
    if (ticks >= newest->ticks)
        return shift_ns(newest->ns, (double)(ticks - newest->ticks) * m->ns_per_tick);
    if (ticks <= oldest->ticks)
        return shift_ns(oldest->ns, -(double)(oldest->ticks - ticks) * m->ns_per_tick);
    unsigned lo = 0, hi = m->count - 1; /* pairs[lo].ticks <= ticks < pairs[hi].ticks */
    if (pair_at(m, hi - 1)->ticks <= ticks) /* most calls are drained soon after they are made */
        lo = hi - 1;
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (pair_at(m, mid)->ticks <= ticks)
            lo = mid;
        else
            hi = mid;
    }
    const wl_tick_pair *p = pair_at(m, lo), *q = pair_at(m, hi);
    double f = (double)(ticks - p->ticks) / (double)(q->ticks - p->ticks);
    return p->ns + (uint64_t)(f * (double)(q->ns - p->ns));
}

const char *wl_host_clock_name(void) { return wl_host_clock_tsc ? "tsc" : "realtime"; }

#if defined(__x86_64__)
/* A tick read between two realtime reads, placed at their midpoint; the tightest of a few tries. */
static wl_tick_pair take_pair(void)
{
    wl_tick_pair best = {0, 0};
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < PAIR_TRIES; i++) {
        uint64_t a = wl_realtime_ns();
        uint64_t t = __rdtsc();
        uint64_t b = wl_realtime_ns();
        if (b >= a && b - a < best_width) {
            best_width = b - a;
            best.ticks = t;
            best.ns = a + (b - a) / 2;
        }
    }
    return best;
}

/* The kernel keeps time with the TSC only when it found it invariant and in step on every CPU. */
static int kernel_clock_is_tsc(void)
{
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char name[32] = {0};
    ssize_t n = read(fd, name, sizeof name - 1);
    close(fd);
    return n >= 3 && strncmp(name, "tsc", 3) == 0 && (n == 3 || name[3] == '\n');
}
#endif

void wl_host_clock_init(void)
{
    wl_host_clock_tsc = 0;
    const char *want = getenv("WARPLENS_HOST_CLOCK");
    if (want && *want && strcmp(want, "auto") != 0 && strcmp(want, "realtime") != 0)
        wl_log("WARPLENS_HOST_CLOCK=%s is not auto or realtime; using auto", want);
    if (want && strcmp(want, "realtime") == 0)
        return;
#if defined(__x86_64__)
    if (!kernel_clock_is_tsc())
        return;
    wl_tick_pair a = take_pair();
    while (wl_realtime_ns() - a.ns < RATE_BASELINE_NS)
        ;
    if (wl_tick_map_init(&g_map, a, take_pair()) != 0) {
        wl_log("the CPU's time-stamp counter did not keep pace with the clock; API calls are timed with clock_gettime");
        return;
    }
    wl_host_clock_tsc = 1;
#endif
}

void wl_host_clock_sample(void)
{
#if defined(__x86_64__)
    if (wl_host_clock_tsc)
        wl_tick_map_add(&g_map, take_pair(), PAIR_SPACING_NS);
#endif
}

uint64_t wl_host_clock_to_ns(uint64_t ticks)
{
    return wl_host_clock_tsc ? wl_tick_map_to_ns(&g_map, ticks) : ticks;
}
