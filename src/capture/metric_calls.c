/* Hardware metrics, the callback half (`--metrics`; range_profiler.c owns CUPTI's profiler): at
 * the entry of every call that can put work on the GPU (kernel launches, graph launches, copies,
 * sets) the context's lock is taken and held to the call's exit, so the calls of a context are
 * serialised in the order CUPTI's auto range numbers their ranges. At entry the call is
 * classified (kind, grid size, function), the filters decide whether it is profiled (an
 * unprofiled call runs with the profiler stopped), and the batch policy decides whether the
 * batch so far is decoded first:
 *  - kernel launches of functions already profiled on this context share a batch (up to
 *    WARPLENS_METRICS_BATCH calls, decoded at the next call once older than the flush interval);
 *  - a copy, a set, a graph launch, the first profiled launch of a kernel function, and the
 *    calls after a batch whose counts disagreed are each profiled in a batch of their own, so
 *    every range CUPTI makes for them (none, one or several, including work the driver does
 *    inside the call) is theirs for certain (metric_match.h).
 * Launches, copies and sets into a stream being captured run nothing and are not calls here;
 * while a capture is under way the batch is left as it is (enter_frozen). Graph launches follow
 * --metrics-graphs (range_profiler.h). */
#include "capture/metric_cost.h"
#include "capture/metric_filter.h"
#include "capture/range_profiler.h"
#include "capture/recorder.h"

#include <pthread.h>
#include <string.h>

#include "common/log.h"

enum { CALL_NONE = 0, CALL_KERNEL, CALL_GRAPH, CALL_MEMCPY, CALL_MEMSET, CALL_CAPTURE_BEGIN, CALL_CAPTURE_END };

static uint8_t g_kind[CUPTI_DRIVER_TRACE_CBID_SIZE];
static pthread_once_t g_kinds_once = PTHREAD_ONCE_INIT;
/* Stream captures under way in the process. While one is, the profiler is neither started nor
 * stopped (a Stop or decode may synchronise, which a capture in global mode forbids on any thread):
 * a running batch takes the calls as they come, and nothing is profiled when it is not running. */
static atomic_int g_capturing;

/* What this thread holds between a call's entry and exit. */
static _Thread_local struct {
    mctx *m;
    long slot;        /* the call's place in the batch, -1 when not in one */
    int profiled;
    int graph;        /* WL_GRAPHS_NODE / _LAUNCH when the call is a profiled graph launch */
    int kernel;       /* the call is a kernel launch */
    uint64_t t0;      /* when the driver call itself began (profiled calls; metric_cost.h) */
    CUstream stream;
} t_call;

static void classify_ids(void)
{
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || !name)
            continue;
        if (!strncmp(name, "cuStreamBeginCapture", 20))
            g_kind[cbid] = CALL_CAPTURE_BEGIN;
        else if (!strncmp(name, "cuStreamEndCapture", 18))
            g_kind[cbid] = CALL_CAPTURE_END;
        else if (!strncmp(name, "cuGraphLaunch", 13))
            g_kind[cbid] = CALL_GRAPH;
        else if (!strncmp(name, "cuLaunch", 8) && strncmp(name, "cuLaunchHostFunc", 16) != 0)
            g_kind[cbid] = CALL_KERNEL;
        else if (!strncmp(name, "cuMemcpy", 8))
            g_kind[cbid] = CALL_MEMCPY;
        else if (!strncmp(name, "cuMemset", 8))
            g_kind[cbid] = CALL_MEMSET;
    }
}

static int kind_of(uint32_t cbid)
{
    pthread_once(&g_kinds_once, classify_ids);
    return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE ? g_kind[cbid] : CALL_NONE;
}

int wl_metrics_is_launch(uint32_t cbid)
{
    int k = kind_of(cbid);
    return k == CALL_KERNEL || k == CALL_GRAPH;
}

int wl_metrics_is_call(uint32_t cbid) { return kind_of(cbid) != CALL_NONE; }

/* The stream of an asynchronous copy or set (0 when the call has none: synchronous calls, which
 * cannot be captured). */
static int copy_stream(uint32_t cbid, const void *p, CUstream *s)
{
#define STREAM_OF(type) (*s = ((const type *)p)->hStream, 1)
    if (!p)
        return 0;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz: return STREAM_OF(cuMemcpyAsync_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz: return STREAM_OF(cuMemcpyHtoDAsync_v2_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz: return STREAM_OF(cuMemcpyDtoHAsync_v2_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz: return STREAM_OF(cuMemcpyDtoDAsync_v2_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2_ptsz: return STREAM_OF(cuMemcpy2DAsync_v2_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2_ptsz: return STREAM_OF(cuMemcpy3DAsync_v2_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz: return STREAM_OF(cuMemcpyPeerAsync_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz: return STREAM_OF(cuMemsetD8Async_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz: return STREAM_OF(cuMemsetD16Async_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz: return STREAM_OF(cuMemsetD32Async_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async_ptsz: return STREAM_OF(cuMemsetD2D8Async_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async_ptsz: return STREAM_OF(cuMemsetD2D16Async_params);
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz: return STREAM_OF(cuMemsetD2D32Async_params);
    default: return 0;
    }
#undef STREAM_OF
}

typedef struct call_info {
    uint64_t ctas;    /* grid size of a kernel launch (0: not known) */
    const void *fn;   /* the launched function */
    CUstream stream;
} call_info;

static void launch_info(uint32_t cbid, const void *params, call_info *ci)
{
    memset(ci, 0, sizeof *ci);
    if (!params)
        return;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
        const cuLaunchKernel_params *p = params;
        ci->fn = p->f;
        ci->stream = p->hStream;
        ci->ctas = (uint64_t)p->gridDimX * p->gridDimY * p->gridDimZ;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
        const cuLaunchCooperativeKernel_params *p = params;
        ci->fn = p->f;
        ci->stream = p->hStream;
        ci->ctas = (uint64_t)p->gridDimX * p->gridDimY * p->gridDimZ;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const cuLaunchKernelEx_params *p = params;
        const CUlaunchConfig *c = p->config;
        ci->fn = p->f;
        if (c) {
            ci->stream = c->hStream;
            ci->ctas = (uint64_t)c->gridDimX * c->gridDimY * c->gridDimZ;
        }
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: ci->stream = ((const cuGraphLaunch_params *)params)->hStream; break;
    default: break;
    }
}

/* A launch into a stream being captured adds a node to a graph and runs nothing: no range. */
static int into_capture(CUstream stream)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    return cuStreamIsCapturing(stream, &cs) == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* The function's entry in the context's table (created on first sight), NULL when the table is full. */
static wl_fn_entry *fn_entry(mctx *m, const void *fn)
{
    if (!fn || !m->fns)
        return NULL;
    size_t h = ((uintptr_t)fn >> 4) * 11400714819323198485ull % WL_FN_TABLE;
    for (size_t n = 0; n < WL_FN_TABLE; n++, h = (h + 1) % WL_FN_TABLE) {
        wl_fn_entry *e = &m->fns[h];
        if (e->fn == fn)
            return e;
        if (!e->fn) {
            if (m->nfns >= WL_FN_TABLE * 3 / 4)
                return NULL; /* full enough: later functions are not remembered (nor isolated) */
            e->fn = fn;
            e->selected = -1;
            m->nfns++;
            return e;
        }
    }
    return NULL;
}

/* Whether the filters let this call be profiled. Kernel launches: name, NVTX, then the launch
 * window; the other calls have no name and follow the NVTX filter inside the launch window. */
static int decide(int kind, wl_fn_entry *e, const char *symbol)
{
    if (!wl_mf_active())
        return 1;
    if (kind == CALL_KERNEL) {
        int name_ok;
        if (!wl_mf_has_name_filter())
            name_ok = 1;
        else if (e && e->selected >= 0)
            name_ok = e->selected;
        else if (e)
            name_ok = e->selected = (int8_t)wl_mf_name_passes(symbol);
        else
            name_ok = wl_mf_name_passes(symbol);
        if (!name_ok || !wl_mf_nvtx_passes()) {
            wl_mf_note_left_out();
            return 0;
        }
        return wl_mf_take_launch();
    }
    return !wl_mf_has_name_filter() && wl_mf_in_window() && wl_mf_nvtx_passes();
}

static uint32_t owner_kind(int kind)
{
    switch (kind) {
    case CALL_KERNEL: return WLCAP_OWNER_KERNEL;
    case CALL_MEMCPY: return WLCAP_OWNER_MEMCPY;
    case CALL_MEMSET: return WLCAP_OWNER_MEMSET;
    default: return WLCAP_OWNER_GRAPH_NODE;
    }
}

/* While a stream capture is under way elsewhere: the call joins a running batch as it is (one it
 * would not have profiled is marked so: its range is dropped), or runs unprofiled. */
static void enter_frozen(mctx *m, const CUpti_CallbackData *cd, const call_info *ci, uint32_t kind, int wanted)
{
    static atomic_flag once = ATOMIC_FLAG_INIT;
    wl_log_once(&once, "metrics: while a CUDA graph is being captured the profiler is neither started nor stopped;"
                       " work run meanwhile is profiled only in a batch already open");
    if (!m->running || m->ncalls >= m->cap)
        return; /* a batch full now: CUPTI drops the range (counted) */
    m->calls[m->ncalls] = (wl_mm_call){cd->correlationId, wanted ? kind : WL_MM_DISCARD, ci->ctas};
    t_call.slot = (long)m->ncalls++;
    t_call.profiled = wanted;
}

/* Entry, with m->lock held: decides and places the call. */
static void enter(mctx *m, int kind, const CUpti_CallbackData *cd, const call_info *ci)
{
    wl_fn_entry *e = kind == CALL_KERNEL ? fn_entry(m, ci->fn) : NULL;
    int profile = !wl_tls.internal_calls && decide(kind, e, cd->symbolName); /* the recorder's own: never */
    if (kind == CALL_GRAPH && m->graphs == WL_GRAPHS_OFF)
        profile = 0;
    /* Under kernel replay a set is not profiled: with CUPTI 13.0 on the H100, a batch holding only
     * a set (cuMemsetD8) kills the process after its decode (SIGSEGV in a thread of CUPTI's own;
     * bench/results/gpu-metrics-issue17-h100-first.log), so sets run with the profiler stopped
     * there. Copies (device-to-device ranges included) are profiled under both replay modes, and
     * sets without replay (one-pass sets). */
    if (kind == CALL_MEMSET && m->replay == CUPTI_KernelReplay)
        profile = 0;
    /* Graph nodes get ranges only under kernel replay: without replay CUPTI 13.0 fails the Stop after
     * the launch (CUPTI_ERROR_UNKNOWN, and the profiler is unusable after it), so the launch runs
     * with the profiler stopped. */
    if (profile && kind == CALL_GRAPH && m->graphs == WL_GRAPHS_NODE && m->replay != CUPTI_KernelReplay) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "metrics: --metrics-graphs node needs kernel replay (a set of more than one pass); graph"
                           " launches are not profiled from now on (other work is)");
        profile = 0;
    }
    if (atomic_load(&g_capturing) > 0) {
        if (kind != CALL_GRAPH)
            enter_frozen(m, cd, ci, owner_kind(kind), profile);
        return;
    }
    if (!profile) {
        wl_rp_flush(m); /* the call runs with the profiler stopped */
        return;
    }
    t_call.profiled = 1;
    if (kind == CALL_GRAPH && m->graphs == WL_GRAPHS_LAUNCH) {
        wl_rp_flush(m);
        if (m->state == M_RUNNING && wl_rp_graph_begin(m, cd->correlationId) == 0)
            t_call.graph = WL_GRAPHS_LAUNCH;
        return;
    }
    int first = e && !e->profiled;
    if (e)
        e->profiled = 1;
    int alone = kind != CALL_KERNEL || first || m->isolate_left > 0;
    if (m->running && m->ncalls &&
        (alone || m->isolated || m->ncalls >= m->cap || wl_rp_now_ns() - m->batch_start_ns >= wl_rp_max_age_ns))
        wl_rp_flush(m);
    if (m->state != M_RUNNING || (!m->running && wl_rp_start(m) != 0))
        return;
    m->calls[m->ncalls] = (wl_mm_call){cd->correlationId, owner_kind(kind), ci->ctas};
    t_call.slot = (long)m->ncalls++;
    m->isolated = alone;
    if (m->isolate_left)
        m->isolate_left--;
    if (kind == CALL_GRAPH)
        t_call.graph = WL_GRAPHS_NODE;
}

static void leave(const CUpti_CallbackData *cd)
{
    mctx *m = t_call.m;
    t_call.m = NULL;
    if (t_call.profiled && t_call.t0)
        wl_mcost_add(t_call.kernel ? WL_MC_KERNEL_CALL : WL_MC_OTHER_CALL, wl_rp_now_ns() - t_call.t0);
    CUresult rv = cd->functionReturnValue ? *(const CUresult *)cd->functionReturnValue : CUDA_SUCCESS;
    if (t_call.graph == WL_GRAPHS_LAUNCH)
        wl_rp_graph_end(m, t_call.stream);
    else if (t_call.graph == WL_GRAPHS_NODE && rv == CUDA_SUCCESS)
        (void)cuStreamSynchronize(t_call.stream); /* the next decode comes after the graph's work */
    if (rv != CUDA_SUCCESS && t_call.slot >= 0 && (size_t)t_call.slot + 1 == m->ncalls)
        m->ncalls--; /* a failed call makes no range */
    if (t_call.profiled)
        atomic_fetch_add(&wl_rp_calls_done, 1);
    else
        atomic_fetch_sub(&wl_rp_calls_seen, 1);
    if (m->state != M_RUNNING)
        wl_rp_teardown(m);
    pthread_mutex_unlock(&m->lock);
}

void wl_metrics_call(uint32_t cbid, const void *data)
{
    const CUpti_CallbackData *cd = data;
    int kind = kind_of(cbid);
    if (kind == CALL_CAPTURE_BEGIN || kind == CALL_CAPTURE_END) {
        CUresult rv = cd->functionReturnValue ? *(const CUresult *)cd->functionReturnValue : CUDA_SUCCESS;
        if (cd->callbackSite == CUPTI_API_EXIT && kind == CALL_CAPTURE_BEGIN && rv == CUDA_SUCCESS)
            atomic_fetch_add(&g_capturing, 1);
        else if (cd->callbackSite == CUPTI_API_EXIT && kind == CALL_CAPTURE_END) /* ended, failed or not */
            for (int n = atomic_load(&g_capturing); n > 0 && !atomic_compare_exchange_weak(&g_capturing, &n, n - 1);)
                ;
        return;
    }
    if (cd->callbackSite == CUPTI_API_EXIT) {
        if (t_call.m)
            leave(cd);
        return;
    }
    if (!wl_metrics_enabled() || t_call.m || kind == CALL_NONE)
        return; /* a nested call inside one this thread holds is part of it */
    CUcontext ctx = cd->context;
    if (!ctx && cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
        return;
    call_info ci;
    launch_info(cbid, cd->functionParams, &ci);
    int has_stream = kind == CALL_KERNEL || kind == CALL_GRAPH || copy_stream(cbid, cd->functionParams, &ci.stream);
    if (!ctx || (has_stream && into_capture(ci.stream)))
        return;
    mctx *m = wl_rp_context(ctx);
    if (!m || m->state != M_RUNNING)
        return;
    atomic_fetch_add(&wl_rp_calls_seen, 1);
    pthread_mutex_lock(&m->lock);
    t_call.m = m;
    t_call.slot = -1;
    t_call.profiled = 0;
    t_call.graph = 0;
    t_call.kernel = kind == CALL_KERNEL;
    t_call.t0 = 0;
    t_call.stream = ci.stream;
    if (m->state == M_RUNNING)
        enter(m, kind, cd, &ci);
    if (t_call.profiled)
        t_call.t0 = wl_rp_now_ns();
}
