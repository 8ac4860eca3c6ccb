/* Capture ranges (`warplens run --capture-range profiler-api`) on the timeline: one "traced" slice
 * per span between cudaProfilerStart and cudaProfilerStop, on a track of its own at the top of its
 * process, so a reader sees at once which parts of the run were traced and that the gaps between
 * them are untraced, not idle. Spans are few (one per start), so they are read in one query after
 * the main walk, like the in-kernel lanes. */
#include "export/timeline_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A thread id no OS thread has (Linux tids stay below 2^22), for the exporters that need one. */
#define CAPTURE_TID 0xFFFFFFF0u

typedef struct cap_pass {
    const wl_tl_sink *sink;
    wl_tl_stats *st;
    uint64_t *next_uuid;
    tl_process_fn process;
    void *process_ctx;
    uint64_t session_end;
    uint32_t pid;      /* the process whose track is open, 0 none */
    wl_tl_track track; /* its capture-range track (uuid 0: the process has no track) */
    uint64_t last_end; /* spans on one track must not overlap */
    int failed;
} cap_pass;

static int open_track(cap_pass *p, uint32_t pid)
{
    p->pid = pid;
    p->last_end = 0;
    memset(&p->track, 0, sizeof p->track);
    const wl_tl_track *proc = NULL;
    if (p->process(p->process_ctx, pid, &proc) != 0 || !proc)
        return 0; /* no process row: nothing to hang the spans on */
    p->track = (wl_tl_track){.uuid = ++*p->next_uuid, .parent_uuid = proc->uuid, .type = WL_TL_LANE, .pid = pid,
                             .tid = CAPTURE_TID, .name = "capture ranges (cudaProfilerStart .. Stop)",
                             .sort_index = -1, .stream_id = -1};
    p->st->tracks++;
    return p->sink->track && p->sink->track(p->sink->ctx, &p->track) ? -1 : 0;
}

static void on_range(const wl_capture_range_row *r, void *arg)
{
    cap_pass *p = arg;
    if (p->failed)
        return;
    if (r->pid != p->pid && open_track(p, r->pid) != 0) {
        p->failed = 1;
        return;
    }
    /* a span the session has no end for (process killed) runs to the session's end */
    uint64_t end = r->end_ns ? r->end_ns : p->session_end;
    if (!p->track.uuid || end < r->start_ns || r->start_ns < p->last_end) {
        p->st->slices_dropped++; /* not drawable: no track, reversed, or overlapping the previous span */
        return;
    }
    const char *ended = !strcmp(r->ended_by, "stop")   ? "cudaProfilerStop"
                        : !strcmp(r->ended_by, "exit") ? "the process's exit"
                                                       : "unknown (the process ended without a record)";
    wl_pf_arg args[3] = {
        {.name = "started_by_tid", .kind = WL_PF_ARG_UINT, .u = r->start_tid},
        {.name = "ended_by", .kind = WL_PF_ARG_STRING, .s = ended},
        {.name = "ended_by_tid", .kind = WL_PF_ARG_UINT, .u = r->end_tid},
    };
    wl_tl_slice s;
    memset(&s, 0, sizeof s);
    s.track = &p->track;
    s.kind = WL_TL_CAPTURE;
    s.start_ns = r->start_ns;
    s.end_ns = end;
    s.name = "traced";
    s.category = "capture";
    s.args = args;
    s.n_args = r->end_tid ? 3 : 2;
    s.occupancy_pct = -1;
    p->last_end = end;
    p->st->slices++;
    p->st->host_slices++;
    if ((p->sink->slice_begin && p->sink->slice_begin(p->sink->ctx, &s)) ||
        (p->sink->slice_end && p->sink->slice_end(p->sink->ctx, &p->track, end)))
        p->failed = 1;
}

int tl_capture_walk(wl_session *s, const wl_tl_sink *sink, wl_tl_stats *st, uint64_t *next_uuid, tl_process_fn process,
                    void *process_ctx, char *err, size_t err_size)
{
    cap_pass p;
    memset(&p, 0, sizeof p);
    p.sink = sink, p.st = st, p.next_uuid = next_uuid, p.process = process, p.process_ctx = process_ctx;
    p.session_end = st->end_ns;
    if (wl_session_each_capture_range(s, on_range, &p) < 0) {
        snprintf(err, err_size, "reading the session's capture ranges failed");
        return -1;
    }
    if (p.failed) {
        snprintf(err, err_size, "timeline export failed (out of memory or output error)");
        return -1;
    }
    return 0;
}
