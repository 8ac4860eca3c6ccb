/* A second reference point for bench/overhead.py: the floor consumer (CONCURRENT_KERNEL records
 * only, counted) plus an *empty* CUPTI driver-API callback on the calls warplens records (launches,
 * graph launches, copies, sets, synchronisation, allocation). The difference to the floor is what
 * CUPTI's callback dispatch costs by itself, before any recorder does anything in the callback.
 * WL_FLOOR_CB=setup: instead, exactly the CUPTI configuration of `warplens run --record kernels`
 * (context resource callbacks, the cuProfilerStop callback, latency timestamps, system thread ids,
 * zeroed buffers) with empty callbacks: the difference to that mode is what the recorder's own work
 * costs, the difference to the floor what that configuration costs inside CUPTI.
 * WL_FLOOR_CB=activity: per-call driver-API activity records (cuptiActivityEnableDriverApi) on the
 * same calls instead of the callbacks: the other way CUPTI can time them (not cheaper on the H100,
 * bench/results/overhead-api-activity.md, so warplens keeps callbacks).
 * WL_FLOOR_CB=timed: the floor of the lossless-capture issue: kernel records with latency
 * timestamps (queue delay) and driver-API callbacks on the launch calls only (kernel, Ex,
 * cooperative, graph launches) that do nothing but take two timestamps, enter and exit: the same
 * information as warplens' kernel and launch-cost recording, at the least a consumer can pay.
 * WL_FLOOR_KERNELS=0 (not with setup): no kernel records, only the calls' callbacks or records.
 * WL_FLOOR_RANGE=1 (not with setup): all of it only between cudaProfilerStart and
 * cudaProfilerStop, for bench/overhead.py --inproc. */
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF_SIZE (8u << 20)

static unsigned long long g_records, g_api_records;
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
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_DRIVER)
            g_api_records++;
        else
            g_records++;
    }
    free(buf);
}

static uint32_t g_ids[512];
static unsigned g_nids;
static int g_range;    /* WL_FLOOR_RANGE=1: recording only between cudaProfilerStart/Stop */
static int g_activity; /* WL_FLOOR_CB=activity */
static int g_kernels = 1;
static int g_timed;    /* WL_FLOOR_CB=timed */
static _Thread_local uint64_t g_launch_ns, g_nsum; /* summed launch times: the timestamps are used */
static uint64_t g_launch_ns_total;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void set_recording(int on)
{
    if (g_kernels)
        (on ? cuptiActivityEnable : cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    for (unsigned i = 0; i < g_nids; i++)
        if (g_activity)
            cuptiActivityEnableDriverApi(g_ids[i], (uint8_t)on);
        else
            cuptiEnableCallback(on, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, g_ids[i]);
}

/* Empty for the recorded calls; with WL_FLOOR_RANGE=1 the profiler-API calls switch recording. */
static void CUPTIAPI empty(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    (void)u;
    const CUpti_CallbackData *cd = data;
    if (g_timed && d == CUPTI_CB_DOMAIN_DRIVER_API && id != CUPTI_DRIVER_TRACE_CBID_cuProfilerStart &&
        id != CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
        if (cd->callbackSite == CUPTI_API_ENTER) {
            *cd->correlationData = now_ns();
        } else {
            g_launch_ns += now_ns() - *cd->correlationData;
            if (!(++g_nsum & 1023)) /* fold into the total now and then: the sum is only kept alive */
                __atomic_fetch_add(&g_launch_ns_total, g_launch_ns, __ATOMIC_RELAXED), g_launch_ns = 0;
        }
        return;
    }
    if (!g_range || d != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && cd->callbackSite == CUPTI_API_EXIT)
        set_recording(1);
    else if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && cd->callbackSite == CUPTI_API_ENTER)
        set_recording(0);
}

static void at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "floor+callbacks: %llu kernel records, %llu API records\n", g_records, g_api_records);
    if (g_timed)
        fprintf(stderr, "floor+callbacks: launch calls timed, %.3f s in all (main thread's last share included)\n",
                (double)(g_launch_ns_total + g_launch_ns) / 1e9);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    static const char *const prefixes[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset", "cuCtxSynchronize",
                                           "cuStreamSynchronize", "cuEventSynchronize", "cuStreamWaitEvent",
                                           "cuMemAlloc", "cuMemFree", NULL};
    const char *range = getenv("WL_FLOOR_RANGE"), *kernels = getenv("WL_FLOOR_KERNELS");
    const char *mode = getenv("WL_FLOOR_CB");
    int setup = mode && !strcmp(mode, "setup");
    g_range = !setup && range && *range == '1';
    g_kernels = setup || !kernels || *kernels != '0';
    g_activity = mode && !strcmp(mode, "activity");
    g_timed = mode && !strcmp(mode, "timed");
    static const char *const launch_prefixes[] = {"cuLaunch", "cuGraphLaunch", NULL};
    const char *const *want = g_timed ? launch_prefixes : prefixes;
    if (g_timed && cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)
        fprintf(stderr, "floor+callbacks: latency timestamps could not be enabled\n");
    if (cuptiSubscribe(&g_sub, empty, NULL) != CUPTI_SUCCESS ||
        cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS ||
        (!g_range && g_kernels && cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)) {
        fprintf(stderr, "floor+callbacks: CUPTI set-up failed\n");
        return 1;
    }
    if (setup) {
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
        for (int i = 0; want[i]; i++)
            if (!strncmp(name, want[i], strlen(want[i])) && g_nids < sizeof g_ids / sizeof g_ids[0]) {
                g_ids[g_nids++] = cbid;
                break;
            }
    }
    if (g_range) {
        /* per-call records come only if one is on when CUDA starts (measured: enabled for the first
         * time at a cudaProfilerStart, none came); cuProfilerStart's stays on throughout */
        if (g_activity)
            cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, 1);
        cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
        cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    } else {
        for (unsigned i = 0; i < g_nids; i++)
            if ((g_activity ? cuptiActivityEnableDriverApi(g_ids[i], 1)
                            : cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, g_ids[i])) != CUPTI_SUCCESS)
                fprintf(stderr, "floor+callbacks: enabling %u failed\n", g_ids[i]);
    }
    atexit(at_exit);
    return 1;
}
