/* The HTML report (see html_report.h). The page is written in one pass: the timeline slices
 * stream out of the timeline model straight into the embedded JSON; tracks, interned names, flow
 * end points and GPU fill points (all bounded by the slice cap) are kept and written after them,
 * followed by the summary tables. */
#include "export/html_report.h"
#include "common/fnv.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_backend.h"
#include "analysis/kernel_table.h"
#include "common/grow.h"
#include "export/json_out.h"
#include "export/report_findings.h"
#include "export/report_metrics.h"
#include "export/report_ranks.h"
#include "store/session_cursors.h"
#include "store/session_metrics.h"

#define DEFAULT_MAX_SLICES 50000
#define MAX_FILL_POINTS 200000

typedef struct rp_track {
    uint64_t uuid, parent;
    wl_tl_track_type type;
    uint32_t pid;
    int sort;
    char *name;
} rp_track;

typedef struct u64_pair {
    uint64_t a, b;
} u64_pair;

typedef struct fill_pt {
    uint64_t track, ts;
    double v;
} fill_pt;

typedef struct rp {
    wl_json_out j;
    uint64_t origin, cutoff, host_budget, gpu_budget;
    uint64_t n_slices, n_host, n_gpu;
    rp_track *tracks;
    size_t n_tracks, cap_tracks;
    char **names;                /* interned slice names, index = position */
    size_t n_names, cap_names;
    int64_t *hash;               /* open addressing over names: index + 1, 0 empty */
    size_t hash_cap;
    u64_pair *fsrc, *fdst;       /* (slice index, flow id) */
    size_t n_fsrc, n_fdst, cap_fsrc, cap_fdst;
    fill_pt *fill;
    size_t n_fill, cap_fill;
    uint64_t n_flows;            /* flows with both ends embedded */
    int oom;
} rp;

static int grow(void **p, size_t *cap, size_t n, size_t elem) { return wl_grow(p, cap, n, elem, 256); }

static int64_t intern(rp *r, const char *s)
{
    if ((r->n_names + 1) * 2 > r->hash_cap) {
        size_t nc = r->hash_cap ? r->hash_cap * 2 : 1024;
        int64_t *h = calloc(nc, sizeof *h);
        if (!h)
            return -1;
        for (size_t i = 0; i < r->n_names; i++) {
            size_t k = wl_fnv1a_str(r->names[i]) & (nc - 1);
            while (h[k])
                k = (k + 1) & (nc - 1);
            h[k] = (int64_t)i + 1;
        }
        free(r->hash);
        r->hash = h;
        r->hash_cap = nc;
    }
    size_t k = wl_fnv1a_str(s) & (r->hash_cap - 1);
    while (r->hash[k]) {
        if (!strcmp(r->names[r->hash[k] - 1], s))
            return r->hash[k] - 1;
        k = (k + 1) & (r->hash_cap - 1);
    }
    char *d = strdup(s);
    if (!d || grow((void **)&r->names, &r->cap_names, r->n_names, sizeof *r->names)) {
        free(d);
        return -1;
    }
    r->names[r->n_names] = d;
    r->hash[k] = (int64_t)r->n_names + 1;
    return (int64_t)r->n_names++;
}

static int on_track(void *ctx, const wl_tl_track *t)
{
    rp *r = ctx;
    if (grow((void **)&r->tracks, &r->cap_tracks, r->n_tracks, sizeof *r->tracks))
        return -1;
    rp_track *x = &r->tracks[r->n_tracks];
    *x = (rp_track){t->uuid, t->parent_uuid, t->type, t->pid, t->sort_index, strdup(t->name ? t->name : "")};
    if (!x->name)
        return -1;
    r->n_tracks++;
    return 0;
}

static void put_args(wl_json_out *j, const wl_tl_slice *s)
{
    wl_json_lit(j, "{");
    for (size_t i = 0; i < s->n_args; i++) {
        const wl_pf_arg *a = &s->args[i];
        if (i)
            wl_json_lit(j, ",");
        wl_json_str(j, a->name);
        wl_json_lit(j, ":");
        switch (a->kind) {
        case WL_PF_ARG_UINT: wl_json_u64(j, a->u); break;
        case WL_PF_ARG_INT: wl_json_i64(j, a->i); break;
        case WL_PF_ARG_DOUBLE: wl_json_double(j, a->d); break;
        case WL_PF_ARG_DOUBLE_EXACT: wl_json_double_exact(j, a->d); break;
        case WL_PF_ARG_BOOL: wl_json_lit(j, a->u ? "true" : "false"); break;
        default: wl_json_str(j, a->s); break;
        }
    }
    wl_json_lit(j, "}");
}

static int on_slice(void *ctx, const wl_tl_slice *s)
{
    rp *r = ctx;
    int gpu = s->kind >= WL_TL_KERNEL && s->kind <= WL_TL_MEMSET;
    if (s->start_ns >= r->cutoff || (gpu ? r->n_gpu >= r->gpu_budget : r->n_host >= r->host_budget))
        return 0;
    int64_t name = intern(r, s->name && s->name[0] ? s->name : "(unnamed)");
    if (name < 0)
        return -1;
    for (size_t i = 0; i < s->n_flows_out; i++) {
        if (grow((void **)&r->fsrc, &r->cap_fsrc, r->n_fsrc, sizeof *r->fsrc))
            return -1;
        r->fsrc[r->n_fsrc++] = (u64_pair){r->n_slices, s->flows_out[i]};
    }
    const uint64_t in[2] = {s->flow_in, s->rank_flow_in};
    for (int i = 0; i < 2; i++) {
        if (!in[i])
            continue;
        if (grow((void **)&r->fdst, &r->cap_fdst, r->n_fdst, sizeof *r->fdst))
            return -1;
        r->fdst[r->n_fdst++] = (u64_pair){r->n_slices, in[i]};
    }
    wl_json_lit(&r->j, r->n_slices ? ",\n[" : "\n[");
    wl_json_u64(&r->j, s->track->uuid);
    wl_json_lit(&r->j, ",");
    wl_json_i64(&r->j, (int64_t)(s->start_ns - r->origin));
    wl_json_lit(&r->j, ",");
    wl_json_u64(&r->j, s->end_ns - s->start_ns);
    wl_json_lit(&r->j, ",");
    wl_json_i64(&r->j, name);
    wl_json_lit(&r->j, ",");
    wl_json_u64(&r->j, (uint64_t)s->kind);
    wl_json_lit(&r->j, ",");
    put_args(&r->j, s);
    wl_json_lit(&r->j, "]");
    r->n_slices++;
    if (gpu)
        r->n_gpu++;
    else
        r->n_host++;
    return r->j.failed;
}

static int on_end(void *ctx, const wl_tl_track *t, uint64_t ts)
{
    (void)ctx, (void)t, (void)ts;
    return 0;
}

static int on_counter(void *ctx, const wl_tl_track *t, uint64_t ts, double v)
{
    rp *r = ctx;
    if (strcmp(t->unit ? t->unit : "", "%") || ts >= r->cutoff || r->n_fill >= MAX_FILL_POINTS)
        return 0;
    if (grow((void **)&r->fill, &r->cap_fill, r->n_fill, sizeof *r->fill))
        return -1;
    r->fill[r->n_fill++] = (fill_pt){t->uuid, ts - r->origin, v};
    return 0;
}

/* ---- the tables after the timeline ---------------------------------------------------------- */

static void write_kernels(wl_json_out *j, wl_session *s)
{
    wl_occ_cache *cache = wl_occ_cache_new(s);
    wl_kernel_table_row *rows = NULL;
    int n = cache ? wl_kernel_table(s, cache, &rows) : -1;
    wl_metric_set metrics = {0}; /* n = 0: no metrics, and the rows are as without them */
    if (wl_session_has_metrics(s) && wl_session_metrics(s, WL_METRICS_BY_NAME, &metrics) != 0)
        metrics.n = 0;
    wl_json_lit(j, ",\"kernels\":[");
    for (int i = 0; i < n; i++) {
        const wl_kernel_table_row *k = &rows[i];
        wl_json_lit(j, i ? ",\n{\"name\":" : "\n{\"name\":");
        wl_json_str(j, k->name ? k->name : k->sum.name);
        wl_json_key(j, "short"), wl_json_str(j, k->short_name && k->short_name[0] ? k->short_name : k->sum.short_name);
        wl_json_key(j, "time_pct"), wl_json_double(j, k->time_pct);
        wl_json_key(j, "calls"), wl_json_u64(j, k->sum.calls);
        wl_json_key(j, "total_ns"), wl_json_u64(j, k->sum.total_ns);
        wl_json_key(j, "mean_ns"), wl_json_double(j, k->sum.mean_ns);
        wl_json_key(j, "min_ns"), wl_json_u64(j, k->sum.min_ns);
        wl_json_key(j, "p50_ns"), wl_json_u64(j, k->sum.p50_ns);
        wl_json_key(j, "p99_ns"), wl_json_u64(j, k->sum.p99_ns);
        wl_json_key(j, "max_ns"), wl_json_u64(j, k->sum.max_ns);
        wl_json_key(j, "queue_ns"), wl_json_double(j, k->sum.mean_queue_ns);
        wl_json_key(j, "launch_ns"), wl_json_double(j, k->sum.mean_launch_ns);
        wl_json_key(j, "configs"), wl_json_i64(j, k->configs);
        wl_json_key(j, "backend"), wl_json_str(j, wl_kernel_backend(k->short_name, k->name, k->mangled));
        if (k->has_config) {
            char b[64];
            snprintf(b, sizeof b, "%dx%dx%d", k->top.grid[0], k->top.grid[1], k->top.grid[2]);
            wl_json_key(j, "grid"), wl_json_str(j, b);
            snprintf(b, sizeof b, "%dx%dx%d", k->top.block[0], k->top.block[1], k->top.block[2]);
            wl_json_key(j, "block"), wl_json_str(j, b);
            wl_json_key(j, "registers"), wl_json_i64(j, k->top.registers_per_thread);
            wl_json_key(j, "static_smem"), wl_json_i64(j, k->top.static_smem);
            wl_json_key(j, "dynamic_smem"), wl_json_i64(j, k->top.dynamic_smem);
        }
        if (k->occ.has_result) {
            char lim[96];
            wl_json_key(j, "occupancy_pct"), wl_json_double(j, k->occ.occ.occupancy_pct);
            wl_json_key(j, "limiter"), wl_json_str(j, wl_occ_limiters_text(k->occ.occ.limiters, 0, lim, sizeof lim));
            wl_json_key(j, "active_blocks_per_sm"), wl_json_i64(j, k->occ.occ.active_blocks_per_sm);
            if (k->occ.has_waves)
                wl_json_key(j, "waves"), wl_json_double(j, k->occ.waves.waves_per_sm);
            wl_json_key(j, "gpu_fill_pct"), wl_json_double(j, 100.0 * k->occ.warp_fill);
        }
        const wl_metric_acc *m = metrics.n ? wl_metric_set_find(&metrics, k->sum.name_id) : NULL;
        if (m)
            wl_report_metric_object(j, m, metrics.max_passes);
        wl_json_lit(j, "}");
    }
    wl_json_lit(j, "]");
    wl_metric_set_free(&metrics);
    wl_kernel_table_free(rows, n > 0 ? n : 0); /* (a session without kernels has an empty table to free) */
    wl_occ_cache_free(cache);
}

static void write_intervals(wl_json_out *j, const char *name, wl_interval_summary *r, int n)
{
    wl_json_key(j, name);
    wl_json_lit(j, "[");
    for (int i = 0; i < n; i++) {
        wl_json_lit(j, i ? ",{\"name\":" : "{\"name\":");
        wl_json_str(j, r[i].name);
        wl_json_key(j, "group"), wl_json_str(j, r[i].group);
        wl_json_key(j, "count"), wl_json_u64(j, r[i].count);
        wl_json_key(j, "total_ns"), wl_json_u64(j, r[i].total_ns);
        wl_json_key(j, "mean_ns"), wl_json_double(j, r[i].mean_ns);
        wl_json_key(j, "min_ns"), wl_json_u64(j, r[i].min_ns);
        wl_json_key(j, "max_ns"), wl_json_u64(j, r[i].max_ns);
        wl_json_lit(j, "}");
    }
    wl_json_lit(j, "]");
    free(r);
}

static int write_tables(wl_json_out *j, wl_session *s, char *err, size_t err_size)
{
    write_kernels(j, s);
    wl_copy_summary *c = NULL;
    int n = wl_session_copy_summaries(s, &c);
    wl_json_key(j, "copies");
    wl_json_lit(j, "[");
    for (int i = 0; i < n; i++) {
        wl_json_lit(j, i ? ",{\"kind\":" : "{\"kind\":");
        wl_json_str(j, c[i].kind);
        wl_json_key(j, "memory"), wl_json_str(j, c[i].memory);
        wl_json_key(j, "count"), wl_json_u64(j, c[i].count);
        wl_json_key(j, "bytes"), wl_json_u64(j, c[i].bytes);
        wl_json_key(j, "total_ns"), wl_json_u64(j, c[i].total_ns);
        wl_json_key(j, "gbps"), wl_json_double(j, c[i].gbps);
        wl_json_lit(j, "}");
    }
    wl_json_lit(j, "]");
    free(c);
    wl_interval_summary *r = NULL;
    n = wl_session_nvtx_summaries(s, &r);
    write_intervals(j, "nvtx", r, n);
    r = NULL;
    n = wl_session_scope_summaries(s, &r);
    write_intervals(j, "scopes", r, n);
    r = NULL;
    n = wl_session_api_summaries(s, &r);
    write_intervals(j, "api", r, n);
    return wl_report_range_metrics(j, s, err, err_size);
}

static void write_overview(wl_json_out *j, wl_session *s, const wl_session_overview *o, const char *title)
{
    wl_json_lit(j, "\"overview\":{\"title\":");
    wl_json_str(j, title);
    wl_json_key(j, "program"), wl_json_str(j, o->program);
    wl_json_key(j, "device"), wl_json_str(j, o->device_name);
    wl_json_key(j, "devices"), wl_json_i64(j, o->devices);
    wl_json_key(j, "processes"), wl_json_i64(j, o->processes);
    wl_json_key(j, "threads"), wl_json_i64(j, o->threads);
    uint64_t wall = o->last_ns > o->first_ns ? o->last_ns - o->first_ns : 0;
    wl_json_key(j, "wall_ns"), wl_json_u64(j, wall);
    wl_json_key(j, "gpu_busy_ns"), wl_json_u64(j, o->gpu_busy_ns);
    wl_json_key(j, "gpu_busy_pct"), wl_json_double(j, wall ? 100.0 * (double)o->gpu_busy_ns / (double)wall : 0.0);
    wl_json_key(j, "lost"), wl_json_u64(j, o->lost_total);
    wl_json_key(j, "complete"), wl_json_lit(j, o->complete ? "true" : "false");
    const struct { const char *k; uint64_t v; } f[] = {
        {"kernels", o->kernels}, {"memcpys", o->memcpys}, {"memsets", o->memsets}, {"api_calls", o->api_calls},
        {"syncs", o->syncs}, {"nvtx_ranges", o->nvtx_ranges}, {"scopes", o->scopes}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        wl_json_key(j, f[i].k), wl_json_u64(j, f[i].v);
    char created[64];
    wl_session_meta(s, "started_unix", created, sizeof created);
    wl_json_key(j, "started_unix"), wl_json_str(j, created);
    wl_json_lit(j, "}");
}

static int by_flow(const void *a, const void *b)
{
    uint64_t x = ((const u64_pair *)a)->b, y = ((const u64_pair *)b)->b;
    return (x > y) - (x < y);
}

static void write_model(rp *r, const wl_report_stats *st)
{
    wl_json_out *j = &r->j;
    wl_json_lit(j, "],\"tracks\":[");
    for (size_t i = 0; i < r->n_tracks; i++) {
        const rp_track *t = &r->tracks[i];
        static const char *const kinds[] = {"", "process", "thread", "gpu", "stream", "lane", "counter"};
        wl_json_lit(j, i ? ",\n{\"id\":" : "\n{\"id\":");
        wl_json_u64(j, t->uuid);
        wl_json_key(j, "parent"), wl_json_u64(j, t->parent);
        wl_json_key(j, "kind"), wl_json_lit(j, "\""), wl_json_lit(j, kinds[t->type]), wl_json_lit(j, "\"");
        wl_json_key(j, "pid"), wl_json_u64(j, t->pid);
        wl_json_key(j, "sort"), wl_json_i64(j, t->sort);
        wl_json_key(j, "name"), wl_json_str(j, t->name);
        wl_json_lit(j, "}");
    }
    wl_json_lit(j, "],\"names\":[");
    for (size_t i = 0; i < r->n_names; i++) {
        if (i)
            wl_json_lit(j, ",");
        wl_json_str(j, r->names[i]);
    }
    wl_json_lit(j, "],\"flows\":[");
    /* pair flow starts and ends by id; an end whose start fell outside the window is left out */
    if (r->n_fsrc)
        qsort(r->fsrc, r->n_fsrc, sizeof *r->fsrc, by_flow);
    if (r->n_fdst)
        qsort(r->fdst, r->n_fdst, sizeof *r->fdst, by_flow);
    for (size_t i = 0, k = 0; i < r->n_fdst && k < r->n_fsrc;) {
        if (r->fsrc[k].b < r->fdst[i].b) {
            k++;
        } else if (r->fsrc[k].b > r->fdst[i].b) {
            i++;
        } else {
            wl_json_lit(j, r->n_flows++ ? ",[" : "[");
            wl_json_u64(j, r->fsrc[k++].a);
            wl_json_lit(j, ",");
            wl_json_u64(j, r->fdst[i++].a);
            wl_json_lit(j, "]");
        }
    }
    wl_json_lit(j, "],\"fill\":[");
    for (size_t i = 0; i < r->n_fill; i++) {
        wl_json_lit(j, i ? ",[" : "[");
        wl_json_u64(j, r->fill[i].track);
        wl_json_lit(j, ",");
        wl_json_u64(j, r->fill[i].ts);
        wl_json_lit(j, ",");
        wl_json_double(j, r->fill[i].v);
        wl_json_lit(j, "]");
    }
    wl_json_lit(j, "],\"window\":{\"capped\":");
    wl_json_lit(j, st->capped ? "true" : "false");
    wl_json_key(j, "slices_total"), wl_json_u64(j, st->slices_total);
    wl_json_key(j, "slices_embedded"), wl_json_u64(j, r->n_slices);
    wl_json_key(j, "end_ns"), wl_json_u64(j, st->window_end_ns);
    wl_json_lit(j, "}");
}

int wl_report_html(wl_session *s, FILE *fp, const wl_report_options *o, wl_report_stats *st, char *err,
                   size_t err_size)
{
    memset(st, 0, sizeof *st);
    rp *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    wl_json_init(&r->j, fp);
    wl_report_findings *findings = wl_report_findings_start(s); /* advise, beside what follows */
    wl_session_span span;
    wl_session_get_span(s, &span);
    wl_session_overview ov;
    wl_session_get_overview(s, &ov);
    uint64_t max = o && o->max_slices ? o->max_slices : DEFAULT_MAX_SLICES;
    st->slices_total =
        span.api_calls + span.nvtx_ranges + span.scopes + span.timers + span.kernels + span.memcpys + span.memsets;
    r->origin = span.origin_ns;
    r->cutoff = UINT64_MAX;
    r->host_budget = r->gpu_budget = UINT64_MAX;
    if (st->slices_total > max) {
        /* a leading window: up to half the budget of GPU work, the host intervals of that time */
        st->capped = 1;
        r->cutoff = wl_session_nth_kernel_start(s, max / 2);
        r->host_budget = max / 2;
        r->gpu_budget = max - max / 2;
    }
    const char *title = o && o->title ? o->title : ov.program[0] ? ov.program : "warplens session";
    wl_json_lit(&r->j, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width\">\n<title>warplens report</title>\n<style>");
    wl_json_lit(&r->j, WL_REPORT_CSS);
    wl_json_lit(&r->j, "</style></head>\n<body>\n<noscript>This report draws its charts with JavaScript.</noscript>\n"
                       "<div id=\"app\"></div>\n<script type=\"application/json\" id=\"wl-data\">{");
    write_overview(&r->j, s, &ov, title);
    wl_json_lit(&r->j, ",\"slices\":[");
    wl_tl_sink sink = {r, on_track, on_slice, on_end, on_counter, NULL};
    wl_tl_stats ts;
    wl_tl_options tl = o && o->tl ? *o->tl : (wl_tl_options){0};
    tl.until_ns = r->cutoff == UINT64_MAX ? 0 : r->cutoff; /* nothing past the window is embedded */
    int rc = wl_timeline_walk(s, &tl, &sink, &ts, err, err_size);
    if (st->capped)
        st->window_end_ns = r->cutoff == UINT64_MAX ? span.end_ns - r->origin : r->cutoff - r->origin;
    st->slices_embedded = r->n_slices;
    st->fill_points = r->n_fill;
    if (rc == 0) {
        write_model(r, st);
        rc = write_tables(&r->j, s, err, err_size);
    }
    wl_report_findings_write(findings, &r->j, s, span.origin_ns); /* (the data's keys in any order) */
    if (rc == 0)
        st->rank_section = wl_report_ranks(&r->j, s);
    if (rc == 0) {
        wl_json_lit(&r->j, "}</script>\n<script>\n");
        wl_json_lit(&r->j, WL_REPORT_JS);
        wl_json_lit(&r->j, "\n</script>\n</body></html>\n");
    }
    st->flows_embedded = r->n_flows;
    if (wl_json_flush(&r->j) && rc == 0) {
        snprintf(err, err_size, "writing the report failed");
        rc = -1;
    }
    for (size_t i = 0; i < r->n_tracks; i++)
        free(r->tracks[i].name);
    for (size_t i = 0; i < r->n_names; i++)
        free(r->names[i]);
    free(r->tracks);
    free(r->names);
    free(r->hash);
    free(r->fsrc);
    free(r->fdst);
    free(r->fill);
    free(r);
    return rc;
}
