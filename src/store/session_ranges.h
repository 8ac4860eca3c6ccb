/* User ranges of a session (NVTX ranges and warplens scopes) and the kernels' launch facts, read
 * into plain arrays for the range views (analysis/range_view.h), which decide which kernels each
 * range contains. Names are grouped while reading: ranges of one kind, domain and name share an
 * index into the name list. */
#ifndef WARPLENS_STORE_SESSION_RANGES_H
#define WARPLENS_STORE_SESSION_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

typedef enum wl_range_kind { WL_RANGE_NVTX = 1, WL_RANGE_SCOPE = 2 } wl_range_kind;

typedef struct wl_user_range {
    int64_t id;                 /* nvtx_range.id, or the scope's scope_id (unique per pid) */
    int64_t parent_id;          /* scopes: the enclosing scope's id, -1 none; NVTX: -1 */
    uint64_t start_ns, end_ns;  /* end_ns: the session's end when the range never closed */
    uint32_t pid, tid;          /* tid: the thread that opened it, 0 when unknown */
    uint32_t end_tid;           /* the thread that closed it (scopes: tid), 0 when unknown or open */
    uint32_t name_idx;          /* into wl_user_ranges.names */
    uint8_t kind;               /* wl_range_kind */
    uint8_t open;               /* never closed */
} wl_user_range;

typedef struct wl_range_name {
    uint8_t kind;               /* wl_range_kind */
    char *domain;               /* NVTX domain, "" for the default domain and for scopes */
    char *name;
} wl_range_name;

typedef struct wl_user_ranges {
    wl_user_range *ranges;      /* NVTX ranges, then scopes, each sorted by (domain,) name */
    size_t n;
    wl_range_name *names;
    size_t n_names;
} wl_user_ranges;

/* Reads every NVTX range and scope. 0, or -1 on a database error / out of memory. */
int wl_session_user_ranges(wl_session *s, wl_user_ranges *out);
void wl_user_ranges_free(wl_user_ranges *r);

typedef struct wl_kernel_launch {
    int64_t kernel_id;
    int64_t scope_id;           /* innermost warplens scope open at the launch, -1 none */
    int64_t api_id;             /* the launch call (graph kernels: the graph launch), -1 none */
    uint64_t launch_ns;         /* when that call started, 0 when there is no call */
    uint64_t gpu_ns;            /* GPU time, 0 without timestamps */
    uint32_t pid, tid;          /* tid: the launch call's thread, 0 when unknown */
    int has_timestamps;
} wl_kernel_launch;

/* Kernels in id order (only_measured: only those with hardware metrics). *out is malloc'd;
 * returns the count, or -1. */
long wl_session_kernel_launches(wl_session *s, int only_measured, wl_kernel_launch **out);

#endif
