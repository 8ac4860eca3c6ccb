/* Timer event backend for HIP, selected at compile time with -DWARPLENS_TIMER_HIP (link the HIP
 * runtime, libamdhip64). Mirrors the CUDA backend: one event pool and one anchor event per device
 * (the device current on the calling thread, hipGetDevice), events created in batches and never
 * destroyed. CI only compiles this file against Debian's HIP headers; it has not been run on an
 * AMD GPU (docs/timer.md). Without a device (hipInit failing) timers fall back to host time. */
#ifdef WARPLENS_TIMER_HIP
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "timer/timer_internal.h"

#define POOL_BATCH 32

typedef struct hip_pool {
    int device, used;
    hipEvent_t *free_ev;
    uint32_t n_free, cap_free, created;
    hipEvent_t anchor;
} hip_pool;

static hip_pool g_pools[WL_TB_MAX_CTX];
static uint64_t g_created;

int wl_tb_init(void)
{
    const char *b = getenv("WARPLENS_TIMER_BACKEND");
    if (b && !strcmp(b, "host"))
        return WL_TB_HOST;
    int n = 0;
    if (hipInit(0) != hipSuccess || hipGetDeviceCount(&n) != hipSuccess || n <= 0)
        return WL_TB_HOST;
    return WL_TB_HIP;
}

static int grow(hip_pool *p)
{
    if (p->created + POOL_BATCH > p->cap_free) {
        uint32_t nc = p->cap_free ? p->cap_free * 2 : 2 * POOL_BATCH;
        hipEvent_t *nv = realloc(p->free_ev, nc * sizeof *nv);
        if (!nv)
            return -1;
        p->free_ev = nv;
        p->cap_free = nc;
    }
    int cur = 0, made = 0;
    if (hipGetDevice(&cur) != hipSuccess || (cur != p->device && hipSetDevice(p->device) != hipSuccess))
        return -1;
    for (int i = 0; i < POOL_BATCH; i++) {
        hipEvent_t ev;
        if (hipEventCreate(&ev) != hipSuccess)
            break;
        p->free_ev[p->n_free++] = ev;
        made++;
    }
    if (cur != p->device)
        (void)hipSetDevice(cur);
    p->created += (uint32_t)made;
    g_created += (uint64_t)made;
    return made ? 0 : -1;
}

static int pop(hip_pool *p, hipEvent_t *ev)
{
    if (!p->n_free && grow(p) != 0)
        return -1;
    *ev = p->free_ev[--p->n_free];
    return 0;
}

int wl_tb_acquire(void *stream, wl_tev *out, int *need_anchor)
{
    (void)stream;
    int dev = 0;
    if (hipGetDevice(&dev) != hipSuccess)
        return 1;
    if (dev < 0 || dev >= WL_TB_MAX_CTX)
        return -1;
    hip_pool *p = &g_pools[dev];
    p->device = dev;
    p->used = 1;
    *need_anchor = 0;
    if (!p->anchor) {
        if (pop(p, &p->anchor) != 0)
            return -1;
        *need_anchor = 1;
    }
    hipEvent_t ev;
    if (pop(p, &ev) != 0)
        return -1;
    out->ev = (void *)ev;
    out->ctx = dev;
    return 0;
}

int wl_tb_record(wl_tev ev, void *stream, int need_anchor)
{
    if (need_anchor && hipEventRecord(g_pools[ev.ctx].anchor, (hipStream_t)stream) != hipSuccess)
        return -1;
    return hipEventRecord((hipEvent_t)ev.ev, (hipStream_t)stream) == hipSuccess ? 0 : -1;
}

int wl_tb_query(wl_tev ev)
{
    hipError_t r = hipEventQuery((hipEvent_t)ev.ev);
    return r == hipSuccess ? 1 : r == hipErrorNotReady ? 0 : -1;
}

int wl_tb_elapsed_ms(wl_tev a, wl_tev b, float *ms)
{
    return hipEventElapsedTime(ms, (hipEvent_t)a.ev, (hipEvent_t)b.ev) == hipSuccess ? 0 : -1;
}

int wl_tb_since_anchor_ms(wl_tev ev, float *ms)
{
    hipEvent_t anchor = g_pools[ev.ctx].anchor;
    return anchor && hipEventElapsedTime(ms, anchor, (hipEvent_t)ev.ev) == hipSuccess ? 0 : -1;
}

void wl_tb_release(wl_tev ev)
{
    hip_pool *p = &g_pools[ev.ctx];
    if (ev.ev && p->n_free < p->cap_free)
        p->free_ev[p->n_free++] = (hipEvent_t)ev.ev;
}

void wl_tb_reset_anchors(void)
{
    for (int i = 0; i < WL_TB_MAX_CTX; i++)
        if (g_pools[i].anchor) {
            wl_tev ev = {(void *)g_pools[i].anchor, i};
            wl_tb_release(ev);
            g_pools[i].anchor = NULL;
        }
}

uint64_t wl_tb_events_created(void) { return g_created; }

uint64_t wl_tb_events_pooled(void)
{
    uint64_t n = 0;
    for (int i = 0; i < WL_TB_MAX_CTX; i++)
        n += g_pools[i].n_free;
    return n;
}

const char *wl_tb_name(void) { return "HIP events"; }
#else
/* Not the HIP build: the CUDA backend (timer_backend_cuda.c) is compiled instead. ISO C wants a
 * translation unit to declare something. */
typedef int wl_timer_backend_hip_unused;
#endif
