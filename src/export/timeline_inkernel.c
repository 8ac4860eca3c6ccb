/* In-kernel lanes on the session timeline (after the main walk): each buffer's (block, group)
 * lanes become tracks under the stream of the kernel they were recorded in, named after the
 * kernel, so they open under that kernel's stream next to its slice; their slices are already on
 * the session clock (placed at import). A lane's slices nest by construction (begin/end pair
 * LIFO); slices the decoder flagged as crossing another, and any that would not nest, go to one
 * "overlapping" lane per lane. At most max_lanes lanes per buffer are drawn (lowest block first);
 * the slices of the others are counted as dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/timeline_internal.h"
#include "store/inkernel_store.h"

#define MAX_DEPTH 64
#define NAME_CACHE 1024

typedef struct ik_lane {
    wl_tl_track t;
    char name[320];
    uint64_t ends[MAX_DEPTH];
    int depth;
} ik_lane;

typedef struct ik_pass {
    const wl_tl_sink *sink;
    wl_tl_stats *st;
    uint64_t *next_uuid;
    tl_stream_fn stream;
    void *stream_ctx;
    const wl_iks_buffer *b;
    const wl_tl_track *stream_track;
    char *event_names[NAME_CACHE], *group_names[NAME_CACHE];
    char label[160];
    ik_lane lane, over;         /* the current lane and its overlapping lane */
    int have_lane, have_over;
    uint32_t cur_block, cur_group;
    uint32_t lanes, max_lanes;
    int skipping;
    int failed;
} ik_pass;

static void on_name(const char *kind, uint32_t id, const char *name, void *arg)
{
    ik_pass *p = arg;
    if (id >= NAME_CACHE)
        return;
    char **slot = strcmp(kind, "event") == 0 ? &p->event_names[id] : &p->group_names[id];
    free(*slot);
    *slot = strdup(name);
}

static void free_names(ik_pass *p)
{
    for (int i = 0; i < NAME_CACHE; i++) {
        free(p->event_names[i]);
        free(p->group_names[i]);
        p->event_names[i] = p->group_names[i] = NULL;
    }
}

static int close_lane(ik_pass *p, ik_lane *l)
{
    while (l->depth) {
        uint64_t e = l->ends[--l->depth];
        if (p->sink->slice_end && p->sink->slice_end(p->sink->ctx, &l->t, e))
            return -1;
    }
    return 0;
}

static int open_lane(ik_pass *p, ik_lane *l, const char *suffix)
{
    uint32_t tid = 0;
    const wl_tl_track *base = NULL;
    if (p->stream(p->stream_ctx, p->b->pid, p->b->device_id, p->b->stream_id, &base, &tid) != 0)
        return -1;
    char gname[32];
    const char *g = p->cur_group < NAME_CACHE ? p->group_names[p->cur_group] : NULL;
    if (!g) {
        snprintf(gname, sizeof gname, "group_%u", p->cur_group);
        g = gname;
    }
    snprintf(l->name, sizeof l->name, "%s · block %u · %s%s", p->label, p->cur_block, g, suffix);
    l->depth = 0;
    l->t = (wl_tl_track){.uuid = ++*p->next_uuid, .parent_uuid = base->uuid, .type = WL_TL_LANE, .pid = base->pid,
                         .tid = tid, .name = l->name, .sort_index = base->sort_index + 63, .stream_id = base->stream_id};
    p->st->tracks++;
    return p->sink->track && p->sink->track(p->sink->ctx, &l->t) ? -1 : 0;
}

/* Pops what ended by ts; 1 when [start, end] nests on the lane now. */
static int fits(ik_pass *p, ik_lane *l, uint64_t start, uint64_t end, int *err)
{
    while (l->depth && l->ends[l->depth - 1] <= start) {
        uint64_t e = l->ends[--l->depth];
        if (p->sink->slice_end && p->sink->slice_end(p->sink->ctx, &l->t, e)) {
            *err = 1;
            return 0;
        }
    }
    return l->depth < MAX_DEPTH && (l->depth == 0 || l->ends[l->depth - 1] >= end);
}

static int emit(ik_pass *p, ik_lane *l, const wl_iks_event *e, uint64_t end)
{
    char ename[48];
    const char *name = e->event < NAME_CACHE ? p->event_names[e->event] : NULL;
    if (!name) {
        snprintf(ename, sizeof ename, "event_%u", e->event);
        name = ename;
    }
    char buf[96];
    if (e->kind == WL_IKS_UNMATCHED_BEGIN || e->kind == WL_IKS_UNMATCHED_END) {
        snprintf(buf, sizeof buf, "%s (unmatched %s)", name, e->kind == WL_IKS_UNMATCHED_BEGIN ? "begin" : "end");
        name = buf;
    }
    wl_tl_slice s;
    memset(&s, 0, sizeof s);
    s.track = &l->t;
    s.kind = WL_TL_INKERNEL;
    s.start_ns = e->start_ns;
    s.end_ns = end;
    s.name = name;
    s.category = e->kind == WL_IKS_SLICE ? "inkernel" : e->kind == WL_IKS_INSTANT ? "inkernel.instant"
                                                                                   : "inkernel.unmatched";
    s.occupancy_pct = -1;
    l->ends[l->depth++] = end;
    p->st->slices++;
    p->st->gpu_slices++;
    return p->sink->slice_begin && p->sink->slice_begin(p->sink->ctx, &s) ? -1 : 0;
}

static int on_event(const wl_iks_event *e, void *arg)
{
    ik_pass *p = arg;
    if (!p->have_lane || e->block != p->cur_block || e->group != p->cur_group) {
        if ((p->have_lane && close_lane(p, &p->lane)) || (p->have_over && close_lane(p, &p->over)))
            return p->failed = 1;
        p->have_lane = p->have_over = 0;
        p->cur_block = e->block;
        p->cur_group = e->group;
        p->skipping = p->lanes >= p->max_lanes;
        if (!p->skipping) {
            if (open_lane(p, &p->lane, ""))
                return p->failed = 1;
            p->have_lane = 1;
            p->lanes++;
        }
    }
    if (p->skipping) {
        p->st->slices_dropped++;
        return 0;
    }
    uint64_t end = e->kind == WL_IKS_SLICE ? e->start_ns + e->dur_ns : e->start_ns;
    int err = 0;
    ik_lane *l = &p->lane;
    if (e->crossed || !fits(p, l, e->start_ns, end, &err)) {
        if (err)
            return p->failed = 1;
        if (!p->have_over) {
            if (open_lane(p, &p->over, " (overlapping)"))
                return p->failed = 1;
            p->have_over = 1;
        }
        l = &p->over;
        if (!fits(p, l, e->start_ns, end, &err)) {
            if (err)
                return p->failed = 1;
            p->st->slices_dropped++; /* crosses another crossed slice: not drawable on two lanes */
            return 0;
        }
    }
    return emit(p, l, e, end) ? (p->failed = 1) : 0;
}

int tl_inkernel_walk(wl_session *s, const wl_tl_sink *sink, wl_tl_stats *st, uint64_t *next_uuid, uint32_t max_lanes,
                     tl_stream_fn stream, void *stream_ctx, char *err, size_t err_size)
{
    wl_iks_buffer *bufs = NULL;
    size_t n = 0;
    if (wl_session_inkernel_buffers(s, &bufs, &n) != 0) {
        snprintf(err, err_size, "reading the session's in-kernel buffers failed");
        return -1;
    }
    ik_pass *p = calloc(1, sizeof *p);
    if (!p) {
        free(bufs);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    p->sink = sink, p->st = st, p->next_uuid = next_uuid, p->stream = stream, p->stream_ctx = stream_ctx;
    p->max_lanes = max_lanes ? max_lanes : 1024;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const wl_iks_buffer *b = &bufs[i];
        if (!b->kernel_id || b->error[0] || b->slices + b->instants + b->unmatched == 0)
            continue;
        p->b = b;
        p->have_lane = p->have_over = 0;
        p->lanes = 0;
        snprintf(p->label, sizeof p->label, "%.120s #%u", b->kernel_name[0] ? b->kernel_name : "kernel",
                 b->correlation_id);
        if (wl_session_inkernel_each_name(s, b->id, on_name, p) < 0 ||
            wl_session_inkernel_each_event(s, b->id, on_event, p) < 0 || p->failed ||
            (p->have_lane && close_lane(p, &p->lane)) || (p->have_over && close_lane(p, &p->over))) {
            snprintf(err, err_size, "exporting the in-kernel lanes of launch %u failed", b->correlation_id);
            rc = -1;
        }
        free_names(p);
    }
    free(p);
    free(bufs);
    return rc;
}
