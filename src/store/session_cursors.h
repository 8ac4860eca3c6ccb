/* Streaming cursors over a session for the exporters (Perfetto, Chrome JSON, HTML report): host
 * intervals (API calls, NVTX ranges, scopes) in (pid, tid, start) or start order and GPU work
 * (kernels, memcpy, memset) in start order, one row at a time, so memory does not grow with the
 * session (it grows with the number of threads that made API calls: one statement each).
 * Both cursors agree on which GPU work has a flow from its API call: the API call exists, its
 * category can start that work (launch/graph_launch: kernels, memcpy, memset), the work has
 * timestamps and it does not start before the call (see docs/formats.md). */
#ifndef WARPLENS_STORE_SESSION_CURSORS_H
#define WARPLENS_STORE_SESSION_CURSORS_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

/* Flow ids: one per piece of GPU work, derived from its row id so both sides compute it alone. */
#define WL_FLOW_KERNEL(id) ((uint64_t)(id) * 4u + 1u)
#define WL_FLOW_MEMCPY(id) ((uint64_t)(id) * 4u + 2u)
#define WL_FLOW_MEMSET(id) ((uint64_t)(id) * 4u + 3u)

/* Cheap facts the exporters need before walking (no full-table sorts). */
typedef struct wl_session_span {
    uint64_t origin_ns;    /* <= every timestamp in practice: earliest process start or record */
    uint64_t end_ns;       /* latest process end or record end: closes unterminated ranges */
    uint64_t api_calls, nvtx_ranges, scopes, kernels, memcpys, memsets; /* rows, for progress */
    uint64_t timers;       /* completed timer-API intervals (0 without the timer table) */
} wl_session_span;
int wl_session_get_span(wl_session *s, wl_session_span *out);
/* Only origin_ns and end_ns (index look-ups; the counts, which read whole tables, are left 0). */
int wl_session_get_bounds(wl_session *s, wl_session_span *out);

/* Start of the n-th kernel (0-based) in time order, or UINT64_MAX when there are not that many:
 * how the HTML report picks the time window it embeds. */
uint64_t wl_session_nth_kernel_start(wl_session *s, uint64_t n);

/* Name of a thread from the thread table ("" when unnamed or unknown). */
int wl_session_thread_name(wl_session *s, uint32_t pid, uint32_t tid, char *out, size_t n);
/* Calls fn for every row of the thread table, ordered by (pid, tid). */
int wl_session_each_thread(wl_session *s, void (*fn)(uint32_t pid, uint32_t tid, const char *name, void *),
                           void *arg);

/* Open flag for a caller that can start over (wl_gpu_cursor_each): the kernels may be read in
 * the table's own order, which is start order up to a bounded disorder in a session of one
 * process, and put back in start order by a window of rows: about half the CPU of the start-index
 * walk. When a kernel comes later than the window allows, the walk returns WL_CUR_RESTART after
 * rows were handed out: the caller forgets them, closes the cursor (the session handle then
 * remembers: the GPU cursor reads through the index on it from then on) and starts over.
 * Sessions of several processes are read through the index anyway. */
#define WL_CUR_TABLE_ORDER 1
#define WL_CUR_RESTART (-2)

/* ---- host intervals ------------------------------------------------------------------------ */
typedef enum wl_host_kind { WL_HOST_NVTX = 1, WL_HOST_SCOPE = 2, WL_HOST_API = 3, WL_HOST_TIMER = 4 } wl_host_kind;

typedef struct wl_host_item {
    wl_host_kind kind;
    uint32_t pid, tid;
    uint64_t start_ns, end_ns;
    int open_end;           /* NVTX range or scope never closed: end_ns is the session end */
    int64_t id;             /* api_call.id, nvtx_range.id, scope.scope_id */
    char name[512];
    uint64_t name_key;      /* non-zero: every item of this cursor with this key has this name (a
                               row read from the export pack: its string's index), else 0 */
    char group[64];         /* API category, NVTX domain, timer "<kind> <category>", "" for scopes */
    char scope[256];        /* API: the enclosing warplens scope's name, else "" */
    uint32_t correlation_id;
    int64_t return_value;
    int64_t app_thread;     /* scopes: the application thread id attached (0: none) */
    const uint64_t *flows;  /* API: flow ids to the GPU work it started (valid until next step) */
    size_t n_flows;
} wl_host_item;

/* Each cursor reads through its own read-only connection (when the session file can be opened
 * again), so a host and a GPU cursor can be stepped by two threads at once. */
typedef struct wl_host_cursor wl_host_cursor;
wl_host_cursor *wl_host_cursor_open(wl_session *s, uint64_t open_end_ns, char *err, size_t err_size);
/* The same rows in start order across all threads (per thread, the order above; at equal starts
 * the longer interval first, then NVTX, scope, API): what the exporters walk, since consecutive
 * rows are then close in the tables and the flow look-ups hit cached pages. */
wl_host_cursor *wl_host_cursor_open_by_start(wl_session *s, uint64_t open_end_ns, char *err, size_t err_size);
/* Returns 1 with *item filled, 0 at the end, -1 on error. */
int wl_host_cursor_next(wl_host_cursor *c, wl_host_item *item);
void wl_host_cursor_close(wl_host_cursor *c);

/* ---- GPU work -------------------------------------------------------------------------------- */
typedef enum wl_gpu_kind { WL_GPU_KERNEL = 1, WL_GPU_MEMCPY = 2, WL_GPU_MEMSET = 3 } wl_gpu_kind;

typedef struct wl_gpu_item {
    wl_gpu_kind kind;
    int64_t id;
    uint32_t pid, device_id;
    int64_t stream_id;
    uint64_t start_ns, end_ns;
    uint32_t correlation_id;
    uint64_t flow;          /* 0: no flow from an API call */
    int64_t graph_id;       /* -1 when not from a graph */
    int64_t tid;            /* the launching host thread (of its API call); -1 when unknown */
    int64_t scope_id;       /* innermost warplens scope, -1 none */
    char scope[256];
    /* kernels */
    int64_t name_id;        /* kernel_name.id: kernels with the same id have the same names */
    int grid[3], block[3], cluster_size;
    int registers, static_smem, dynamic_smem, smem_limit_config, carveout; /* carveout -1: unset */
    int64_t queue_delay_ns;  /* -1 when unknown */
    int64_t submit_delay_ns; /* start - submitted, -1 when unknown */
    int64_t local_mem;       /* local memory per thread, bytes */
    int64_t app_thread;      /* application thread id of its scope (session_identity.h), 0 none */
    /* identity (session_identity.h): "" when none or the session predates it */
    int64_t op_id;          /* -1: none */
    char op[512], shape[1024], tier[64];
    /* copies and sets */
    char copy_kind[16], src_kind[24], dst_kind[24];
    uint64_t bytes;
    double gbps;
    const void *name_cursor; /* the cursor whose copy of name_id's names the item holds */
    /* last, so the fields above share a few cache lines with the name's start */
    char short_name[256], name[8192];
} wl_gpu_item;

typedef struct wl_gpu_cursor wl_gpu_cursor;
wl_gpu_cursor *wl_gpu_cursor_open(wl_session *s, char *err, size_t err_size);
/* The same rows with flow always 0 (no look-up of the API call): for a reader that takes the flow
 * ids from the host cursor's API calls, whose GPU work always starts later. flags: 0 or
 * WL_CUR_TABLE_ORDER. */
wl_gpu_cursor *wl_gpu_cursor_open_unlinked(wl_session *s, int flags, char *err, size_t err_size);
/* Returns 1 with *item filled, 0 at the end, -1 on error (always through the index). */
int wl_gpu_cursor_next(wl_gpu_cursor *c, wl_gpu_item *item);
/* Every row in the same order: slot(arg) gives the item to fill (NULL: stop), emit(arg) takes it
 * (non-zero: stop). Returns 0 at the end, 1 when stopped, -1 on error, WL_CUR_RESTART (above). */
int wl_gpu_cursor_each(wl_gpu_cursor *c, wl_gpu_item *(*slot)(void *arg), int (*emit)(void *arg), void *arg);
/* After wl_gpu_cursor_each returned 0 having read the kernels in table order: how many kernels
 * have no timestamps (they are in no walk; a reader of them can skip its own scan when 0), else -1. */
int64_t wl_gpu_cursor_untimed(const wl_gpu_cursor *c);
/* 1 when wl_gpu_cursor_each reads the kernels in table order (only it does: wl_gpu_cursor_next
 * reads them in start order through the index). */
int wl_gpu_cursor_table_order(const wl_gpu_cursor *c);
void wl_gpu_cursor_close(wl_gpu_cursor *c);

#endif
