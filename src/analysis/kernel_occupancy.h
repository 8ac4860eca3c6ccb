/* Theoretical occupancy of recorded kernels: the calculator (occupancy.h) applied to a kernel row
 * and the device row it ran on, plus a cache keyed by the launch configuration, because millions
 * of launches in a session share a handful of configurations. This is *theoretical* occupancy
 * (what the resources allow); achieved occupancy needs hardware counters. */
#ifndef WARPLENS_ANALYSIS_KERNEL_OCCUPANCY_H
#define WARPLENS_ANALYSIS_KERNEL_OCCUPANCY_H

#include <stdint.h>

#include "analysis/occupancy.h"
#include "store/session.h"
#include "store/session_kernels.h"

/* What occupancy needs from one launch; filled from a kernel row or a per-name configuration. */
typedef struct wl_kernel_launch {
    uint32_t pid, device_id;
    int64_t grid_blocks;
    int block_size;
    int cluster_size;          /* blocks per cluster, 1 = none */
    int registers_per_thread;  /* as recorded: CUPTI reports at least 16 on sm_90 */
    int64_t static_smem, dynamic_smem;
    int smem_limit_config;     /* 0 default, 1 opt-in */
    int carveout_pct;          /* -1 = no preference */
    int cache_config;          /* CUfunc_cache, read when carveout_pct is -1 */
} wl_kernel_launch;

void wl_kernel_launch_from_row(const wl_kernel_row *k, wl_kernel_launch *out);
void wl_kernel_launch_from_config(const wl_kernel_config *c, wl_kernel_launch *out);

typedef struct wl_kernel_occ {
    wl_occ_status status;    /* WL_OCC_OK, a "cannot run" status (result filled), or an error */
    wl_occ_kernel kernel;    /* the calculator's input for the launch, opt-in assumption
                                included: what wl_occ_suggest_block_size and wl_occ_next_step
                                (occupancy_suggest.h) take to advise on this launch */
    int has_result;          /* occ is filled in */
    wl_occ_result occ;
    int has_waves;           /* waves is filled in (a result with >= 1 active block) */
    wl_occ_wave_info waves;
    int smem_optin_assumed;  /* recorded as DEFAULT, but only the opt-in limit holds the launch
                                that ran, so opt-in was applied */
    double sm_share;         /* min(1, blocks / (active blocks per SM x SMs)): the share of the
                                GPU's capacity for this kernel its grid can hold at once */
    double warp_fill;        /* occupancy_pct / 100 x sm_share: share of the GPU's warp slots */
} wl_kernel_occ;

/* The calculator's device for a recorded device: the architecture's rules from the built-in
 * table (wl_occ_device_init_cc), then every limit the row recorded. 0, or -1 when the compute
 * capability has no table entry. */
int wl_occ_device_from_row(const wl_device_row *row, wl_occ_device *out);

/* Occupancy of a launch on a calculator device. Returns out->status. */
wl_occ_status wl_launch_occupancy(const wl_occ_device *dev, const wl_kernel_launch *l, wl_kernel_occ *out);

/* Occupancy of one recorded kernel on its device row (the row of the same pid and device_id). */
wl_occ_status wl_kernel_occupancy(const wl_device_row *dev, const wl_kernel_row *k, wl_kernel_occ *out);

/* ---- cache ---------------------------------------------------------------------------------- */
typedef struct wl_occ_cache wl_occ_cache;

/* A cache over a session's devices (read once here); s may be NULL and devices added by hand. */
wl_occ_cache *wl_occ_cache_new(wl_session *s);
void wl_occ_cache_free(wl_occ_cache *c);
/* Adds or replaces a device row (tests, or devices not in a session). 0 or -1. */
int wl_occ_cache_add_device(wl_occ_cache *c, const wl_device_row *row);
/* The calculator device for (pid, device_id); NULL when unknown or its architecture is not. */
const wl_occ_device *wl_occ_cache_device(wl_occ_cache *c, uint32_t pid, uint32_t device_id);
/* Occupancy of a launch; the calculator runs once per distinct (device, block size, registers,
 * static and dynamic shared memory, limit config, carveout, cache config, cluster), waves are
 * computed per grid. Returns out->status; WL_OCC_ERR_DEVICE when the device is unknown. */
wl_occ_status wl_occ_cache_launch(wl_occ_cache *c, const wl_kernel_launch *l, wl_kernel_occ *out);
wl_occ_status wl_occ_cache_kernel(wl_occ_cache *c, const wl_kernel_row *k, wl_kernel_occ *out);
/* Lookups answered from the cache and calculator runs so far. */
void wl_occ_cache_stats(const wl_occ_cache *c, uint64_t *hits, uint64_t *misses);

/* "registers", "shared_memory+warps", ... ("none" without limiters); short = "regs", "smem". */
const char *wl_occ_limiters_text(unsigned mask, int short_names, char *buf, size_t n);

#endif
