/* Throughput and roofline arithmetic: achieved TFLOP/s and GB/s of a kernel or range from its
 * FLOPs, bytes and duration, the share of the device's peak, and whether the work is compute- or
 * memory-bound on the roofline. Peaks come from the occupancy calculator's device description
 * (a recorded device after wl_occ_device_from_row: its own SM count and clocks). */
#ifndef WARPLENS_ANALYSIS_THROUGHPUT_H
#define WARPLENS_ANALYSIS_THROUGHPUT_H

#include <stdint.h>

#include "analysis/occupancy.h"

/* Which compute peak FLOPs are measured against. */
typedef enum wl_tp_precision {
    WL_TP_FP32 = 0,
    WL_TP_FP64 = 1,
    WL_TP_FP16_TENSOR = 2,   /* dense, FP32 accumulate */
    WL_TP_BF16_TENSOR = 3,
} wl_tp_precision;

typedef struct wl_tp_peaks {
    double tflops;           /* compute peak for the precision */
    double dram_gbps;
    double ridge_flop_per_byte; /* tflops x 1000 / dram_gbps: intensity where the roofs meet */
} wl_tp_peaks;

/* 0, or -1 when the device lacks the rate or the memory figures (the peaks are then 0). */
int wl_tp_device_peaks(const wl_occ_device *d, wl_tp_precision p, wl_tp_peaks *out);

typedef enum wl_tp_bound {
    WL_TP_UNKNOWN = 0,       /* no FLOPs and no bytes, no duration, or no peaks */
    WL_TP_MEMORY_BOUND = 1,  /* intensity below the ridge point */
    WL_TP_COMPUTE_BOUND = 2, /* at or above it */
} wl_tp_bound;

typedef struct wl_throughput {
    double tflops;           /* flops / duration; 0 without flops */
    double gbps;             /* bytes / duration; 0 without bytes */
    double pct_peak_compute; /* tflops / peak x 100 */
    double pct_peak_dram;
    double intensity;        /* flops / byte; 0 when either is missing */
    double roof_tflops;      /* attainable at this intensity: min(peak, intensity x bandwidth) */
    double pct_of_roof;      /* tflops / roof_tflops x 100 */
    wl_tp_bound bound;
} wl_throughput;

/* flops and bytes may be 0 (unknown). Returns out->bound. */
wl_tp_bound wl_tp_compute(const wl_tp_peaks *peaks, double flops, double bytes, uint64_t duration_ns,
                          wl_throughput *out);

const char *wl_tp_bound_name(wl_tp_bound b); /* "unknown", "memory-bound", "compute-bound" */

#endif
