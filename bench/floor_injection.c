/* The overhead floor for bench/overhead.py: the least a CUPTI-based tracer can do. Loaded through
 * CUDA_INJECTION64_PATH, it records CONCURRENT_KERNEL activity only, into 8 MiB buffers, and just
 * counts the records (no file, no thread of its own). warplens' cost is judged against this.
 * WL_FLOOR_RANGE=1: recording is switched on by cudaProfilerStart and off by cudaProfilerStop, as
 * `warplens run --capture-range profiler-api` does, for the in-process comparison (--inproc). */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

#define BUF_SIZE (8u << 20)

static unsigned long long g_records;

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = aligned_alloc(8, BUF_SIZE);
    *size = *buf ? BUF_SIZE : 0;
    *max = 0;
}

static void CUPTIAPI complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
        g_records++;
    free(buf);
}

static void CUPTIAPI on_profiler_api(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    (void)u, (void)d;
    const CUpti_CallbackData *cd = data;
    if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && cd->callbackSite == CUPTI_API_EXIT)
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    else if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && cd->callbackSite == CUPTI_API_ENTER)
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

static void at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "floor: %llu kernel records\n", g_records);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    const char *range = getenv("WL_FLOOR_RANGE");
    static CUpti_SubscriberHandle sub;
    if (range && *range == '1' &&
        (cuptiSubscribe(&sub, on_profiler_api, NULL) != CUPTI_SUCCESS ||
         cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) != CUPTI_SUCCESS ||
         cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) != CUPTI_SUCCESS)) {
        fprintf(stderr, "floor: CUPTI callback set-up failed\n");
        return 1;
    }
    if (cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS ||
        (!(range && *range == '1') && cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) ||
        /* WL_FLOOR_LATENCY=1: also queued/submitted timestamps, which warplens records (queue delay) */
        (getenv("WL_FLOOR_LATENCY") && cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)) {
        fprintf(stderr, "floor: CUPTI set-up failed\n");
        return 1;
    }
    atexit(at_exit);
    return 1;
}
