/* Session -> Perfetto protobuf (see session_export.h). One packet sequence. Timestamps are the
 * session's CLOCK_REALTIME nanoseconds minus an origin: a sequence-scoped clock (id 64) declared
 * through trace_packet_defaults and tied to REALTIME by the first packet's ClockSnapshot, which also
 * makes REALTIME the trace's clock (docs/formats.md). Small timestamps take 5-6 varint bytes
 * instead of 9. Names, categories and annotation names are interned by the packet writer. */
#include "export/session_export.h"

#include <string.h>

#include "export/export_rerun.h"
#include "export/out_pipe.h"
#include "export/perfetto_packets.h"

#define STREAMS_GROUP_BIT (UINT64_C(1) << 62) /* uuid of a GPU's "Streams" ordering track */

/* The writer's output to the background writer; last: the rest, then drain it and stop it
 * (wl_pf_finish). */
static int pipe_out(void *ctx, wl_pb_buf *out, int last)
{
    return last ? wl_out_pipe_close(ctx, out) : wl_out_pipe_push_some(ctx, out);
}

typedef struct pf_sink {
    wl_pf_writer w;
    uint64_t events, origin;
} pf_sink;

static int pf_track(void *ctx, const wl_tl_track *t)
{
    pf_sink *p = ctx;
    wl_pf_track d;
    memset(&d, 0, sizeof d);
    d.uuid = t->uuid;
    switch (t->type) {
    case WL_TL_PROCESS:
        d.has_process = 1, d.pid = (int32_t)t->pid, d.process_name = t->name;
        break;
    case WL_TL_THREAD: /* thread tracks belong to their process through the pid */
        d.has_thread = 1, d.pid = (int32_t)t->pid, d.tid = (int32_t)t->tid, d.thread_name = t->name;
        break;
    case WL_TL_GPU: {
        if (t->parent_uuid) /* a ranked session's: a track under its process */
            d.parent_uuid = t->parent_uuid, d.name = t->name, d.has_rank = 1, d.sibling_order_rank = t->sort_index;
        else
            d.has_process = 1, d.pid = (int32_t)t->pid, d.process_name = t->name;
        if (wl_pf_write_track(&p->w, &d))
            return -1;
        /* streams hang under a plain track that orders them by stream id */
        wl_pf_track g = {.uuid = t->uuid | STREAMS_GROUP_BIT, .parent_uuid = t->uuid, .name = "Streams",
                         .child_ordering = WL_PF_ORDER_EXPLICIT, .has_rank = 1, .sibling_order_rank = 10};
        return wl_pf_write_track(&p->w, &g);
    }
    case WL_TL_STREAM:
        d.parent_uuid = t->parent_uuid | STREAMS_GROUP_BIT, d.name = t->name, d.merge_none = 1;
        d.has_rank = 1, d.sibling_order_rank = t->sort_index;
        break;
    case WL_TL_LANE:
        d.parent_uuid = t->parent_uuid, d.name = t->name, d.merge_none = 1;
        d.has_rank = 1, d.sibling_order_rank = t->sort_index;
        break;
    case WL_TL_COUNTER:
        d.parent_uuid = t->parent_uuid, d.name = t->name, d.is_counter = 1, d.counter_unit_name = t->unit;
        d.has_rank = 1, d.sibling_order_rank = t->sort_index;
        break;
    }
    return wl_pf_write_track(&p->w, &d);
}

static int pf_begin(void *ctx, const wl_tl_slice *s)
{
    pf_sink *p = ctx;
    wl_pf_event e; /* field by field: an initializer would clear the struct first (`rep stos`), once a slice */
    e.type = WL_PF_SLICE_BEGIN, e.ts = s->start_ns - p->origin, e.track_uuid = s->track->uuid;
    e.name = s->name && s->name[0] ? s->name : "(unnamed)", e.name_key = s->name_key;
    e.category = s->category;
    e.flow_ids = s->flows_out, e.n_flow_ids = s->n_flows_out;
    e.has_double_value = 0, e.double_value = 0, e.int_value = 0;
    e.args = s->args, e.n_args = s->n_args;
    uint64_t in[2];
    size_t nin = 0;
    if (s->flow_in)
        in[nin++] = s->flow_in;
    if (s->rank_flow_in)
        in[nin++] = s->rank_flow_in;
    e.terminating_flow_ids = in;
    e.n_terminating_flow_ids = nin;
    p->events++;
    return wl_pf_write_event(&p->w, &e);
}

static int pf_end(void *ctx, const wl_tl_track *t, uint64_t ts)
{
    pf_sink *p = ctx;
    p->events++;
    return wl_pf_write_end(&p->w, ts - p->origin, t->uuid);
}

static int pf_counter(void *ctx, const wl_tl_track *t, uint64_t ts, double v)
{
    pf_sink *p = ctx;
    p->events++;
    return wl_pf_write_counter(&p->w, ts - p->origin, t->uuid, v);
}

/* One pass (export_rerun.h). */
static int perfetto_pass(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err,
                         size_t err_size)
{
    memset(st, 0, sizeof *st);
    pf_sink p;
    memset(&p, 0, sizeof p);
    long start = ftell(fp);
    if (wl_pf_init(&p.w, fp, 1, WL_PF_CLOCK_SEQUENCE_0)) {
        snprintf(err, err_size, "cannot start the Perfetto writer");
        return -1;
    }
    p.w.static_names = 1; /* the model's categories and annotation names are string constants */
    wl_out_pipe *pipe = wl_out_pipe_open(fp); /* NULL: the writer writes fp itself */
    if (pipe && (wl_out_pipe_take(pipe, &p.w.out) || wl_pf_set_output(&p.w, pipe_out, pipe))) {
        wl_out_pipe_close(pipe, &p.w.out);
        pipe = NULL;
    }
    /* clock 64 reads 0 when REALTIME reads the origin; REALTIME is the trace clock. BOOTTIME is
     * tied to REALTIME 1:1 (nothing is stamped with it; the session recorded no boot time). */
    wl_session_span span;
    wl_session_get_bounds(s, &span);
    p.origin = span.origin_ns;
    wl_pf_clock clocks[3] = {{WL_PF_CLOCK_SEQUENCE_0, 0}, {WL_PF_CLOCK_REALTIME, span.origin_ns},
                             {WL_PF_CLOCK_BOOTTIME, span.origin_ns}};
    int rc = wl_pf_write_clock_snapshot(&p.w, 0, clocks, 3, WL_PF_CLOCK_REALTIME);
    wl_tl_sink sink = {&p, pf_track, pf_begin, pf_end, pf_counter, NULL};
    if (rc == 0)
        rc = wl_timeline_walk(s, o, &sink, &st->tl, err, err_size);
    else
        snprintf(err, err_size, "writing the trace failed");
    if (wl_pf_finish(&p.w) && rc == 0) {
        snprintf(err, err_size, "writing the trace failed");
        rc = -1;
    }
    st->events = p.events;
    long end = ftell(fp);
    st->bytes = start >= 0 && end >= start ? (uint64_t)(end - start) : 0;
    return rc;
}

int wl_export_perfetto(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err, size_t err_size)
{
    return wl_export_rerun(perfetto_pass, s, fp, o, st, err, err_size);
}
