/* Host clocks (see clock.h for why REALTIME). */
#include "common/clock.h"

#include <time.h>

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t wl_realtime_ns(void) { return read_clock(CLOCK_REALTIME); }
uint64_t wl_monotonic_ns(void) { return read_clock(CLOCK_MONOTONIC); }
