/* One collective across the ranks of a job: NCCL's k-th kernel on a process's n-th collective
 * stream (streams numbered by their first collective, in the order the session lists them) is the
 * same collective on every rank, whatever its name says. Merge's clock alignment matches
 * collectives across sessions this way; the exports link them within a merged session (a flow from
 * the rank that arrived first, the earliest start, to the one that arrived last, the latest).
 *
 * Memory: the links read the first WL_COLL_MAX collectives of a session (40 bytes each, 40 MiB
 * at most); later ones are not linked. */
#ifndef WARPLENS_ANALYSIS_COLLECTIVE_MATCH_H
#define WARPLENS_ANALYSIS_COLLECTIVE_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"
#include "store/session_ranks.h"

/* Keys a process's collectives in the order wl_session_each_collective gives them (by process,
 * stream, start). Zero it before the first. */
typedef struct wl_coll_keyer {
    uint32_t pid;
    int started;
    int64_t stream;
    int stream_ord, k;
} wl_coll_keyer;
/* The key of c, the same on every rank for one collective. */
uint64_t wl_coll_key(wl_coll_keyer *kr, const wl_collective *c);
/* Its position on its stream (0 for the first), as the key counts it. */
int wl_coll_keyer_index(const wl_coll_keyer *kr);

#define WL_COLL_MAX (1u << 20)
/* Flow ids of the links: above every launch flow (kernel, copy and set ids * 4 + 1..3). */
#define WL_COLL_FLOW_BASE (UINT64_C(1) << 62)

typedef struct wl_coll_links wl_coll_links;
/* The collectives of s that ran on two or more processes, linked first -> last arrival. NULL
 * when s has none (*err "") or on failure (err says why). */
wl_coll_links *wl_coll_links_build(wl_session *s, char *err, size_t err_size);
/* For the collective kernel of pid on stream that started at start_ns: the flow it starts (its
 * rank arrived first) into *out and the one it ends (arrived last) into *in, 0 when none. */
void wl_coll_links_get(const wl_coll_links *l, uint32_t pid, int64_t stream, uint64_t start_ns, uint64_t *out,
                       uint64_t *in);
/* The collectives linked (one flow each). */
size_t wl_coll_links_count(const wl_coll_links *l);
void wl_coll_links_free(wl_coll_links *l);

#endif
