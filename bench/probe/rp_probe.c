/* Discovery probe (not part of the recorder): a CUPTI injection library that runs the range
 * profiler in auto-range mode the way the recorder does and logs, in order, every driver call
 * that can put work on the GPU (launches, copies, sets, graph launches; entry/exit, correlation
 * id), the activity records CUPTI produces for them, and each decoded batch: range count, range
 * names and values. Used to learn which GPU activities get ranges and in what order, under kernel
 * and user replay, with and without the profiler running through graph launches.
 * Knobs: RP_METRICS (comma list), RP_REPLAY kernel|user, RP_BATCH N (decode before the next call
 * once N calls are in the batch), RP_GRAPH stop|through|user (user: one user range per graph
 * launch, one pass only), RP_LOG file (default stderr), RP_MAXPRINT ranges printed per batch. */
#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE *g_log;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_print = PTHREAD_MUTEX_INITIALIZER;
static CUpti_SubscriberHandle g_sub;
static const char *g_names[32];
static char g_namebuf[2048];
static int g_nmetrics;
static int g_replay_kernel, g_graph_mode; /* 0 stop, 1 through, 2 user */
static size_t g_batch = 1000, g_maxprint = 40;
static CUpti_RangeProfiler_Object *g_obj;
static CUpti_Profiler_Host_Object *g_host;
static uint8_t *g_config, *g_counter, *g_avail;
static size_t g_config_size, g_counter_size, g_passes;
static int g_on, g_failed;
static size_t g_calls_in_batch, g_batches, g_total_ranges;
static __thread int t_depth;
static double g_t_stop, g_t_decode, g_t_eval, g_t_init;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void logf_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&g_print);
    vfprintf(g_log, fmt, ap);
    fflush(g_log);
    pthread_mutex_unlock(&g_print);
    va_end(ap);
}

#define CK(call)                                                                                   \
    do {                                                                                           \
        CUptiResult st_ = (call);                                                                  \
        if (st_ != CUPTI_SUCCESS) {                                                                \
            const char *m_ = "";                                                                   \
            cuptiGetResultString(st_, &m_);                                                        \
            logf_("PROBE FAIL %s: %d %s (line %d)\n", #call, st_, m_, __LINE__);                   \
            g_failed = 1;                                                                          \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

static int set_config(CUpti_ProfilerRange range, CUpti_ProfilerReplayMode replay)
{
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip = {CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    ip.pRangeProfilerObject = g_obj;
    ip.counterDataSize = g_counter_size;
    ip.pCounterData = g_counter;
    CK(cuptiRangeProfilerCounterDataImageInitialize(&ip));
    CUpti_RangeProfiler_SetConfig_Params sp = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    sp.pRangeProfilerObject = g_obj;
    sp.configSize = g_config_size;
    sp.pConfig = g_config;
    sp.counterDataImageSize = g_counter_size;
    sp.pCounterDataImage = g_counter;
    sp.range = range;
    sp.replayMode = replay;
    sp.maxRangesPerPass = g_batch + 64;
    sp.numNestingLevels = 1;
    sp.minNestingLevel = 1;
    sp.targetNestingLevel = 1;
    CK(cuptiRangeProfilerSetConfig(&sp));
    CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    st.pRangeProfilerObject = g_obj;
    CK(cuptiRangeProfilerStart(&st));
    return 0;
}

static int start_auto(void)
{
    double t = now_us();
    int rc = set_config(CUPTI_AutoRange, g_replay_kernel ? CUPTI_KernelReplay : CUPTI_UserReplay);
    g_t_init += now_us() - t;
    return rc;
}

static int decode(const char *why)
{
    double t0 = now_us();
    CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    sp.pRangeProfilerObject = g_obj;
    CK(cuptiRangeProfilerStop(&sp));
    double t1 = now_us();
    CUpti_RangeProfiler_DecodeData_Params dd = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    dd.pRangeProfilerObject = g_obj;
    CK(cuptiRangeProfilerDecodeData(&dd));
    double t2 = now_us();
    CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    gi.pCounterDataImage = g_counter;
    gi.counterDataImageSize = g_counter_size;
    CK(cuptiRangeProfilerGetCounterDataInfo(&gi));
    logf_("DECODE #%zu (%s): ranges=%zu calls=%zu dropped=%zu allpass=%d passidx=%zu\n", g_batches, why,
          gi.numTotalRanges, g_calls_in_batch, dd.numOfRangeDropped, sp.isAllPassSubmitted, sp.passIndex);
    double vals[32];
    for (size_t i = 0; i < gi.numTotalRanges; i++) {
        CUpti_Profiler_Host_GetRangeName_Params rn = {CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE};
        rn.pCounterDataImage = g_counter;
        rn.counterDataImageSize = g_counter_size;
        rn.rangeIndex = i;
        rn.delimiter = "/";
        const char *name = "?";
        if (cuptiProfilerHostGetRangeName(&rn) == CUPTI_SUCCESS && rn.pRangeName)
            name = rn.pRangeName;
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        ev.pHostObject = g_host;
        ev.pCounterDataImage = g_counter;
        ev.counterDataImageSize = g_counter_size;
        ev.rangeIndex = i;
        ev.ppMetricNames = g_names;
        ev.numMetrics = (size_t)g_nmetrics;
        ev.pMetricValues = vals;
        CUptiResult st = cuptiProfilerHostEvaluateToGpuValues(&ev);
        if (i < g_maxprint || i + 3 >= gi.numTotalRanges) {
            char line[1024];
            int n = snprintf(line, sizeof line, "RANGE %zu.%zu name=%s", g_batches, i, name);
            for (int k = 0; k < g_nmetrics && st == CUPTI_SUCCESS; k++)
                n += snprintf(line + n, sizeof line - (size_t)n, " %.6g", vals[k]);
            logf_("%s%s\n", line, st == CUPTI_SUCCESS ? "" : " (eval failed)");
        }
        if (rn.pRangeName)
            free((void *)rn.pRangeName);
    }
    double t3 = now_us();
    g_t_stop += t1 - t0;
    g_t_decode += t2 - t1;
    g_t_eval += t3 - t2;
    g_total_ranges += gi.numTotalRanges;
    g_batches++;
    g_calls_in_batch = 0;
    return 0;
}

static int setup(CUcontext ctx)
{
    CUpti_Profiler_Initialize_Params pi = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CK(cuptiProfilerInitialize(&pi));
    uint32_t dev = 0;
    cuptiGetDeviceId(ctx, &dev);
    CUpti_Device_GetChipName_Params cn = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cn.deviceIndex = dev;
    CK(cuptiDeviceGetChipName(&cn));
    CUpti_Profiler_GetCounterAvailability_Params ca = {CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    ca.ctx = ctx;
    CK(cuptiProfilerGetCounterAvailability(&ca));
    g_avail = malloc(ca.counterAvailabilityImageSize);
    ca.pCounterAvailabilityImage = g_avail;
    CK(cuptiProfilerGetCounterAvailability(&ca));
    CUpti_Profiler_Host_Initialize_Params hi = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = cn.pChipName;
    hi.pCounterAvailabilityImage = g_avail;
    CK(cuptiProfilerHostInitialize(&hi));
    g_host = hi.pHostObject;
    CUpti_Profiler_Host_ConfigAddMetrics_Params am = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    am.pHostObject = g_host;
    am.ppMetricNames = g_names;
    am.numMetrics = (size_t)g_nmetrics;
    CK(cuptiProfilerHostConfigAddMetrics(&am));
    CUpti_Profiler_Host_GetConfigImageSize_Params cs = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    cs.pHostObject = g_host;
    CK(cuptiProfilerHostGetConfigImageSize(&cs));
    g_config_size = cs.configImageSize;
    g_config = malloc(g_config_size);
    CUpti_Profiler_Host_GetConfigImage_Params gc = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    gc.pHostObject = g_host;
    gc.configImageSize = g_config_size;
    gc.pConfigImage = g_config;
    CK(cuptiProfilerHostGetConfigImage(&gc));
    CUpti_Profiler_Host_GetNumOfPasses_Params np = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.configImageSize = g_config_size;
    np.pConfigImage = g_config;
    CK(cuptiProfilerHostGetNumOfPasses(&np));
    g_passes = np.numOfPasses;
    CUpti_RangeProfiler_Enable_Params en = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    en.ctx = ctx;
    CK(cuptiRangeProfilerEnable(&en));
    g_obj = en.pRangeProfilerObject;
    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    ds.pRangeProfilerObject = g_obj;
    ds.pMetricNames = g_names;
    ds.numMetrics = (size_t)g_nmetrics;
    ds.maxNumOfRanges = g_batch + 64;
    ds.maxNumRangeTreeNodes = (uint32_t)(g_batch + 64);
    CK(cuptiRangeProfilerGetCounterDataSize(&ds));
    g_counter_size = ds.counterDataSize;
    g_counter = malloc(g_counter_size);
    logf_("PROBE setup: chip %s, %d metrics, %zu passes, replay %s, graph mode %d, batch %zu, counter %zu bytes\n",
          cn.pChipName, g_nmetrics, g_passes, g_replay_kernel ? "kernel" : "user", g_graph_mode, g_batch,
          g_counter_size);
    if (start_auto())
        return -1;
    g_on = 1;
    return 0;
}

static int is_work(const char *fn)
{
    return fn && (!strncmp(fn, "cuLaunch", 8) || !strncmp(fn, "cuMemcpy", 8) || !strncmp(fn, "cuMemset", 8) ||
                  !strncmp(fn, "cuGraphLaunch", 13));
}

static CUstream stream_of(CUpti_CallbackId cbid, const void *p)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: return ((const cuLaunchKernel_params *)p)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const CUlaunchConfig *c = ((const cuLaunchKernelEx_params *)p)->config;
        return c ? c->hStream : NULL;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return ((const cuGraphLaunch_params *)p)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz: return ((const cuMemcpyAsync_params *)p)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz: return ((const cuMemcpyHtoDAsync_v2_params *)p)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz: return ((const cuMemcpyDtoHAsync_v2_params *)p)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz: return ((const cuMemcpyDtoDAsync_v2_params *)p)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz: return ((const cuMemsetD8Async_params *)p)->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz: return ((const cuMemsetD32Async_params *)p)->hStream;
    default: return (CUstream)(uintptr_t)1; /* unknown */
    }
}

static int g_user_open;

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
    (void)ud;
    if (dom != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    const CUpti_CallbackData *cd = data;
    if (!is_work(cd->functionName))
        return;
    int graph = cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
    if (cd->callbackSite == CUPTI_API_ENTER) {
        if (t_depth++)
            return; /* nested driver call inside a call we hold */
        CUstream s = stream_of(cbid, cd->functionParams);
        CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
        if (s != (CUstream)(uintptr_t)1)
            cuStreamIsCapturing(s, &cs);
        pthread_mutex_lock(&g_lock);
        if (!g_on && !g_failed && cd->context)
            setup(cd->context);
        if (g_on && !g_failed && cs == CU_STREAM_CAPTURE_STATUS_NONE) {
            if (g_calls_in_batch >= g_batch && decode("batch full") == 0)
                start_auto();
            if (graph && g_graph_mode == 0) {
                decode("graph launch: stop") ;
            } else if (graph && g_graph_mode == 2) {
                decode("graph launch: user range");
                if (set_config(CUPTI_UserRange, CUPTI_UserReplay) == 0) {
                    CUpti_RangeProfiler_PushRange_Params pr = {CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
                    pr.pRangeProfilerObject = g_obj;
                    pr.pRangeName = "graph";
                    CUptiResult st = cuptiRangeProfilerPushRange(&pr);
                    g_user_open = st == CUPTI_SUCCESS;
                    if (!g_user_open)
                        logf_("PROBE push range failed %d\n", st);
                }
            }
        }
        logf_("CALL enter %s corr=%u stream=%p capturing=%d tid=%lu\n", cd->functionName, cd->correlationId, (void *)s,
              (int)cs, (unsigned long)pthread_self() % 100000);
        g_calls_in_batch++;
    } else {
        if (--t_depth)
            return;
        logf_("CALL exit  %s corr=%u rv=%d\n", cd->functionName, cd->correlationId,
              cd->functionReturnValue ? *(const int *)cd->functionReturnValue : -1);
        if (graph && g_on && !g_failed) {
            if (g_graph_mode == 0) {
                start_auto();
            } else if (g_graph_mode == 2 && g_user_open) {
                CUpti_RangeProfiler_PopRange_Params pp = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
                pp.pRangeProfilerObject = g_obj;
                CUptiResult st = cuptiRangeProfilerPopRange(&pp);
                if (st != CUPTI_SUCCESS)
                    logf_("PROBE pop range failed %d\n", st);
                g_user_open = 0;
                decode("graph user range end");
                start_auto();
            }
        }
        pthread_mutex_unlock(&g_lock);
    }
}

static void CUPTIAPI buf_req(uint8_t **b, size_t *sz, size_t *maxr)
{
    *sz = 8 << 20;
    *b = aligned_alloc(8, *sz);
    *maxr = 0;
}

static void CUPTIAPI buf_done(CUcontext c, uint32_t s, uint8_t *b, size_t sz, size_t valid)
{
    (void)c, (void)s, (void)sz;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const void *)r;
            logf_("ACT kernel corr=%u stream=%u graph=%u node=%llu start=%llu dur=%lld grid=%d,%d,%d block=%d regs=%u name=%.90s\n",
                  k->correlationId, k->streamId, k->graphId, (unsigned long long)k->graphNodeId,
                  (unsigned long long)k->start, (long long)(k->end - k->start), k->gridX, k->gridY, k->gridZ, k->blockX,
                  k->registersPerThread, k->name);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const void *)r;
            logf_("ACT memcpy corr=%u stream=%u graph=%u node=%llu kind=%u src=%u dst=%u bytes=%llu start=%llu\n",
                  m->correlationId, m->streamId, m->graphId, (unsigned long long)m->graphNodeId, m->copyKind, m->srcKind,
                  m->dstKind, (unsigned long long)m->bytes, (unsigned long long)m->start);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const CUpti_ActivityMemset4 *m = (const void *)r;
            logf_("ACT memset corr=%u stream=%u graph=%u node=%llu bytes=%llu start=%llu\n", m->correlationId,
                  m->streamId, m->graphId, (unsigned long long)m->graphNodeId, (unsigned long long)m->bytes,
                  (unsigned long long)m->start);
        }
    }
    free(b);
}

static void at_exit(void)
{
    pthread_mutex_lock(&g_lock);
    CUcontext ctx = NULL;
    if (cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx)
        cuCtxSynchronize();
    if (g_on && !g_failed)
        decode("exit");
    logf_("PROBE totals: batches %zu ranges %zu; us stop %.0f decode %.0f eval %.0f init %.0f\n", g_batches,
          g_total_ranges, g_t_stop, g_t_decode, g_t_eval, g_t_init);
    pthread_mutex_unlock(&g_lock);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    const char *lp = getenv("RP_LOG");
    g_log = lp ? fopen(lp, "w") : stderr;
    if (!g_log)
        g_log = stderr;
    const char *m = getenv("RP_METRICS");
    snprintf(g_namebuf, sizeof g_namebuf, "%s",
             m ? m : "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum");
    for (char *p = strtok(g_namebuf, ","); p && g_nmetrics < 32; p = strtok(NULL, ","))
        g_names[g_nmetrics++] = p;
    const char *r = getenv("RP_REPLAY");
    g_replay_kernel = r && !strcmp(r, "kernel");
    const char *g = getenv("RP_GRAPH");
    g_graph_mode = !g ? 0 : !strcmp(g, "through") ? 1 : !strcmp(g, "user") ? 2 : 0;
    if (getenv("RP_BATCH"))
        g_batch = (size_t)atol(getenv("RP_BATCH"));
    if (getenv("RP_MAXPRINT"))
        g_maxprint = (size_t)atol(getenv("RP_MAXPRINT"));
    cuptiSubscribe(&g_sub, on_cb, NULL);
    cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API);
    cuptiActivityRegisterCallbacks(buf_req, buf_done);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    atexit(at_exit);
    return 1;
}
