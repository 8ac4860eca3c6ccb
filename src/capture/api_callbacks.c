/* CUDA API calls at the CPU-GPU boundary (launches, graph launches, copies, sets, synchronisation,
 * allocation), recorded from CUPTI driver-API callbacks: the entry timestamp rides in CUPTI's
 * per-call correlationData, and on exit one fixed-size event goes to a lock-free ring that the
 * writer thread drains. Driver callbacks fire for calls the runtime makes on the program's behalf
 * as well as for direct driver calls (Triton, cuBLAS's cuLaunchKernelEx), and only for the ids
 * enabled here; CUPTI's API activity kinds, by contrast, skip runtime-originated driver calls or
 * cost far more per call, and its per-call driver records cost the same as these callbacks
 * (bench/results/overhead-api-activity.md). */
#include "capture/recorder.h"
#include "capture/inkernel_capture.h"

#include <cupti.h>
#include <string.h>

#include "capture/host_clock.h"

#include "common/log.h"

wl_mpsc wl_api_ring;

static const char *const DRIVER_API[] = {"cuLaunch",         "cuGraphLaunch",       "cuMemcpy",
                                         "cuMemset",         "cuMemAlloc",          "cuMemFree",
                                         "cuMemHostAlloc",   "cuMemHostRegister",   "cuMemHostUnregister",
                                         "cuMemCreate",      "cuMemRelease",        NULL};
/* synchronisation waits (--record sync): the session's sync table is made from these calls */
static const char *const SYNC_API[] = {"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
                                       "cuStreamWaitEvent", NULL};

#define MAX_API_IDS 256
static uint16_t g_ids[MAX_API_IDS];
static unsigned g_count;
/* LAUNCH_KERNEL: kernel launches take annotations and in-kernel registrations; LAUNCH_GRAPH:
 * graph launches take graph registrations */
enum { LAUNCH_KERNEL = 1, LAUNCH_GRAPH = 2 };
static uint8_t g_is_launch[CUPTI_DRIVER_TRACE_CBID_SIZE];
static uint8_t g_hooked[CUPTI_DRIVER_TRACE_CBID_SIZE];

int wl_api_callbacks_has(uint32_t cbid) { return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && g_hooked[cbid]; }

static int has_prefix(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strncmp(name, *list, strlen(*list)) == 0)
            return 1;
    return 0;
}

int wl_api_callbacks_select(uint32_t record_mask)
{
    wl_occ_check_init();
    wl_host_clock_init();
    if (wl_mpsc_init(&wl_api_ring, 1u << 16, sizeof(wl_api_event)) != 0) {
        wl_log("out of memory for the API call ring; API calls are not recorded");
        return 0;
    }
    wl_mpsc_set_spill(&wl_api_ring, WL_SPILL_API, wl_pool_wake);
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && g_count < MAX_API_IDS; cbid++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || !name)
            continue;
        if (!((record_mask & WL_RECORD_API) && has_prefix(name, DRIVER_API)) &&
            !((record_mask & WL_RECORD_SYNC) && has_prefix(name, SYNC_API)))
            continue;
        g_ids[g_count++] = (uint16_t)cbid;
        g_hooked[cbid] = 1;
        g_is_launch[cbid] =
            (uint8_t)((strncmp(name, "cuLaunch", 8) == 0 && strncmp(name, "cuLaunchHostFunc", 16) != 0 ? LAUNCH_KERNEL
                                                                                                         : 0) |
                      (strncmp(name, "cuGraphLaunch", 13) == 0 ? LAUNCH_GRAPH : 0));
    }
    if (!g_count)
        wl_log("no CUDA API callback could be enabled; launch costs are not recorded");
    return (int)g_count;
}

void wl_api_callbacks_set(void *subscriber, int on)
{
    unsigned enabled = 0;
    for (unsigned i = 0; i < g_count; i++)
        enabled += cuptiEnableCallback(on ? 1 : 0, (CUpti_SubscriberHandle)subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                       g_ids[i]) == CUPTI_SUCCESS;
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (on && g_count && !enabled)
        wl_log_once(&once, "no CUDA API callback could be enabled; launch costs are not recorded");
}

/* On the application's thread: two clock reads (host_clock.h: ticks, made nanoseconds by the
 * writer), one look-up of the thread's state and one ring push, nothing else. */
void wl_api_callback(uint32_t domain, uint32_t cbid, const void *data)
{
    const CUpti_CallbackData *cd = data;
    if (cd->callbackSite == CUPTI_API_ENTER) {
        *cd->correlationData = wl_host_ticks(); /* the recorder's own calls too: cheaper than asking */
        return;
    }
    wl_thread_locals *me = &wl_tls;
    if (me->internal_calls) { /* the recorder's own copies and calibration kernel are not the program's */
        wl_internal_corr_add(cd->correlationId);
        me->last_internal_corr = cd->correlationId; /* clock_calibration.c pairs it with the launch */
        return;
    }
    wl_api_event e;
    e.start = *cd->correlationData;
    e.end = wl_host_ticks();
    e.cbid = cbid;
    e.tid = me->tid ? me->tid : wl_current_tid();
    e.correlation_id = cd->correlationId;
    e.return_value = cd->functionReturnValue ? (uint32_t) * (const CUresult *)cd->functionReturnValue : 0;
    e.domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? WLCAP_API_RUNTIME : WLCAP_API_DRIVER;
    e.kind = WL_API_EVENT_CALL;
    wl_mpsc_push(&wl_api_ring, &e);
    if (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && (g_is_launch[cbid] & LAUNCH_GRAPH) && me->inkernel_pending) {
        /* cuGraphLaunch and cuGraphLaunch_ptsz: {hGraph (the CUgraphExec), hStream} */
        const cuGraphLaunch_params *p = cd->functionParams;
        wl_inkernel_on_graph_launch(cd->correlationId, cd->context, p ? (void *)p->hGraph : NULL);
    }
    if (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && (g_is_launch[cbid] & LAUNCH_KERNEL)) {
        if (me->annotation_set) { /* warplens_annotate_next_launch on this thread */
            me->annotation_set = 0;
            /* the counts travel as the bits of two doubles in the start/end fields */
            e.kind = WL_API_EVENT_ANNOTATION;
            memcpy(&e.start, &me->annotation_flops, sizeof e.start);
            memcpy(&e.end, &me->annotation_bytes, sizeof e.end);
            e.cbid = me->annotation_precision;
            wl_mpsc_push(&wl_api_ring, &e);
        }
        wl_occ_check_launch(cbid, data);
        if (me->inkernel_pending)
            wl_inkernel_on_launch(cd->correlationId, cd->context);
    }
}

/* Stores "cuMemcpyHtoD" for CUPTI's "cuMemcpyHtoD_v2": the version suffix is CUPTI's. */
void wl_api_write_names(void)
{
    for (unsigned i = 0; i < g_count; i++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, g_ids[i], &name) != CUPTI_SUCCESS || !name)
            continue;
        size_t n = strlen(name);
        const char *v = strstr(name, "_v");
        if (v && v > name && v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2))
            n = (size_t)(v - name);
        wlcap_api_name r = {WLCAP_API_DRIVER, g_ids[i], wl_capw_string_n(name, n), 0};
        wl_capw_record(WLCAP_API_NAME, &r, sizeof r);
    }
}
