/* Kernel concurrency: for each kernel, how many kernels on other streams of the same device ran
 * at the same time, and per device a time series of estimated GPU fill (docs/occupancy.md,
 * "Concurrency"). One streaming sweep over kernels in start order, O(n log n) time and memory
 * proportional to the kernels running at once, so exporters can draw counter tracks from it
 * without holding a session in memory.
 *
 * Intervals are half-open [start, end): kernels that touch do not overlap, kernels on the same
 * stream are never counted as overlapping each other. */
#ifndef WARPLENS_ANALYSIS_CONCURRENCY_H
#define WARPLENS_ANALYSIS_CONCURRENCY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/kernel_occupancy.h"
#include "store/session.h"

typedef struct wl_conc_kernel {
    int64_t id, name_id;        /* the caller's identifiers, passed back untouched */
    uint32_t pid, device_id;    /* a device is (pid, device_id) */
    uint32_t stream_id;
    uint64_t start_ns, end_ns;
    double warp_fill;           /* 0..1: occupancy x SM share (wl_kernel_occ.warp_fill) */
    double sm_share;            /* 0..1: share of the GPU its grid can hold (wl_kernel_occ.sm_share) */
} wl_conc_kernel;

/* The state of one device from ts_ns until its next point. */
typedef struct wl_fill_point {
    uint32_t pid, device_id;
    uint64_t ts_ns;
    int running;                /* kernels executing */
    double warp_fill_pct;       /* sum of warp_fill x 100: estimated share of warp slots in use */
    double sm_fill_pct;         /* sum of sm_share x 100: share of capacity the running grids claim */
    int oversubscribed;         /* sm_fill_pct > 100: they cannot all be resident at once */
} wl_fill_point;

typedef struct wl_conc_callbacks {
    /* Once per kernel, when its count is final (at the latest in wl_conc_sweep_finish). */
    void (*kernel_done)(const wl_conc_kernel *k, uint64_t overlaps, void *arg);
    /* Once per change of a device's state, in time order per device; the last point of a busy
     * period has running = 0. */
    void (*fill_point)(const wl_fill_point *p, void *arg);
    /* Optional: every overlapping pair on different streams, with the time they share. Costs
     * O(running kernels) per kernel. */
    void (*pair)(const wl_conc_kernel *earlier, const wl_conc_kernel *later, uint64_t overlap_ns, void *arg);
    void *arg;
} wl_conc_callbacks;

typedef struct wl_conc_sweep wl_conc_sweep;

wl_conc_sweep *wl_conc_sweep_new(const wl_conc_callbacks *cb);
/* Kernels must arrive in (start, end) order per device (devices may interleave). Returns 0, or
 * -1 for an out-of-order kernel (ignored) or end < start, or when memory runs out. */
int wl_conc_sweep_add(wl_conc_sweep *sw, const wl_conc_kernel *k);
/* Ends every device's sweep: remaining kernel_done and fill points are delivered. */
void wl_conc_sweep_finish(wl_conc_sweep *sw);
void wl_conc_sweep_free(wl_conc_sweep *sw);

/* Per-device totals over its fill points (feed every point of one device, in order). */
typedef struct wl_fill_summary {
    uint32_t pid, device_id;
    int max_running;
    uint64_t busy_ns;           /* >= 1 kernel running */
    uint64_t concurrent_ns;     /* >= 2 kernels running */
    uint64_t oversubscribed_ns;
    double peak_warp_fill_pct, peak_sm_fill_pct;
    double warp_fill_pct_ns;    /* integral of warp fill over time (pct x ns) */
    /* internal: the previous point */
    int have_prev;
    wl_fill_point prev;
} wl_fill_summary;

void wl_fill_summary_add(wl_fill_summary *s, const wl_fill_point *p);
/* Mean warp fill over the busy time, in percent. */
double wl_fill_summary_mean_fill(const wl_fill_summary *s);

/* Runs the sweep over a session's timestamped kernels with their theoretical occupancy from
 * `cache` (one is made when NULL). Returns the number of kernels swept, or -1 (err says why). */
int64_t wl_session_concurrency(wl_session *s, wl_occ_cache *cache, const wl_conc_callbacks *cb, char *err,
                               size_t err_size);

#endif
