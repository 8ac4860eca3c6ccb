/* Synthetic sessions for tests and benchmarks: a session database (created by the session writer,
 * so the schema is the real one) filled with a deterministic workload of N kernels launched from
 * a few host threads onto a few streams, with their API calls, copies, sets, NVTX ranges and
 * scopes. `edge_cases` adds the shapes exporters must survive: a graph launch of several kernels,
 * an NVTX range partially overlapping an API call, an unterminated NVTX range, kernels
 * overlapping on one stream, GPU work without an API call and a synchronisation call. */
#ifndef WARPLENS_STORE_SESSION_SYNTH_H
#define WARPLENS_STORE_SESSION_SYNTH_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_synth_options {
    uint64_t kernels;       /* regular launches, one API call each */
    int threads;            /* host threads launching (>= 1) */
    int streams;            /* streams per device (>= 1) */
    int copy_every;         /* a memcpy (with its API call) every N kernels; 0 none */
    int memset_every;       /* a memset every N kernels; 0 none */
    int nvtx_every;         /* an NVTX range around every N launches of a thread; 0 none */
    int edge_cases;
    /* progress callback (rows written so far), may be NULL */
    void (*progress)(uint64_t done, uint64_t total, void *arg);
    void *progress_arg;
} wl_synth_options;

void wl_synth_defaults(wl_synth_options *o);

typedef struct wl_synth_counts {
    uint64_t api_calls, kernels, memcpys, memsets, nvtx_ranges, scopes;
    uint64_t flows; /* GPU work linked to an API call (what an exporter must draw) */
} wl_synth_counts;

/* Writes the session to path (replacing it). Returns 0, or -1 with err filled. */
int wl_synth_session(const char *path, const wl_synth_options *o, wl_synth_counts *counts, char *err,
                     size_t err_size);

#endif
