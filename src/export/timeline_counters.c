/* GPU fill and concurrent-kernel counters of one device (see timeline_internal.h). Kernels arrive
 * in start order; the running ones sit in a min-heap on their end time, so the state is as large
 * as the number of kernels running at once. Changes at the same timestamp are merged into one
 * counter value, and values that do not change are not repeated. */
#include "export/timeline_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

void tl_counters_init(tl_counters *c, uint32_t device)
{
    memset(c, 0, sizeof *c);
    c->device = device;
    c->last_fill = -1;
    c->last_count = -1;
}

void tl_counters_free(tl_counters *c)
{
    free(c->heap);
    free(c->streams);
    c->heap = NULL;
    c->streams = NULL;
    c->n = c->cap = c->n_streams = c->cap_streams = 0;
}

/* A kernel on `stream` starts (+1) or ends (-1). */
static int stream_count(tl_counters *c, int64_t stream, int delta)
{
    for (size_t i = 0; i < c->n_streams; i++) {
        if (c->streams[i].stream != stream)
            continue;
        if (delta < 0 && --c->streams[i].kernels == 0)
            c->streams[i] = c->streams[--c->n_streams];
        else if (delta > 0)
            c->streams[i].kernels++;
        return 0;
    }
    if (delta < 0)
        return 0;
    if (wl_grow((void **)&c->streams, &c->cap_streams, c->n_streams, sizeof *c->streams, 16))
        return -1;
    c->streams[c->n_streams++] = (tl_stream_count){stream, 1};
    return 0;
}

static void heap_push(tl_counters *c, tl_running r)
{
    size_t i = c->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (c->heap[p].end_ns <= r.end_ns)
            break;
        c->heap[i] = c->heap[p];
        i = p;
    }
    c->heap[i] = r;
}

static tl_running heap_pop(tl_counters *c)
{
    tl_running top = c->heap[0], last = c->heap[--c->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = l + 1, s = i;
        uint64_t se = last.end_ns;
        if (l < c->n && c->heap[l].end_ns < se)
            s = l, se = c->heap[l].end_ns;
        if (m < c->n && c->heap[m].end_ns < se)
            s = m;
        if (s == i)
            break;
        c->heap[i] = c->heap[s];
        i = s;
    }
    if (c->n)
        c->heap[i] = last;
    return top;
}

static int flush_pending(tl_counters *c, const wl_tl_sink *sink, wl_tl_stats *st)
{
    if (!c->has_pending)
        return 0;
    c->has_pending = 0;
    if (sink->gpu_state) {
        wl_tl_gpu_state g = {c->device, c->pending_ts, c->pending_count, c->pending_streams, c->pending_fill};
        if (sink->gpu_state(sink->ctx, &g))
            return -1;
    }
    double fill = c->pending_fill * 100.0;
    if (fill != c->last_fill) {
        if (sink->counter && sink->counter(sink->ctx, &c->fill_track, c->pending_ts, fill))
            return -1;
        c->last_fill = fill;
        st->counter_events++;
    }
    if ((long long)c->pending_count != c->last_count) {
        if (sink->counter && sink->counter(sink->ctx, &c->count_track, c->pending_ts, (double)c->pending_count))
            return -1;
        c->last_count = (long long)c->pending_count;
        st->counter_events++;
    }
    return 0;
}

/* The state changed at ts: remember it, writing the previous instant first. */
static int changed(tl_counters *c, uint64_t ts, const wl_tl_sink *sink, wl_tl_stats *st)
{
    if (c->has_pending && c->pending_ts != ts && flush_pending(c, sink, st))
        return -1;
    if (c->n == 0)
        c->sum = 0.0; /* no drift left over from adding and removing doubles */
    c->has_pending = 1;
    c->pending_ts = ts;
    c->pending_fill = c->sum < 0 ? 0 : c->sum;
    c->pending_count = c->n;
    c->pending_streams = c->n_streams;
    return 0;
}

static int kernel_ends(tl_counters *c, const wl_tl_sink *sink, wl_tl_stats *st)
{
    tl_running r = heap_pop(c);
    c->sum -= r.fill;
    stream_count(c, r.stream, -1);
    return changed(c, r.end_ns, sink, st);
}

int tl_counters_kernel(tl_counters *c, uint64_t ts, uint64_t end_ns, double fill, int64_t stream,
                       const wl_tl_sink *sink, wl_tl_stats *st)
{
    while (c->n && c->heap[0].end_ns <= ts)
        if (kernel_ends(c, sink, st))
            return -1;
    if (fill < 0)
        return 0;
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 64;
        tl_running *h = realloc(c->heap, ncap * sizeof *h);
        if (!h)
            return -1;
        c->heap = h;
        c->cap = ncap;
    }
    if (stream_count(c, stream, 1))
        return -1;
    heap_push(c, (tl_running){end_ns, fill, stream});
    c->sum += fill;
    return changed(c, ts, sink, st);
}

/* NVML series, drawn under the fill and concurrency counters. Units avoid a bare "%": the HTML
 * report reads "%" counters as GPU fill. */
static const struct { const char *name, *unit; } SERIES[TL_SAMPLE_SERIES] = {
    {"NVML GPU utilization", "percent"}, {"NVML memory utilization", "percent"}, {"NVML SM clock", "MHz"},
    {"NVML memory clock", "MHz"},        {"NVML power", "W"},                   {"NVML temperature", "C"},
    {"NVML memory used", "MiB"},
};

void tl_sample_series(int i, const char **name, const char **unit)
{
    *name = SERIES[i].name;
    *unit = SERIES[i].unit;
}

int tl_sample_value(const wl_device_sample_row *r, int i, double *v)
{
    const int64_t raw[TL_SAMPLE_SERIES] = {r->gpu_util_pct, r->mem_util_pct, r->sm_clock_mhz, r->mem_clock_mhz,
                                           r->power_mw, r->temperature_c, r->memory_used_bytes};
    static const double scale[TL_SAMPLE_SERIES] = {1, 1, 1, 1, 1000, 1, 1048576};
    if (raw[i] < 0)
        return 0;
    *v = (double)raw[i] / scale[i];
    return 1;
}

int tl_counters_finish(tl_counters *c, const wl_tl_sink *sink, wl_tl_stats *st)
{
    while (c->n)
        if (kernel_ends(c, sink, st))
            return -1;
    return flush_pending(c, sink, st);
}
