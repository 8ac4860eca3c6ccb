/* Which kernels ran during a sample window, for device-wide samples (NVML device samples, CUPTI PM
 * samples): a window's value describes the whole device over the whole window, so
 *  - idle:   no kernel ran on the device during the window;
 *  - exact:  one kernel ran in it: the value belongs to that kernel (diluted by the window's idle
 *            part, which busy_ns shows);
 *  - shared: several kernels overlapped the window: each is given the whole value, flagged as an
 *            upper bound, because a device-wide counter cannot say how the device was split. */
#ifndef WARPLENS_ANALYSIS_WINDOW_OVERLAP_H
#define WARPLENS_ANALYSIS_WINDOW_OVERLAP_H

#include <stdint.h>

typedef enum wl_sample_attr_kind { WL_SAMPLE_IDLE = 0, WL_SAMPLE_EXACT = 1, WL_SAMPLE_SHARED = 2 } wl_sample_attr_kind;

const char *wl_sample_attr_name(wl_sample_attr_kind k); /* "idle", "exact", "shared (upper bound)" */

typedef struct wl_window_overlap {
    uint64_t start, end;       /* the window; an empty one counts as its instant (1 ns) */
    uint64_t kernels;          /* kernels overlapping it */
    uint64_t busy_ns;          /* union of their time inside it */
    int64_t kernel_id;         /* the kernel overlapping it longest, -1 none */
    uint64_t best_overlap, covered_to;
} wl_window_overlap;

void wl_window_overlap_begin(wl_window_overlap *w, uint64_t start, uint64_t end);
/* Adds a kernel (kernels in start order); returns its time inside the window, 0 when it does not
 * overlap (then it is not counted). */
uint64_t wl_window_overlap_add(wl_window_overlap *w, int64_t kernel_id, uint64_t start, uint64_t end);
wl_sample_attr_kind wl_window_overlap_kind(const wl_window_overlap *w);

#endif
