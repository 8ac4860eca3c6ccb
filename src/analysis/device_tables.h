/* Built-in device descriptions for the occupancy calculator (NVIDIA sm_70..sm_120, AMD CDNA2/3 and
 * RDNA3), lookup by name, and peak-rate formulas for roofline use. */
#ifndef WARPLENS_ANALYSIS_DEVICE_TABLES_H
#define WARPLENS_ANALYSIS_DEVICE_TABLES_H

#include <stddef.h>

#include "analysis/occupancy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of built-in devices and the i-th one (NULL past the end). */
size_t wl_occ_device_count(void);
const wl_occ_device *wl_occ_device_at(size_t i);

/* Space-separated names a device answers to ("sm_90 90 9.0 h100 ..."). */
const char *wl_occ_device_aliases(const wl_occ_device *d);

/* Finds a device by name, case-insensitively, ignoring spaces, '-' and '_': "sm_90", "90",
 * "9.0", "compute_90", "h100", "gfx942", "mi300x", "rtx4090", ... NULL when unknown. */
const wl_occ_device *wl_occ_device_find(const char *name);

/* Copies the built-in NVIDIA entry with this compute capability into *out (the same major with
 * the closest minor when the exact one is missing), so a recorded device can start from its
 * architecture's rules and then overwrite SM count, memory sizes and clocks with what was
 * measured. Returns 0, or -1 when no entry has that major. */
int wl_occ_device_init_cc(wl_occ_device *out, int cc_major, int cc_minor);

/* Peak rates. TFLOP/s = SMs x core clock x FLOP/clk/SM; GB/s = bus bits / 8 x data rate, with the
 * data rate = 2 x mem_clock_khz (the DDR convention of cudaDevAttrMemoryClockRate). 0 when a
 * field is missing. */
double wl_occ_peak_tflops(const wl_occ_device *d, double flop_per_clk_per_sm);
double wl_occ_peak_fp32_tflops(const wl_occ_device *d);
double wl_occ_peak_dram_gbps(const wl_occ_device *d);

#ifdef __cplusplus
}
#endif

#endif
