/* The timeline model shared by the session exporters (Perfetto, Chrome JSON, HTML report): walks
 * a session once through the streaming cursors and tells a sink which tracks exist and which
 * slices, flows and counter values go on them, already laid out so that every track nests:
 *  - host: one track per thread carrying API calls, NVTX ranges and scopes; an interval that
 *    would partially overlap an open one goes to an extra "overlap" lane under the thread;
 *  - GPU: a synthetic process per device, one track per stream (plus overlap lanes), kernels and
 *    copies annotated with their launch configuration and theoretical occupancy;
 *  - flows: from each API call to every piece of GPU work it started (graph launches: one flow
 *    per kernel);
 *  - ranked sessions (several ranks, or several hosts: a merged job): each process is named
 *    `host / rank N / pid` and holds its own GPUs and streams; a collective kernel that several
 *    ranks ran (analysis/collective_match.h) starts a flow on the rank that arrived first (its
 *    flows_out) that ends on the one that arrived last (rank_flow_in);
 *  - counters per device: estimated GPU fill (%) and concurrent kernels;
 *  - in-kernel lanes (device.cuh buffers collected under `warplens run`) under their kernel's
 *    stream, after everything else (timeline_inkernel.c);
 *  - capture ranges (`--capture-range`): a track at the top of each such process with one slice
 *    per traced span (timeline_capture.c).
 * Memory stays bounded by the number of threads, streams, lanes and concurrently running kernels,
 * not by the session size. */
#ifndef WARPLENS_EXPORT_TIMELINE_MODEL_H
#define WARPLENS_EXPORT_TIMELINE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/progress.h"

#include "export/perfetto_packets.h"
#include "store/session.h"
#include "store/session_cursors.h"

#define WL_TL_GPU_PID_BASE 0x10000000u

typedef enum wl_tl_track_type {
    WL_TL_PROCESS = 1, /* a profiled process */
    WL_TL_THREAD,      /* a host thread (parent: its process) */
    WL_TL_GPU,         /* a device, drawn as a synthetic process */
    WL_TL_STREAM,      /* a stream (parent: its GPU) */
    WL_TL_LANE,        /* extra lane of a thread or stream (parent: that track) */
    WL_TL_COUNTER,     /* counter (parent: its GPU) */
} wl_tl_track_type;

typedef struct wl_tl_track {
    uint64_t uuid, parent_uuid; /* non-zero, unique; parent 0 for processes and GPUs */
    wl_tl_track_type type;
    uint32_t pid;               /* process pid, or WL_TL_GPU_PID_BASE + device (a ranked session's
                                 * GPUs: their process's pid, parent its process track) */
    uint32_t tid;               /* thread id; streams and lanes get synthetic ids unique per pid */
    const char *name;
    int sort_index;
    const char *unit;           /* counters: "%" or "kernels" */
    int64_t stream_id;          /* streams and their lanes, else -1 */
} wl_tl_track;

typedef enum wl_tl_kind {
    WL_TL_API = 1, WL_TL_NVTX, WL_TL_SCOPE, WL_TL_KERNEL, WL_TL_MEMCPY, WL_TL_MEMSET,
    WL_TL_TIMER, /* timer-API interval, on the host thread that timed it */
    WL_TL_INKERNEL, /* a region or instant recorded inside a kernel (device.cuh), on its lane */
    WL_TL_CAPTURE   /* a capture range (--capture-range): the span that was traced, on its process */
} wl_tl_kind;

typedef struct wl_tl_slice { /* (timeline_model.c's slice_init sets each field: add new ones there) */
    const wl_tl_track *track;
    wl_tl_kind kind;
    uint64_t start_ns, end_ns;
    const char *name, *category;
    uint64_t name_key;         /* non-zero: every slice with this key has this name (kernels: odd,
                                * from the kernel name id; host rows read from the export pack: even) */
    const uint64_t *flows_out; /* flows this slice starts (API calls) */
    size_t n_flows_out;
    uint64_t flow_in;          /* flow this slice ends (GPU work), 0 none */
    uint64_t rank_flow_in;     /* a collective kernel of the last rank to arrive: the flow from the
                                * first one's it ends (ranked sessions), 0 none */
    const wl_pf_arg *args;
    size_t n_args;
    const wl_host_item *host;  /* the row behind it (one of the two) */
    const wl_gpu_item *gpu;
    double occupancy_pct;      /* kernels: theoretical occupancy, -1 unknown */
    double fill;               /* kernels: estimated fraction of the GPU it can fill (0..1) */
    int active_blocks_per_sm;  /* kernels: with occupancy_pct; the limiter is an arg */
    const char *limiter;       /* kernels: what bounds occupancy ("registers", ...), NULL unknown */
    int64_t launch_ns;         /* GPU work: duration of the API call that started it, -1 unknown */
} wl_tl_slice;

/* The kernels running on one device from `ts` until the next state of that device. */
typedef struct wl_tl_gpu_state {
    uint32_t device;
    uint64_t ts;
    size_t kernels, streams; /* running kernels, streams they run on */
    double fill;             /* estimated GPU fill, a fraction (above 1: oversubscribed) */
} wl_tl_gpu_state;

/* A sink returns 0 to continue, non-zero to stop the walk (it fails with that error). Any
 * callback may be NULL. */
typedef struct wl_tl_sink {
    void *ctx;
    int (*track)(void *ctx, const wl_tl_track *t);
    int (*slice_begin)(void *ctx, const wl_tl_slice *s);
    int (*slice_end)(void *ctx, const wl_tl_track *t, uint64_t ts);
    int (*counter)(void *ctx, const wl_tl_track *t, uint64_t ts, double value);
    /* every change of a device's running kernels (changes at one instant merged), in time order
     * per device, including the states the counters do not repeat */
    int (*gpu_state)(void *ctx, const wl_tl_gpu_state *st);
} wl_tl_sink;

typedef struct wl_tl_options {
    int max_lanes;   /* per thread/stream including the base track; 0 = 32 */
    int flat;        /* every slice on its thread's or stream's own track, none dropped, no slice
                      * ends reported: for sinks that keep no nesting (JFR) */
    unsigned inkernel_max_lanes; /* in-kernel (block, group) lanes drawn per buffer; 0 = 1024 */
    wl_progress progress; /* rows walked of the rows the session holds */
    uint64_t until_ns; /* 0: the whole run; else host and GPU rows that start at or after it are
                        * not read (a sink that keeps a leading window stops the walk there;
                        * slices open at that time still end where they end) */
    int table_order;   /* the caller can start over: the kernels may be read in the table's own
                        * order (session_cursors.h, WL_CUR_TABLE_ORDER); the walk then returns
                        * WL_TL_RESTART when that order was not close enough to start order */
} wl_tl_options;

typedef struct wl_tl_stats {
    uint64_t tracks, slices, host_slices, gpu_slices, flows, counter_events;
    uint64_t lanes_added;      /* overlap lanes created */
    uint64_t slices_dropped;   /* did not fit max_lanes (with their flows) */
    uint64_t origin_ns, end_ns;
    int64_t untimed_kernels;   /* kernels without timestamps (in no walk), when the walk counted
                                * them on the way (table order, every row read); else -1 */
} wl_tl_stats;

#define WL_TL_RESTART (-2)
int wl_timeline_walk(wl_session *s, const wl_tl_options *o, const wl_tl_sink *sink, wl_tl_stats *st, char *err,
                     size_t err_size);

#endif
