/* Timeline rules of `warplens advise` (advise_timeline.h): one pass over the GPU work in start
 * order. For each device the union of its busy intervals is kept; every gap in it is classified
 * by why the GPU had nothing to run:
 *   launch  the work after the gap reached the GPU's queue only after the GPU had drained (kernels:
 *           CUPTI's submission time; copies and sets: the end of their call), and no call waiting
 *           for the GPU ended in between: the host was busy launching (or doing other work);
 *   sync    as launch, but a call of that process that waits for the GPU (a synchronisation or a
 *           synchronous copy) returned in between: the host stopped feeding the GPU to wait for it;
 *   queued  the work was already queued: the device's own gap between consecutive work, which no
 *           change on the host removes (its median is the floor a CUDA graph still leaves).
 * Copies are summed by direction and host memory, and streams by busy time and overlap. */
#include "analysis/advise_timeline_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "store/session_ranks.h"

/* (on the read's own thread) */
static int load_call(const wl_blocking_call *b, void *arg)
{
    wl_advise_calls *c = arg;
    if (c->n >= WL_ADVISE_MAX_BLOCKING || wl_grow((void **)&c->v, &c->cap, c->n, sizeof *c->v, 1024) != 0) {
        c->dropped++;
        return 0;
    }
    c->v[c->n++] = *b;
    return 0;
}

void wl_advise_calls_begin(wl_session *s, wl_advise_calls *c)
{
    memset(c, 0, sizeof *c);
    c->read = wl_session_blocking_calls_begin(s, load_call, c);
}

int wl_advise_calls_end(wl_advise_calls *c)
{
    if (!c->read)
        return -1;
    long n = wl_session_blocking_calls_end(c->read);
    c->read = NULL;
    return n < 0 ? -1 : 0;
}

void wl_advise_calls_free(wl_advise_calls *c)
{
    if (c->read)
        wl_advise_calls_end(c);
    free(c->v);
    memset(c, 0, sizeof *c);
}

static dev_state *device(tl *t, uint32_t pid, uint32_t device)
{
    for (int i = 0; i < t->ndev; i++)
        if (t->dev[i].pid == pid && t->dev[i].device == device)
            return &t->dev[i];
    if (t->ndev == MAX_DEVICES)
        return NULL;
    dev_state *d = &t->dev[t->ndev++];
    memset(d, 0, sizeof *d);
    d->pid = pid;
    d->device = device;
    return d;
}

static stream_state *stream(tl *t, uint32_t pid, uint32_t device, int64_t id)
{
    for (int i = 0; i < t->nstreams; i++)
        if (t->streams[i].stream == id && t->streams[i].pid == pid && t->streams[i].device == device)
            return &t->streams[i];
    if (t->nstreams == MAX_STREAMS)
        return NULL;
    stream_state *s = &t->streams[t->nstreams++];
    memset(s, 0, sizeof *s);
    s->pid = pid;
    s->device = device;
    s->stream = id;
    return s;
}

static void gap_add(gaps *g, uint64_t ns, uint32_t max)
{
    g->total_ns += ns;
    g->count++;
    if (g->n >= max || wl_grow((void **)&g->v, &g->cap, g->n, sizeof *g->v, 1024) != 0) {
        g->dropped++;
        return;
    }
    g->v[g->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

/* Index of the span holding t for process pid, or -1. Spans are sorted by start. */
static long span_at(const wl_advise_spans *sp, uint32_t pid, uint64_t t)
{
    if (!sp || sp->n == 0)
        return -1;
    size_t lo = 0, hi = sp->n; /* first start > t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp->v[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i > 0 && k < 64; i--, k++)
        if (sp->v[i - 1].pid == pid && sp->v[i - 1].end >= t)
            return (long)(i - 1);
    return -1;
}

/* A call of this process that waits for the GPU and returned in [from, to]: its index or -1. */
static long blocking_between(const tl *t, uint32_t pid, uint64_t from, uint64_t to)
{
    size_t lo = 0, hi = t->ncalls; /* first call starting after `to` */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->calls[mid].start_ns <= to)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i > 0 && k < LOOKBACK; i--, k++) {
        const wl_blocking_call *c = &t->calls[i - 1];
        if (c->pid == pid && c->end_ns >= from && c->end_ns <= to)
            return (long)(i - 1);
    }
    return -1;
}

static void count_name(name_count *tab, int n, int64_t id)
{
    int low = 0;
    for (int i = 0; i < n; i++) {
        if (tab[i].n && tab[i].name_id == id) {
            tab[i].n++;
            return;
        }
        if (tab[i].n < tab[low].n)
            low = i;
    }
    if (tab[low].n <= 1) { /* a new name takes the slot of the rarest (space-saving count) */
        tab[low].name_id = id;
        tab[low].n = 1;
    }
}

static void count_sync_call(tl *t, const wl_blocking_call *c)
{
    int free_slot = -1;
    for (int i = 0; i < 6; i++) {
        if (t->sync_calls[i].n && !strcmp(t->sync_names[i], c->name)) {
            t->sync_calls[i].n++;
            return;
        }
        if (!t->sync_calls[i].n && free_slot < 0)
            free_slot = i;
    }
    if (free_slot >= 0) {
        snprintf(t->sync_names[free_slot], sizeof t->sync_names[free_slot], "%s", c->name);
        t->sync_calls[free_slot].n = 1;
    }
}

static void on_gap(tl *t, dev_state *d, const wl_work_row *w, uint64_t gap)
{
    /* when the work reached the GPU's queue */
    int64_t submitted = w->kind == WL_WORK_KERNEL && w->submitted_ns > 0 ? w->submitted_ns : w->api_end_ns;
    int kind = GAP_QUEUED;
    long call = -1;
    if (w->graph_id < 0 && submitted > 0 && (uint64_t)submitted > d->busy_end) {
        call = blocking_between(t, w->pid, d->busy_end, (uint64_t)submitted);
        kind = call >= 0 ? GAP_SYNC : GAP_LAUNCH;
    }
    gap_add(&t->g[kind], gap, kind == GAP_QUEUED ? MAX_QUEUED : MAX_GAPS);
    long step = span_at(t->steps, w->pid, d->busy_end);
    if (kind == GAP_LAUNCH) {
        if (step >= 0)
            t->step_launch[step] += gap;
        if (w->kind == WL_WORK_KERNEL)
            count_name(t->after_launch_gap, 8, w->cfg.name_id);
        if (t->nfirst_after_gap < 5)
            t->first_after_gap[t->nfirst_after_gap++] = w->id;
    } else if (kind == GAP_SYNC) {
        if (step >= 0)
            t->step_sync[step] += gap;
        const wl_blocking_call *c = &t->calls[call];
        if (c->id != t->last_sync_counted) {
            t->last_sync_counted = c->id;
            t->sync_wait_ns += c->end_ns - c->start_ns;
            t->sync_matched++;
            count_sync_call(t, c);
            if (t->nsync_ids < 5)
                t->sync_call_ids[t->nsync_ids++] = c->id;
        }
    }
}

static void on_copy(tl *t, const wl_work_row *w)
{
    uint64_t ns = w->end_ns - w->start_ns;
    copy_sum *c = &t->copy[w->dir][w->host_pageable];
    c->n++;
    c->bytes += w->bytes;
    c->ns += ns;
    if (w->host_pageable && (w->dir == WL_COPY_HTOD || w->dir == WL_COPY_DTOH) && t->npageable_ids < 5)
        t->pageable_ids[t->npageable_ids++] = w->id;
    if (!w->host_pageable && w->bytes >= (1u << 20)) {
        t->pinned_big[w->dir].n++;
        t->pinned_big[w->dir].bytes += w->bytes;
        t->pinned_big[w->dir].ns += ns;
    }
    if (w->bytes < SMALL_COPY && (w->dir == WL_COPY_HTOD || w->dir == WL_COPY_DTOH)) {
        t->small.n++;
        t->small.bytes += w->bytes;
        t->small.ns += ns;
        if (w->api_end_ns >= w->api_start_ns && w->api_start_ns > 0) {
            uint64_t a = (uint64_t)(w->api_end_ns - w->api_start_ns);
            t->small_api_ns += a;
            t->small_api_n++;
            if (t->nsmall_api < MAX_GAPS &&
                wl_grow((void **)&t->small_api, &t->small_api_cap, t->nsmall_api, sizeof *t->small_api, 256) == 0)
                t->small_api[t->nsmall_api++] = a > UINT32_MAX ? UINT32_MAX : (uint32_t)a;
        }
        if (t->nsmall_ids < 5)
            t->small_ids[t->nsmall_ids++] = w->id;
    }
}

/* The fields wl_kernel_launch_from_config reads. */
static int same_launch(const wl_kernel_config *a, const wl_kernel_config *b)
{
    return a->pid == b->pid && a->device_id == b->device_id && !memcmp(a->grid, b->grid, sizeof a->grid) &&
           !memcmp(a->block, b->block, sizeof a->block) && !memcmp(a->cluster, b->cluster, sizeof a->cluster) &&
           a->registers_per_thread == b->registers_per_thread && a->static_smem == b->static_smem &&
           a->dynamic_smem == b->dynamic_smem && a->smem_limit_config == b->smem_limit_config &&
           a->carveout_requested == b->carveout_requested && a->cache_config_requested == b->cache_config_requested;
}

static void on_kernel(tl *t, const wl_work_row *w, stream_state *st)
{
    uint64_t ns = w->end_ns - w->start_ns;
    t->kernels++;
    t->kernel_ns += ns;
    if (ns < 10000)
        t->short_kernels++;
    if (w->api_start_ns > 0 && w->api_end_ns >= w->api_start_ns && w->graph_id < 0) {
        uint64_t call = (uint64_t)(w->api_end_ns - w->api_start_ns);
        t->launch_call_ns += call;
        t->launch_calls++;
        if (ns < call)
            t->slower_launch++;
    }
    if (st) {
        /* a stream mostly repeats its last launch: its share is kept rather than looked up */
        double share = 1.0;
        if (st->has_last && same_launch(&st->last, &w->cfg)) {
            share = st->last_share;
        } else {
            wl_kernel_launch l;
            wl_kernel_occ o;
            wl_kernel_launch_from_config(&w->cfg, &l);
            if (wl_occ_cache_launch(t->occ, &l, &o) == WL_OCC_OK && o.has_waves)
                share = o.sm_share;
            st->last = w->cfg;
            st->last_share = share;
            st->has_last = 1;
        }
        st->kernels++;
        st->kernel_ns += ns;
        st->share_ns += share * (double)ns;
    }
}

static int on_work(const wl_work_row *w, void *arg)
{
    tl *t = arg;
    if (t->filter && span_at(t->filter, w->pid, w->start_ns) < 0)
        return 0;
    t->items++;
    if (!t->first || w->start_ns < t->first)
        t->first = w->start_ns;
    if (w->end_ns > t->last)
        t->last = w->end_ns;
    dev_state *d = device(t, w->pid, w->device_id);
    stream_state *st = w->kind == WL_WORK_KERNEL ? stream(t, w->pid, w->device_id, w->stream_id) : NULL;
    if (w->kind == WL_WORK_KERNEL)
        on_kernel(t, w, st);
    else if (w->kind == WL_WORK_COPY)
        on_copy(t, w);
    if (!d)
        return 0;
    if (!d->seen) {
        d->seen = 1;
        d->first = w->start_ns;
        d->busy_end = w->end_ns;
        d->busy_ns = w->end_ns - w->start_ns;
        d->busy_stream = w->stream_id;
    } else if (w->start_ns > d->busy_end) {
        on_gap(t, d, w, w->start_ns - d->busy_end);
        d->busy_ns += w->end_ns - w->start_ns;
        d->busy_end = w->end_ns;
        d->busy_stream = w->stream_id;
    } else {
        if (w->stream_id != d->busy_stream)
            d->overlap_ns += (w->end_ns < d->busy_end ? w->end_ns : d->busy_end) - w->start_ns;
        if (w->end_ns > d->busy_end) {
            d->busy_ns += w->end_ns - d->busy_end;
            d->busy_end = w->end_ns;
            d->busy_stream = w->stream_id;
        }
    }
    d->last = d->busy_end;
    return 0;
}

/* The walk's state, fresh: everything but the blocking calls (read once, before the walk). */
static int walk_start(tl *t, wl_session *s, wl_occ_cache *occ, const wl_advise_spans *filter,
                      const wl_advise_spans *steps)
{
    t->s = s;
    t->occ = occ;
    t->filter = filter;
    t->steps = steps;
    t->last_sync_counted = -1;
    t->streams = calloc(MAX_STREAMS, sizeof *t->streams);
    if (steps && steps->n) {
        t->step_launch = calloc(steps->n, sizeof *t->step_launch);
        t->step_sync = calloc(steps->n, sizeof *t->step_sync);
    }
    return !t->streams || (steps && steps->n && (!t->step_launch || !t->step_sync)) ? -1 : 0;
}

static void walk_end(tl *t)
{
    for (int i = 0; i < GAP_KINDS; i++)
        free(t->g[i].v);
    free(t->streams);
    free(t->step_launch);
    free(t->step_sync);
    free(t->small_api);
}

/* The walk over the GPU work; when the store has to start over in index order, the state is
 * made fresh and the walk made again. 0 or -1. */
static int walk(tl *t, wl_session *s, wl_occ_cache *occ, const wl_advise_spans *filter, const wl_advise_spans *steps)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        long n = wl_session_each_work(s, attempt == 0, on_work, t);
        if (n != WL_WORK_RESTART)
            return n < 0 ? -1 : 0;
        const wl_blocking_call *calls = t->calls;
        size_t ncalls = t->ncalls;
        uint64_t calls_dropped = t->calls_dropped;
        walk_end(t);
        memset(t, 0, sizeof *t);
        t->calls = calls, t->ncalls = ncalls, t->calls_dropped = calls_dropped;
        if (walk_start(t, s, occ, filter, steps))
            return -1;
    }
    return -1;
}

int wl_advise_timeline(wl_session *s, wl_occ_cache *occ, wl_advise_calls *calls, const wl_advise_spans *filter,
                       const wl_advise_spans *steps, wl_advise_result *r, char *err, size_t err_size)
{
    tl *t = calloc(1, sizeof *t);
    int rc = -1;
    if (!t) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    if (walk_start(t, s, occ, filter, steps)) {
        snprintf(err, err_size, "out of memory");
        goto done;
    }
    if (wl_advise_calls_end(calls) != 0) {
        snprintf(err, err_size, "reading the session's API calls failed");
        goto done;
    }
    t->calls = calls->v;
    t->ncalls = calls->n;
    t->calls_dropped = calls->dropped;
    if (walk(t, s, occ, filter, steps) < 0) {
        snprintf(err, err_size, "reading the session's GPU work and API calls failed");
        goto done;
    }
    r->start_ns = t->first;
    r->end_ns = t->last;
    r->work_items = t->items;
    uint64_t span_ns = filter && filter->n ? wl_advise_spans_wall(filter) : (t->last > t->first ? t->last - t->first : 0);
    r->span_ns = span_ns;
    if (span_ns && t->items) {
        wl_tl_rules(t, r, span_ns);
    }
    rc = 0;
done:
    walk_end(t);
    free(t);
    return rc;
}

/* ---- spans ------------------------------------------------------------------------------------ */

static void add_span(uint32_t pid, uint64_t start, uint64_t end, void *arg)
{
    wl_advise_spans *sp = arg;
    if (wl_grow((void **)&sp->v, &sp->cap, sp->n, sizeof *sp->v, 64) == 0)
        sp->v[sp->n++] = (wl_advise_span){pid, start, end};
}

static int cmp_span(const void *a, const void *b)
{
    const wl_advise_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int wl_advise_spans_load(wl_session *s, const char *name, wl_advise_spans *out)
{
    memset(out, 0, sizeof *out);
    if (wl_session_each_named_range(s, name, add_span, out) < 0)
        return -1;
    if (out->n > 1) /* by start across processes (the store gives them by process, then start) */
        qsort(out->v, out->n, sizeof *out->v, cmp_span);
    return 0;
}

void wl_advise_spans_free(wl_advise_spans *sp)
{
    free(sp->v);
    memset(sp, 0, sizeof *sp);
}

uint64_t wl_advise_spans_wall(const wl_advise_spans *sp)
{
    uint64_t wall = 0, cur_end = 0;
    for (size_t i = 0; i < sp->n; i++) {
        const wl_advise_span *v = &sp->v[i];
        uint64_t a = v->start > cur_end ? v->start : cur_end;
        if (v->end > a)
            wall += v->end - a;
        if (v->end > cur_end)
            cur_end = v->end;
    }
    return wall;
}
