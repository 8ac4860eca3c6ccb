/* Pieces of the timeline model (timeline_model.c) kept in their own files: per-launch occupancy
 * with a small cache, the background readers, the set of open flows, the per-device GPU fill /
 * concurrency counters, and the hardware metrics slices carry as args. */
#ifndef WARPLENS_EXPORT_TIMELINE_INTERNAL_H
#define WARPLENS_EXPORT_TIMELINE_INTERNAL_H

#include <stdint.h>

#include "analysis/occupancy.h"
#include "capfile/metric_spec.h"
#include "export/timeline_model.h"

/* ---- occupancy of a kernel launch on its device (timeline_occupancy.c) ---------------------- */
typedef struct tl_occ {
    int valid;                 /* 0: no device description or invalid launch */
    double occupancy_pct;
    int active_blocks_per_sm;
    const char *limiter;       /* "registers", "shared_memory", ... */
    double fill;               /* occupancy x min(1, blocks / (active blocks per SM x SMs)) */
} tl_occ;

typedef struct tl_occ_cache tl_occ_cache;
tl_occ_cache *tl_occ_cache_new(void);
void tl_occ_cache_free(tl_occ_cache *c);
/* Records a device row (pid, device) so later kernels on it can be evaluated. */
int tl_occ_add_device(tl_occ_cache *c, const wl_device_row *d);
void tl_occ_kernel(tl_occ_cache *c, const wl_gpu_item *k, tl_occ *out);

/* ---- background readers (timeline_prefetch.c) ---------------------------------------------- */
/* A thread stepping one cursor ahead of the model into a bounded ring of decoded rows. */
typedef struct tl_reader tl_reader;
tl_reader *tl_reader_host(wl_session *s, uint64_t open_end_ns, char *err, size_t err_size);
/* flags: the GPU cursor's open flags (session_cursors.h: WL_CUR_TABLE_ORDER). */
tl_reader *tl_reader_gpu(wl_session *s, int flags, char *err, size_t err_size);
/* The next row (valid until the following call), or NULL at the end; *failed: 0, or -1 when a
 * read failed, WL_CUR_RESTART when rows read in table order broke start order. */
const wl_host_item *tl_reader_next_host(tl_reader *r, int *failed);
const wl_gpu_item *tl_reader_next_gpu(tl_reader *r, int *failed);
/* A GPU reader that read every kernel in table order: the kernels without timestamps it saw
 * (wl_gpu_cursor_untimed), else -1. */
int64_t tl_reader_untimed(tl_reader *r);
/* Stops the thread (also before the end) and frees everything. */
void tl_reader_close(tl_reader *r);

/* ---- flows started and not yet ended (timeline_flows.c) ------------------------------------- */
typedef struct tl_flow_entry {
    uint64_t id;               /* 0: empty slot */
    uint64_t val;              /* the starting API call's duration (ns) */
} tl_flow_entry;
typedef struct tl_flow_set {
    tl_flow_entry *e;          /* an id beside its value: one cache line for both */
    size_t n, cap;
    int mixed;                 /* ids spread by a hash (after a long probe), not by their order */
} tl_flow_set;
typedef struct tl_flows {
    tl_flow_set set[4];        /* by id & 3, the kind of GPU work (kernel, copy, set) */
} tl_flows;
void tl_flows_free(tl_flows *f);
size_t tl_flows_count(const tl_flows *f);
int tl_flows_hashed(const tl_flows *f); /* 1 when a set went to the hash (tests) */
int tl_flows_add(tl_flows *f, uint64_t id, uint64_t val);  /* id != 0; -1 out of memory */
int tl_flows_take(tl_flows *f, uint64_t id, uint64_t *val); /* 1 when it was there (and is removed) */

/* ---- counters of one GPU (timeline_counters.c) ---------------------------------------------- */
typedef struct tl_running {
    uint64_t end_ns;
    double fill;
    int64_t stream;
} tl_running;

typedef struct tl_stream_count {
    int64_t stream;
    size_t kernels;            /* running on it */
} tl_stream_count;

typedef struct tl_counters {
    wl_tl_track fill_track, count_track;
    uint32_t device;
    tl_running *heap;          /* running kernels, min-heap on end time */
    size_t n, cap;
    tl_stream_count *streams;  /* streams with running kernels (few: a linear list) */
    size_t n_streams, cap_streams;
    double sum;
    int has_pending;
    uint64_t pending_ts;
    double pending_fill;
    size_t pending_count, pending_streams;
    double last_fill;          /* last written values (skip repeats) */
    long long last_count;
} tl_counters;

void tl_counters_init(tl_counters *c, uint32_t device);
void tl_counters_free(tl_counters *c);
/* Advances to time ts (kernels ending at or before it leave), then adds a kernel on `stream` if
 * fill >= 0. */
int tl_counters_kernel(tl_counters *c, uint64_t ts, uint64_t end_ns, double fill, int64_t stream,
                       const wl_tl_sink *sink, wl_tl_stats *st);
/* Lets every running kernel end and writes the last values. */
int tl_counters_finish(tl_counters *c, const wl_tl_sink *sink, wl_tl_stats *st);

/* ---- in-kernel lanes under their kernels' streams (timeline_inkernel.c) ---------------------- */
/* The stream track of (pid, device, stream), created if needed, and a fresh track id on its GPU. */
typedef int (*tl_stream_fn)(void *ctx, uint32_t pid, uint32_t device, int64_t stream, const wl_tl_track **base,
                            uint32_t *tid);
int tl_inkernel_walk(wl_session *s, const wl_tl_sink *sink, wl_tl_stats *st, uint64_t *next_uuid, uint32_t max_lanes,
                     tl_stream_fn stream, void *stream_ctx, char *err, size_t err_size);

/* ---- capture ranges, one track per process (timeline_capture.c) ------------------------------ */
/* The track of process pid (0 with *track set), -1 when the model has none. */
typedef int (*tl_process_fn)(void *ctx, uint32_t pid, const wl_tl_track **track);
int tl_capture_walk(wl_session *s, const wl_tl_sink *sink, wl_tl_stats *st, uint64_t *next_uuid, tl_process_fn process,
                    void *process_ctx, char *err, size_t err_size);

/* ---- NVML device-sample series of one GPU (timeline_counters.c) ------------------------------ */
#include "store/session_samples.h"

enum { TL_SAMPLE_SERIES = 7 };
/* Name and unit of series i (0 .. TL_SAMPLE_SERIES-1). */
void tl_sample_series(int i, const char **name, const char **unit);
/* Value of series i in a sample (in the series' unit); 0 when NVML could not read it. */
int tl_sample_value(const wl_device_sample_row *r, int i, double *v);

/* ---- hardware metrics as slice args (timeline_metrics.c) ------------------------------------ */
/* Only sessions with metrics have a tl_metrics; without one the model adds nothing per slice. */
#define TL_METRIC_ARGS (WL_METRICS_MAX + 6) /* every metric, the derived values, a count or id */
typedef struct tl_metrics tl_metrics;
/* NULL when the session has no hardware metrics, or on failure (then *failed = 1, err set). */
tl_metrics *tl_metrics_open(wl_session *s, int *failed, char *err, size_t err_size);
void tl_metrics_close(tl_metrics *m);
/* Each appends up to TL_METRIC_ARGS args and returns how many: a kernel's own values; the
 * combined metrics of the kernels inside an NVTX range or scope; for a launch call whose kernel
 * has no GPU timestamps (CUPTI gives none under kernel replay), that kernel's values. */
size_t tl_metrics_kernel(tl_metrics *m, int64_t kernel_id, wl_pf_arg *args);
size_t tl_metrics_range(tl_metrics *m, wl_host_kind kind, uint32_t pid, int64_t id, wl_pf_arg *args);
size_t tl_metrics_launch(tl_metrics *m, int64_t api_id, wl_pf_arg *args);

/* ---- PM sample series of each GPU (timeline_pm.c) -------------------------------------------- */
/* The GPU's track, created if needed (NULL: out of memory). */
typedef const wl_tl_track *(*tl_gpu_fn)(void *ctx, uint32_t device);
/* One counter track per PM metric under its GPU; 0, or -1 on a read or sink error. */
int tl_pm_walk(wl_session *s, const wl_tl_sink *sink, wl_tl_stats *st, uint64_t *next_uuid, tl_gpu_fn gpu, void *ctx);

#endif
