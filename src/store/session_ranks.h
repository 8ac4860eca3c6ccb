/* What cross-rank analysis reads from a session (merge's clock alignment, `warplens ranks`):
 * collective kernels, the step ranges and the GPU work, each in one ordered pass. */
#ifndef WARPLENS_STORE_SESSION_RANKS_H
#define WARPLENS_STORE_SESSION_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

/* A collective: a kernel whose name starts with ncclDevKernel_ or ncclKernel_ (NCCL's). */
typedef struct wl_collective {
    uint32_t pid;
    int64_t stream_id;
    char name[160];
    uint64_t start_ns, end_ns;
} wl_collective;
/* Every timed collective, by process, stream and start. Returns the count, or -1. */
int wl_session_each_collective(wl_session *s, void (*fn)(const wl_collective *, void *), void *arg);

/* The most frequent name of the top-level NVTX ranges (those no other range of their thread
 * encloses), into out; 0, or -1 when the session has none. */
int wl_session_top_range_name(wl_session *s, char *out, size_t n);
/* Each closed NVTX range named name, by process and start. Returns the count, or -1. */
int wl_session_each_named_range(wl_session *s, const char *name,
                                void (*fn)(uint32_t pid, uint64_t start_ns, uint64_t end_ns, void *), void *arg);

/* GPU work in start order (all processes interleaved): kernels (collective set for NCCL's),
 * copies (bytes set) and sets. */
typedef struct wl_gpu_span {
    uint32_t pid;
    int kind; /* 1 kernel, 2 copy, 3 set */
    int collective;
    uint64_t start_ns, end_ns, bytes;
} wl_gpu_span;
int wl_session_each_gpu_span(wl_session *s, void (*fn)(const wl_gpu_span *, void *), void *arg);

#endif
