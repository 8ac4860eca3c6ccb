/* The timeline model (see timeline_model.h): slices laid out on the tracks of processes, threads,
 * GPUs and streams (timeline_tracks.c: tracks, lanes and placement), their annotations and flows.
 * Host intervals and GPU work come in start order, merged (timeline_prefetch.c reads both ahead in
 * two threads); ends are emitted lazily, just before the next begin on the same lane (or when the
 * walk ends), so each lane's events are in time order with END before a BEGIN at the same
 * timestamp. */
#include "export/timeline_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/collective_match.h"
#include "analysis/kernel_backend.h"
#include "export/timeline_index.h"
#include "export/timeline_internal.h"
#include "export/timeline_tracks.h"

/* ---- slices ----------------------------------------------------------------------------------- */

/* Args named by a string literal ("" n refuses anything else): its length is known and the JSON
 * writer copies it as it is (the names below are plain ASCII). */
#define ARG_NAME(n) .name = "" n, .name_len = sizeof(n) - 1
#define arg_u(n, v) ((wl_pf_arg){ARG_NAME(n), .kind = WL_PF_ARG_UINT, .u = (uint64_t)(v)})
#define arg_i(n, v) ((wl_pf_arg){ARG_NAME(n), .kind = WL_PF_ARG_INT, .i = (int64_t)(v)})
#define arg_d(n, v) ((wl_pf_arg){ARG_NAME(n), .kind = WL_PF_ARG_DOUBLE, .d = (v)})
#define arg_s(n, v) ((wl_pf_arg){ARG_NAME(n), .kind = WL_PF_ARG_STRING, .s = (v)})
#define arg_b(n, v) ((wl_pf_arg){ARG_NAME(n), .kind = WL_PF_ARG_BOOL, .u = (uint64_t)!!(v)})

/* "264x1x1" without printf (this runs once per kernel) */
static const char *dims(char *b, const int d[3])
{
    char *p = b;
    for (int i = 0; i < 3; i++) {
        char t[12];
        int n = 0;
        unsigned v = d[i] > 0 ? (unsigned)d[i] : 0;
        do {
            t[n++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (n)
            *p++ = t[--n];
        *p++ = i < 2 ? 'x' : 0;
    }
    return b;
}

/* A slice on t with nothing else known yet. Every field is set one by one: an initializer would
 * clear the whole struct first (`rep stos`), which costs more than these stores, once a slice. */
static inline void slice_init(wl_tl_slice *s, const wl_tl_track *t, uint64_t start, uint64_t end)
{
    s->track = t;
    s->kind = WL_TL_API;
    s->start_ns = start, s->end_ns = end;
    s->name = s->category = NULL;
    s->name_key = 0;
    s->flows_out = NULL, s->n_flows_out = 0;
    s->flow_in = s->rank_flow_in = 0;
    s->args = NULL, s->n_args = 0;
    s->host = NULL, s->gpu = NULL;
    s->occupancy_pct = -1, s->fill = 0, s->active_blocks_per_sm = 0, s->limiter = NULL;
    s->launch_ns = -1;
}

static void progress(tl_model *m)
{
    if (m->o && m->o->progress.update && (++m->done & 0xffff) == 0)
        wl_progress_note(&m->o->progress, m->done, m->total);
}

static int host_item(tl_model *m, tl_group *g, const wl_host_item *it)
{
    int err = 0;
    tl_lane *l = tl_place(m, g, it->start_ns, it->end_ns, &err);
    if (err)
        return -1;
    if (!l) { /* its flows are not started, so their destinations end none */
        m->st->slices_dropped++;
        return 0;
    }
    wl_pf_arg args[6 + TL_METRIC_ARGS];
    size_t n = 0;
    wl_tl_slice s;
    slice_init(&s, &l->t, it->start_ns, it->end_ns);
    s.name = it->name;
    s.name_key = it->name_key; /* even: apart from the kernels' keys below */
    s.host = it;
    if (it->kind == WL_HOST_API) {
        s.kind = WL_TL_API;
        s.category = "cuda_api";
        args[n++] = arg_s("category", it->group);
        args[n++] = arg_u("correlation_id", it->correlation_id);
        if (it->scope[0])
            args[n++] = arg_s("scope", it->scope);
        if (it->return_value)
            args[n++] = arg_i("return_value", it->return_value);
        if (m->metrics)
            n += tl_metrics_launch(m->metrics, it->id, args + n);
        s.flows_out = it->flows;
        s.n_flows_out = it->n_flows;
        m->st->flows += it->n_flows;
        for (size_t i = 0; i < it->n_flows; i++)
            if (tl_flows_add(&m->flows, it->flows[i], it->end_ns - it->start_ns))
                return -1;
    } else if (it->kind == WL_HOST_TIMER) {
        s.kind = WL_TL_TIMER;
        s.category = "timer";
        args[n++] = arg_s("timer", it->group);
    } else {
        s.kind = it->kind == WL_HOST_NVTX ? WL_TL_NVTX : WL_TL_SCOPE;
        s.category = it->kind == WL_HOST_NVTX ? "nvtx" : "scope";
        if (it->group[0])
            args[n++] = arg_s("domain", it->group);
        if (it->kind == WL_HOST_SCOPE)
            args[n++] = arg_u("scope_id", (uint64_t)it->id);
        if (it->open_end)
            args[n++] = arg_b("unterminated", 1);
        if (m->metrics)
            n += tl_metrics_range(m->metrics, it->kind, it->pid, it->id, args + n);
    }
    s.args = args;
    s.n_args = n;
    m->st->slices++;
    m->st->host_slices++;
    return m->sink->slice_begin && m->sink->slice_begin(m->sink->ctx, &s) ? -1 : 0;
}

/* The group with these keys among r's, else NULL (a thread's group has device 0 and stream -1, a
 * stream's tid 0: as timeline_tracks.c makes them). */
static tl_group *recent_get(const tl_recent *r, uint32_t pid, uint32_t tid, uint32_t device, int64_t stream)
{
    for (int i = 0; i < TL_RECENT; i++) {
        tl_group *g = r->g[i];
        if (g && g->tid == tid && g->stream == stream && g->device == device && g->pid == pid)
            return g;
    }
    return NULL;
}

static tl_group *recent_keep(tl_recent *r, tl_group *g)
{
    if (g)
        r->g[r->next++ % TL_RECENT] = g;
    return g;
}

/* The thread or stream of an item, from the few used last before the index. */
static tl_group *recent_thread(tl_model *m, uint32_t pid, uint32_t tid)
{
    tl_group *g = recent_get(&m->recent_threads, pid, tid, 0, -1);
    return g ? g : recent_keep(&m->recent_threads, tl_find_thread(m, pid, tid));
}

static tl_group *recent_stream(tl_model *m, const wl_gpu_item *it)
{
    tl_group *g = recent_get(&m->recent_streams, it->pid, 0, it->device_id, it->stream_id);
    return g ? g : recent_keep(&m->recent_streams, tl_find_stream(m, it));
}

static const char *backend_of(tl_model *m, const wl_gpu_item *it)
{
    tl_backend_slot *b = &m->backends[(uint64_t)it->name_id & 1023];
    if (!b->backend || b->name_id != it->name_id)
        *b = (tl_backend_slot){it->name_id, wl_kernel_backend(it->short_name, it->name, NULL)};
    return b->backend;
}

static int gpu_item(tl_model *m, const wl_gpu_item *it)
{
    tl_group *g = recent_stream(m, it);
    tl_gpu *gpu = g ? g->gpu : NULL;
    if (!gpu)
        return -1;
    tl_occ occ = {0};
    if (it->kind == WL_GPU_KERNEL) {
        tl_occ_kernel(m->occ, it, &occ);
        if (tl_counters_kernel(&gpu->counters, it->start_ns, it->end_ns, occ.valid ? occ.fill : 0.0, it->stream_id,
                               m->sink, m->st))
            return -1;
    }
    /* the flow of its API call when that call was drawn (it came first: it started no later) */
    uint64_t flow = it->kind == WL_GPU_KERNEL ? WL_FLOW_KERNEL(it->id)
                    : it->kind == WL_GPU_MEMCPY ? WL_FLOW_MEMCPY(it->id) : WL_FLOW_MEMSET(it->id);
    uint64_t launch_ns = 0;
    if (!tl_flows_take(&m->flows, flow, &launch_ns))
        flow = 0;
    int err = 0;
    tl_lane *l = tl_place(m, g, it->start_ns, it->end_ns, &err);
    if (err)
        return -1;
    if (!l) {
        m->st->slices_dropped++;
        return 0;
    }
    char grid[48], block[48], name[40];
    wl_pf_arg args[21 + TL_METRIC_ARGS];
    size_t n = 0;
    wl_tl_slice s;
    slice_init(&s, &l->t, it->start_ns, it->end_ns);
    s.gpu = it;
    if (occ.valid)
        s.occupancy_pct = occ.occupancy_pct, s.fill = occ.fill, s.limiter = occ.limiter;
    s.active_blocks_per_sm = occ.active_blocks_per_sm;
    s.launch_ns = flow ? (int64_t)launch_ns : -1;
    /* a collective other ranks ran too: a flow from the first rank to arrive to the last */
    uint64_t coll_out = 0, coll_in = 0, unused;
    if (m->coll && it->kind == WL_GPU_KERNEL) {
        wl_coll_links_get(m->coll, it->pid, it->stream_id, it->start_ns, &coll_out, &coll_in);
        if (coll_out) {
            if (tl_flows_add(&m->coll_started, coll_out, 0))
                return -1;
            s.flows_out = &coll_out;
            s.n_flows_out = 1;
            m->st->flows++;
        }
        if (coll_in && tl_flows_take(&m->coll_started, coll_in, &unused))
            s.rank_flow_in = coll_in;
    }
    if (it->kind == WL_GPU_KERNEL) {
        s.kind = WL_TL_KERNEL;
        s.category = "kernel";
        s.name = it->name;
        s.name_key = ((uint64_t)it->name_id << 1) | 1; /* the name comes from kernel_name by this id */
        args[n++] = arg_s("grid", dims(grid, it->grid));
        args[n++] = arg_s("block", dims(block, it->block));
        args[n++] = arg_u("registers_per_thread", (uint64_t)it->registers);
        args[n++] = arg_u("static_smem", (uint64_t)it->static_smem);
        args[n++] = arg_u("dynamic_smem", (uint64_t)it->dynamic_smem);
        if (occ.valid) {
            args[n++] = arg_d("occupancy_pct", occ.occupancy_pct);
            args[n++] = arg_s("occupancy_limiter", occ.limiter);
            args[n++] = arg_u("active_blocks_per_sm", (uint64_t)occ.active_blocks_per_sm);
        }
        if (it->queue_delay_ns >= 0)
            args[n++] = arg_u("queue_delay_ns", (uint64_t)it->queue_delay_ns);
        if (it->graph_id >= 0)
            args[n++] = arg_u("graph_id", (uint64_t)it->graph_id);
        /* identity (store/session_identity.h, analysis/kernel_backend.h) */
        args[n++] = arg_s("backend", backend_of(m, it));
        if (it->op[0])
            args[n++] = arg_s("operation", it->op);
        if (it->shape[0])
            args[n++] = arg_s("shape", it->shape);
        if (it->tier[0])
            args[n++] = arg_s("tier", it->tier);
        if (it->app_thread)
            args[n++] = arg_i("app_thread_id", it->app_thread);
    } else {
        s.kind = it->kind == WL_GPU_MEMCPY ? WL_TL_MEMCPY : WL_TL_MEMSET;
        s.category = it->kind == WL_GPU_MEMCPY ? "memcpy" : "memset";
        if (it->kind == WL_GPU_MEMCPY)
            snprintf(name, sizeof name, "Memcpy %s", it->copy_kind);
        else
            snprintf(name, sizeof name, "Memset");
        s.name = name;
        args[n++] = arg_u("bytes", it->bytes);
        if (it->src_kind[0])
            args[n++] = arg_s("src", it->src_kind);
        args[n++] = it->kind == WL_GPU_MEMCPY ? arg_s("dst", it->dst_kind) : arg_s("memory", it->dst_kind);
        args[n++] = arg_d("bandwidth_gbps", it->gbps);
    }
    args[n++] = arg_u("correlation_id", it->correlation_id);
    if (it->scope[0])
        args[n++] = arg_s("scope", it->scope);
    if (m->metrics && it->kind == WL_GPU_KERNEL)
        n += tl_metrics_kernel(m->metrics, it->id, args + n);
    s.flow_in = flow;
    s.args = args;
    s.n_args = n;
    m->st->slices++;
    m->st->gpu_slices++;
    return m->sink->slice_begin && m->sink->slice_begin(m->sink->ctx, &s) ? -1 : 0;
}

/* ---- NVML device samples ---------------------------------------------------------------------- */

/* One time-ordered series per device and metric, written after the walk (trace viewers sort
 * events by time; each counter track is in order by itself). Samples before the session's origin
 * are left out: timestamps are written relative to it. */
static int on_sample(const wl_device_sample_row *r, void *arg)
{
    tl_model *m = arg;
    if (r->ts_ns < m->st->origin_ns)
        return 0;
    tl_gpu *g = tl_find_gpu(m, r->pid, r->device_id, NULL);
    if (!g) {
        m->failed = 1;
        return 1;
    }
    for (int i = 0; i < TL_SAMPLE_SERIES; i++) {
        double v;
        if (!tl_sample_value(r, i, &v))
            continue;
        wl_tl_track *t = &g->samples[i];
        if (!t->uuid) {
            const char *name, *unit;
            tl_sample_series(i, &name, &unit);
            *t = (wl_tl_track){.uuid = ++m->next_uuid, .parent_uuid = g->t.uuid, .type = WL_TL_COUNTER,
                               .pid = g->t.pid, .name = name, .sort_index = 2 + i, .unit = unit, .stream_id = -1};
            if (tl_emit_track(m, t))
                goto fail;
        }
        if (m->sink->counter && m->sink->counter(m->sink->ctx, t, r->ts_ns, v))
            goto fail;
        m->st->counter_events++;
    }
    return 0;
fail:
    m->failed = 1;
    return 1;
}

static const wl_tl_track *pm_gpu(void *ctx, uint32_t device)
{
    tl_gpu *g = tl_find_gpu(ctx, 0, device, NULL);
    return g ? &g->t : NULL;
}

/* ---- the walk --------------------------------------------------------------------------------- */

/* Host and GPU rows, each read ahead by its own thread, are merged by start time (host first on
 * ties): every thread and stream stays open until the end, and an API call is laid out before
 * the GPU work it started, so a dropped call's flows are known when its work arrives. */
static int walk(tl_model *m, uint64_t open_end, char *err, size_t n)
{
    int flags = m->o && m->o->table_order ? WL_CUR_TABLE_ORDER : 0;
    tl_reader *hr = tl_reader_host(m->s, open_end, err, n);
    tl_reader *gr = hr ? tl_reader_gpu(m->s, flags, err, n) : NULL;
    int rc = hr && gr ? 0 : -1, hfail = 0, gfail = 0;
    const wl_host_item *h = rc == 0 ? tl_reader_next_host(hr, &hfail) : NULL;
    const wl_gpu_item *g = rc == 0 ? tl_reader_next_gpu(gr, &gfail) : NULL;
    tl_group *tg;
    uint64_t until = m->o && m->o->until_ns ? m->o->until_ns : UINT64_MAX;
    while (rc == 0) {
        /* both cursors run in start order: the first row past the window ends its side */
        if (h && h->start_ns >= until)
            h = NULL;
        if (g && g->start_ns >= until)
            g = NULL;
        if (!h && !g)
            break;
        if (h && (!g || h->start_ns <= g->start_ns)) {
            if (!(tg = recent_thread(m, h->pid, h->tid)))
                rc = -1;
            else if (host_item(m, tg, h))
                rc = -1;
            h = tl_reader_next_host(hr, &hfail);
        } else {
            if (gpu_item(m, g))
                rc = -1;
            g = tl_reader_next_gpu(gr, &gfail);
        }
        if (hfail || gfail) /* the rest of the other side would be read for nothing */
            break;
        progress(m);
    }
    if (rc == 0 && !h && !g && !hfail && !gfail) /* both sides read to their end */
        m->st->untimed_kernels = tl_reader_untimed(gr);
    if (rc == 0 && gfail == WL_CUR_RESTART) { /* only the GPU reader reads in table order */
        snprintf(err, n, "kernels read in table order came out of start order"); /* export_rerun.h starts over */
        rc = WL_TL_RESTART;
    } else if (rc == 0 && (hfail || gfail)) {
        snprintf(err, n, "reading %s records failed", hfail ? "host" : "GPU");
        rc = -1;
    }
    tl_reader_close(hr);
    tl_reader_close(gr);
    for (size_t i = 0; rc == 0 && i < m->threads.n; i++)
        if (tl_flush_group(m, m->threads.p[i]))
            rc = -1;
    for (size_t i = 0; rc == 0 && i < m->streams.n; i++)
        if (tl_flush_group(m, m->streams.p[i]))
            rc = -1;
    for (size_t i = 0; rc == 0 && i < m->gpus.n; i++)
        if (tl_counters_finish(&((tl_gpu *)m->gpus.p[i])->counters, m->sink, m->st))
            rc = -1;
    if (rc == 0 && (wl_session_each_device_sample_by_time(m->s, on_sample, m) < 0 || m->failed))
        rc = -1;
    if (rc == 0 && tl_pm_walk(m->s, m->sink, m->st, &m->next_uuid, pm_gpu, m) != 0)
        rc = -1;
    return rc;
}

static int inkernel_stream(void *ctx, uint32_t pid, uint32_t device, int64_t stream, const wl_tl_track **base,
                           uint32_t *tid)
{
    tl_model *m = ctx;
    wl_gpu_item it;
    memset(&it, 0, sizeof it);
    it.pid = pid, it.device_id = device, it.stream_id = stream;
    tl_group *g = tl_find_stream(m, &it);
    tl_gpu *gpu = g ? g->gpu : NULL;
    if (!gpu)
        return -1;
    *base = &g->lanes[0]->t;
    *tid = gpu->next_tid++;
    return 0;
}

static int process_track(void *ctx, uint32_t pid, const wl_tl_track **track)
{
    tl_group *g = tl_find_proc(ctx, pid);
    if (!g)
        return -1;
    *track = &g->lanes[0]->t;
    return 0;
}

int wl_timeline_walk(wl_session *s, const wl_tl_options *o, const wl_tl_sink *sink, wl_tl_stats *st, char *err,
                     size_t err_size)
{
    tl_model m;
    memset(&m, 0, sizeof m);
    memset(st, 0, sizeof *st);
    st->untimed_kernels = -1;
    m.s = s, m.o = o, m.sink = sink, m.st = st;
    m.max_lanes = o && o->max_lanes > 0 ? o->max_lanes : 32;
    wl_session_span span; /* the row counts only serve progress reports */
    if (o && o->progress.update)
        wl_session_get_span(s, &span);
    else
        wl_session_get_bounds(s, &span);
    st->origin_ns = span.origin_ns;
    st->end_ns = span.end_ns;
    m.total = span.api_calls + span.nvtx_ranges + span.scopes + span.timers + span.kernels + span.memcpys + span.memsets;
    int rc = -1, metrics_failed = 0;
    m.metrics = tl_metrics_open(s, &metrics_failed, err, err_size);
    if (metrics_failed)
        return -1;
    snprintf(err, err_size, "timeline export failed (out of memory or output error)");
    m.ranked = tl_session_ranked(s);
    if (m.ranked) {
        char why[256];
        m.coll = wl_coll_links_build(s, why, sizeof why);
        if (!m.coll && why[0]) {
            snprintf(err, err_size, "%s", why);
            tl_metrics_close(m.metrics);
            return -1;
        }
    }
    int walked = -1;
    if ((m.occ = tl_occ_cache_new()) && wl_session_each_process(s, tl_on_process, &m) >= 0 && !m.failed &&
        wl_session_each_thread(s, tl_on_thread, &m) >= 0 && !m.failed && wl_session_each_device(s, tl_on_device, &m) >= 0 &&
        !m.failed && (walked = walk(&m, span.end_ns, err, err_size)) == 0 &&
        tl_inkernel_walk(s, sink, st, &m.next_uuid, o ? o->inkernel_max_lanes : 0, inkernel_stream, &m, err,
                         err_size) == 0 &&
        tl_capture_walk(s, sink, st, &m.next_uuid, process_track, &m, err, err_size) == 0)
        rc = 0;
    else if (walked == WL_TL_RESTART)
        rc = WL_TL_RESTART;
    if (rc == 0)
        err[0] = 0;
    if (o && rc != WL_TL_RESTART)
        wl_progress_note(&o->progress, m.total, m.total);
    for (size_t i = 0; i < m.procs.n; i++)
        tl_free_group(m.procs.p[i]);
    for (size_t i = 0; i < m.threads.n; i++)
        tl_free_group(m.threads.p[i]);
    for (size_t i = 0; i < m.streams.n; i++)
        tl_free_group(m.streams.p[i]);
    for (size_t i = 0; i < m.gpus.n; i++) {
        tl_counters_free(&((tl_gpu *)m.gpus.p[i])->counters);
        free(m.gpus.p[i]);
    }
    free(m.procs.p);
    free(m.threads.p);
    free(m.streams.p);
    free(m.gpus.p);
    tl_index_free(&m.by_key);
    tl_flows_free(&m.flows);
    tl_flows_free(&m.coll_started);
    wl_coll_links_free(m.coll);
    tl_occ_cache_free(m.occ);
    tl_metrics_close(m.metrics);
    return rc;
}
