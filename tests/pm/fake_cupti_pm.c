/* A fake of the CUPTI entry points PM sampling uses (and cuDeviceGet), linked into
 * tests/pm/pm_sampler_driver instead of libcupti/libcuda, so the recorder's sampler
 * (src/capture/pm_sampler.c, pm_device.c) runs for real without a GPU. It follows the API's
 * contract as the header documents it: the sampling object produces one window per interval of
 * CLOCK_REALTIME from Start to Stop; DecodeData moves the windows that have ended into the
 * counter-data image until it is full (COUNTER_DATA_FULL) or none is left (END_OF_RECORDS);
 * GetSampleInfo and EvaluateToGpuValues read them back. Metric i of a configuration evaluates to
 * i + 1.25 in every window. It reads the config image CUPTI was given at every decode (ASan
 * catches a freed one). The chip "GH100" knows a small catalog of names; sm__throughput.* needs 19
 * passes and gr__cycles_active.avg does not fit one pass with sm__inst_executed_realtime.sum.
 * Environment: FAKE_PM_INIT_ERROR, FAKE_PM_ENABLE_ERROR=N (CUptiResult), FAKE_PM_UNSUPPORTED=1,
 * FAKE_PM_GAP_EVERY=N (every N-th window is missing), FAKE_PM_OVERFLOW_AT=N (the decode that reaches
 * window N reports overflow), FAKE_PM_DECODE_ERROR_AFTER=N, FAKE_PM_CLOCK_OFFSET_MS=N (windows on
 * another clock), FAKE_PM_DISABLED_FILE=path (created by cuptiPmSamplingDisable, which the recorder
 * must never call), FAKE_PM_STOPPED_FILE=path (created by cuptiPmSamplingStop). */
#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct { const char *name, *unit; int passes; } CATALOG[] = {
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "percent", 1},
    {"sm__warps_active.avg.pct_of_peak_sustained_elapsed", "percent", 1},
    {"dram__bytes_read.sum", "byte", 1},
    {"dram__bytes_write.sum", "byte", 1},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "percent", 1},
    {"pcie__read_bytes.sum", "byte", 1},
    {"pcie__write_bytes.sum", "byte", 1},
    {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", "percent", 1},
    {"nvlrx__bytes.sum", "byte", 1},
    {"nvltx__bytes.sum", "byte", 1},
    {"sm__inst_executed_realtime.sum", "instruction", 1},
    {"gr__cycles_active.avg", "sys_cycle", 1},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "percent", 19},
};
#define NCAT (sizeof CATALOG / sizeof CATALOG[0])
static const char *const BASE[] = {"sm__cycles_active", "sm__warps_active", "dram__bytes_read", "dram__bytes_write",
                                   "TPC.TriageCompute.sm__cycles_active", "dram__throughput", "pcie__read_bytes",
                                   "pcie__write_bytes", "gr__cycles_active", "sm__throughput"};

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : 0;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int find(const char *name)
{
    for (size_t i = 0; i < NCAT; i++)
        if (!strcmp(CATALOG[i].name, name))
            return (int)i;
    return -1;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    switch (r) {
    case CUPTI_SUCCESS: *s = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *s = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *s = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_INVALID_METRIC_NAME: *s = "CUPTI_ERROR_INVALID_METRIC_NAME"; break;
    default: *s = "CUPTI_ERROR_UNKNOWN"; break;
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
    (void)p;
    return (CUptiResult)env_int("FAKE_PM_INIT_ERROR");
}

CUptiResult cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params *p)
{
    CUpti_Profiler_Support_Level ok = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    p->architecture = env_int("FAKE_PM_UNSUPPORTED") ? CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED : ok;
    p->sli = p->vGpu = p->confidentialCompute = p->cmp = p->wsl = ok;
    p->isSupported = p->architecture;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
    p->pChipName = "GH100";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
    if (p->pCounterAvailabilityImage)
        memset(p->pCounterAvailabilityImage, 0xab, p->counterAvailabilityImageSize);
    else
        p->counterAvailabilityImageSize = 64;
    return CUPTI_SUCCESS;
}

/* ---- host object ---- */
struct CUpti_Profiler_Host_Object {
    int n;
    int metrics[64];
    const uint8_t *availability;
};

CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
    if (!p->pChipName || strcmp(p->pChipName, "GH100") || !p->pCounterAvailabilityImage)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->pHostObject = calloc(1, sizeof *p->pHostObject);
    p->pHostObject->availability = p->pCounterAvailabilityImage;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
    free(p->pHostObject);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params *p)
{
    int i = find(p->pMetricName);
    if (i < 0)
        return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->pDimUnit = CATALOG[i].unit;
    p->pDescription = "fake";
    p->pHwUnit = "fake";
    p->metricType = strstr(p->pMetricName, "throughput") ? CUPTI_METRIC_TYPE_THROUGHPUT : CUPTI_METRIC_TYPE_COUNTER;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params *p)
{
    p->ppMetricNames = (const char **)BASE;
    p->numMetrics = p->metricType == CUPTI_METRIC_TYPE_COUNTER ? sizeof BASE / sizeof BASE[0] : 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
    if (p->pHostObject->availability[0] != 0xab) /* the availability image must still be alive */
        return CUPTI_ERROR_UNKNOWN;
    for (size_t i = 0; i < p->numMetrics; i++) {
        int k = find(p->ppMetricNames[i]);
        if (k < 0 || p->pHostObject->n >= 64)
            return CUPTI_ERROR_INVALID_METRIC_NAME;
        p->pHostObject->metrics[p->pHostObject->n++] = k;
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
    p->configImageSize = 8;
    return CUPTI_SUCCESS;
}

/* image: byte 0 the passes, byte 1 a marker */
CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
    const struct CUpti_Profiler_Host_Object *h = p->pHostObject;
    int passes = 1, inst = 0, gr = 0;
    for (int i = 0; i < h->n; i++) {
        if (CATALOG[h->metrics[i]].passes > passes)
            passes = CATALOG[h->metrics[i]].passes;
        inst |= !strcmp(CATALOG[h->metrics[i]].name, "sm__inst_executed_realtime.sum");
        gr |= !strcmp(CATALOG[h->metrics[i]].name, "gr__cycles_active.avg");
    }
    if (inst && gr && passes < 2)
        passes = 2;
    memset(p->pConfigImage, 0, p->configImageSize);
    p->pConfigImage[0] = (uint8_t)passes;
    p->pConfigImage[1] = 0x5a;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
    p->numOfPasses = p->pConfigImage[0];
    return CUPTI_SUCCESS;
}

/* ---- sampling object ---- */
typedef struct window {
    uint64_t start, end, k;
} window;
typedef struct image {
    uint32_t cap, n;
    window w[];
} image;

struct CUpti_PmSampling_Object {
    size_t device;
    const uint8_t *config;
    uint64_t interval, t_start, t_stop, next_k;
    int started, decodes, overflow_reported;
};

CUptiResult cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{
    int e = env_int("FAKE_PM_ENABLE_ERROR");
    if (e)
        return (CUptiResult)e;
    p->pPmSamplingObject = calloc(1, sizeof *p->pPmSamplingObject);
    p->pPmSamplingObject->device = p->deviceIndex;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
    free(p->pPmSamplingObject);
    const char *f = getenv("FAKE_PM_DISABLED_FILE");
    if (f && *f) {
        FILE *o = fopen(f, "w");
        if (o)
            fclose(o);
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
    if (p->pConfig[0] != 1 || p->triggerMode != CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL ||
        !p->samplingInterval || !p->hardwareBufferSize)
        return CUPTI_ERROR_NOT_SUPPORTED;
    p->pPmSamplingObject->config = p->pConfig; /* kept, as CUPTI does */
    p->pPmSamplingObject->interval = p->samplingInterval;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
    if (!p->pPmSamplingObject->interval || !p->maxSamples)
        return CUPTI_ERROR_INVALID_OPERATION; /* SetConfig first */
    p->counterDataSize = sizeof(image) + p->maxSamples * sizeof(window);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
    image *im = (image *)(void *)p->pCounterData;
    im->cap = (uint32_t)((p->counterDataSize - sizeof(image)) / sizeof(window));
    im->n = 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
    CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    if (o->started)
        return CUPTI_ERROR_INVALID_OPERATION;
    o->started = 1;
    o->t_start = now_ns() + (uint64_t)((int64_t)env_int("FAKE_PM_CLOCK_OFFSET_MS") * 1000000);
    o->t_stop = 0;
    o->next_k = 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
    CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    if (!o->started)
        return CUPTI_ERROR_INVALID_OPERATION;
    o->started = 0;
    o->t_stop = now_ns() + (uint64_t)((int64_t)env_int("FAKE_PM_CLOCK_OFFSET_MS") * 1000000);
    const char *f = getenv("FAKE_PM_STOPPED_FILE");
    if (f && *f) {
        FILE *out = fopen(f, "w");
        if (out)
            fclose(out);
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
    CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    if (o->config[1] != 0x5a) /* the config image must still be alive */
        return CUPTI_ERROR_UNKNOWN;
    int fail_after = env_int("FAKE_PM_DECODE_ERROR_AFTER");
    if (fail_after && ++o->decodes > fail_after)
        return CUPTI_ERROR_UNKNOWN;
    uint64_t until = o->started ? now_ns() + (uint64_t)((int64_t)env_int("FAKE_PM_CLOCK_OFFSET_MS") * 1000000)
                                : o->t_stop;
    image *im = (image *)(void *)p->pCounterDataImage;
    int gap = env_int("FAKE_PM_GAP_EVERY");
    uint64_t overflow_at = (uint64_t)env_int("FAKE_PM_OVERFLOW_AT");
    p->overflow = 0;
    p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
    while (o->t_start + (o->next_k + 1) * o->interval <= until) {
        if (im->n == im->cap) {
            p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
            break;
        }
        uint64_t k = o->next_k++;
        if (overflow_at && k >= overflow_at && !o->overflow_reported) {
            o->overflow_reported = 1;
            p->overflow = 1;
        }
        if (gap && k % (uint64_t)gap == (uint64_t)gap - 1)
            continue;
        window *w = &im->w[im->n++];
        w->start = o->t_start + k * o->interval;
        w->end = w->start + o->interval;
        w->k = k;
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
    const image *im = (const image *)(const void *)p->pCounterDataImage;
    p->numTotalSamples = im->cap;
    p->numPopulatedSamples = p->numCompletedSamples = im->n;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
    const image *im = (const image *)(const void *)p->pCounterDataImage;
    if (p->sampleIndex >= im->n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->startTimestamp = im->w[p->sampleIndex].start;
    p->endTimestamp = im->w[p->sampleIndex].end;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
    const image *im = (const image *)(const void *)p->pCounterDataImage;
    if (p->rangeIndex >= im->n || p->numMetrics > (size_t)p->pHostObject->n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; i++)
        p->pMetricValues[i] = (double)i + 1.25;
    return CUPTI_SUCCESS;
}
