/* Host clocks. warplens keeps every timestamp in CLOCK_REALTIME nanoseconds, the clock CUPTI
 * uses on Linux, so host and GPU records share one time base without conversion. */
#ifndef WARPLENS_COMMON_CLOCK_H
#define WARPLENS_COMMON_CLOCK_H

#include <stdint.h>

uint64_t wl_realtime_ns(void);
uint64_t wl_monotonic_ns(void);

#endif
