/* A stand-in for libwarplens_recorder.so that records which bridge calls arrive, with their
 * arguments, one line each in the file WL_STUB_LOG: how the Java binding's test sees that its
 * calls reach the recorder's bridge (common/recorder_bridge.h) through JNI and libwarplens. It
 * reports itself recording. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/recorder_bridge.h"

static uint64_t g_next_scope = 1;

static void logf_(const char *fmt, ...)
{
    const char *path = getenv("WL_STUB_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

static uint64_t scope_begin(const char *name)
{
    logf_("scope_begin %s", name);
    return __atomic_fetch_add(&g_next_scope, 1, __ATOMIC_RELAXED);
}
static uint64_t scope_end(void)
{
    logf_("scope_end");
    return 1;
}
static void thread_name(const char *name) { logf_("thread_name %s", name); }
static int is_recording(void)
{
    logf_("is_recording");
    return 1;
}
static void annotate_next_launch(double flops, double bytes, int precision)
{
    logf_("annotate_next_launch %.0f %.0f %d", flops, bytes, precision);
}
static void annotate_scope(double flops, double bytes, int precision)
{
    logf_("annotate_scope %.0f %.0f %d", flops, bytes, precision);
}
static int inkernel_next_launch(const wl_bridge_inkernel_buffer *b)
{
    (void)b;
    return -1;
}
static int inkernel_next_graph_launch(const wl_bridge_inkernel_buffer *b, void *graph_node)
{
    (void)b, (void)graph_node;
    return -1;
}
static int inkernel_collect(void) { return -1; }
static void scope_thread_id(uint64_t id) { logf_("scope_thread_id %llu", (unsigned long long)id); }
static void set_tier(const char *tier) { logf_("set_tier %s", tier ? tier : "(null)"); }

static const wl_recorder_bridge g_bridge = {
    WL_BRIDGE_ABI,        sizeof(wl_recorder_bridge), scope_begin,     scope_end,   thread_name, is_recording,
    annotate_next_launch, annotate_scope,             inkernel_next_launch, inkernel_collect, scope_thread_id,
    set_tier,             inkernel_next_graph_launch,
};

__attribute__((visibility("default"))) const wl_recorder_bridge *warplens_recorder_bridge(void) { return &g_bridge; }
