/* Sample windows against kernel intervals (see window_overlap.h). Kernels arrive in start order,
 * so the busy time is a running union of clipped intervals. */
#include "analysis/window_overlap.h"

const char *wl_sample_attr_name(wl_sample_attr_kind k)
{
    return k == WL_SAMPLE_EXACT ? "exact" : k == WL_SAMPLE_SHARED ? "shared (upper bound)" : "idle";
}

void wl_window_overlap_begin(wl_window_overlap *w, uint64_t start, uint64_t end)
{
    w->start = start;
    w->end = end > start ? end : start + 1;
    w->kernels = w->busy_ns = w->best_overlap = 0;
    w->kernel_id = -1;
    w->covered_to = start;
}

uint64_t wl_window_overlap_add(wl_window_overlap *w, int64_t kernel_id, uint64_t start, uint64_t end)
{
    uint64_t s = start > w->start ? start : w->start;
    uint64_t e = end < w->end ? end : w->end;
    if (e <= s)
        return 0;
    uint64_t overlap = e - s;
    w->kernels++;
    if (overlap > w->best_overlap || w->kernel_id < 0) {
        w->best_overlap = overlap;
        w->kernel_id = kernel_id;
    }
    if (s < w->covered_to)
        s = w->covered_to;
    if (e > s) {
        w->busy_ns += e - s;
        w->covered_to = e;
    }
    return overlap;
}

wl_sample_attr_kind wl_window_overlap_kind(const wl_window_overlap *w)
{
    return w->kernels == 0 ? WL_SAMPLE_IDLE : w->kernels == 1 ? WL_SAMPLE_EXACT : WL_SAMPLE_SHARED;
}
