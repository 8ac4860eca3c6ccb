/* The timeline model's state and its tracks (internal to the exporters; timeline_tracks.c): the
 * processes, threads, GPUs and streams a walk has met, each a group of lanes (its own track and
 * the overlap lanes added when slices do not nest), found or declared by key, and the placement
 * of a slice on the first lane where it nests. timeline_model.c lays the slices out on them. */
#ifndef WARPLENS_EXPORT_TIMELINE_TRACKS_H
#define WARPLENS_EXPORT_TIMELINE_TRACKS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/collective_match.h"
#include "export/timeline_index.h"
#include "export/timeline_internal.h"
#include "export/timeline_model.h"

typedef struct tl_lane {
    wl_tl_track t;
    char name[192];
    uint64_t *ends;            /* open slices' end times, innermost last */
    int depth, cap;
} tl_lane;

struct tl_gpu;
typedef struct tl_group {      /* a thread or a stream with its lanes */
    uint32_t pid, tid, device;
    int64_t stream;
    struct tl_gpu *gpu;        /* a stream's device */
    tl_lane **lanes;
    int n;
} tl_group;

#define TL_RECENT 4
typedef struct tl_recent {     /* the few groups items came from last, round-robin replacement */
    tl_group *g[TL_RECENT];
    unsigned next;
} tl_recent;

typedef struct tl_gpu {
    uint32_t device;
    wl_tl_track t;
    char name[192];
    tl_counters counters;
    wl_tl_track samples[TL_SAMPLE_SERIES]; /* NVML series, declared at the first sample (uuid 0 before) */
    uint32_t next_tid;
} tl_gpu;

typedef struct tl_ptr_list {
    void **p;
    size_t n, cap;
} tl_ptr_list;

typedef struct tl_backend_slot { /* the backend of a kernel name, decided once per name */
    int64_t name_id;
    const char *backend;
} tl_backend_slot;

typedef struct tl_model {
    wl_session *s;
    const wl_tl_options *o;
    const wl_tl_sink *sink;
    wl_tl_stats *st;
    int max_lanes;
    uint64_t next_uuid;
    uint32_t next_host_lane_tid;
    tl_ptr_list procs, threads, streams, gpus; /* tl_group (procs: lane 0 only), tl_gpu */
    tl_index by_key;           /* processes, threads, GPUs and streams by their key */
    /* the threads and streams items came from last, looked up before the index (rows of a few
     * threads and streams interleave) */
    tl_recent recent_threads, recent_streams;
    tl_occ_cache *occ;
    tl_flows flows;            /* started by an API call, not yet ended by its GPU work */
    tl_metrics *metrics;       /* NULL: the session has no hardware metrics */
    tl_backend_slot backends[1024];
    int ranked;                /* several ranks or hosts: processes named host / rank N / pid, each with its GPUs */
    wl_coll_links *coll;       /* collectives run by several processes: flows first -> last arrival */
    tl_flows coll_started;     /* those flows drawn from their first arrival */
    uint64_t done, total;
    int failed;
} tl_model;


/* Declares a track to the sink (and counts it): 0, or -1 when the sink failed. */
int tl_emit_track(tl_model *m, const wl_tl_track *t);
void tl_free_group(tl_group *g);
/* Each returns the object, declared (and its track emitted) on first use; NULL on failure. */
tl_group *tl_find_proc(tl_model *m, uint32_t pid); /* NULL also when not declared yet */
tl_group *tl_find_thread(tl_model *m, uint32_t pid, uint32_t tid);
tl_gpu *tl_find_gpu(tl_model *m, uint32_t pid, uint32_t device, const char *name);
tl_group *tl_find_stream(tl_model *m, const wl_gpu_item *it);
/* The session's callbacks that declare every process, thread and device up front (m->failed). */
void tl_on_process(const wl_process_row *r, void *arg);
void tl_on_thread(uint32_t pid, uint32_t tid, const char *name, void *arg);
void tl_on_device(const wl_device_row *d, void *arg);
/* A ranked session: several processes of which two have a rank, or processes of two hosts. */
int tl_session_ranked(wl_session *s);
/* Ends every slice still open on the group's lanes: 0, or -1 when the sink failed. */
int tl_flush_group(tl_model *m, tl_group *g);
/* The first lane of g where [start, end] nests (ending the slices it outlived); NULL when none
 * within max_lanes, or on failure with *err set. */
tl_lane *tl_place(tl_model *m, tl_group *g, uint64_t start, uint64_t end, int *err);

#endif
