/* The rules that walk the timeline (advise.h): GPU idle split by its cause (waiting for the host
 * to launch, draining behind a synchronisation, other), copies from pageable memory and small
 * copies, and streams that never overlap. One ordered pass over the GPU work. */
#ifndef WARPLENS_ANALYSIS_ADVISE_TIMELINE_H
#define WARPLENS_ANALYSIS_ADVISE_TIMELINE_H

#include "analysis/advise.h"
#include "analysis/kernel_occupancy.h"
#include "store/session_work.h"

/* Spans the analysis is limited to or divided by: NVTX ranges or scopes of one name. */
typedef struct wl_advise_span {
    uint32_t pid;
    uint64_t start, end;
} wl_advise_span;

typedef struct wl_advise_spans {
    wl_advise_span *v; /* by start */
    size_t n, cap;
} wl_advise_spans;

int wl_advise_spans_load(wl_session *s, const char *name, wl_advise_spans *out);
void wl_advise_spans_free(wl_advise_spans *sp);
/* Sum of the spans' lengths (overlaps counted once). */
uint64_t wl_advise_spans_wall(const wl_advise_spans *sp);

/* The host calls that wait for the GPU, which the timeline rules need before their walk: read on a
 * thread of their own (session_work.h) from _begin on, while the caller reads the spans, so that
 * the read is not on the walk's path (a pass over the whole API-call table: ~1 s at 10 M calls). */
typedef struct wl_advise_calls {
    wl_blocking_call *v; /* by start, at most WL_ADVISE_MAX_BLOCKING */
    size_t n, cap;
    uint64_t dropped;
    wl_blocking_read *read; /* while they are read */
} wl_advise_calls;
void wl_advise_calls_begin(wl_session *s, wl_advise_calls *c);
/* Waits for the read: 0, or -1 when it failed. */
int wl_advise_calls_end(wl_advise_calls *c);
void wl_advise_calls_free(wl_advise_calls *c);

/* Runs the timeline rules into r. calls: from wl_advise_calls_begin (waited for here; the caller
 * still frees them); filter: only work starting inside one of its spans (NULL: all); steps: the
 * spans findings are attributed to (may be empty). Sets r->start_ns/end_ns, r->span_ns (the
 * filter's wall time, else end - start) and r->work_items. Returns 0 or -1 with err set. */
int wl_advise_timeline(wl_session *s, wl_occ_cache *occ, wl_advise_calls *calls, const wl_advise_spans *filter,
                       const wl_advise_spans *steps, wl_advise_result *r, char *err, size_t err_size);

#endif
