/* Public API: scopes, thread names, work annotations, application thread ids and tiers
 * (include/warplens/warplens.h). */
#include <stdarg.h>
#include <stdio.h>

#include "api/bridge_client.h"
#include "warplens/warplens.h"

uint64_t warplens_scope_begin(const char *name)
{
    const wl_recorder_bridge *b = wl_bridge();
    return b ? b->scope_begin(name) : 0;
}

uint64_t warplens_scope_beginf(const char *fmt, ...)
{
    const wl_recorder_bridge *b = wl_bridge();
    if (!b)
        return 0;
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return b->scope_begin(name);
}

uint64_t warplens_scope_end(void)
{
    const wl_recorder_bridge *b = wl_bridge();
    return b ? b->scope_end() : 0;
}

void warplens_thread_name(const char *name)
{
    const wl_recorder_bridge *b = wl_bridge();
    if (b)
        b->thread_name(name);
}

int warplens_is_recording(void)
{
    const wl_recorder_bridge *b = wl_bridge();
    return b ? b->is_recording() : 0;
}

void warplens_annotate_next_launch(double flops, double bytes, int precision)
{
    const wl_recorder_bridge *b = wl_bridge();
    if (b)
        b->annotate_next_launch(flops, bytes, precision);
}

void warplens_annotate_scope(double flops, double bytes, int precision)
{
    const wl_recorder_bridge *b = wl_bridge();
    if (b)
        b->annotate_scope(flops, bytes, precision);
}

void warplens_scope_thread_id(uint64_t app_thread_id)
{
    const wl_recorder_bridge *b = wl_bridge();
    if (b)
        b->scope_thread_id(app_thread_id);
}

void warplens_set_tier(const char *tier)
{
    const wl_recorder_bridge *b = wl_bridge();
    if (b)
        b->set_tier(tier);
}
