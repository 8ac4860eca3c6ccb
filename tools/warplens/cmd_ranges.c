/* `warplens ranges <session>`: NVTX ranges and warplens scopes with the kernels launched inside
 * them, per name or per range (--instances): count and duration, kernels and their GPU time,
 * and, for sessions recorded with --metrics, the kernels' hardware metrics combined from summed
 * counters (DRAM bandwidth = summed bytes / summed GPU time, never a mean of per-kernel ratios).
 * The attribution rules are in analysis/range_attrib.h and docs/schema.md. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/range_view.h"
#include "format.h"
#include "kernel_format.h"
#include "metrics_print.h"
#include "range_print.h"
#include "store/session_cursors.h"
#include "cli_session.h"
#include "verbs.h"

#define WIDTH 100

typedef struct row {
    size_t idx;                 /* name index, or range index with --instances */
    wl_range_totals t;
    double m[WL_METRIC_SUMMARY_FIELDS]; /* combined metrics, NaN when none measured */
} row;

/* Sort keys besides the metric summary's fields. */
static const char *const KEYS[] = {"total_ns", "count", "mean_ns", "max_ns", "kernels", "gpu_ns", "start_ns", "name"};
enum { K_TOTAL, K_COUNT, K_MEAN, K_MAX, K_KERNELS, K_GPU, K_START, K_NAME, N_KEYS };

typedef struct options {
    int kind, instances, csv, json, reverse;
    int sort;                   /* < N_KEYS: KEYS; else N_KEYS + summary field */
    long long top;
} options;

static int parse_sort(const char *s)
{
    for (int i = 0; i < N_KEYS; i++)
        if (!strcmp(s, KEYS[i]))
            return i;
    for (int i = 0; i < WL_METRIC_SUMMARY_FIELDS; i++)
        if (!strcmp(s, WL_METRIC_SUMMARY_KEYS[i]))
            return N_KEYS + i;
    return -1;
}

enum { O_KIND = 1, O_INSTANCES, O_SORT, O_REVERSE, O_TOP, O_CSV, O_JSON };

static const cli_opt OPTS[] = {
    {O_KIND, 0, "kind", CLI_ARG_REQUIRED, "K", "NVTX ranges (nvtx) or warplens scopes (scope) only", "nvtx scope", NULL},
    {O_INSTANCES, 0, "instances", CLI_ARG_NONE, NULL, "one row per range, in start order, instead of one per name", NULL,
     NULL},
    {O_SORT, 0, "sort", CLI_ARG_REQUIRED, "KEY",
     "total_ns (default per name), count, mean_ns, max_ns, kernels, gpu_ns, start_ns\n"
     "(default per range), name, or a hardware metric: gpu_time_ns, occupancy_pct,\n"
     "dram_bytes_per_s, dram_pct, l1_hit_pct, l2_hit_pct, fp32_flop, fp16_flop,\n"
     "fp64_flop, tensor_pct, ... (numbers: largest first; unknown values last)",
     "total_ns count mean_ns max_ns kernels gpu_ns start_ns name", NULL},
    {O_REVERSE, 0, "reverse", CLI_ARG_NONE, NULL, "the opposite order", NULL, NULL},
    {O_TOP, 0, "top", CLI_ARG_REQUIRED, "N", "the first N rows only", NULL, NULL},
    {O_CSV, 0, "csv", CLI_ARG_NONE, NULL, "every column", NULL, NULL},
    {O_JSON, 0, "json", CLI_ARG_NONE, NULL, "every column, with every recorded metric", NULL, NULL},
    {0},
};
const cli_cmd CLI_RANGES = {
    "ranges", "<session> [--kind nvtx|scope] [--instances] [--sort KEY] [--reverse] [--top N] [--csv|--json]", NULL,
    OPTS,
    "A range counts every kernel launched inside it, nested ranges included: an NVTX range closed on\n"
    "the thread that opened it (push/pop) the launches of that thread in its time, one closed on\n"
    "another thread (start/end) the launches of any thread of the process; a scope the kernels\n"
    "tagged with it or with a scope inside it. A name counts each kernel once. Hardware metrics\n"
    "(`warplens run --metrics`) are combined from summed counters over the measured kernels.\n",
    NULL, 0, CLI_POS_SESSION, NULL};

/* ---- rows ----------------------------------------------------------------------------------- */

static const wl_range_view *g_view; /* for the comparator: qsort has no context argument */
static options g_opt;

static const char *row_name(const wl_range_view *v, const row *r, int instances)
{
    return v->r.names[instances ? v->r.ranges[r->idx].name_idx : r->idx].name;
}

static double key_value(const row *r, int k, int instances)
{
    switch (k) {
    case K_TOTAL: return (double)r->t.total_ns;
    case K_COUNT: return (double)r->t.ranges;
    case K_MEAN: return r->t.ranges > r->t.open ? r->t.mean_ns : NAN;
    case K_MAX: return r->t.ranges > r->t.open ? (double)r->t.max_ns : NAN;
    case K_KERNELS: return (double)r->t.kernels;
    case K_GPU: return (double)r->t.gpu_ns;
    case K_START: return instances ? -(double)g_view->r.ranges[r->idx].start_ns : NAN; /* earliest first */
    }
    return k >= N_KEYS ? r->m[k - N_KEYS] : NAN;
}

static int cmp_rows(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    int res;
    if (g_opt.sort == K_NAME) {
        res = strcmp(row_name(g_view, a, g_opt.instances), row_name(g_view, b, g_opt.instances));
    } else {
        double x = key_value(a, g_opt.sort, g_opt.instances), y = key_value(b, g_opt.sort, g_opt.instances);
        if (isnan(x) || isnan(y))
            return isnan(x) - isnan(y);
        res = x < y ? 1 : x > y ? -1 : 0;
    }
    if (g_opt.reverse)
        res = -res;
    return res ? res : (a->idx > b->idx) - (a->idx < b->idx);
}

/* Rows of the selected kind, with their totals and combined metrics summarised. */
static row *make_rows(wl_range_view *v, const options *o, wl_metric_acc *acc, size_t *count)
{
    size_t n = o->instances ? v->r.n : v->r.n_names, k = 0;
    row *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int kind = o->instances ? v->r.ranges[i].kind : v->r.names[i].kind;
        if (o->kind && kind != o->kind)
            continue;
        row *r = &rows[k++];
        r->idx = i;
        if (o->instances)
            wl_range_view_instance(v, i, &r->t, acc);
        else
            wl_range_view_name(v, i, &r->t, acc);
        wl_metric_summary s;
        wl_metric_acc_summary(acc, &s);
        wl_metric_summary_values(&s, r->m);
    }
    *count = k;
    return rows;
}

/* The accumulator of one row again (rows keep only the summary). */
static void row_acc(wl_range_view *v, const row *r, int instances, wl_metric_acc *acc)
{
    wl_range_totals t;
    if (instances)
        wl_range_view_instance(v, r->idx, &t, acc);
    else
        wl_range_view_name(v, r->idx, &t, acc);
}

/* ---- output --------------------------------------------------------------------------------- */

static void print_table(wl_range_view *v, const row *rows, size_t n, size_t shown, const options *o,
                        uint64_t origin, wl_metric_acc *acc)
{
    char title[160];
    snprintf(title, sizeof title, "%s by %s (kernels launched inside, nested ranges included)",
             o->kind == WL_RANGE_NVTX ? "NVTX ranges" : o->kind == WL_RANGE_SCOPE ? "warplens scopes" : "User ranges",
             o->instances ? "range" : "name");
    print_title(title, WIDTH);
    if (o->instances)
        printf("%-5s %8s %9s %9s %7s %9s  %s\n", "Kind", "Tid", "Start", "Duration", "Kernels", "GPU time", "Name");
    else
        printf("%-5s %7s %9s %9s %9s %7s %9s  %s\n", "Kind", "Count", "Total", "Mean", "Max", "Kernels", "GPU time",
               "Name");
    uint64_t open = 0;
    for (size_t i = 0; i < shown; i++) {
        const row *r = &rows[i];
        char b[4][32], nm[300], lab[300];
        if (o->instances) {
            const wl_user_range *u = &v->r.ranges[r->idx];
            const wl_range_name *nmr = &v->r.names[u->name_idx];
            printf("%-5s %8u %9s %9s %7" PRIu64 " %9s  %s\n", range_kind_name(u->kind), u->tid,
                   fmt_ns((double)(u->start_ns - (u->start_ns > origin ? origin : u->start_ns)), b[0], 32),
                   u->open ? "open" : fmt_ns((double)(u->end_ns - u->start_ns), b[1], 32), r->t.kernels,
                   fmt_ns((double)r->t.gpu_ns, b[2], 32), kf_shorten(range_label(nmr, lab, sizeof lab), 45, nm, 64));
        } else {
            const wl_range_name *nmr = &v->r.names[r->idx];
            int closed = r->t.ranges > r->t.open;
            printf("%-5s %7" PRIu64 " %9s %9s %9s %7" PRIu64 " %9s  %s\n", range_kind_name(nmr->kind), r->t.ranges,
                   fmt_ns((double)r->t.total_ns, b[0], 32), closed ? fmt_ns(r->t.mean_ns, b[1], 32) : "-",
                   closed ? fmt_ns((double)r->t.max_ns, b[2], 32) : "-", r->t.kernels,
                   fmt_ns((double)r->t.gpu_ns, b[3], 32), kf_shorten(range_label(nmr, lab, sizeof lab), 40, nm, 64));
        }
        open += r->t.open;
    }
    if (shown < n)
        printf("... %zu more row%s (--top shows more)\n", n - shown, n - shown == 1 ? "" : "s");
    if (!n)
        printf("(no %s recorded)\n", o->kind == WL_RANGE_NVTX ? "NVTX ranges" : o->kind == WL_RANGE_SCOPE ? "scopes"
                                                                                                       : "ranges");
    if (open)
        printf("(%" PRIu64 " range%s never closed: counted to the end of the session, left out of the durations)\n",
               open, open == 1 ? "" : "s");
    int metric_rows = 0;
    for (size_t i = 0; i < shown; i++)
        metric_rows += rows[i].t.measured > 0;
    if (!metric_rows)
        return;
    printf("\nHardware metrics per %s (summed counters of the measured kernels inside; %d replay pass%s)\n",
           o->instances ? "range" : "range name", v->metrics.max_passes, v->metrics.max_passes == 1 ? "" : "es");
    print_metric_columns("Kernels");
    for (size_t i = 0; i < shown; i++) {
        if (!rows[i].t.measured)
            continue;
        const wl_user_range *u = o->instances ? &v->r.ranges[rows[i].idx] : NULL;
        const wl_range_name *nmr = &v->r.names[u ? u->name_idx : rows[i].idx];
        char label[360], nm[300];
        if (u)
            snprintf(label, sizeof label, "%-5s #%" PRId64 " %s", range_kind_name(u->kind), u->id,
                     range_label(nmr, nm, sizeof nm));
        else
            snprintf(label, sizeof label, "%-5s %s", range_kind_name(nmr->kind), range_label(nmr, nm, sizeof nm));
        row_acc(v, &rows[i], o->instances, acc);
        print_metric_row(acc, label);
    }
}

static void csv_num(double v, const char *fmt)
{
    if (!isnan(v) && !isinf(v))
        printf(fmt, v);
}

static void print_csv(wl_range_view *v, const row *rows, size_t shown, const options *o)
{
    printf(o->instances ? "kind,domain,name,id,pid,tid,end_tid,thread_bound,start_ns,end_ns,open"
                        : "kind,domain,name,count,open,total_ns,mean_ns,min_ns,max_ns");
    printf(",kernels,timed_kernels,kernel_gpu_ns,measured_kernels");
    for (int f = 0; f < WL_METRIC_SUMMARY_FIELDS; f++)
        printf(",%s", WL_METRIC_SUMMARY_KEYS[f]);
    putchar('\n');
    for (size_t i = 0; i < shown; i++) {
        const row *r = &rows[i];
        const wl_user_range *u = o->instances ? &v->r.ranges[r->idx] : NULL;
        const wl_range_name *nm = &v->r.names[u ? u->name_idx : r->idx];
        printf("%s,", range_kind_name(nm->kind));
        kf_csv_str(stdout, nm->domain);
        putchar(',');
        kf_csv_str(stdout, nm->name);
        if (u)
            printf(",%" PRId64 ",%u,%u,%u,%d,%" PRIu64 ",%" PRIu64 ",%d", u->id, u->pid, u->tid, u->end_tid,
                   wl_range_is_thread_bound(u), u->start_ns, u->end_ns, u->open);
        else
            printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64, r->t.ranges, r->t.open,
                   r->t.total_ns, r->t.mean_ns, r->t.min_ns, r->t.max_ns);
        printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, r->t.kernels, r->t.timed_kernels, r->t.gpu_ns,
               r->t.measured);
        for (int f = 0; f < WL_METRIC_SUMMARY_FIELDS; f++) {
            putchar(',');
            csv_num(r->m[f], "%.17g");
        }
        putchar('\n');
    }
}

static void print_json(wl_range_view *v, const row *rows, size_t shown, const options *o, wl_metric_acc *acc)
{
    printf("[");
    for (size_t i = 0; i < shown; i++) {
        const row *r = &rows[i];
        const wl_user_range *u = o->instances ? &v->r.ranges[r->idx] : NULL;
        const wl_range_name *nm = &v->r.names[u ? u->name_idx : r->idx];
        printf("%s\n{\"kind\":\"%s\",\"domain\":", i ? "," : "", range_kind_name(nm->kind));
        kf_json_str(stdout, nm->domain);
        printf(",\"name\":");
        kf_json_str(stdout, nm->name);
        if (u) {
            printf(",\"id\":%" PRId64 ",\"pid\":%u,\"tid\":%u,\"end_tid\":%u,\"thread_bound\":%s,\"start_ns\":%" PRIu64
                   ",\"end_ns\":%" PRIu64 ",\"open\":%s",
                   u->id, u->pid, u->tid, u->end_tid, wl_range_is_thread_bound(u) ? "true" : "false", u->start_ns,
                   u->end_ns, u->open ? "true" : "false");
            if (u->kind == WL_RANGE_SCOPE)
                printf(",\"parent_id\":%" PRId64, u->parent_id);
            if (!u->open)
                printf(",\"duration_ns\":%" PRIu64, u->end_ns - u->start_ns);
        } else {
            printf(",\"count\":%" PRIu64 ",\"open\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"mean_ns\":%.1f,\"min_ns\":%" PRIu64
                   ",\"max_ns\":%" PRIu64,
                   r->t.ranges, r->t.open, r->t.total_ns, r->t.mean_ns, r->t.min_ns, r->t.max_ns);
        }
        printf(",\"kernels\":%" PRIu64 ",\"timed_kernels\":%" PRIu64 ",\"kernel_gpu_ns\":%" PRIu64
               ",\"measured_kernels\":%" PRIu64,
               r->t.kernels, r->t.timed_kernels, r->t.gpu_ns, r->t.measured);
        if (r->t.measured) {
            row_acc(v, r, o->instances, acc);
            print_metric_acc_json(stdout, acc, v->metrics.max_passes);
        }
        printf("}");
    }
    printf("\n]\n");
}

/* ---- the verb ------------------------------------------------------------------------------- */

static int parse(int argc, char **argv, options *o, const char **path)
{
    memset(o, 0, sizeof *o);
    o->sort = -1;
    cli_parser p;
    cli_init(&p, &CLI_RANGES, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_CSV: o->csv = 1; break;
        case O_JSON: o->json = 1; break;
        case O_INSTANCES: o->instances = 1; break;
        case O_REVERSE: o->reverse = 1; break;
        case O_KIND:
            o->kind = !strcmp(p.arg, "nvtx") ? WL_RANGE_NVTX : !strcmp(p.arg, "scope") ? WL_RANGE_SCOPE : -1;
            if (o->kind < 0)
                return cli_error(&CLI_RANGES, "--kind is nvtx or scope, not '%s'", p.arg);
            break;
        case O_SORT:
            if ((o->sort = parse_sort(p.arg)) < 0)
                return cli_error(&CLI_RANGES, "unknown sort key '%s' (see --help)", p.arg);
            break;
        case O_TOP:
            if (kf_parse_count(p.arg, &o->top) != 0)
                return cli_error(&CLI_RANGES, "--top needs a positive number, got '%s'", p.arg);
            break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!*path)
        return cli_error(&CLI_RANGES, "no session given (usage: warplens ranges <session> [options])");
    if (o->csv && o->json) {
        fprintf(stderr, "warplens ranges: --csv and --json exclude each other\n");
        return 2;
    }
    if (o->sort == K_START && !o->instances) {
        fprintf(stderr, "warplens ranges: start_ns sorts ranges; add --instances\n");
        return 2;
    }
    if (o->sort < 0)
        o->sort = o->instances ? K_START : K_TOTAL;
    return -1;
}

int cmd_ranges(int argc, char **argv)
{
    options o;
    const char *path = NULL;
    int rc = parse(argc, argv, &o, &path);
    if (rc >= 0)
        return rc;
    char err[512];
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    wl_range_view v;
    wl_metric_acc *acc = malloc(sizeof *acc);
    if (!acc || wl_range_view_open(s, 0, &v, err, sizeof err) != 0) {
        cli_read_error(s, "warplens ranges: %s\n", acc ? err : "out of memory");
        free(acc);
        return cli_session_close(s, 1);
    }
    size_t n = 0;
    row *rows = make_rows(&v, &o, acc, &n);
    if (!rows) {
        fprintf(stderr, "warplens ranges: out of memory\n");
        rc = 1;
    } else {
        g_view = &v;
        g_opt = o;
        if (n > 1)
            qsort(rows, n, sizeof *rows, cmp_rows);
        size_t shown = o.top > 0 && (size_t)o.top < n ? (size_t)o.top : n;
        wl_session_span span;
        wl_session_get_bounds(s, &span);
        if (o.json)
            print_json(&v, rows, shown, &o, acc);
        else if (o.csv)
            print_csv(&v, rows, shown, &o);
        else
            print_table(&v, rows, n, shown, &o, span.origin_ns, acc);
        rc = 0;
    }
    free(rows);
    free(acc);
    wl_range_view_close(&v);
    return cli_session_close(s, rc);
}
