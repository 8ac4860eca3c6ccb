/* Which GPU activity each range of a decoded range-profiler batch measured (`--metrics`). Pure C,
 * no CUDA: the recorder (range_profiler.c) hands it the batch's calls in submission order and the
 * ranges CUPTI decoded, in the order it produced them; tests/test_metric_match.c drives it with
 * made-up batches.
 *
 * What is certain, and nothing else, is matched:
 *  - a call profiled in a batch of its own (the recorder isolates copies, sets, graph launches,
 *    the first launch of each kernel function and the calls after a mismatch): every range of
 *    the batch is that call's. A kernel launch that produced several ranges (work the driver did
 *    inside the call, e.g. module loading) keeps the one whose launched-CTA count equals its grid
 *    size when exactly one does; the others are the call's internal work.
 *  - a batch of kernel launches whose range count equals its launch count: range i is launch i
 *    (auto range numbers ranges in the order the serialised kernels ran, which is submission
 *    order); with the CTA count known, every pair is checked.
 *  - otherwise, with CTA counts known: each launch is placed in the earliest and in the latest
 *    range sequence its CTA counts allow; where both agree the place is forced, so certain. The
 *    rest of the batch stays unmatched and is counted, never guessed. */
#ifndef WARPLENS_CAPTURE_METRIC_MATCH_H
#define WARPLENS_CAPTURE_METRIC_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "capfile/capfile.h"

/* One call of a batch. kind: WLCAP_OWNER_KERNEL, _MEMCPY, _MEMSET, _GRAPH_NODE (a graph launch
 * whose nodes are profiled), _GRAPH_LAUNCH (one user range around it), or WL_MM_DISCARD for a call
 * whose ranges are not to be kept (the recorder's own, or one the filters left out that had to run
 * inside a batch). ctas: a kernel's grid size (0 when unknown). */
#define WL_MM_DISCARD 255u
typedef struct wl_mm_call {
    uint32_t correlation_id;
    uint32_t kind;
    uint64_t ctas;
} wl_mm_call;

/* The verdict for one range: the owner record's fields (kind WLCAP_OWNER_UNKNOWN when not tied;
 * WL_MM_DISCARD: not to be written). */
typedef struct wl_mm_range {
    uint32_t correlation_id, kind, match, part, parts;
} wl_mm_range;

typedef struct wl_mm_result {
    size_t tied;          /* ranges tied to an activity (kernel, copy, set, graph, internal work) */
    size_t unknown;       /* ranges left unmatched */
    size_t discarded;     /* ranges of calls whose ranges are not kept */
    size_t calls_without; /* kernel launches that got no range */
    size_t cta_disagree;  /* isolated single ranges whose CTA count differed from the grid (kept) */
    int mismatch;         /* the batch's counts disagreed: isolate the next calls */
} wl_mm_result;

/* Matches nranges ranges to ncalls calls. ctas[i]: range i's launched-CTA count, or NULL when
 * the configuration has no such metric (NaN entries: not known for that range). out has nranges
 * entries; scratch room for 2 * ncalls positions (the recorder's threads do not allocate). */
void wl_metric_match(const wl_mm_call *calls, size_t ncalls, const double *ctas, size_t nranges, wl_mm_range *out,
                     size_t *scratch, wl_mm_result *res);

#endif
