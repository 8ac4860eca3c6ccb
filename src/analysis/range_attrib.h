/* Which kernels a user range contains (docs/schema.md, "Kernels in user ranges"). Nested ranges
 * each count every kernel inside them.
 *  - warplens scope: the kernels tagged with it (kernel.scope_id, the innermost scope open at the
 *    launch) or with a scope nested in it (the scopes' parent chain);
 *  - NVTX range closed on the thread that opened it (every push/pop range, and start/end ranges
 *    used like one): kernels whose launch call started on that thread, in [start, end);
 *  - NVTX range closed on another thread (a start/end range) or of unknown thread: kernels whose
 *    launch call started in [start, end) on any thread of the process.
 * Kernels without a launch call (API calls not recorded) belong to no NVTX range. Pure C: tested
 * without a session. */
#ifndef WARPLENS_ANALYSIS_RANGE_ATTRIB_H
#define WARPLENS_ANALYSIS_RANGE_ATTRIB_H

#include <stddef.h>
#include <stdint.h>

#include "store/session_ranges.h"

typedef struct wl_range_members {
    size_t *first;              /* n_ranges + 1 offsets: range i holds kernel[first[i] .. first[i+1]) */
    uint32_t *kernel;           /* indices into the launches, each at most once per range */
} wl_range_members;

/* 1 when an NVTX range counts only its own thread's launches. */
int wl_range_is_thread_bound(const wl_user_range *r);

/* 0, or -1 out of memory. */
int wl_range_attribute(const wl_user_range *ranges, size_t n_ranges, const wl_kernel_launch *launches,
                       size_t n_launches, wl_range_members *out);
void wl_range_members_free(wl_range_members *m);

#endif
