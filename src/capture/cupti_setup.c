/* Everything the recorder asks of CUPTI: one subscriber (resource and a few API callbacks for
 * flushing and device discovery), the activity kinds to record, the short list of API calls whose
 * records matter at the CPU-GPU boundary, and the buffer callbacks. Every call is checked; a
 * failure is reported once and recording continues with what works. */
#include "capture/cupti_errors.h"
#include "capture/recorder.h"

#include <cupti.h>
#include <string.h>

#include "common/log.h"

static CUpti_SubscriberHandle g_subscriber;
static uint32_t g_mask;

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

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata;
    /* a launch's exit always reaches the metrics module: it releases the lock taken at entry */
    int metrics_launch = domain == CUPTI_CB_DOMAIN_DRIVER_API && wl_metrics_enabled() && wl_metrics_is_launch(cbid);
    if (metrics_launch && ((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_EXIT) {
        if (wl_api_callbacks_has(cbid) && atomic_load(&wl_state) == WL_STATE_RUNNING)
            wl_api_callback(domain, cbid, data);
        wl_metrics_launch(cbid, data);
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
            wl_cupti_flush(1);
        }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
        const CUpti_CallbackData *cd = data;
        if (cd->callbackSite == CUPTI_API_ENTER)
            wl_cupti_flush(1);
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        if (wl_api_callbacks_has(cbid))
            wl_api_callback(domain, cbid, data);
        if (metrics_launch)
            wl_metrics_launch(cbid, data);
        else if (wl_stalls_enabled() && wl_metrics_is_launch(cbid))
            wl_stalls_launch(cbid, data);
    }
}

static atomic_int g_extcorr_on;

/* External correlation (scope ids on launches) costs on every launch, so it is switched on only
 * once the program opens its first scope. */
void wl_cupti_enable_extcorr(void)
{
    if (!(g_mask & WL_RECORD_KERNELS) || atomic_exchange(&g_extcorr_on, 1))
        return;
    CUptiResult st = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    if (st != CUPTI_SUCCESS) {
        /* seen with --metrics (CUPTI_ERROR_NOT_COMPATIBLE on the H100): the session still ties
         * each launch to the scope open on its thread at the time (session_writer.c) */
        const char *msg = wl_cupti_result_text(st);
        wl_log("scopes: CUPTI's external correlation is not available in this mode (%s); kernels are tied to the"
               " scope open on their launching thread instead", msg);
    }
}

void wl_cupti_write_api_names(void) { wl_api_write_names(); }

int wl_cupti_start(const wl_config *cfg)
{
    g_mask = cfg->record_mask;
    CUpti_SubscriberParams sp;
    memset(&sp, 0, sizeof sp);
    char holder[128] = "";
    sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    sp.subscriberName = "warplens";
    sp.oldSubscriberName = holder;
    sp.oldSubscriberSize = sizeof holder;
    CUptiResult st = cuptiSubscribe_v2(&g_subscriber, on_callback, NULL, &sp);
    if (st == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        wl_log("CUPTI is already in use by %s; this run is not recorded (the program runs normally)",
               holder[0] ? holder : "another profiler");
        return -1;
    }
    if (check(st, "cuptiSubscribe"))
        return -1;

    /* Must precede enabling kinds and any CUDA context. */
    check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
    uint8_t zeroed = 1;
    size_t one = sizeof zeroed;
    check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &one, &zeroed),
          "telling CUPTI the buffers are zeroed");
    if (check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
              "cuptiActivityRegisterCallbacks"))
        return -1;

    check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
          "enabling the context-created callback");
    check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
          "enabling the context-destroy callback");
    check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop),
          "enabling the cuProfilerStop callback");

    if (cfg->record_mask & WL_RECORD_KERNELS) {
        check(cuptiActivityEnableLatencyTimestamps(1), "enabling queued/submitted timestamps");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "recording kernels");
        if (wl_scopes_used())
            wl_cupti_enable_extcorr();
    }
    if (cfg->record_mask & WL_RECORD_MEMCPY) {
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "recording memcpy");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2), "recording peer memcpy");
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "recording memset");
    }
    if (cfg->record_mask & WL_RECORD_NVTX)
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER), "recording NVTX markers");
    /* synchronisation waits are the sync API calls themselves: CUPTI's SYNCHRONIZATION kind
     * intercepts every stream/event call PyTorch makes (bench/results/overhead-sync-finding.md) */
    if (cfg->record_mask & (WL_RECORD_API | WL_RECORD_SYNC))
        wl_api_callbacks_enable(g_subscriber, cfg->record_mask);
    int metrics = wl_metrics_init();
    if (metrics || wl_stalls_init()) { /* stalls refuse to start while metrics are on */
        for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
            if (wl_metrics_is_launch(cbid))
                check(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                      metrics ? "enabling a launch callback for metrics" : "enabling a launch callback for PC sampling");
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
    wl_api_callbacks_disable(g_subscriber);
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
