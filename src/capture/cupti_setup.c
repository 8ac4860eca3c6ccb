/* Everything the recorder asks of CUPTI: one subscriber (resource and a few API callbacks for
 * flushing and device discovery), the activity kinds to record, the short list of API calls whose
 * records matter at the CPU-GPU boundary, and the buffer callbacks. Every call is checked; a
 * failure is reported once and recording continues with what works.
 * With --capture-range profiler-api, tracing (kernels, copies, sets, API calls) is switched on by
 * cudaProfilerStart and off by cudaProfilerStop, so outside those spans the program pays only for
 * CUPTI being loaded; NVTX markers are recorded throughout, as context for the spans. */
#include "capture/cupti_callback.h"
#include "capture/cupti_errors.h"
#include "capture/metric_filter.h"
#include "capture/recorder.h"
#include "capture/inkernel_capture.h"

#include <cupti.h>
#include <pthread.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"

static CUpti_SubscriberHandle g_subscriber;
static uint32_t g_mask;
static int g_range;                                        /* --capture-range profiler-api */
static pthread_mutex_t g_switch = PTHREAD_MUTEX_INITIALIZER; /* serialises the switches below */
static int g_tracing;                                      /* under g_switch */
static atomic_int g_extcorr_on;

static void capture_switch(int on);

static int check(CUptiResult st, const char *what)
{
    if (st == CUPTI_SUCCESS)
        return 0;
    const char *msg = wl_cupti_result_text(st);
    wl_log("%s failed: %s", what, msg);
    return -1;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint8_t *b = wl_pool_get();
    *buffer = b;
    *size = b ? wl_pool_get_buffer_size() : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    if (buffer)
        wl_pool_complete(buffer, valid);
}

void CUPTIAPI wl_cupti_on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void *data)
{
    (void)userdata;
    /* a profiled call's exit always reaches the metrics module: it releases the lock taken at entry */
    int metrics_call = domain == CUPTI_CB_DOMAIN_DRIVER_API && wl_metrics_enabled() && wl_metrics_is_call(cbid);
    if (metrics_call && ((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_EXIT) {
        if (wl_api_callbacks_has(cbid) && atomic_load(&wl_state) == WL_STATE_RUNNING)
            wl_api_callback(domain, cbid, data);
        wl_metrics_call(cbid, data);
        return;
    }
    if (domain == CUPTI_CB_DOMAIN_NVTX) { /* --metrics-nvtx: which ranges are open */
        wl_mf_nvtx_callback(cbid, data);
        return;
    }
    if (atomic_load(&wl_state) != WL_STATE_RUNNING)
        return;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        const CUpti_ResourceData *rd = data;
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
            uint32_t dev = 0;
            if (cuptiGetDeviceId(rd->context, &dev) == CUPTI_SUCCESS) {
                wl_devices_mark(dev);
                wl_pm_context_created(dev);
                wl_pool_wake();
            }
        } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
            /* cudaDeviceReset and cuCtxDestroy: hand over everything recorded in this context */
            wl_metrics_context_destroyed(rd->context);
            uint32_t dev = 0;
            if (cuptiGetDeviceId(rd->context, &dev) == CUPTI_SUCCESS)
                wl_pm_context_destroying(dev);
            wl_stalls_context_destroyed(rd->context);
            wl_calib_context_destroyed(rd->context);
            wl_cupti_flush(1);
        } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && rd->resourceDescriptor) {
            /* graph instantiation: which node of the executable graph copies which (in-kernel
             * registrations name the original) */
            const CUpti_GraphData *gd = rd->resourceDescriptor;
            uint64_t orig = 0, clone = 0;
            if (gd->nodeType == CU_GRAPH_NODE_TYPE_KERNEL && gd->originalNode && gd->node &&
                cuptiGetGraphNodeId(gd->originalNode, &orig) == CUPTI_SUCCESS &&
                cuptiGetGraphNodeId(gd->node, &clone) == CUPTI_SUCCESS)
                wl_inkernel_on_node_cloned(orig, clone, gd->graphExec);
        }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
        const CUpti_CallbackData *cd = data;
        if (cd->callbackSite == CUPTI_API_ENTER) {
            if (g_range) {
                /* a switch, possibly one of many: the writer flushes (one flush for several stops,
                 * its buffers recycled at once; forced flushes here on every stop emptied the pool) */
                capture_switch(0);
                wl_writer_request_flush();
            } else {
                wl_cupti_flush(1);
            }
        }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) {
        if (g_range && ((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_EXIT)
            capture_switch(1);
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        if (wl_api_callbacks_has(cbid))
            wl_api_callback(domain, cbid, data);
        if (metrics_call)
            wl_metrics_call(cbid, data);
        else if (wl_stalls_enabled() && wl_metrics_is_launch(cbid))
            wl_stalls_launch(cbid, data);
    }
}

static void extcorr_unavailable(CUptiResult st)
{
    /* seen with --metrics (CUPTI_ERROR_NOT_COMPATIBLE on the H100): the session still ties each
     * launch to the scope open on its thread at the time (session_writer.c) */
    static atomic_flag once = ATOMIC_FLAG_INIT;
    wl_log_once(&once, "scopes: CUPTI's external correlation is not available in this mode (%s); kernels are tied"
                " to the scope open on their launching thread instead", wl_cupti_result_text(st));
}

/* Turns the traced activity kinds and the API callbacks on or off; the caller holds g_switch. A
 * failure is reported once: with capture ranges this runs at every cudaProfilerStart/Stop. */
static void set_tracing(int on)
{
    static const struct { uint32_t mask; CUpti_ActivityKind kind; const char *what; } kinds[] = {
        {WL_RECORD_KERNELS, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels"},
        {WL_RECORD_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
        {WL_RECORD_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, "peer memcpy"},
        {WL_RECORD_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
    };
    static atomic_flag once = ATOMIC_FLAG_INIT;
    CUptiResult (*apply)(CUpti_ActivityKind) = on ? cuptiActivityEnable : cuptiActivityDisable;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!(g_mask & kinds[i].mask))
            continue;
        CUptiResult st = apply(kinds[i].kind);
        if (st != CUPTI_SUCCESS)
            wl_log_once(&once, "%s %s failed: %s", on ? "recording" : "pausing the recording of", kinds[i].what,
                        wl_cupti_result_text(st));
    }
    if ((g_mask & WL_RECORD_KERNELS) && atomic_load(&g_extcorr_on)) {
        CUptiResult st = apply(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
        if (st != CUPTI_SUCCESS && on)
            extcorr_unavailable(st);
    }
    if (g_mask & (WL_RECORD_API | WL_RECORD_SYNC))
        wl_api_callbacks_set(g_subscriber, on);
    g_tracing = on;
}

uint64_t wl_cupti_now_ns(void)
{
    uint64_t ts = 0;
    if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS || !ts)
        ts = wl_realtime_ns(); /* CUPTI's clock on Linux is CLOCK_REALTIME */
    return ts;
}

/* cudaProfilerStart / cudaProfilerStop with --capture-range: the switch and its record. The
 * timestamps are the calls' host times; work launched inside a span may run past its end. */
static void capture_switch(int on)
{
    pthread_mutex_lock(&g_switch);
    if (g_tracing != on) {
        /* a stop is timed before tracing goes off, a start after it is on: the span holds its calls */
        uint64_t ts = on ? 0 : wl_cupti_now_ns();
        set_tracing(on);
        if (on)
            ts = wl_cupti_now_ns();
        wl_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = on ? WL_EV_CAPTURE_START : WL_EV_CAPTURE_STOP;
        ev.timestamp = ts;
        ev.tid = wl_current_tid();
        wl_mpsc_push(&wl_event_ring, &ev); /* a full ring counts the event as lost */
    }
    pthread_mutex_unlock(&g_switch);
}

/* External correlation (scope ids on launches) costs on every launch, so it is switched on only
 * once the program opens its first scope. */
void wl_cupti_enable_extcorr(void)
{
    if (!(g_mask & WL_RECORD_KERNELS) || atomic_exchange(&g_extcorr_on, 1))
        return;
    pthread_mutex_lock(&g_switch);
    /* outside a capture range the next cudaProfilerStart switches it on */
    CUptiResult st = g_tracing ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) : CUPTI_SUCCESS;
    pthread_mutex_unlock(&g_switch);
    if (st != CUPTI_SUCCESS)
        extcorr_unavailable(st);
}

void wl_cupti_write_api_names(void) { wl_api_write_names(); }

int wl_cupti_start(const wl_config *cfg)
{
    g_mask = cfg->record_mask;
    g_range = cfg->capture_range;
    CUpti_SubscriberParams sp;
    memset(&sp, 0, sizeof sp);
    char holder[128] = "";
    sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    sp.subscriberName = "warplens";
    sp.oldSubscriberName = holder;
    sp.oldSubscriberSize = sizeof holder;
    CUptiResult st = cuptiSubscribe_v2(&g_subscriber, wl_cupti_on_callback, NULL, &sp);
    if (st == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        wl_log("CUPTI is already in use by %s; this run is not recorded (the program runs normally)",
               holder[0] ? holder : "another profiler");
        return -1;
    }
    if (check(st, "cuptiSubscribe"))
        return -1;

    /* Must precede enabling kinds and any CUDA context. */
    check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
    /* One buffer queue for all threads instead of CUPTI's default of one buffer per thread that
     * records: memory then does not grow with the launching threads, and on the H100 CUPTI itself
     * ran up to twice as fast with 256 threads this way and no slower with one (docs/recorder.md,
     * "Many launching threads"). Must precede the buffer callbacks and any enabled kind. */
    uint8_t per_thread = (uint8_t)cfg->per_thread_buffers;
    size_t pt_size = sizeof per_thread;
    check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &pt_size, &per_thread),
          "choosing CUPTI's activity buffer queue");
    uint8_t zeroed = 1;
    size_t one = sizeof zeroed;
    check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &one, &zeroed),
          "telling CUPTI the buffers are zeroed");
    if (check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
              "cuptiActivityRegisterCallbacks"))
        return -1;

    check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
          "enabling the context-created callback");
    check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED),
          "enabling CUPTI's graph node clone callback (graph-node in-kernel buffers)");
    check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
          "enabling the context-destroy callback");
    check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop),
          "enabling the cuProfilerStop callback");
    int whole_run = 0; /* a capture range that cannot work: one span from here to the end */
    if (g_range &&
        check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart),
              "enabling the cuProfilerStart callback (--capture-range)")) {
        wl_log("--capture-range: cudaProfilerStart cannot be seen; recording the whole run instead");
        g_range = 0;
        whole_run = 1;
    }

    if (cfg->record_mask & WL_RECORD_KERNELS)
        check(cuptiActivityEnableLatencyTimestamps(1), "enabling queued/submitted timestamps");
    if (cfg->record_mask & WL_RECORD_NVTX)
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER), "recording NVTX markers");
    /* synchronisation waits are the sync API calls themselves: CUPTI's SYNCHRONIZATION kind
     * intercepts every stream/event call PyTorch makes (bench/results/overhead-sync-finding.md) */
    if (cfg->record_mask & (WL_RECORD_API | WL_RECORD_SYNC))
        wl_api_callbacks_select(cfg->record_mask);
    if (wl_scopes_used()) /* a scope opened before CUPTI was set up */
        wl_cupti_enable_extcorr();
    if (whole_run) {
        capture_switch(1);
    } else if (!g_range) {
        pthread_mutex_lock(&g_switch);
        set_tracing(1);
        pthread_mutex_unlock(&g_switch);
    }
    int metrics = wl_metrics_init(cfg->capture_path);
    if (metrics || wl_stalls_init()) { /* stalls refuse to start while metrics are on */
        for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
            if (metrics ? wl_metrics_is_call(cbid) : wl_metrics_is_launch(cbid))
                check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                      metrics ? "enabling a launch, copy or set callback for metrics"
                              : "enabling a launch callback for PC sampling");
    }
    if (metrics && wl_mf_wants_nvtx()) {
        static const CUpti_CallbackId nvtx_ids[] = {
            CUPTI_CBID_NVTX_nvtxRangePushA,         CUPTI_CBID_NVTX_nvtxRangePushW,
            CUPTI_CBID_NVTX_nvtxRangePushEx,        CUPTI_CBID_NVTX_nvtxRangePop,
            CUPTI_CBID_NVTX_nvtxDomainRangePushEx,  CUPTI_CBID_NVTX_nvtxDomainRangePop,
            CUPTI_CBID_NVTX_nvtxRangeStartA,        CUPTI_CBID_NVTX_nvtxRangeStartEx,
            CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
            CUPTI_CBID_NVTX_nvtxDomainRangeEnd,     CUPTI_CBID_NVTX_nvtxDomainRegisterStringA};
        for (size_t i = 0; i < sizeof nvtx_ids / sizeof nvtx_ids[0]; i++)
            check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_NVTX, nvtx_ids[i]),
                  "enabling an NVTX callback for --metrics-nvtx");
    }
    return 0;
}

void wl_cupti_flush(int forced)
{
    CUptiResult st = cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    if (st != CUPTI_SUCCESS) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        const char *msg = wl_cupti_result_text(st);
        wl_log_once(&once, "cuptiActivityFlushAll failed: %s", msg);
    }
}

void wl_cupti_stop_api(void)
{
    pthread_mutex_lock(&g_switch);
    wl_api_callbacks_set(g_subscriber, 0);
    pthread_mutex_unlock(&g_switch);
}

void wl_cupti_stop(void)
{
    if (g_mask & WL_RECORD_KERNELS)
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (atomic_load(&g_extcorr_on))
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    if (g_mask & WL_RECORD_MEMCPY) {
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY2);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    }
    if (g_mask & WL_RECORD_NVTX)
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MARKER);
    wl_cupti_flush(1);
}
