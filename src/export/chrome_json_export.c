/* Session -> Chrome Trace Event JSON (see session_export.h): the same model as the Perfetto
 * export written as X (complete) slices, s/f flow pairs (f binds to the enclosing GPU slice with
 * "bp":"e"), C counters and M metadata naming every pid and tid. ts/dur are microseconds from the
 * session origin (otherData.origin_realtime_ns), with three decimals so nothing below 1 ns is lost. */
#include "analysis/collective_match.h"
#include "export/session_export.h"

#include <stdlib.h>
#include <string.h>

#include "export/export_rerun.h"
#include "export/json_out.h"

typedef struct js_sink {
    wl_json_out j;
    uint64_t origin, events;
    int any; /* an element was written: the next needs a comma */
} js_sink;

static void sep(js_sink *s)
{
    if (s->any)
        wl_json_lit(&s->j, ",\n");
    s->any = 1;
}

static void meta(js_sink *s, const char *what, uint32_t pid, const uint32_t *tid, const char *name, int sort)
{
    const int is_proc = tid == NULL;
    sep(s);
    wl_json_lit(&s->j, "{\"ph\":\"M\",\"name\":\"");
    wl_json_lit(&s->j, what);
    wl_json_lit(&s->j, "_name\",\"pid\":");
    wl_json_u64(&s->j, pid);
    if (!is_proc) {
        wl_json_lit(&s->j, ",\"tid\":");
        wl_json_u64(&s->j, *tid);
    }
    wl_json_lit(&s->j, ",\"args\":{\"name\":");
    wl_json_str(&s->j, name);
    wl_json_lit(&s->j, "}},\n{\"ph\":\"M\",\"name\":\"");
    wl_json_lit(&s->j, what);
    wl_json_lit(&s->j, "_sort_index\",\"pid\":");
    wl_json_u64(&s->j, pid);
    if (!is_proc) {
        wl_json_lit(&s->j, ",\"tid\":");
        wl_json_u64(&s->j, *tid);
    }
    wl_json_lit(&s->j, ",\"args\":{\"sort_index\":");
    wl_json_i64(&s->j, sort);
    wl_json_lit(&s->j, "}}");
}

static int js_track(void *ctx, const wl_tl_track *t)
{
    js_sink *s = ctx;
    switch (t->type) {
    case WL_TL_GPU:
        if (t->parent_uuid) /* a ranked session's: its streams are threads of its process */
            break;
        /* fall through */
    case WL_TL_PROCESS:
        meta(s, "process", t->pid, NULL, t->name, t->sort_index);
        break;
    case WL_TL_THREAD:
    case WL_TL_STREAM:
    case WL_TL_LANE:
        meta(s, "thread", t->pid, &t->tid, t->name, t->sort_index);
        break;
    case WL_TL_COUNTER: /* a counter is named by its C events */
        break;
    }
    return s->j.failed;
}

static void head(js_sink *s, const char *ph, const char *cat, const char *name, const wl_tl_track *t, uint64_t ts)
{
    sep(s);
    wl_json_lit(&s->j, "{\"ph\":\"");
    wl_json_lit(&s->j, ph);
    wl_json_lit(&s->j, "\",\"cat\":\"");
    wl_json_lit(&s->j, cat);
    wl_json_lit(&s->j, "\",\"name\":");
    wl_json_str(&s->j, name);
    wl_json_lit(&s->j, ",\"pid\":");
    wl_json_u64(&s->j, t->pid);
    wl_json_lit(&s->j, ",\"tid\":");
    wl_json_u64(&s->j, t->tid);
    wl_json_lit(&s->j, ",\"ts\":");
    wl_json_us(&s->j, (int64_t)(ts - s->origin));
}

static void flow(js_sink *s, const char *ph, uint64_t id, const wl_tl_track *t, uint64_t ts)
{
    head(s, ph, "flow", id >= WL_COLL_FLOW_BASE ? "collective" : "launch", t, ts);
    wl_json_lit(&s->j, ",\"id\":");
    wl_json_u64(&s->j, id);
    if (ph[0] == 'f')
        wl_json_lit(&s->j, ",\"bp\":\"e\"");
    wl_json_lit(&s->j, "}");
    s->events++;
}

static int js_begin(void *ctx, const wl_tl_slice *sl)
{
    js_sink *s = ctx;
    head(s, "X", sl->category, sl->name && sl->name[0] ? sl->name : "(unnamed)", sl->track, sl->start_ns);
    wl_json_lit(&s->j, ",\"dur\":");
    wl_json_us(&s->j, (int64_t)(sl->end_ns - sl->start_ns));
    wl_json_lit(&s->j, ",\"args\":{");
    for (size_t i = 0; i < sl->n_args; i++) {
        const wl_pf_arg *a = &sl->args[i];
        if (i)
            wl_json_lit(&s->j, ",");
        if (a->name_len) {
            wl_json_plain_key(&s->j, a->name, a->name_len);
        } else {
            wl_json_str(&s->j, a->name);
            wl_json_lit(&s->j, ":");
        }
        switch (a->kind) {
        case WL_PF_ARG_UINT: wl_json_u64(&s->j, a->u); break;
        case WL_PF_ARG_INT: wl_json_i64(&s->j, a->i); break;
        case WL_PF_ARG_DOUBLE: wl_json_double(&s->j, a->d); break;
        case WL_PF_ARG_DOUBLE_EXACT: wl_json_double_exact(&s->j, a->d); break;
        case WL_PF_ARG_BOOL: wl_json_lit(&s->j, a->u ? "true" : "false"); break;
        default: wl_json_str(&s->j, a->s); break;
        }
    }
    wl_json_lit(&s->j, "}}");
    s->events++;
    for (size_t i = 0; i < sl->n_flows_out; i++)
        flow(s, "s", sl->flows_out[i], sl->track, sl->start_ns);
    if (sl->flow_in)
        flow(s, "f", sl->flow_in, sl->track, sl->start_ns);
    if (sl->rank_flow_in)
        flow(s, "f", sl->rank_flow_in, sl->track, sl->start_ns);
    return s->j.failed;
}

static int js_end(void *ctx, const wl_tl_track *t, uint64_t ts)
{
    (void)ctx, (void)t, (void)ts; /* X events carry their duration */
    return 0;
}

static int js_counter(void *ctx, const wl_tl_track *t, uint64_t ts, double v)
{
    js_sink *s = ctx;
    sep(s);
    wl_json_lit(&s->j, "{\"ph\":\"C\",\"name\":");
    wl_json_str(&s->j, t->name);
    wl_json_lit(&s->j, ",\"pid\":");
    wl_json_u64(&s->j, t->pid);
    wl_json_lit(&s->j, ",\"ts\":");
    wl_json_us(&s->j, (int64_t)(ts - s->origin));
    wl_json_lit(&s->j, ",\"args\":{");
    wl_json_str(&s->j, t->unit ? t->unit : "value");
    wl_json_lit(&s->j, ":");
    wl_json_double(&s->j, v);
    wl_json_lit(&s->j, "}}");
    s->events++;
    return s->j.failed;
}

/* One pass (export_rerun.h). */
static int chrome_json_pass(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err,
                            size_t err_size)
{
    memset(st, 0, sizeof *st);
    js_sink *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    wl_json_init_piped(&k->j, fp);
    wl_session_span span;
    wl_session_get_bounds(s, &span);
    k->origin = span.origin_ns;
    wl_json_lit(&k->j, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    wl_tl_sink sink = {k, js_track, js_begin, js_end, js_counter, NULL};
    int rc = wl_timeline_walk(s, o, &sink, &st->tl, err, err_size);
    wl_json_lit(&k->j, "\n],\"otherData\":{\"producer\":\"warplens 0.1.0\",\"clock\":\"CLOCK_REALTIME\","
                       "\"origin_realtime_ns\":");
    wl_json_u64(&k->j, k->origin);
    const struct { const char *k; uint64_t v; } f[] = {
        {"slices", st->tl.slices}, {"flows", st->tl.flows}, {"counter_events", st->tl.counter_events},
        {"overlap_lanes", st->tl.lanes_added}, {"slices_dropped", st->tl.slices_dropped}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        wl_json_lit(&k->j, ",\"");
        wl_json_lit(&k->j, f[i].k);
        wl_json_lit(&k->j, "\":");
        wl_json_u64(&k->j, f[i].v);
    }
    wl_json_lit(&k->j, "}}\n");
    if (wl_json_flush(&k->j) && rc == 0) {
        snprintf(err, err_size, "writing the trace failed");
        rc = -1;
    }
    st->events = k->events;
    st->bytes = k->j.bytes;
    free(k);
    return rc;
}

int wl_export_chrome_json(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err, size_t err_size)
{
    return wl_export_rerun(chrome_json_pass, s, fp, o, st, err, err_size);
}
