/* Measured floors of the recorder's clock probe's gaps against CUPTI's kernel timestamps, per GPU
 * model (common/clock_fit.h says how they tighten the calibration; bench/bench_ik_probe_gaps.cu
 * measures them with CUPTI's raw GPU timestamps and checks them). */
#ifndef WARPLENS_COMMON_PROBE_FLOORS_H
#define WARPLENS_COMMON_PROBE_FLOORS_H

#include <stdint.h>

typedef struct wl_probe_floors {
    int64_t start_ns; /* the probe's first %globaltimer read - CUPTI's start, at least */
    int64_t end_ns;   /* CUPTI's end - the probe's last read, at least */
} wl_probe_floors;

/* 1 and the floors for the device named `name` (cuDeviceGetName), 0 when none was measured. */
int wl_probe_floors_for(const char *name, wl_probe_floors *out);

/* "START_NS,END_NS" (two decimal integers, 0..1000000, nothing else: what `bench_ik_probe_gaps
 * --raw` prints for a GPU the table lacks, given to the recorder as WARPLENS_PROBE_FLOORS).
 * 0 and the floors, or -1. */
int wl_probe_floors_parse(const char *s, wl_probe_floors *out);

#endif
