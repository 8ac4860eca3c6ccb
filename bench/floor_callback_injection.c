/* A second reference point for bench/overhead.py: the floor consumer (CONCURRENT_KERNEL records
 * only, counted) plus an *empty* CUPTI driver-API callback on the calls warplens records (launches,
 * graph launches, copies, sets, synchronisation, allocation). The difference to the floor is what
 * CUPTI's callback dispatch costs by itself, before any recorder does anything in the callback.
 * WL_FLOOR_CB=setup: instead, exactly the CUPTI configuration of `warplens run --record kernels`
 * (context resource callbacks, the cuProfilerStop callback, latency timestamps, system thread ids,
 * zeroed buffers) with empty callbacks: the difference to that mode is what the recorder's own work
 * costs, the difference to the floor what that configuration costs inside CUPTI.
 * WL_FLOOR_RANGE=1 (not with setup): kernels and the empty callbacks only between cudaProfilerStart
 * and cudaProfilerStop, for bench/overhead.py --inproc. */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (8u << 20)

static unsigned long long g_records;
static int g_zeroed; /* setup mode: CUPTI is told the buffers come zeroed */
static CUpti_SubscriberHandle g_sub;

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = aligned_alloc(8, BUF_SIZE);
    if (*buf && g_zeroed)
        memset(*buf, 0, BUF_SIZE);
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

static uint32_t g_ids[512];
static unsigned g_nids;
static int g_range; /* WL_FLOOR_RANGE=1: kernels and the callbacks only between cudaProfilerStart/Stop */

static void set_recording(int on)
{
    (on ? cuptiActivityEnable : cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    for (unsigned i = 0; i < g_nids; i++)
        cuptiEnableCallback(on, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, g_ids[i]);
}

/* Empty for the recorded calls; with WL_FLOOR_RANGE=1 the profiler-API calls switch recording. */
static void CUPTIAPI empty(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    (void)u;
    if (!g_range || d != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    const CUpti_CallbackData *cd = data;
    if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && cd->callbackSite == CUPTI_API_EXIT)
        set_recording(1);
    else if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && cd->callbackSite == CUPTI_API_ENTER)
        set_recording(0);
}

static void at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "floor+callbacks: %llu kernel records\n", g_records);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    static const char *const prefixes[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset", "cuCtxSynchronize",
                                           "cuStreamSynchronize", "cuEventSynchronize", "cuStreamWaitEvent",
                                           "cuMemAlloc", "cuMemFree", NULL};
    const char *range = getenv("WL_FLOOR_RANGE");
    g_range = range && *range == '1';
    if (cuptiSubscribe(&g_sub, empty, NULL) != CUPTI_SUCCESS ||
        cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS ||
        (!g_range && cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)) {
        fprintf(stderr, "floor+callbacks: CUPTI set-up failed\n");
        return 1;
    }
    const char *mode = getenv("WL_FLOOR_CB");
    if (mode && !strcmp(mode, "setup")) {
        g_zeroed = 1;
        uint8_t zeroed = 1;
        size_t one = sizeof zeroed;
        if (cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS ||
            cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &one, &zeroed) != CUPTI_SUCCESS ||
            cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED) != CUPTI_SUCCESS ||
            cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) !=
                CUPTI_SUCCESS ||
            cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) !=
                CUPTI_SUCCESS ||
            cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)
            fprintf(stderr, "floor+callbacks: CUPTI set-up (setup mode) failed\n");
        atexit(at_exit);
        return 1;
    }
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || !name)
            continue;
        for (int i = 0; prefixes[i]; i++)
            if (!strncmp(name, prefixes[i], strlen(prefixes[i])) && g_nids < sizeof g_ids / sizeof g_ids[0]) {
                g_ids[g_nids++] = cbid;
                break;
            }
    }
    if (g_range) {
        cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
        cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    } else {
        for (unsigned i = 0; i < g_nids; i++)
            cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, g_ids[i]);
    }
    atexit(at_exit);
    return 1;
}
