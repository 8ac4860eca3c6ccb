/* The recorder's own thread: turns completed CUPTI buffers and API events into capture records,
 * keeps the buffer pool topped up, writes device and thread descriptions, and flushes the file
 * often enough that a process killed by a signal leaves almost everything on disk. */
#include "capture/recorder.h"
#include "capture/inkernel_capture.h"
#include "capture/host_clock.h"
#include "capture/metric_cost.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"

#define WAKE_MS 50
#define FILE_FLUSH_NS 100000000ull
/* CUPTI's own periodic flush returns only full buffers; a default (non-forced) flush returns every
 * buffer whose records are complete, so a program killed by a signal loses at most this much. */
#define CUPTI_FLUSH_NS 200000000ull

static pthread_t g_thread;
static atomic_int g_stop;
static atomic_int g_flush_asked; /* wl_writer_request_flush */
static int g_started;

static void write_event(const wl_event *ev)
{
    if (ev->kind == WL_EV_ANNOTATE_SCOPE) {
        wlcap_annotation a = {ev->flops, ev->bytes, ev->id, WLCAP_ANNOTATE_SCOPE, 0, ev->tid, ev->precision};
        wl_capw_record(WLCAP_ANNOTATION, &a, sizeof a);
        return;
    }
    if (ev->kind == WL_EV_CAPTURE_START || ev->kind == WL_EV_CAPTURE_STOP) {
        wlcap_capture_range r = {ev->timestamp, ev->kind == WL_EV_CAPTURE_START ? WLCAP_CAPTURE_START : WLCAP_CAPTURE_STOP,
                                 ev->tid};
        wl_threads_seen(ev->tid);
        wl_capw_record(WLCAP_CAPTURE_RANGE, &r, sizeof r);
        return;
    }
    if (ev->kind == WL_EV_TIER || ev->kind == WL_EV_SCOPE_THREAD) {
        wlcap_attr a;
        memset(&a, 0, sizeof a);
        a.timestamp = ev->timestamp;
        a.tid = ev->tid;
        if (ev->kind == WL_EV_TIER) {
            a.kind = WLCAP_ATTR_TIER;
            a.str = ev->name_len ? wl_capw_string_n(ev->name, ev->name_len) : 0; /* 0: cleared */
        } else {
            a.kind = WLCAP_ATTR_SCOPE_THREAD;
            a.scope_id = ev->id;
            a.value = ev->parent;
        }
        wl_capw_record(WLCAP_ATTR, &a, sizeof a);
        return;
    }
    if (ev->kind == WL_EV_THREAD_NAME) {
        wlcap_thread r = {ev->tid, wl_capw_string_n(ev->name, ev->name_len), WLCAP_THREAD_API, 0};
        wl_capw_record(WLCAP_THREAD, &r, sizeof r);
        return;
    }
    wlcap_scope r;
    memset(&r, 0, sizeof r);
    r.timestamp = ev->timestamp;
    r.scope_id = ev->id;
    r.parent_id = ev->parent;
    r.tid = ev->tid;
    r.kind = ev->kind == WL_EV_SCOPE_BEGIN ? WLCAP_SCOPE_BEGIN : WLCAP_SCOPE_END;
    r.truncated = ev->truncated;
    if (ev->kind == WL_EV_SCOPE_BEGIN)
        r.name_str = wl_capw_string_n(ev->name, ev->name_len);
    wl_threads_seen(ev->tid);
    wl_capw_record(WLCAP_SCOPE, &r, sizeof r);
}

static void write_occ_check(const wl_api_event *e)
{
    wlcap_occ_check r;
    memset(&r, 0, sizeof r);
    r.correlation_id = e->correlation_id;
    r.block_size = e->cbid;
    r.dynamic_smem = e->tid;
    r.driver_active_blocks = (int32_t)(int64_t)e->start;
    r.function_registers = (int32_t)(int64_t)e->end;
    r.status = e->return_value;
    wl_capw_record(WLCAP_OCC_CHECK, &r, sizeof r);
}

static void write_api(const wl_api_event *e)
{
    if (e->kind == WL_API_EVENT_OCC_CHECK) {
        write_occ_check(e);
        return;
    }
    if (e->kind == WL_API_EVENT_ANNOTATION) {
        wlcap_annotation a;
        memset(&a, 0, sizeof a);
        memcpy(&a.flops, &e->start, sizeof a.flops);
        memcpy(&a.bytes, &e->end, sizeof a.bytes);
        a.target = WLCAP_ANNOTATE_KERNEL;
        a.correlation_id = e->correlation_id;
        a.tid = e->tid;
        a.precision = e->cbid;
        wl_capw_record(WLCAP_ANNOTATION, &a, sizeof a);
        return;
    }
    wlcap_api r;
    memset(&r, 0, sizeof r);
    /* a call already under way when recording started has no entry time */
    r.end = wl_host_clock_to_ns(e->end);
    r.start = (e->start && e->start <= e->end) ? wl_host_clock_to_ns(e->start) : r.end;
    r.cbid = e->cbid;
    r.tid = e->tid;
    r.correlation_id = e->correlation_id;
    r.return_value = e->return_value;
    r.domain = (uint8_t)e->domain;
    wl_threads_seen(e->tid);
    wl_capw_record(WLCAP_API, &r, sizeof r);
}

static void drain(void)
{
    wl_devices_write_pending();
    uint8_t *buf;
    size_t valid;
    while (wl_pool_next_completed(&buf, &valid)) {
        wl_decode_activity_buffer(buf, valid);
        wl_pool_recycle(buf, valid);
    }
    wl_pool_refill();
    wl_nvml_write_pending();
    wl_pm_write_pending();
    wl_event ev;
    while (wl_mpsc_pop(&wl_event_ring, &ev))
        write_event(&ev);
    wl_api_event api;
    wl_host_clock_sample(); /* the pair the calls' ticks are mapped with */
    while (wl_mpsc_pop(&wl_api_ring, &api))
        write_api(&api);
    wl_metrics_drain();
    wl_stalls_drain();
    uint64_t lost = wl_mpsc_take_dropped(&wl_event_ring);
    if (lost) {
        wlcap_dropped r = {lost, WLCAP_DROP_EVENTS, 0, 0, 0};
        wl_capw_record(WLCAP_DROPPED, &r, sizeof r);
    }
    lost = wl_mpsc_take_dropped(&wl_api_ring);
    if (lost) {
        wlcap_dropped r = {lost, WLCAP_DROP_API, 0, 0, 0};
        wl_capw_record(WLCAP_DROPPED, &r, sizeof r);
    }
    lost = wl_inkernel_take_lost();
    if (lost) {
        wlcap_dropped r = {lost, WLCAP_DROP_INKERNEL, 0, 0, 0};
        wl_capw_record(WLCAP_DROPPED, &r, sizeof r);
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    uint64_t last_flush = wl_monotonic_ns(), last_cupti = last_flush;
    while (!atomic_load(&g_stop)) {
        wl_pool_wait(WAKE_MS);
        uint64_t now = wl_monotonic_ns();
        if (atomic_exchange(&g_flush_asked, 0) || now - last_cupti >= CUPTI_FLUSH_NS) {
            wl_cupti_flush(wl_metrics_forced_flush()); /* kernel replay: see range_profiler.c */
            last_cupti = now;
        }
        drain();
        if (now - last_flush >= FILE_FLUSH_NS) {
            wl_capw_flush();
            last_flush = now;
        }
    }
    return NULL;
}

/* A flush on the writer's next turn instead of on the caller's thread: several requests before it
 * runs make one flush, and the buffers it returns are recycled in the same turn. */
void wl_writer_request_flush(void)
{
    atomic_store(&g_flush_asked, 1);
    wl_pool_wake();
}

int wl_writer_start(void)
{
    int rc = wl_thread_start(&g_thread, "warplens-writer", writer_main);
    if (rc != 0) {
        wl_log("cannot start the recorder thread (%s); this process is not recorded", strerror(rc));
        return -1;
    }
    g_started = 1;
    return 0;
}

static void write_stat(const char *name, uint64_t value)
{
    wlcap_stat r = {wl_capw_string(name), 0, value};
    wl_capw_record(WLCAP_STAT, &r, sizeof r);
}

/* The process's peak resident set so far (VmHWM), 0 when /proc cannot say. */
static uint64_t peak_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    uint64_t kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtoull(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib << 10;
}

/* What the recording cost in memory and how its queues fared (docs/capture-format.md, STAT). */
static void write_stats(const wl_pool_stats *ps)
{
    wl_mpsc_stats api = wl_mpsc_get_stats(&wl_api_ring), ev = wl_mpsc_get_stats(&wl_event_ring);
    write_stat("buffer_size", ps->buffer_size);
    write_stat("buffer_requests", ps->requests);
    write_stat("buffers_mapped_on_demand", ps->on_demand);
    write_stat("buffer_requests_refused", ps->refused);
    write_stat("buffers_unmapped_unused", ps->trimmed);
    write_stat("peak_buffers_mapped", ps->peak_allocated);
    write_stat("peak_buffers_in_use", ps->peak_in_use);
    write_stat("api_calls_spilled", api.spilled);
    write_stat("scope_events_spilled", ev.spilled);
    /* an upper bound of the recorder's own memory at its peak: every buffer mapped at once (only
     * what CUPTI wrote is resident), the rings, and the most their spills held */
    write_stat("recorder_peak_bytes", ps->peak_allocated * ps->buffer_size + api.ring_bytes + ev.ring_bytes +
                                          api.spill_peak_bytes + ev.spill_peak_bytes);
    write_stat("process_peak_rss_bytes", peak_rss_bytes());
    wl_mcost_write(write_stat); /* --metrics: where its time went (nothing without metrics) */
}

void wl_writer_stop(uint32_t end_reason)
{
    if (g_started) {
        atomic_store(&g_stop, 1);
        wl_pool_wake();
        pthread_join(g_thread, NULL);
        g_started = 0;
    }
    /* the writer has stopped: this thread now owns the file */
    drain();
    wl_decode_report_dropped();
    wl_threads_refresh_all();
    wl_pool_stats ps = wl_pool_get_stats();
    if (ps.refused) {
        wlcap_dropped r = {ps.refused, WLCAP_DROP_BUFFER, 0, 0, 0};
        wl_capw_record(WLCAP_DROPPED, &r, sizeof r);
    }
    write_stats(&ps);
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = wl_realtime_ns();
    e.buffers_completed = ps.completed;
    e.records_written = wl_capw_records();
    e.bytes_written = wl_capw_bytes();
    e.buffers_allocated = ps.allocated;
    e.peak_buffers_in_use = ps.peak_in_use;
    e.reason = end_reason;
    wl_capw_record(WLCAP_END, &e, sizeof e);
    if (wl_capw_close() != 0)
        wl_log("the capture file could not be completed; the session will be marked incomplete");
}
