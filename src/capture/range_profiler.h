/* Internals shared by the parts of hardware metrics (`--metrics`): range_profiler.c owns CUPTI's
 * range profiler per context (start, stop/decode/evaluate, graph user ranges, the writer side),
 * range_profiler_setup.c sets a context's profiler up and owns the metric set, metric_calls.c
 * decides at each call's entry and exit what is profiled and in which batch. Not a public
 * interface: recorder.h has the entry points. */
#ifndef WARPLENS_CAPTURE_RANGE_PROFILER_H
#define WARPLENS_CAPTURE_RANGE_PROFILER_H

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "capfile/metric_spec.h"
#include "capture/metric_match.h"

enum { M_OFF = 0, M_RUNNING, M_FAILED };
/* --metrics-graphs: off (the profiler is stopped around graph launches), node (the profiler runs
 * through a graph launch, in a batch of its own), launch (one user range around the launch) */
enum { WL_GRAPHS_OFF = 0, WL_GRAPHS_NODE, WL_GRAPHS_LAUNCH };

#define WL_FN_TABLE 4096 /* kernel functions remembered per context (first launch, filter verdict) */

typedef struct wl_fn_entry {
    const void *fn;      /* CUfunction or CUkernel handle */
    int8_t selected;     /* name filter verdict: -1 not asked yet */
    uint8_t profiled;    /* a launch of it was profiled already */
} wl_fn_entry;

typedef struct mctx {
    CUcontext ctx;
    uint32_t device_id;
    int state;
    _Atomic int defs_pending;         /* METRIC_DEF records not yet written (writer thread) */
    int defs_written;                 /* the metric definitions are out (writer thread) */
    size_t num_passes;
    CUpti_ProfilerReplayMode replay;  /* kernel replay, or user replay when one pass suffices */
    int graphs;                       /* WL_GRAPHS_*, after falling back where CUPTI refused */
    char status[200];                 /* why metrics are off on this context ("" when running) */
    CUpti_RangeProfiler_Object *obj;
    CUpti_Profiler_Host_Object *host;
    uint8_t *config;
    size_t config_size;
    uint8_t *availability;            /* counter availability image: the host object refers to it */
    uint8_t *counter;
    size_t counter_size;
    size_t cap;                       /* calls per batch and ranges per counter-data image (REPLAY_BATCH) */
    /* the batch: calls since the last decode, in submission order (held under lock) */
    int running;                      /* Start called and not yet stopped */
    int user_range;                   /* a graph launch's user range is open */
    int isolated;                     /* the batch holds a call that must be alone */
    unsigned isolate_left;            /* calls still to isolate after a mismatch */
    uint64_t batch_start_ns;
    wl_mm_call *calls;
    size_t ncalls;
    /* decode scratch, allocated at set-up (application threads do not allocate) */
    double *values;                   /* ranges x metrics */
    double *ctas;
    wl_mm_range *verdicts;
    size_t *match_scratch;
    wl_fn_entry *fns;
    size_t nfns;
    uint64_t next_range;
    pthread_mutex_t lock;
} mctx;

/* the launch signature: CTAs launched equals the grid size of the kernel a range measured */
#define WL_RP_CTA_METRIC "sm__ctas_launched.sum"

/* The process's metric set (range_profiler_setup.c): filled from WARPLENS_METRICS at init, checked
 * against the first context's GPU (validated), read-only afterwards. ptr[i] points at names[i]. */
typedef struct wl_rp_set {
    char names[WL_METRICS_MAX][WL_METRIC_NAME_MAX];
    const char *ptr[WL_METRICS_MAX];
    char units[WL_METRICS_MAX][32];
    uint32_t types[WL_METRICS_MAX];
    int count;
    int cta_idx;   /* index of WL_RP_CTA_METRIC in names, -1 when not collected */
    int validated; /* the names were checked against a GPU */
} wl_rp_set;
extern wl_rp_set wl_rp_metrics;

/* configuration (range_profiler.c, read-only once metrics are on) */
extern unsigned wl_rp_batch;         /* calls per batch at most (WARPLENS_METRICS_BATCH) */
extern uint64_t wl_rp_max_age_ns;    /* a batch older than this is decoded at the next call */
extern int wl_rp_graphs;             /* WL_GRAPHS_* asked for */
/* progress counts (any thread) */
extern _Atomic uint64_t wl_rp_calls_seen, wl_rp_calls_done;

/* range_profiler.c, all with m->lock held */
mctx *wl_rp_context(CUcontext ctx);  /* set up at the first call of a context; NULL: no metrics there */
int wl_rp_start(mctx *m);            /* auto range: counter data, SetConfig, Start; -1 (explained) */
void wl_rp_flush(mctx *m);           /* Stop, decode, evaluate, match, hand over; leaves it stopped */
int wl_rp_graph_begin(mctx *m, uint32_t correlation_id); /* user range around a graph launch */
void wl_rp_graph_end(mctx *m, CUstream stream);
void wl_rp_graph_refused(mctx *m, const char *what, CUptiResult st); /* graphs off on m, profiler stopped */
void wl_rp_teardown(mctx *m);
uint64_t wl_rp_now_ns(void);
/* metrics off on m, one line saying why and what to do; `what` is the step that failed */
void wl_rp_explain(mctx *m, const char *what, CUptiResult st);
/* range_profiler_setup.c, g_setup held: the context's profiler ready to start (0), or -1 explained */
int wl_rp_setup(mctx *m);

#endif
