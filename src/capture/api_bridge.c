/* The recorder's side of the public API (see common/recorder_bridge.h): scopes and thread names
 * become fixed-size events on the lock-free ring, and a scope also pushes a CUPTI external
 * correlation id so that every launch inside it carries the scope's id. */
#include "capture/recorder.h"
#include "capture/inkernel_capture.h"

#include <cupti.h>
#include <string.h>

#include "common/recorder_bridge.h"

#define MAX_DEPTH 64

static _Atomic uint64_t g_next_scope = 1;
static atomic_int g_scopes_used;

int wl_scopes_used(void) { return atomic_load(&g_scopes_used); }
static _Thread_local uint64_t t_stack[MAX_DEPTH];
static _Thread_local unsigned t_depth, t_overflow;

/* Events are accepted from the moment the library is loaded (the API library may load it before
 * the program's first CUDA call), and until the recorder stops. */
static int recording(void)
{
    int s = atomic_load(&wl_state);
    return s == WL_STATE_RUNNING || s == WL_STATE_OFF;
}

wl_mpsc wl_event_ring;

__attribute__((constructor)) static void init_ring(void)
{
    if (wl_mpsc_init(&wl_event_ring, 1u << 14, sizeof(wl_event)) == 0)
        wl_mpsc_set_spill(&wl_event_ring, WL_SPILL_EVENTS, wl_pool_wake);
}

static void fill_name(wl_event *ev, const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n > WL_EVENT_NAME_MAX) {
        n = WL_EVENT_NAME_MAX;
        ev->truncated = 1;
    }
    memcpy(ev->name, name ? name : "", n);
    ev->name_len = (uint32_t)n;
}

static uint64_t scope_begin(const char *name)
{
    if (!recording())
        return 0;
    if (t_depth >= MAX_DEPTH) {
        t_overflow++;
        return 0;
    }
    wl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = WL_EV_SCOPE_BEGIN;
    ev.id = atomic_fetch_add(&g_next_scope, 1);
    ev.parent = t_depth ? t_stack[t_depth - 1] : 0;
    ev.tid = wl_current_tid();
    fill_name(&ev, name);
    t_stack[t_depth++] = ev.id;
    if (!atomic_load_explicit(&g_scopes_used, memory_order_relaxed)) {
        atomic_store(&g_scopes_used, 1);
        if (atomic_load(&wl_state) == WL_STATE_RUNNING)
            wl_cupti_enable_extcorr();
    }
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, ev.id);
    ev.timestamp = wl_cupti_now_ns();
    wl_mpsc_push(&wl_event_ring, &ev);
    return ev.id;
}

static uint64_t scope_end(void)
{
    if (t_overflow) {
        t_overflow--;
        return 0;
    }
    if (!t_depth)
        return 0;
    uint64_t id = t_stack[--t_depth];
    uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    if (!recording())
        return id;
    wl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = WL_EV_SCOPE_END;
    ev.id = id;
    ev.parent = t_depth ? t_stack[t_depth - 1] : 0;
    ev.tid = wl_current_tid();
    ev.timestamp = wl_cupti_now_ns();
    wl_mpsc_push(&wl_event_ring, &ev);
    return id;
}

/* An event of the calling thread carrying a name (thread name, tier). */
static void push_named(uint32_t kind, const char *name)
{
    wl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    ev.tid = wl_current_tid();
    ev.timestamp = wl_cupti_now_ns();
    fill_name(&ev, name);
    wl_mpsc_push(&wl_event_ring, &ev);
}

static void thread_name(const char *name)
{
    if (recording() && name)
        push_named(WL_EV_THREAD_NAME, name);
}

static int is_recording(void) { return atomic_load(&wl_state) == WL_STATE_RUNNING; }

/* the counts wait in wl_tls (recorder.h) for the thread's next launch callback */
static void annotate_next_launch(double flops, double bytes, int precision)
{
    wl_thread_locals *me = &wl_tls;
    me->annotation_flops = flops > 0 ? flops : 0;
    me->annotation_bytes = bytes > 0 ? bytes : 0;
    me->annotation_precision = precision >= 0 && precision <= 3 ? (uint32_t)precision : 0;
    me->annotation_set = 1;
}

static void annotate_scope(double flops, double bytes, int precision)
{
    if (!recording() || !t_depth)
        return;
    wl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = WL_EV_ANNOTATE_SCOPE;
    ev.id = t_stack[t_depth - 1];
    ev.tid = wl_current_tid();
    ev.flops = flops > 0 ? flops : 0;
    ev.bytes = bytes > 0 ? bytes : 0;
    ev.precision = precision >= 0 && precision <= 3 ? (uint32_t)precision : 0;
    wl_mpsc_push(&wl_event_ring, &ev);
}

/* The kernels of the calling thread's innermost scope belong to application thread `id`. */
static void scope_thread_id(uint64_t id)
{
    if (!recording() || !t_depth)
        return;
    wl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = WL_EV_SCOPE_THREAD;
    ev.id = t_stack[t_depth - 1];
    ev.parent = id;
    ev.tid = wl_current_tid();
    ev.timestamp = wl_cupti_now_ns();
    wl_mpsc_push(&wl_event_ring, &ev);
}

static void set_tier(const char *tier)
{
    if (recording())
        push_named(WL_EV_TIER, tier); /* NULL or "": no name, cleared */
}

static const wl_recorder_bridge g_bridge = {
    .abi = WL_BRIDGE_ABI,
    .size = sizeof(wl_recorder_bridge),
    .scope_begin = scope_begin,
    .scope_end = scope_end,
    .thread_name = thread_name,
    .is_recording = is_recording,
    .annotate_next_launch = annotate_next_launch,
    .annotate_scope = annotate_scope,
    .inkernel_next_launch = wl_inkernel_next_launch,
    .inkernel_next_graph_launch = wl_inkernel_next_graph_launch,
    .inkernel_collect = wl_inkernel_collect,
    .scope_thread_id = scope_thread_id,
    .set_tier = set_tier,
};

__attribute__((visibility("default"))) const wl_recorder_bridge *warplens_recorder_bridge(void)
{
    return &g_bridge;
}
