/* Timer event backend for CUDA (default build): the driver API, loaded with dlopen at first use so
 * libwarplens.so has no link-time CUDA dependency. A cudaStream_t is a CUstream. Events must live in
 * the stream's context: the context current on the calling thread is used (the runtime makes the
 * device's primary context current), or the stream's own context when none is current. Each
 * context has a pool of events (grown in batches of 32, never shrunk; bounded by twice the interval
 * capacity plus one batch) and one anchor event recorded before its first interval, which places
 * intervals on the host clock (docs/timer.md). Without a loadable driver, cuInit failing (no
 * device) or WARPLENS_TIMER_BACKEND=host / WARPLENS_NO_GPU set, timers fall back to host time. */
#ifndef WARPLENS_TIMER_HIP
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "timer/timer_internal.h"

/* Driver entry points, every call checked (0 = CUDA_SUCCESS, 600 = CUDA_ERROR_NOT_READY). */
typedef struct wl_cu_fns {
    int (*init)(unsigned flags);
    int (*ctx_get_current)(void **ctx);
    int (*stream_get_ctx)(void *stream, void **ctx); /* optional */
    int (*ctx_push)(void *ctx);
    int (*ctx_pop)(void **ctx);
    int (*event_create)(void **ev, unsigned flags);
    int (*event_record)(void *ev, void *stream);
    int (*event_query)(void *ev);
    int (*event_elapsed)(float *ms, void *start, void *end);
    int (*event_destroy)(void *ev);
} wl_cu_fns;

#define CU_NOT_READY 600
#define POOL_BATCH 32

typedef struct cu_pool {
    void *ctx;
    void **free_ev;
    uint32_t n_free, cap_free, created; /* cap_free >= created: every event fits back */
    void *anchor;
} cu_pool;

static wl_cu_fns g_cu;
static cu_pool g_pools[WL_TB_MAX_CTX];
static int g_n_pools;
static uint64_t g_created;
static atomic_flag g_warned_ctx = ATOMIC_FLAG_INIT;

/* Installs a driver table directly (tests; wl_tb_init then uses it instead of dlopen). */
static int g_fns_injected;
void wl_tb_cuda_use(const wl_cu_fns *fns);
void wl_tb_cuda_use(const wl_cu_fns *fns)
{
    g_cu = *fns;
    g_fns_injected = 1;
}

static void *sym(void *h, const char *a, const char *b)
{
    void *p = dlsym(h, a);
    return p || !b ? p : dlsym(h, b);
}

static int load_driver(void)
{
    const char *path = getenv("WARPLENS_TIMER_CUDA_LIB");
    void *h = NULL;
    if (path && *path)
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    else if (!(h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)))
        h = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    g_cu.init = (int (*)(unsigned))sym(h, "cuInit", NULL);
    g_cu.ctx_get_current = (int (*)(void **))sym(h, "cuCtxGetCurrent", NULL);
    g_cu.stream_get_ctx = (int (*)(void *, void **))sym(h, "cuStreamGetCtx", NULL);
    g_cu.ctx_push = (int (*)(void *))sym(h, "cuCtxPushCurrent_v2", "cuCtxPushCurrent");
    g_cu.ctx_pop = (int (*)(void **))sym(h, "cuCtxPopCurrent_v2", "cuCtxPopCurrent");
    g_cu.event_create = (int (*)(void **, unsigned))sym(h, "cuEventCreate", NULL);
    g_cu.event_record = (int (*)(void *, void *))sym(h, "cuEventRecord", NULL);
    g_cu.event_query = (int (*)(void *))sym(h, "cuEventQuery", NULL);
    g_cu.event_elapsed = (int (*)(float *, void *, void *))sym(h, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    g_cu.event_destroy = (int (*)(void *))sym(h, "cuEventDestroy_v2", "cuEventDestroy");
    if (!g_cu.init || !g_cu.ctx_get_current || !g_cu.ctx_push || !g_cu.ctx_pop || !g_cu.event_create ||
        !g_cu.event_record || !g_cu.event_query || !g_cu.event_elapsed || !g_cu.event_destroy) {
        wl_log("timer: %s lacks the event API; GPU intervals are timed on the host", path ? path : "libcuda");
        return -1;
    }
    return 0;
}

int wl_tb_init(void)
{
    const char *b = getenv("WARPLENS_TIMER_BACKEND");
    const char *nogpu = getenv("WARPLENS_NO_GPU");
    if (!g_fns_injected && ((b && !strcmp(b, "host")) || (nogpu && *nogpu && strcmp(nogpu, "0"))))
        return WL_TB_HOST;
    if (!g_fns_injected && load_driver() != 0)
        return WL_TB_HOST;
    if (g_cu.init(0) != 0)
        return WL_TB_HOST; /* no device, or a driver without a usable GPU */
    return WL_TB_CUDA;
}

static int pool_for_ctx(void *ctx)
{
    for (int i = 0; i < g_n_pools; i++)
        if (g_pools[i].ctx == ctx)
            return i;
    if (g_n_pools == WL_TB_MAX_CTX)
        return -1;
    g_pools[g_n_pools].ctx = ctx;
    return g_n_pools++;
}

/* Creates a batch of events in the pool's context. Returns 0 or -1. */
static int grow(cu_pool *p)
{
    if (p->created + POOL_BATCH > p->cap_free) {
        uint32_t nc = p->cap_free ? p->cap_free * 2 : 2 * POOL_BATCH;
        void **nv = realloc(p->free_ev, nc * sizeof *nv);
        if (!nv)
            return -1;
        p->free_ev = nv;
        p->cap_free = nc;
    }
    if (g_cu.ctx_push(p->ctx) != 0)
        return -1;
    int made = 0;
    for (int i = 0; i < POOL_BATCH; i++) {
        void *ev = NULL;
        if (g_cu.event_create(&ev, 0) != 0 || !ev)
            break;
        p->free_ev[p->n_free++] = ev;
        made++;
    }
    void *dummy;
    g_cu.ctx_pop(&dummy);
    p->created += (uint32_t)made;
    g_created += (uint64_t)made;
    return made ? 0 : -1;
}

static int pop(cu_pool *p, void **ev)
{
    if (!p->n_free && grow(p) != 0)
        return -1;
    *ev = p->free_ev[--p->n_free];
    return 0;
}

int wl_tb_acquire(void *stream, wl_tev *out, int *need_anchor)
{
    void *ctx = NULL;
    if (g_cu.ctx_get_current(&ctx) != 0)
        ctx = NULL;
    if (!ctx && g_cu.stream_get_ctx && stream && g_cu.stream_get_ctx(stream, &ctx) != 0)
        ctx = NULL;
    if (!ctx) {
        wl_log_once(&g_warned_ctx, "timer: no CUDA context is current on this thread; GPU intervals "
                                   "begun here are timed on the host");
        return 1;
    }
    int i = pool_for_ctx(ctx);
    if (i < 0)
        return -1;
    cu_pool *p = &g_pools[i];
    *need_anchor = 0;
    if (!p->anchor) {
        if (pop(p, &p->anchor) != 0)
            return -1;
        *need_anchor = 1;
    }
    if (pop(p, &out->ev) != 0)
        return -1;
    out->ctx = i;
    return 0;
}

int wl_tb_record(wl_tev ev, void *stream, int need_anchor)
{
    if (need_anchor && g_cu.event_record(g_pools[ev.ctx].anchor, stream) != 0)
        return -1;
    return g_cu.event_record(ev.ev, stream) == 0 ? 0 : -1;
}

int wl_tb_query(wl_tev ev)
{
    int r = g_cu.event_query(ev.ev);
    return r == 0 ? 1 : r == CU_NOT_READY ? 0 : -1;
}

int wl_tb_elapsed_ms(wl_tev a, wl_tev b, float *ms)
{
    return g_cu.event_elapsed(ms, a.ev, b.ev) == 0 ? 0 : -1;
}

int wl_tb_since_anchor_ms(wl_tev ev, float *ms)
{
    void *anchor = g_pools[ev.ctx].anchor;
    return anchor && g_cu.event_elapsed(ms, anchor, ev.ev) == 0 ? 0 : -1;
}

void wl_tb_release(wl_tev ev)
{
    cu_pool *p = &g_pools[ev.ctx];
    if (ev.ev && p->n_free < p->cap_free)
        p->free_ev[p->n_free++] = ev.ev;
}

void wl_tb_reset_anchors(void)
{
    for (int i = 0; i < g_n_pools; i++)
        if (g_pools[i].anchor) {
            wl_tev ev = {g_pools[i].anchor, i};
            wl_tb_release(ev);
            g_pools[i].anchor = NULL;
        }
}

uint64_t wl_tb_events_created(void) { return g_created; }

uint64_t wl_tb_events_pooled(void)
{
    uint64_t n = 0;
    for (int i = 0; i < g_n_pools; i++)
        n += g_pools[i].n_free;
    return n;
}

const char *wl_tb_name(void) { return "CUDA events"; }
#else
/* The HIP build: timer_backend_hip.c is compiled instead. ISO C wants a declaration here. */
typedef int wl_timer_backend_cuda_unused;
#endif
