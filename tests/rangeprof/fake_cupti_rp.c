/* A fake of CUPTI's range profiler and profiler host API for tests without a GPU
 * (range_profiler_driver.c): the entry points src/capture/range_profiler.c, metric_calls.c,
 * profiler_host.c and host_metric_names.c call, behaving as the CUDA 13.0 headers document them,
 * plus the few driver calls the recorder makes there. A configuration image names the metrics
 * added to its host object; a counter-data image holds the ranges decoded into it. Checks the
 * order of calls (SetConfig before Start, Stop before DecodeData, ranges only within the decoded
 * count, push/pop only in user-range mode) and counts what it saw for the driver. */
#include "fake_cupti_rp.h"

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_METRICS 64
#define MAX_RANGES 4096
#define IMAGE_MAGIC 0x46414b45u

fake_rp_state fake_rp;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct host_obj {
    char names[MAX_METRICS][128];
    int n;
} host_obj;

/* a configuration image: magic, metric count, names */
typedef struct config_image {
    uint32_t magic, n;
    char names[MAX_METRICS][128];
} config_image;

typedef struct counter_image {
    uint32_t magic, n;          /* metrics */
    uint32_t nranges, capacity;
    double values[];            /* capacity x n */
} counter_image;

struct CUpti_RangeProfiler_Object {
    int ctx;                    /* 1-based */
};

typedef struct fctx {
    struct CUpti_RangeProfiler_Object obj;
    int enabled, configured, started, user_mode, user_open;
    const config_image *config;
    counter_image *image;
    double pass[MAX_RANGES][MAX_METRICS]; /* ranges of the running pass */
    size_t npass;
    size_t max_ranges;
} fctx;

static fctx g_ctx[FAKE_RP_CONTEXTS];

static void misuse(const char *what)
{
    fprintf(stderr, "fake CUPTI: %s\n", what);
    fake_rp.misuse++;
}

static fctx *of(CUcontext c)
{
    uintptr_t i = (uintptr_t)c;
    return i >= 1 && i <= FAKE_RP_CONTEXTS ? &g_ctx[i - 1] : NULL;
}

static fctx *of_obj(const CUpti_RangeProfiler_Object *o)
{
    if (!o || o->ctx < 1 || o->ctx > FAKE_RP_CONTEXTS) {
        misuse("unknown range profiler object");
        return NULL;
    }
    return &g_ctx[o->ctx - 1];
}

/* ------------------------------------------------------------------ work on the "GPU" */
void fake_rp_run(CUcontext c, double value, uint64_t ctas)
{
    pthread_mutex_lock(&g_lock);
    fctx *x = of(c);
    if (!x || !x->started || !x->config || (x->user_mode && !x->user_open)) {
        fake_rp.unprofiled++;
        pthread_mutex_unlock(&g_lock);
        return;
    }
    fake_rp.profiled++;
    if (x->user_mode && x->npass) { /* more work inside the open user range: it adds up */
        for (uint32_t k = 0; k < x->config->n; k++)
            x->pass[x->npass - 1][k] += strcmp(x->config->names[k], FAKE_RP_CTA) ? value : (double)ctas;
        pthread_mutex_unlock(&g_lock);
        return;
    }
    if (x->npass < MAX_RANGES) {
        for (uint32_t k = 0; k < x->config->n; k++)
            x->pass[x->npass][k] = strcmp(x->config->names[k], FAKE_RP_CTA) ? value : (double)ctas;
        x->npass++;
    }
    pthread_mutex_unlock(&g_lock);
}

int fake_rp_started(CUcontext c)
{
    fctx *x = of(c);
    return x && x->started;
}

/* ------------------------------------------------------------------ driver and CUPTI basics */
CUresult cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }
CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    /* the driver's convention: stream 0x99 is being captured */
    *st = (uintptr_t)s == 0x99 ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext *c) { *c = (CUcontext)1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return CUDA_SUCCESS; }
CUresult cuCtxPushCurrent(CUcontext c) { return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
CUresult cuCtxPopCurrent(CUcontext *c) { *c = (CUcontext)1; return CUDA_SUCCESS; }

CUptiResult cuptiGetDeviceId(CUcontext c, uint32_t *dev)
{
    uintptr_t i = (uintptr_t)c;
    *dev = (uint32_t)(i ? i - 1 : 0);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain dom, uint32_t cbid, const char **name)
{
    static const struct { uint32_t cbid; const char *name; } ids[] = {
        {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
        {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx"},
        {CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, "cuLaunchHostFunc"},
        {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"},
        {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2"},
        {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2"},
        {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, "cuMemsetD32Async"},
        {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2"},
        {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, "cuStreamBeginCapture_v2"},
        {CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, "cuStreamEndCapture"},
    };
    if (dom != CUPTI_CB_DOMAIN_DRIVER_API)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i].cbid == cbid) {
            *name = ids[i].name;
            return CUPTI_SUCCESS;
        }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p) { (void)p; return CUPTI_SUCCESS; }

CUptiResult cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params *p)
{
    p->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
    p->pChipName = "FAKE100";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p)
{
    if (p->pCounterAvailabilityImage)
        memset(p->pCounterAvailabilityImage, 0xa5, 16);
    p->counterAvailabilityImageSize = 16;
    return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------------ host API */
CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
    if (!p->pCounterAvailabilityImage || ((const uint8_t *)p->pCounterAvailabilityImage)[0] != 0xa5)
        misuse("host object without a counter availability image");
    p->pHostObject = (CUpti_Profiler_Host_Object *)calloc(1, sizeof(host_obj));
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
    free(p->pHostObject);
    return CUPTI_SUCCESS;
}

static int known(const char *name)
{
    return strstr(name, "__") && strncmp(name, "bogus", 5) != 0 && !(fake_rp.no_cta && !strcmp(name, FAKE_RP_CTA));
}

CUptiResult cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params *p)
{
    if (!p->pMetricName || !known(p->pMetricName))
        return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->pDimUnit = strstr(p->pMetricName, "bytes") ? "byte" : "";
    p->metricType = strstr(p->pMetricName, ".pct") ? CUPTI_METRIC_TYPE_RATIO : CUPTI_METRIC_TYPE_COUNTER;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params *p)
{
    static const char *base[] = {"dram__bytes_read", "gpu__time_duration", "sm__ctas_launched"};
    p->ppMetricNames = base;
    p->numMetrics = p->metricType == CUPTI_METRIC_TYPE_COUNTER ? 3 : 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
    host_obj *h = (host_obj *)p->pHostObject;
    for (size_t i = 0; i < p->numMetrics; i++) {
        if (!known(p->ppMetricNames[i]))
            return CUPTI_ERROR_INVALID_METRIC_NAME;
        if (h->n < MAX_METRICS)
            snprintf(h->names[h->n++], 128, "%s", p->ppMetricNames[i]);
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
    p->configImageSize = sizeof(config_image);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
    const host_obj *h = (const host_obj *)p->pHostObject;
    if (p->configImageSize < sizeof(config_image))
        return CUPTI_ERROR_INVALID_PARAMETER;
    config_image *c = (config_image *)p->pConfigImage;
    memset(c, 0, sizeof *c);
    c->magic = IMAGE_MAGIC;
    c->n = (uint32_t)h->n;
    memcpy(c->names, h->names, sizeof c->names);
    return CUPTI_SUCCESS;
}

/* Passes: SASS counters need two, everything else fits one; the CTA counter costs one more only
 * when FAKE_RP_CTA_PASS is set. */
CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
    const config_image *c = (const config_image *)p->pConfigImage;
    if (!c || c->magic != IMAGE_MAGIC)
        return CUPTI_ERROR_INVALID_PARAMETER;
    size_t passes = 1;
    int cta = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        if (!strncmp(c->names[i], "smsp__sass", 10))
            passes = 2;
        cta |= !strcmp(c->names[i], FAKE_RP_CTA);
    }
    p->numOfPasses = passes + (size_t)(cta && fake_rp.cta_costs_pass);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
    const counter_image *im = (const counter_image *)p->pCounterDataImage;
    const host_obj *h = (const host_obj *)p->pHostObject;
    if (!im || im->magic != IMAGE_MAGIC || p->rangeIndex >= im->nranges) {
        misuse("evaluating a range the counter data does not hold");
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    for (size_t k = 0; k < p->numMetrics; k++) {
        int at = -1;
        for (int j = 0; j < h->n; j++)
            if (!strcmp(h->names[j], p->ppMetricNames[k]))
                at = j;
        if (at < 0 || (uint32_t)at >= im->n) {
            misuse("evaluating a metric the configuration does not have");
            return CUPTI_ERROR_INVALID_PARAMETER;
        }
        p->pMetricValues[k] = im->values[p->rangeIndex * im->n + (size_t)at];
    }
    return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------------ range profiler */
CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p)
{
    fctx *x = of(p->ctx);
    if (!x)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (fake_rp.deny)
        return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    if (x->enabled)
        misuse("range profiler enabled twice on a context");
    x->enabled = 1;
    x->obj.ctx = (int)(x - g_ctx) + 1;
    p->pRangeProfilerObject = &x->obj;
    fake_rp.enables++;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p)
{
    fctx *x = of_obj(p->pRangeProfilerObject);
    if (!x || !x->enabled)
        return CUPTI_ERROR_INVALID_OPERATION;
    if (x->started)
        misuse("disabled while started");
    x->enabled = x->configured = 0;
    fake_rp.disables++;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p)
{
    if (!of_obj(p->pRangeProfilerObject) || p->maxNumRangeTreeNodes < p->maxNumOfRanges)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->counterDataSize = sizeof(counter_image) + p->maxNumOfRanges * p->numMetrics * sizeof(double);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p)
{
    fctx *x = of_obj(p->pRangeProfilerObject);
    if (!x)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (x->started)
        misuse("counter data initialised while started");
    counter_image *im = (counter_image *)p->pCounterData;
    memset(im, 0, sizeof *im);
    im->magic = IMAGE_MAGIC;
    im->capacity = (uint32_t)((p->counterDataSize - sizeof *im) / sizeof(double)); /* in values until SetConfig */
    return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p)
{
    fctx *x = of_obj(p->pRangeProfilerObject);
    const config_image *c = (const config_image *)p->pConfig;
    counter_image *im = (counter_image *)p->pCounterDataImage;
    if (!x || !x->enabled || !c || c->magic != IMAGE_MAGIC || !im || im->magic != IMAGE_MAGIC)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (x->started)
        misuse("SetConfig while started");
    if (fake_rp.capturing)
        misuse("SetConfig during a stream capture");
    if (p->range == CUPTI_AutoRange && p->numNestingLevels != 1)
        misuse("auto range needs one nesting level");
    x->config = c;
    x->image = im;
    im->n = c->n;
    im->capacity = c->n ? im->capacity / c->n : 0;
    im->nranges = 0;
    x->user_mode = p->range == CUPTI_UserRange;
    x->max_ranges = p->maxRangesPerPass;
    x->configured = 1;
    fake_rp.configs++;
    if (x->user_mode)
        fake_rp.user_configs++;
    else
        fake_rp.auto_configs++;
    if (p->replayMode == CUPTI_KernelReplay)
        fake_rp.kernel_replay_configs++;
    CUpti_Profiler_Host_GetNumOfPasses_Params np = {0};
    np.pConfigImage = (uint8_t *)(uintptr_t)c;
    cuptiProfilerHostGetNumOfPasses(&np);
    fake_rp.passes = (int)np.numOfPasses;
    if (np.numOfPasses > 1 && p->replayMode != CUPTI_KernelReplay)
        misuse("a configuration of several passes without kernel replay");
    return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p)
{
    pthread_mutex_lock(&g_lock);
    fctx *x = of_obj(p->pRangeProfilerObject);
    CUptiResult r = CUPTI_SUCCESS;
    if (fake_rp.capturing)
        misuse("Start during a stream capture");
    if (!x || !x->configured || x->started) {
        misuse("Start without a fresh SetConfig, or twice");
        r = CUPTI_ERROR_INVALID_OPERATION;
    } else {
        x->started = 1;
        x->configured = 0; /* each Start needs its own SetConfig (the recorder's pattern) */
        x->npass = 0;
        fake_rp.starts++;
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p)
{
    pthread_mutex_lock(&g_lock);
    fctx *x = of_obj(p->pRangeProfilerObject);
    CUptiResult r = CUPTI_SUCCESS;
    if (fake_rp.capturing)
        misuse("Stop during a stream capture");
    if (!x || !x->started) {
        misuse("Stop without Start");
        r = CUPTI_ERROR_INVALID_OPERATION;
    } else {
        if (x->user_open)
            misuse("Stop with a user range open");
        x->started = 0;
        fake_rp.stops++;
        p->isAllPassSubmitted = 1;
        if (fake_rp.fail_next_stop) {
            fake_rp.fail_next_stop = 0;
            x->npass = 0;
            r = CUPTI_ERROR_UNKNOWN;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p)
{
    fctx *x = of_obj(p->pRangeProfilerObject);
    if (!x || x->started || !x->image) {
        misuse("DecodeData while started or without counter data");
        return CUPTI_ERROR_INVALID_OPERATION;
    }
    counter_image *im = x->image;
    size_t keep = x->npass;
    if (keep > x->max_ranges)
        keep = x->max_ranges;
    if (keep > im->capacity)
        keep = im->capacity;
    for (size_t i = 0; i < keep; i++)
        memcpy(im->values + i * im->n, x->pass[i], im->n * sizeof(double));
    im->nranges = (uint32_t)keep;
    p->numOfRangeDropped = x->npass - keep;
    x->npass = 0;
    fake_rp.decodes++;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p)
{
    const counter_image *im = (const counter_image *)p->pCounterDataImage;
    if (!im || im->magic != IMAGE_MAGIC)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->numTotalRanges = im->nranges;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params *p)
{
    pthread_mutex_lock(&g_lock);
    fctx *x = of_obj(p->pRangeProfilerObject);
    CUptiResult r = CUPTI_SUCCESS;
    if (!x || !x->started || !x->user_mode || x->user_open) {
        misuse("PushRange outside a started user-range configuration");
        r = CUPTI_ERROR_INVALID_OPERATION;
    } else if (x->npass < MAX_RANGES) {
        memset(x->pass[x->npass], 0, sizeof x->pass[0]);
        x->npass++;
        x->user_open = 1;
        fake_rp.pushes++;
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

CUptiResult cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params *p)
{
    fctx *x = of_obj(p->pRangeProfilerObject);
    if (!x || !x->user_open) {
        misuse("PopRange without PushRange");
        return CUPTI_ERROR_INVALID_OPERATION;
    }
    x->user_open = 0;
    fake_rp.pops++;
    return CUPTI_SUCCESS;
}
