/* Hardware metrics per kernel, copy and set (`warplens run --metrics`) with CUPTI's range
 * profiler: auto range (one range per GPU activity, serialised). A metric set of one pass is
 * collected as the work runs (user replay with a single pass); more passes need kernel replay
 * (CUPTI re-runs each kernel once per pass, saving and restoring device memory around it). Either
 * way metrics mode changes the timeline's timing.
 *
 * This part owns the profiler of each context once range_profiler_setup.c has set it up at the
 * context's first call: Start with a fresh counter-data image, and at the end of each batch Stop,
 * decode, evaluate every range, tie the ranges to the batch's calls (metric_match.c) and hand
 * values and owners to the writer through a ring. metric_calls.c decides the batches. A batch is decoded when it is full, older
 * than WARPLENS_METRICS_FLUSH_MS (default 200) at the next call, or before a call that must be
 * alone in its batch, so a run stopped by a signal or a time limit keeps what was measured up to
 * then (the writer flushes the file every 100 ms). No range limit, bounded memory.
 *
 * Failures (no counter permission, counters held by another tool, unsupported GPU, unknown
 * metric) are reported once, in one line with the remedy; tracing continues without metrics. */
#include "capture/range_profiler.h"

#include "capture/cupti_errors.h"
#include "capture/metric_cost.h"
#include "capture/metric_filter.h"
#include "capture/profiler_host.h"
#include "capture/recorder.h"

#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

#define MAX_CTX 16
#define DEFAULT_BATCH 1000
#define DEFAULT_FLUSH_MS 200
#define RING_CAPACITY (1u << 15)
#define ISOLATE_AFTER_MISMATCH 64
#define PROGRESS_NS 250000000ull

unsigned wl_rp_batch = DEFAULT_BATCH;
uint64_t wl_rp_max_age_ns = DEFAULT_FLUSH_MS * 1000000ull;
int wl_rp_graphs = WL_GRAPHS_OFF;
_Atomic uint64_t wl_rp_calls_seen, wl_rp_calls_done;

static int g_on;
static mctx g_ctx[MAX_CTX];
static pthread_mutex_t g_setup = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_defs_ready;      /* some context has defs to write */
static _Atomic uint64_t g_unknown, g_without, g_cupti_dropped, g_ring_lost;
static _Atomic uint64_t g_tied[WLCAP_OWNER_KIND_COUNT], g_ranges, g_unknown_total; /* for the progress file */
static _Atomic uint32_t g_max_passes, g_replay_kind;
static char g_progress_path[4200];
static int g_progress_fd = -1;

/* Values and owners travel through one ring, in the order they are written. */
typedef struct ring_item {
    uint32_t type; /* WLCAP_METRIC_RANGE or WLCAP_METRIC_OWNER */
    uint32_t pad;
    union {
        wlcap_metric_range r;
        wlcap_metric_owner o;
    } u;
} ring_item;
static wl_mpsc wl_metric_ring;

uint64_t wl_rp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One line that says why and what to do; `what` is the step that failed. */
void wl_rp_explain(mctx *m, const char *what, CUptiResult st)
{
    const char *remedy = wl_cupti_remedy(st,
                                         "this GPU or its configuration (vGPU, MIG, MPS, confidential computing) does"
                                         " not support the range profiler: use a supported GPU (compute capability"
                                         " 7.5 or newer, bare metal)",
                                         NULL);
    snprintf(m->status, sizeof m->status, "%s failed (%s)", what, wl_cupti_result_text(st));
    wl_log("hardware metrics are off on GPU %u: %s: %s; %s. Tracing continues without metrics.", m->device_id, what,
           wl_cupti_result_text(st), remedy);
    m->state = M_FAILED;
    m->running = 0;
    m->ncalls = 0;
    m->defs_pending = 1;
    atomic_store(&g_defs_ready, 1);
}

static unsigned env_unsigned(const char *name, unsigned lo, unsigned hi, unsigned def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < (long)lo || x > (long)hi) {
        wl_log("%s=%s is not valid (%u..%u); using %u", name, v, lo, hi, def);
        return def;
    }
    return (unsigned)x;
}

int wl_metrics_init(const char *capture_path)
{
    const char *spec = getenv("WARPLENS_METRICS");
    if (!spec || !*spec)
        return 0;
    wl_rp_batch = env_unsigned("WARPLENS_METRICS_BATCH", 1, 100000, DEFAULT_BATCH);
    wl_rp_max_age_ns = env_unsigned("WARPLENS_METRICS_FLUSH_MS", 0, 3600000, DEFAULT_FLUSH_MS) * 1000000ull;
    const char *g = getenv("WARPLENS_METRICS_GRAPHS");
    if (g && *g) {
        if (!strcmp(g, "node"))
            wl_rp_graphs = WL_GRAPHS_NODE;
        else if (!strcmp(g, "launch"))
            wl_rp_graphs = WL_GRAPHS_LAUNCH;
        else if (strcmp(g, "off") != 0)
            wl_log("WARPLENS_METRICS_GRAPHS=%s is not valid (off, node, launch); graph launches are not profiled", g);
    }
    char err[256];
    int n = wl_metrics_expand(spec, wl_rp_metrics.names, WL_METRICS_MAX - 1, err, sizeof err); /* room for WL_RP_CTA_METRIC */
    if (n < 0) {
        wl_log("WARPLENS_METRICS: %s; tracing continues without metrics", err);
        return 0;
    }
    if (wl_mf_init() != 0)
        return 0;
    wl_rp_metrics.count = n;
    for (int i = 0; i < n; i++)
        wl_rp_metrics.ptr[i] = wl_rp_metrics.names[i];
    if (wl_mpsc_init(&wl_metric_ring, RING_CAPACITY, sizeof(ring_item)) != 0) {
        wl_log("out of memory for the metric ring; tracing continues without metrics");
        return 0;
    }
    wl_mpsc_set_spill(&wl_metric_ring, WL_SPILL_SAMPLES, wl_pool_wake);
    size_t len = strlen(capture_path);
    if (len > 6 && !strcmp(capture_path + len - 6, ".wlcap"))
        snprintf(g_progress_path, sizeof g_progress_path, "%.*s.wlprogress", (int)(len - 6), capture_path);
    g_on = 1;
    return 1;
}

int wl_metrics_enabled(void) { return g_on; }

static CUptiResult set_config(mctx *m, CUpti_ProfilerRange range, CUpti_ProfilerReplayMode replay)
{
    uint64_t t0 = wl_rp_now_ns();
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip;
    memset(&ip, 0, sizeof ip);
    ip.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
    ip.pRangeProfilerObject = m->obj;
    ip.counterDataSize = m->counter_size;
    ip.pCounterData = m->counter;
    CUptiResult st = cuptiRangeProfilerCounterDataImageInitialize(&ip);
    if (st != CUPTI_SUCCESS)
        return st;
    CUpti_RangeProfiler_SetConfig_Params sp;
    memset(&sp, 0, sizeof sp);
    sp.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
    sp.pRangeProfilerObject = m->obj;
    sp.configSize = m->config_size;
    sp.pConfig = m->config;
    sp.counterDataImageSize = m->counter_size;
    sp.pCounterDataImage = m->counter;
    sp.range = range;
    sp.replayMode = replay;
    sp.maxRangesPerPass = m->cap;
    sp.numNestingLevels = 1;
    sp.minNestingLevel = 1;
    sp.passIndex = 0;
    sp.targetNestingLevel = 1;
    st = cuptiRangeProfilerSetConfig(&sp);
    if (st != CUPTI_SUCCESS)
        return st;
    uint64_t t1 = wl_rp_now_ns();
    wl_mcost_add(WL_MC_CONFIGURE, t1 - t0);
    CUpti_RangeProfiler_Start_Params start;
    memset(&start, 0, sizeof start);
    start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
    start.pRangeProfilerObject = m->obj;
    st = cuptiRangeProfilerStart(&start);
    wl_mcost_add(WL_MC_START, wl_rp_now_ns() - t1);
    return st;
}

int wl_rp_start(mctx *m)
{
    CUptiResult st = set_config(m, CUPTI_AutoRange, m->replay);
    if (st != CUPTI_SUCCESS) {
        wl_rp_explain(m, "configuring the range profiler", st);
        return -1;
    }
    m->running = 1;
    m->batch_start_ns = wl_rp_now_ns();
    return 0;
}

/* Hands one item to the writer, waiting briefly when the ring is full: the launching thread is
 * already held by the profiler, and an item dropped here is a range without values or owner. */
static void push_item(const ring_item *it)
{
    for (int tries = 0;; tries++) {
        if (wl_mpsc_push(&wl_metric_ring, it) == 0)
            return;
        (void)wl_mpsc_take_dropped(&wl_metric_ring); /* only this file pushes: counted here instead */
        if (tries == 200) {
            atomic_fetch_add(&g_ring_lost, 1);
            return;
        }
        wl_pool_wake();
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static void push_range(mctx *m, uint64_t index, const wl_mm_range *v, const double *values)
{
    ring_item it;
    memset(&it, 0, sizeof it);
    it.type = WLCAP_METRIC_OWNER;
    it.u.o = (wlcap_metric_owner){index, m->device_id, v->correlation_id, v->kind, v->match, v->part, v->parts};
    push_item(&it);
    /* METRIC_RANGE keeps the correlation id only where it names what the range measured, so that
     * readers without METRIC_OWNER never tie a driver-internal or unknown range to a kernel */
    uint32_t corr = v->kind == WLCAP_OWNER_UNKNOWN || v->kind == WLCAP_OWNER_INTERNAL ? 0 : v->correlation_id;
    for (int first = 0; first < wl_rp_metrics.count; first += WLCAP_METRIC_CHUNK) {
        memset(&it, 0, sizeof it);
        it.type = WLCAP_METRIC_RANGE;
        wlcap_metric_range *r = &it.u.r;
        r->range_index = index;
        r->correlation_id = corr;
        r->device_id = m->device_id;
        r->first_metric = (uint32_t)first;
        r->count = (uint32_t)(wl_rp_metrics.count - first < WLCAP_METRIC_CHUNK ? wl_rp_metrics.count - first : WLCAP_METRIC_CHUNK);
        memcpy(r->values, values + first, r->count * sizeof(double));
        push_item(&it);
    }
}

/* A Stop or decode that failed right after a graph launch: graph launches are left out from now
 * on (the profiler is stopped around them) and the next call starts it afresh. */
void wl_rp_graph_refused(mctx *m, const char *what, CUptiResult st)
{
    wl_log("metrics: %s after a graph launch failed on GPU %u (%s); graph launches are not profiled from now on"
           " (other work is)", what, m->device_id, wl_cupti_result_text(st));
    m->graphs = WL_GRAPHS_OFF;
    m->running = m->user_range = 0;
    atomic_fetch_add(&g_without, m->ncalls);
    m->ncalls = 0;
    m->isolated = 0;
}

static int graph_batch(const mctx *m)
{
    return m->ncalls == 1 &&
           (m->calls[0].kind == WLCAP_OWNER_GRAPH_NODE || m->calls[0].kind == WLCAP_OWNER_GRAPH_LAUNCH);
}

static CUptiResult stop(mctx *m, uint8_t *all_submitted)
{
    CUpti_RangeProfiler_Stop_Params sp;
    memset(&sp, 0, sizeof sp);
    sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
    sp.pRangeProfilerObject = m->obj;
    CUptiResult st = cuptiRangeProfilerStop(&sp);
    if (all_submitted)
        *all_submitted = sp.isAllPassSubmitted;
    return st;
}

void wl_rp_flush(mctx *m)
{
    if (m->state != M_RUNNING || !m->running) {
        m->ncalls = 0;
        m->isolated = 0;
        return;
    }
    m->running = 0;
    uint8_t all_submitted = 0;
    uint64_t t0 = wl_rp_now_ns();
    CUptiResult st = stop(m, &all_submitted);
    uint64_t t1 = wl_rp_now_ns();
    wl_mcost_add(WL_MC_STOP, t1 - t0);
    if (st != CUPTI_SUCCESS) {
        if (graph_batch(m))
            wl_rp_graph_refused(m, "stopping the range profiler", st);
        else
            wl_rp_explain(m, "stopping the range profiler", st);
        return;
    }
    if (m->replay == CUPTI_UserReplay && !all_submitted) {
        /* one pass was configured: CUPTI asking for another would mean ranges without values */
        wl_rp_explain(m, "collecting without replay (CUPTI asked for another pass)", CUPTI_ERROR_NOT_SUPPORTED);
        return;
    }
    CUpti_RangeProfiler_DecodeData_Params dd;
    memset(&dd, 0, sizeof dd);
    dd.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
    dd.pRangeProfilerObject = m->obj;
    st = cuptiRangeProfilerDecodeData(&dd);
    if (st != CUPTI_SUCCESS) {
        if (graph_batch(m))
            wl_rp_graph_refused(m, "decoding counter data", st);
        else
            wl_rp_explain(m, "decoding counter data", st);
        return;
    }
    if (dd.numOfRangeDropped)
        atomic_fetch_add(&g_cupti_dropped, dd.numOfRangeDropped);
    CUpti_RangeProfiler_GetCounterDataInfo_Params gi;
    memset(&gi, 0, sizeof gi);
    gi.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
    gi.pCounterDataImage = m->counter;
    gi.counterDataImageSize = m->counter_size;
    st = cuptiRangeProfilerGetCounterDataInfo(&gi);
    if (st != CUPTI_SUCCESS) {
        wl_rp_explain(m, "reading the number of ranges", st);
        return;
    }
    uint64_t t2 = wl_rp_now_ns();
    wl_mcost_add(WL_MC_DECODE, t2 - t1);
    size_t n = gi.numTotalRanges;
    if (n > m->cap) { /* cannot happen with the image sized for the batch; counted if it does */
        atomic_fetch_add(&g_cupti_dropped, n - m->cap);
        n = m->cap;
    }
    for (size_t i = 0; i < n; i++) {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev;
        memset(&ev, 0, sizeof ev);
        ev.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
        ev.pHostObject = m->host;
        ev.pCounterDataImage = m->counter;
        ev.counterDataImageSize = m->counter_size;
        ev.rangeIndex = i;
        ev.ppMetricNames = wl_rp_metrics.ptr;
        ev.numMetrics = (size_t)wl_rp_metrics.count;
        ev.pMetricValues = m->values + i * (size_t)wl_rp_metrics.count;
        st = cuptiProfilerHostEvaluateToGpuValues(&ev);
        if (st != CUPTI_SUCCESS) {
            wl_rp_explain(m, "evaluating metric values", st);
            return;
        }
        if (wl_rp_metrics.cta_idx >= 0)
            m->ctas[i] = m->values[i * (size_t)wl_rp_metrics.count + (size_t)wl_rp_metrics.cta_idx];
    }
    uint64_t t3 = wl_rp_now_ns();
    wl_mcost_add(WL_MC_EVALUATE, t3 - t2);
    wl_mm_result res;
    wl_metric_match(m->calls, m->ncalls, wl_rp_metrics.cta_idx >= 0 ? m->ctas : NULL, n, m->verdicts, m->match_scratch, &res);
    for (size_t i = 0; i < n; i++) {
        const wl_mm_range *v = &m->verdicts[i];
        if (v->kind == WL_MM_DISCARD)
            continue;
        push_range(m, m->next_range++, v, m->values + i * (size_t)wl_rp_metrics.count);
        if (v->kind < WLCAP_OWNER_KIND_COUNT)
            atomic_fetch_add(&g_tied[v->kind], 1);
    }
    atomic_fetch_add(&g_ranges, n);
    atomic_fetch_add(&g_unknown, res.unknown);
    atomic_fetch_add(&g_unknown_total, res.unknown);
    atomic_fetch_add(&g_without, res.calls_without);
    if (res.mismatch) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "metrics: %zu ranges for %zu calls in one batch on GPU %u; the ranges that cannot be tied"
                           " for certain are kept without an activity (counted), and the next calls are profiled one"
                           " at a time",
                    n, m->ncalls, m->device_id);
        m->isolate_left = ISOLATE_AFTER_MISMATCH;
    }
    wl_pool_wake();
    m->ncalls = 0;
    m->isolated = 0;
    wl_mcost_add(WL_MC_TIE, wl_rp_now_ns() - t3);
}

/* --metrics-graphs launch: one user range around the graph launch (one-pass sets: user replay). */
int wl_rp_graph_begin(mctx *m, uint32_t correlation_id)
{
    CUptiResult st = set_config(m, CUPTI_UserRange, CUPTI_UserReplay);
    if (st == CUPTI_SUCCESS) {
        m->running = 1;
        CUpti_RangeProfiler_PushRange_Params pr;
        memset(&pr, 0, sizeof pr);
        pr.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE;
        pr.pRangeProfilerObject = m->obj;
        pr.pRangeName = "graph launch";
        st = cuptiRangeProfilerPushRange(&pr);
    }
    if (st != CUPTI_SUCCESS) {
        if (m->running)
            (void)stop(m, NULL); /* best effort: the next call starts afresh */
        wl_rp_graph_refused(m, "opening a user range", st);
        return -1;
    }
    m->user_range = 1;
    m->calls[0] = (wl_mm_call){correlation_id, WLCAP_OWNER_GRAPH_LAUNCH, 0};
    m->ncalls = 1;
    m->isolated = 1;
    m->batch_start_ns = wl_rp_now_ns();
    return 0;
}

void wl_rp_graph_end(mctx *m, CUstream stream)
{
    if (!m->user_range)
        return;
    m->user_range = 0;
    (void)cuStreamSynchronize(stream); /* the range ends after the graph's work, not after its submission */
    CUpti_RangeProfiler_PopRange_Params pp;
    memset(&pp, 0, sizeof pp);
    pp.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
    pp.pRangeProfilerObject = m->obj;
    CUptiResult st = cuptiRangeProfilerPopRange(&pp);
    if (st != CUPTI_SUCCESS) {
        wl_rp_graph_refused(m, "closing a user range", st);
        return;
    }
    wl_rp_flush(m);
}

void wl_rp_teardown(mctx *m)
{
    if (m->obj) {
        CUpti_RangeProfiler_Disable_Params dp;
        memset(&dp, 0, sizeof dp);
        dp.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
        dp.pRangeProfilerObject = m->obj;
        CUptiResult st = cuptiRangeProfilerDisable(&dp);
        if (st != CUPTI_SUCCESS)
            wl_log("metrics: disabling the range profiler on GPU %u failed: %s", m->device_id, wl_cupti_result_text(st));
        m->obj = NULL;
    }
    wl_profiler_host_free(m->host, "metrics");
    m->host = NULL;
    free(m->counter);
    free(m->config);
    free(m->availability);
    free(m->calls);
    free(m->values);
    free(m->ctas);
    free(m->verdicts);
    free(m->match_scratch);
    free(m->fns);
    m->availability = m->counter = m->config = NULL;
    m->calls = NULL;
    m->values = m->ctas = NULL;
    m->verdicts = NULL;
    m->match_scratch = NULL;
    m->fns = NULL;
    m->ncalls = 0;
    m->running = 0;
}

/* A context whose set-up succeeded: its definitions due, the process's pass count and replay mode
 * (for the summary and the writer's forced flushes), and one line saying what metrics mode costs. */
static void running(mctx *m)
{
    m->state = M_RUNNING; /* the profiler starts at the first call that is profiled */
    m->defs_pending = 1;
    atomic_store(&g_defs_ready, 1);
    uint32_t p = atomic_load(&g_max_passes);
    if (m->num_passes > p)
        atomic_store(&g_max_passes, (uint32_t)m->num_passes);
    atomic_store(&g_replay_kind, m->replay == CUPTI_UserReplay ? WLCAP_METRIC_REPLAY_NONE : WLCAP_METRIC_REPLAY_KERNEL);
    if (m->replay == CUPTI_UserReplay)
        wl_log("hardware metrics on GPU %u: %d metrics in 1 pass, collected as kernels run (no replay); kernels"
               " are serialised, so timings differ from an unprofiled run",
               m->device_id, wl_rp_metrics.count);
    else
        wl_log("hardware metrics on GPU %u: %d metrics in %zu replay pass%s per kernel; kernels are serialised and"
               " replayed (device memory saved and restored around each pass), so timings differ from an"
               " unprofiled run",
               m->device_id, wl_rp_metrics.count, m->num_passes, m->num_passes == 1 ? "" : "es");
}

mctx *wl_rp_context(CUcontext ctx)
{
    pthread_mutex_lock(&g_setup);
    mctx *m = NULL;
    for (int i = 0; i < MAX_CTX; i++)
        if (g_ctx[i].state != M_OFF && g_ctx[i].ctx == ctx) {
            m = &g_ctx[i];
            break;
        }
    if (!m) {
        for (int i = 0; i < MAX_CTX; i++)
            if (g_ctx[i].state == M_OFF && !g_ctx[i].ctx) {
                m = &g_ctx[i];
                break;
            }
        if (!m) {
            static atomic_flag once = ATOMIC_FLAG_INIT;
            wl_log_once(&once, "metrics: more than %d CUDA contexts; later contexts get no metrics", MAX_CTX);
            pthread_mutex_unlock(&g_setup);
            return NULL;
        }
        m->ctx = ctx;
        uint32_t dev = 0;
        cuptiGetDeviceId(ctx, &dev);
        m->device_id = dev;
        pthread_mutex_init(&m->lock, NULL);
        if (wl_rp_setup(m) != 0)
            wl_rp_teardown(m);
        else
            running(m);
    }
    pthread_mutex_unlock(&g_setup);
    return m;
}

static void finish(mctx *m)
{
    pthread_mutex_lock(&m->lock);
    /* at exit or on a signal this may be another thread than the context's */
    int pushed = m->state == M_RUNNING && cuCtxPushCurrent(m->ctx) == CUDA_SUCCESS;
    wl_rp_flush(m);
    if (pushed) {
        CUcontext popped;
        (void)cuCtxPopCurrent(&popped);
    }
    wl_rp_teardown(m);
    if (m->state == M_RUNNING)
        m->state = M_FAILED, snprintf(m->status, sizeof m->status, "finished");
    pthread_mutex_unlock(&m->lock);
}

void wl_metrics_context_destroyed(void *ctx)
{
    if (!g_on)
        return;
    for (int i = 0; i < MAX_CTX; i++)
        if (g_ctx[i].ctx == ctx)
            finish(&g_ctx[i]);
}

void wl_metrics_stop(void)
{
    if (!g_on)
        return;
    for (int i = 0; i < MAX_CTX; i++)
        if (g_ctx[i].ctx)
            finish(&g_ctx[i]);
}

/* Under kernel replay CUPTI gives kernel records no timestamps, and a record without them may
 * wait in CUPTI's buffer until a forced flush (the 2,000-kernel replay run stopped by
 * SIGTERM left a session without a single kernel record): while some context replays kernels, the
 * writer's periodic flush is forced, so kernel records reach the capture as their ranges do. Not
 * under user replay, where a forced flush could take a running kernel's record before its times. */
int wl_metrics_forced_flush(void)
{
    return g_on && atomic_load(&g_replay_kind) == WLCAP_METRIC_REPLAY_KERNEL;
}

/* <pid>.wlprogress for `warplens run`'s progress line, rewritten in place (writer thread). */
static void write_progress(void)
{
    static uint64_t last;
    uint64_t now = wl_rp_now_ns();
    if (!g_progress_path[0] || now - last < PROGRESS_NS)
        return;
    last = now;
    if (g_progress_fd < 0) {
        g_progress_fd = open(g_progress_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (g_progress_fd < 0) {
            g_progress_path[0] = 0; /* a progress line is a nicety: no second try, no message */
            return;
        }
    }
    wlcap_progress p;
    memset(&p, 0, sizeof p);
    p.magic = WLCAP_PROGRESS_MAGIC;
    p.size = sizeof p;
    p.updated_ns = now;
    p.calls_seen = atomic_load(&wl_rp_calls_seen);
    p.calls_done = atomic_load(&wl_rp_calls_done);
    p.ranges = atomic_load(&g_ranges);
    p.kernels = atomic_load(&g_tied[WLCAP_OWNER_KERNEL]) + atomic_load(&g_tied[WLCAP_OWNER_GRAPH_NODE]);
    p.copies = atomic_load(&g_tied[WLCAP_OWNER_MEMCPY]);
    p.sets = atomic_load(&g_tied[WLCAP_OWNER_MEMSET]);
    p.graphs = atomic_load(&g_tied[WLCAP_OWNER_GRAPH_LAUNCH]);
    p.unknown = atomic_load(&g_unknown_total);
    p.left_out = wl_mf_left_out();
    p.passes = atomic_load(&g_max_passes);
    p.replay = atomic_load(&g_replay_kind);
    if (pwrite(g_progress_fd, &p, sizeof p, 0) != (ssize_t)sizeof p) {
        close(g_progress_fd);
        g_progress_fd = -1;
        g_progress_path[0] = 0;
    }
}

/* A context's metric definitions once it was configured, then its status line if metrics went
 * off there (ranges decoded before a failure keep their definitions). */
static void write_defs(void)
{
    pthread_mutex_lock(&g_setup);
    for (int i = 0; i < MAX_CTX; i++) {
        mctx *m = &g_ctx[i];
        if (!m->defs_pending)
            continue;
        m->defs_pending = 0;
        if (m->num_passes && !m->defs_written) {
            m->defs_written = 1;
            for (int k = 0; k < wl_rp_metrics.count; k++) {
                wlcap_metric_def d = {(uint32_t)k, wl_capw_string(wl_rp_metrics.names[k]), wl_capw_string(wl_rp_metrics.units[k]), wl_rp_metrics.types[k],
                                      m->device_id, (uint32_t)m->num_passes,
                                      m->replay == CUPTI_UserReplay ? WLCAP_METRIC_REPLAY_NONE
                                                                    : WLCAP_METRIC_REPLAY_KERNEL,
                                      0};
                wl_capw_record(WLCAP_METRIC_DEF, &d, sizeof d);
            }
        }
        if (m->state == M_FAILED && m->status[0] && strcmp(m->status, "finished") != 0) {
            /* metric_id ~0: the configuration's status line, no metric */
            wlcap_metric_def d = {UINT32_MAX, wl_capw_string(m->status), 0, 0, m->device_id, 0, 0, 0};
            wl_capw_record(WLCAP_METRIC_DEF, &d, sizeof d);
        }
    }
    pthread_mutex_unlock(&g_setup);
}

static void write_count(uint64_t n, uint32_t detail)
{
    if (!n)
        return;
    wlcap_dropped d = {n, WLCAP_DROP_METRICS, 0, detail, 0};
    wl_capw_record(WLCAP_DROPPED, &d, sizeof d);
}

/* Writer thread: definitions of newly configured contexts, then values and owners, counts. */
void wl_metrics_drain(void)
{
    if (atomic_exchange(&g_defs_ready, 0))
        write_defs();
    if (!g_on)
        return;
    ring_item it;
    while (wl_mpsc_pop(&wl_metric_ring, &it))
        wl_capw_record((uint16_t)it.type, &it.u,
                       it.type == WLCAP_METRIC_OWNER ? (uint32_t)sizeof it.u.o : (uint32_t)sizeof it.u.r);
    write_count(atomic_exchange(&g_ring_lost, 0) + atomic_exchange(&g_cupti_dropped, 0), WLCAP_METRIC_LOST);
    write_count(atomic_exchange(&g_unknown, 0), WLCAP_METRIC_UNTIED);
    write_count(atomic_exchange(&g_without, 0), WLCAP_METRIC_NO_RANGE);
    write_progress();
}
