/* Hardware metrics per kernel (`warplens run --metrics`) with CUPTI's range profiler: auto range
 * (one range per kernel launch, kernels serialised). A metric set of one pass is collected as the
 * kernels run (user replay with a single pass); more passes need kernel replay (CUPTI re-runs
 * each kernel once per pass, saving and restoring device memory around it). Either way metrics
 * mode changes the timeline's timing.
 *
 * Identity: each launch callback records the launch's correlation id in the context's slot list
 * while holding the context's lock from launch entry to exit, so the n-th range CUPTI produces in
 * a batch is the n-th slot. A batch whose range count differs from its launch count is not
 * guessed at: its ranges are written with correlation id 0 (counted, reported once). Launches
 * into a capturing stream run nothing and take no slot. Graph launches are not profiled: the
 * profiler is stopped around cuGraphLaunch (a graph's kernels share one correlation id, so their
 * ranges could not be told apart anyway, and stopping right after a graph launch failed on the
 * H100 without replay).
 *
 * No range limit: every WARPLENS_METRICS_BATCH launches (at a launch boundary) the counter data
 * is stopped, decoded, evaluated and re-initialised, so memory stays bounded and no range is lost.
 * Values go to the writer thread through a ring as METRIC_RANGE records.
 *
 * Failures (no counter permission, counters held by another tool, unsupported GPU, unknown
 * metric) are reported once, in one line with the remedy; tracing continues without metrics. */
#include "capture/cupti_errors.h"
#include "capture/profiler_host.h"
#include "capture/recorder.h"

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capfile/metric_spec.h"
#include "common/log.h"

#define MAX_CTX 16
#define DEFAULT_BATCH 1000
#define RING_CAPACITY (1u << 15)

enum { M_OFF = 0, M_RUNNING, M_FAILED };

typedef struct mctx {
    CUcontext ctx;
    uint32_t device_id;
    int state;
    _Atomic int defs_pending;         /* METRIC_DEF records not yet written (writer thread) */
    size_t num_passes;
    CUpti_ProfilerReplayMode replay;  /* kernel replay, or user replay when one pass suffices */
    char status[200];                 /* why metrics are off on this context ("" when running) */
    CUpti_RangeProfiler_Object *obj;
    CUpti_Profiler_Host_Object *host;
    uint8_t *config;
    size_t config_size;
    uint8_t *availability;      /* counter availability image: the host object refers to it */
    uint8_t *counter;
    size_t counter_size;
    uint32_t *slots;                  /* correlation id, one per launch in the batch */
    size_t nslots;
    uint64_t next_range;
    pthread_mutex_t lock;
} mctx;

static int g_on;
static unsigned g_batch = DEFAULT_BATCH;
static char g_names[WL_METRICS_MAX][WL_METRIC_NAME_MAX];
static const char *g_name_ptr[WL_METRICS_MAX];
static char g_units[WL_METRICS_MAX][32];
static uint32_t g_types[WL_METRICS_MAX];
static int g_count;
static int g_validated;
static mctx g_ctx[MAX_CTX];
static pthread_mutex_t g_setup = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_defs_ready;      /* some context has defs to write */
static _Atomic uint64_t g_unattributed, g_cupti_dropped, g_ring_lost;
static _Thread_local mctx *t_held;

static wl_mpsc wl_metric_ring;

static atomic_flag g_unattributed_once = ATOMIC_FLAG_INIT;

/* One line that says why and what to do; `what` is the step that failed. */
static void explain(mctx *m, const char *what, CUptiResult st)
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
    m->defs_pending = 1;
    atomic_store(&g_defs_ready, 1);
}

int wl_metrics_init(void)
{
    const char *spec = getenv("WARPLENS_METRICS");
    if (!spec || !*spec)
        return 0;
    const char *b = getenv("WARPLENS_METRICS_BATCH");
    if (b && *b) {
        long v = strtol(b, NULL, 10);
        if (v >= 1 && v <= 100000)
            g_batch = (unsigned)v;
        else
            wl_log("WARPLENS_METRICS_BATCH=%s is not valid (1..100000); using %u", b, g_batch);
    }
    char err[256];
    int n = wl_metrics_expand(spec, g_names, WL_METRICS_MAX, err, sizeof err);
    if (n < 0) {
        wl_log("WARPLENS_METRICS: %s; tracing continues without metrics", err);
        return 0;
    }
    g_count = n;
    for (int i = 0; i < n; i++)
        g_name_ptr[i] = g_names[i];
    if (wl_mpsc_init(&wl_metric_ring, RING_CAPACITY, sizeof(wlcap_metric_range)) != 0) {
        wl_log("out of memory for the metric ring; tracing continues without metrics");
        return 0;
    }
    wl_mpsc_set_spill(&wl_metric_ring, WL_SPILL_SAMPLES, wl_pool_wake);
    g_on = 1;
    return 1;
}

int wl_metrics_enabled(void) { return g_on; }

/* Drops names the GPU does not know, naming the close ones it does (first device only: the metric
 * ids must be the same for every device of the process). */
static void validate_names(mctx *m)
{
    if (g_validated)
        return;
    g_validated = 1;
    int kept = 0;
    for (int i = 0; i < g_count; i++) {
        CUpti_Profiler_Host_GetMetricProperties_Params mp;
        memset(&mp, 0, sizeof mp);
        mp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
        mp.pHostObject = m->host;
        mp.pMetricName = g_names[i];
        if (cuptiProfilerHostGetMetricProperties(&mp) == CUPTI_SUCCESS) {
            if (kept != i)
                memcpy(g_names[kept], g_names[i], WL_METRIC_NAME_MAX);
            snprintf(g_units[kept], sizeof g_units[kept], "%s", mp.pDimUnit ? mp.pDimUnit : "");
            g_types[kept] = (uint32_t)mp.metricType;
            kept++;
            continue;
        }
        char list[400];
        wl_host_close_metric_names(m->host, g_names[i], list, sizeof list);
        wl_log("unknown metric '%s' on this GPU; %s%s; it is not collected (other metrics are)", g_names[i],
               list[0] ? "close names: " : "no close name (see `ncu --query-metrics`)", list);
    }
    g_count = kept;
    for (int i = 0; i < g_count; i++)
        g_name_ptr[i] = g_names[i];
}

static CUptiResult init_counter_data(mctx *m)
{
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
    sp.range = CUPTI_AutoRange;
    sp.replayMode = m->replay;
    sp.maxRangesPerPass = g_batch;
    sp.numNestingLevels = 1;
    sp.minNestingLevel = 1;
    sp.passIndex = 0;
    sp.targetNestingLevel = 1;
    st = cuptiRangeProfilerSetConfig(&sp);
    if (st != CUPTI_SUCCESS)
        return st;
    CUpti_RangeProfiler_Start_Params start;
    memset(&start, 0, sizeof start);
    start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
    start.pRangeProfilerObject = m->obj;
    return cuptiRangeProfilerStart(&start);
}

/* One pass needs no replay: with user replay and auto range CUPTI still gives each kernel its
 * own range but runs it once, without saving and restoring device memory around each pass, which
 * is what makes kernel replay cost milliseconds per kernel. More passes need kernel replay: an
 * unmodified program cannot replay itself. WARPLENS_METRICS_REPLAY=kernel forces kernel replay
 * (for comparing the two in bench/). */
static CUpti_ProfilerReplayMode choose_replay(size_t passes)
{
    const char *force = getenv("WARPLENS_METRICS_REPLAY");
    if (force && !strcmp(force, "kernel"))
        return CUPTI_KernelReplay;
    return passes == 1 ? CUPTI_UserReplay : CUPTI_KernelReplay;
}

#define TRY(call, what)                                                                                        \
    do {                                                                                                       \
        CUptiResult st_ = (call);                                                                              \
        if (st_ != CUPTI_SUCCESS) {                                                                            \
            explain(m, what, st_);                                                                             \
            return -1;                                                                                         \
        }                                                                                                      \
    } while (0)

static int setup(mctx *m)
{
    char chip[64], step[128];
    CUptiResult st0 = wl_profiler_device_begin(m->device_id, CUPTI_PROFILER_RANGE_PROFILING, chip, sizeof chip, step,
                                               sizeof step);
    if (st0 != CUPTI_SUCCESS) {
        explain(m, step, st0);
        return -1;
    }

    CUpti_Profiler_GetCounterAvailability_Params ca;
    memset(&ca, 0, sizeof ca);
    ca.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
    ca.ctx = m->ctx;
    TRY(cuptiProfilerGetCounterAvailability(&ca), "reading counter availability");
    uint8_t *avail = malloc(ca.counterAvailabilityImageSize ? ca.counterAvailabilityImageSize : 1);
    if (!avail) {
        explain(m, "allocating the counter availability image", CUPTI_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    ca.pCounterAvailabilityImage = avail;
    CUptiResult st = cuptiProfilerGetCounterAvailability(&ca);
    if (st != CUPTI_SUCCESS) {
        free(avail);
        explain(m, "reading counter availability", st);
        return -1;
    }
    void *host = NULL;
    st = wl_profiler_host_new(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, avail, &host);
    m->host = host;
    m->availability = avail; /* kept until teardown: the host object reads it later */
    if (st != CUPTI_SUCCESS) {
        explain(m, "initialising the metric host", st);
        return -1;
    }
    validate_names(m);
    if (!g_count) {
        explain(m, "choosing metrics (none of the requested metrics exists on this GPU)", CUPTI_ERROR_INVALID_PARAMETER);
        return -1;
    }

    TRY(wl_profiler_config(m->host, g_name_ptr, (size_t)g_count, &m->config, &m->config_size),
        "building the metric configuration");
    TRY(wl_profiler_passes(m->config, m->config_size, &m->num_passes), "counting replay passes");
    m->replay = choose_replay(m->num_passes);

    CUpti_RangeProfiler_Enable_Params en;
    memset(&en, 0, sizeof en);
    en.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
    en.ctx = m->ctx;
    TRY(cuptiRangeProfilerEnable(&en), "enabling the range profiler");
    m->obj = en.pRangeProfilerObject;

    CUpti_RangeProfiler_GetCounterDataSize_Params ds;
    memset(&ds, 0, sizeof ds);
    ds.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
    ds.pRangeProfilerObject = m->obj;
    ds.pMetricNames = g_name_ptr;
    ds.numMetrics = (size_t)g_count;
    ds.maxNumOfRanges = g_batch;
    ds.maxNumRangeTreeNodes = g_batch;
    TRY(cuptiRangeProfilerGetCounterDataSize(&ds), "sizing the counter data");
    m->counter_size = ds.counterDataSize;
    m->counter = malloc(m->counter_size);
    m->slots = calloc(g_batch, sizeof *m->slots);
    if (!m->counter || !m->slots) {
        explain(m, "allocating the counter data", CUPTI_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    TRY(init_counter_data(m), "configuring the range profiler");
    m->state = M_RUNNING;
    m->defs_pending = 1;
    atomic_store(&g_defs_ready, 1);
    if (m->replay == CUPTI_UserReplay)
        wl_log("hardware metrics on GPU %u: %d metrics in 1 pass, collected as kernels run (no replay); kernels"
               " are serialised, so timings differ from an unprofiled run",
               m->device_id, g_count);
    else
        wl_log("hardware metrics on GPU %u: %d metrics in %zu replay pass%s per kernel; kernels are serialised and"
               " replayed (device memory saved and restored around each pass), so timings differ from an"
               " unprofiled run",
               m->device_id, g_count, m->num_passes, m->num_passes == 1 ? "" : "es");
    return 0;
}

/* Pushes a range's values, waiting briefly for the writer when the ring is full: the launching
 * thread is already blocked by kernel replay, and a value dropped here is a kernel without metrics. */
static void push_range(uint64_t index, uint32_t corr, uint32_t dev, const double *values)
{
    for (int first = 0; first < g_count; first += WLCAP_METRIC_CHUNK) {
        wlcap_metric_range r;
        memset(&r, 0, sizeof r);
        r.range_index = index;
        r.correlation_id = corr;
        r.device_id = dev;
        r.first_metric = (uint32_t)first;
        r.count = (uint32_t)(g_count - first < WLCAP_METRIC_CHUNK ? g_count - first : WLCAP_METRIC_CHUNK);
        memcpy(r.values, values + first, r.count * sizeof(double));
        for (int tries = 0;; tries++) {
            if (wl_mpsc_push(&wl_metric_ring, &r) == 0)
                break;
            (void)wl_mpsc_take_dropped(&wl_metric_ring); /* only this file pushes: counted here instead */
            if (tries == 200) {
                atomic_fetch_add(&g_ring_lost, 1);
                break;
            }
            wl_pool_wake();
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Stop, decode, evaluate every range, and (restart) re-initialise for the next batch. Holds m->lock. */
static void flush(mctx *m, int restart)
{
    if (m->state != M_RUNNING)
        return;
    CUpti_RangeProfiler_Stop_Params sp;
    memset(&sp, 0, sizeof sp);
    sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
    sp.pRangeProfilerObject = m->obj;
    CUptiResult st = cuptiRangeProfilerStop(&sp);
    if (st != CUPTI_SUCCESS) {
        explain(m, "stopping the range profiler", st);
        return;
    }
    if (m->replay == CUPTI_UserReplay && !sp.isAllPassSubmitted) {
        /* one pass was configured: CUPTI asking for another would mean ranges without values */
        explain(m, "collecting without replay (CUPTI asked for another pass)", CUPTI_ERROR_NOT_SUPPORTED);
        return;
    }
    CUpti_RangeProfiler_DecodeData_Params dd;
    memset(&dd, 0, sizeof dd);
    dd.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
    dd.pRangeProfilerObject = m->obj;
    st = cuptiRangeProfilerDecodeData(&dd);
    if (st != CUPTI_SUCCESS) {
        explain(m, "decoding counter data", st);
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
        explain(m, "reading the number of ranges", st);
        return;
    }
    /* identity: range i is slot i only when the counts agree */
    int by_slot = gi.numTotalRanges == m->nslots;
    if (!by_slot && gi.numTotalRanges) {
        atomic_fetch_add(&g_unattributed, gi.numTotalRanges);
        wl_log_once(&g_unattributed_once,
                    "metrics: %zu ranges for %zu launches in one batch on GPU %u; such ranges are kept without a"
                    " kernel (counted in the session)",
                    gi.numTotalRanges, m->nslots, m->device_id);
    }
    double values[WL_METRICS_MAX];
    for (size_t i = 0; i < gi.numTotalRanges; i++) {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev;
        memset(&ev, 0, sizeof ev);
        ev.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
        ev.pHostObject = m->host;
        ev.pCounterDataImage = m->counter;
        ev.counterDataImageSize = m->counter_size;
        ev.rangeIndex = i;
        ev.ppMetricNames = g_name_ptr;
        ev.numMetrics = (size_t)g_count;
        ev.pMetricValues = values;
        st = cuptiProfilerHostEvaluateToGpuValues(&ev);
        if (st != CUPTI_SUCCESS) {
            explain(m, "evaluating metric values", st);
            return;
        }
        uint32_t corr = by_slot ? m->slots[i] : 0;
        push_range(m->next_range++, corr, m->device_id, values);
    }
    wl_pool_wake();
    m->nslots = 0;
    if (restart) {
        st = init_counter_data(m);
        if (st != CUPTI_SUCCESS)
            explain(m, "re-initialising the counter data", st);
    }
}

static void teardown(mctx *m)
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
    free(m->slots);
    free(m->availability);
    m->availability = NULL;
    m->counter = m->config = NULL;
    m->slots = NULL;
}

/* The context's state, set up on its first launch (the context is current on the launching thread). */
static mctx *context_state(CUcontext ctx)
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
        if (setup(m) != 0)
            teardown(m);
    }
    pthread_mutex_unlock(&g_setup);
    return m;
}

static int is_graph_launch(uint32_t cbid)
{
    return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

int wl_metrics_is_launch(uint32_t cbid)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return 1;
    default: return 0;
    }
}

/* The stream a launch goes to (NULL: the legacy stream, or parameters not readable). */
static CUstream launch_stream(uint32_t cbid, const void *params)
{
    if (!params)
        return NULL;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: return ((const cuLaunchKernel_params *)params)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        return ((const cuLaunchCooperativeKernel_params *)params)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const CUlaunchConfig *c = ((const cuLaunchKernelEx_params *)params)->config;
        return c ? c->hStream : NULL;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return ((const cuGraphLaunch_params *)params)->hStream;
    default: return NULL;
    }
}

/* A launch into a stream being captured adds a node to a graph and runs nothing: no range. */
static int into_capture(uint32_t cbid, const void *params)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult st = cuStreamIsCapturing(launch_stream(cbid, params), &cs);
    return st == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Launch callback (application thread): the context's lock is held from entry to exit so that
 * slot order is CUPTI's range order. A graph launch runs with the profiler stopped. */
void wl_metrics_launch(uint32_t cbid, const void *data)
{
    const CUpti_CallbackData *cd = data;
    if (cd->callbackSite == CUPTI_API_EXIT) {
        mctx *m = t_held;
        if (!m)
            return;
        t_held = NULL;
        CUresult rv = cd->functionReturnValue ? *(const CUresult *)cd->functionReturnValue : CUDA_SUCCESS;
        if (is_graph_launch(cbid)) {
            if (m->state == M_RUNNING) {
                CUptiResult st = init_counter_data(m);
                if (st != CUPTI_SUCCESS)
                    explain(m, "restarting the range profiler after a graph launch", st);
            }
        } else if (rv != CUDA_SUCCESS && m->nslots) {
            m->nslots--; /* a failed launch makes no range */
        }
        if (m->state != M_RUNNING)
            teardown(m);
        pthread_mutex_unlock(&m->lock);
        return;
    }
    if (!g_on || t_held)
        return;
    CUcontext ctx = cd->context;
    if (!ctx && cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
        return;
    if (!ctx || into_capture(cbid, cd->functionParams))
        return;
    mctx *m = context_state(ctx);
    if (!m || m->state != M_RUNNING)
        return;
    pthread_mutex_lock(&m->lock);
    int graph = is_graph_launch(cbid);
    if (m->state == M_RUNNING && (graph || m->nslots >= g_batch))
        flush(m, !graph); /* a graph launch: stop and decode now, restart at its exit */
    if (m->state != M_RUNNING) {
        teardown(m);
        pthread_mutex_unlock(&m->lock);
        return;
    }
    if (!graph) {
        m->slots[m->nslots++] = cd->correlationId;
    } else {
        static atomic_flag graph_once = ATOMIC_FLAG_INIT;
        wl_log_once(&graph_once, "metrics: kernels of CUDA graph launches are not profiled (the range profiler is"
                                 " stopped around cuGraphLaunch); they are traced as usual");
    }
    t_held = m;
}

static void finish(mctx *m)
{
    pthread_mutex_lock(&m->lock);
    flush(m, 0);
    teardown(m);
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

/* Writer thread: definitions of newly configured contexts, then the values. */
void wl_metrics_drain(void)
{
    if (atomic_exchange(&g_defs_ready, 0)) {
        pthread_mutex_lock(&g_setup);
        for (int i = 0; i < MAX_CTX; i++) {
            mctx *m = &g_ctx[i];
            if (!m->defs_pending)
                continue;
            m->defs_pending = 0;
            if (m->state == M_FAILED && m->status[0]) {
                /* metric_id ~0: the configuration's status line, no metric */
                wlcap_metric_def d = {UINT32_MAX, wl_capw_string(m->status), 0, 0, m->device_id, 0, 0, 0};
                wl_capw_record(WLCAP_METRIC_DEF, &d, sizeof d);
                continue;
            }
            for (int k = 0; k < g_count; k++) {
                wlcap_metric_def d = {(uint32_t)k, wl_capw_string(g_names[k]), wl_capw_string(g_units[k]),
                                      g_types[k], m->device_id, (uint32_t)m->num_passes,
                                      m->replay == CUPTI_UserReplay ? WLCAP_METRIC_REPLAY_NONE
                                                                    : WLCAP_METRIC_REPLAY_KERNEL,
                                      0};
                wl_capw_record(WLCAP_METRIC_DEF, &d, sizeof d);
            }
        }
        pthread_mutex_unlock(&g_setup);
    }
    if (!g_on)
        return;
    wlcap_metric_range r;
    while (wl_mpsc_pop(&wl_metric_ring, &r))
        wl_capw_record(WLCAP_METRIC_RANGE, &r, sizeof r);
    uint64_t lost = atomic_exchange(&g_ring_lost, 0) + atomic_exchange(&g_cupti_dropped, 0);
    if (lost) {
        wlcap_dropped d = {lost, WLCAP_DROP_METRICS, 0, 0, 0};
        wl_capw_record(WLCAP_DROPPED, &d, sizeof d);
    }
    uint64_t un = atomic_exchange(&g_unattributed, 0);
    if (un) {
        wlcap_dropped d = {un, WLCAP_DROP_METRICS, 0, 1, 0}; /* stream_id 1: kept, not attributed */
        wl_capw_record(WLCAP_DROPPED, &d, sizeof d);
    }
}
