/* `warplens concurrency <session> [--series] [--top N]`: per device, how many kernels ran at once,
 * how much of the busy time had more than one, how long the running grids oversubscribed the
 * GPU, the kernel pairs that overlapped the most; --series dumps the fill time series as CSV. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/concurrency.h"
#include "format.h"
#include "kernel_format.h"
#include "store/session_kernels.h"
#include "cli_session.h"
#include "verbs.h"

typedef struct pair_stat {
    uint32_t pid, device_id;
    int64_t a, b; /* name ids, a <= b */
    uint64_t overlap_ns, count;
} pair_stat;

typedef struct dev_stat {
    wl_fill_summary fill;
    uint64_t kernels, overlapped, max_overlaps;
} dev_stat;

typedef struct conc_ctx {
    int series;
    dev_stat *devs;
    int ndevs;
    pair_stat *pairs;
    size_t npairs, cap;
    int oom;
} conc_ctx;

static dev_stat *dev_of(conc_ctx *c, uint32_t pid, uint32_t device_id)
{
    for (int i = 0; i < c->ndevs; i++)
        if (c->devs[i].fill.pid == pid && c->devs[i].fill.device_id == device_id)
            return &c->devs[i];
    dev_stat *p = realloc(c->devs, (size_t)(c->ndevs + 1) * sizeof *p);
    if (!p) {
        c->oom = 1;
        return NULL;
    }
    c->devs = p;
    dev_stat *d = &c->devs[c->ndevs++];
    memset(d, 0, sizeof *d);
    d->fill.pid = pid;
    d->fill.device_id = device_id;
    return d;
}

static void on_point(const wl_fill_point *p, void *arg)
{
    conc_ctx *c = arg;
    if (c->series)
        printf("%u,%u,%" PRIu64 ",%d,%.2f,%.2f,%d\n", p->pid, p->device_id, p->ts_ns, p->running, p->warp_fill_pct,
               p->sm_fill_pct, p->oversubscribed);
    dev_stat *d = dev_of(c, p->pid, p->device_id);
    if (d)
        wl_fill_summary_add(&d->fill, p);
}

static void on_kernel(const wl_conc_kernel *k, uint64_t overlaps, void *arg)
{
    dev_stat *d = dev_of(arg, k->pid, k->device_id);
    if (!d)
        return;
    d->kernels++;
    d->overlapped += overlaps > 0;
    if (overlaps > d->max_overlaps)
        d->max_overlaps = overlaps;
}

static void on_pair(const wl_conc_kernel *x, const wl_conc_kernel *y, uint64_t ns, void *arg)
{
    conc_ctx *c = arg;
    int64_t a = x->name_id < y->name_id ? x->name_id : y->name_id, b = x->name_id ^ y->name_id ^ a;
    /* Distinct name pairs are few next to the kernels: a linear search is enough. */
    for (size_t i = 0; i < c->npairs; i++) {
        pair_stat *p = &c->pairs[i];
        if (p->a == a && p->b == b && p->pid == x->pid && p->device_id == x->device_id) {
            p->overlap_ns += ns;
            p->count++;
            return;
        }
    }
    if (c->npairs == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 32;
        pair_stat *p = realloc(c->pairs, ncap * sizeof *p);
        if (!p) {
            c->oom = 1;
            return;
        }
        c->pairs = p;
        c->cap = ncap;
    }
    c->pairs[c->npairs++] = (pair_stat){x->pid, x->device_id, a, b, ns, 1};
}

static int by_overlap(const void *pa, const void *pb)
{
    const pair_stat *a = pa, *b = pb;
    return a->overlap_ns < b->overlap_ns ? 1 : a->overlap_ns > b->overlap_ns ? -1 : 0;
}

static const char *name_of(wl_session *s, int64_t name_id, size_t width, char *buf, size_t n)
{
    char *dem = NULL, *sh = NULL;
    wl_session_kernel_name(s, name_id, &dem, &sh, NULL);
    kf_shorten(sh && sh[0] ? sh : dem ? kf_display_name(dem) : "?", width, buf, n);
    free(dem);
    free(sh);
    return buf;
}

static void print_device(wl_session *s, const conc_ctx *c, const dev_stat *d, int top)
{
    char a[32], b[32];
    const wl_fill_summary *f = &d->fill;
    wl_device_row row;
    if (wl_session_device(s, f->pid, f->device_id, &row) == 0)
        printf("\ndevice %u of process %u: %s (%d SMs)\n", f->device_id, f->pid, row.name, row.sm_count);
    else
        printf("\ndevice %u of process %u\n", f->device_id, f->pid);
    printf("  %-22s %" PRIu64 ", %" PRIu64 " overlapped a kernel on another stream (at most %" PRIu64 ")\n",
           "kernels", d->kernels, d->overlapped, d->max_overlaps);
    printf("  %-22s %s with at least one kernel running\n", "busy", fmt_ns((double)f->busy_ns, a, sizeof a));
    printf("  %-22s %d kernel%s\n", "max concurrent", f->max_running, f->max_running == 1 ? "" : "s");
    printf("  %-22s %.1f %% of busy time (%s)\n", "more than one kernel",
           f->busy_ns ? 100.0 * (double)f->concurrent_ns / (double)f->busy_ns : 0.0,
           fmt_ns((double)f->concurrent_ns, b, sizeof b));
    printf("  %-22s %s (running grids claim more than the GPU holds)\n", "oversubscribed",
           fmt_ns((double)f->oversubscribed_ns, a, sizeof a));
    printf("  %-22s mean %.1f %% of busy time, peak %.1f %% (theoretical)\n", "warp-slot fill",
           wl_fill_summary_mean_fill(f), f->peak_warp_fill_pct);
    printf("  %-22s peak %.1f %%\n", "capacity claimed", f->peak_sm_fill_pct);
    int shown = 0;
    for (size_t i = 0; i < c->npairs && shown < top; i++) {
        const pair_stat *p = &c->pairs[i];
        if (p->pid != f->pid || p->device_id != f->device_id)
            continue;
        if (!shown++)
            printf("  top overlapping kernel pairs (by time overlapped)\n  %10s %6s  %s\n", "Overlap", "Count",
                   "Kernels");
        char x[48], y[48];
        printf("  %10s %6" PRIu64 "  %s | %s\n", fmt_ns((double)p->overlap_ns, a, sizeof a), p->count,
               name_of(s, p->a, 38, x, sizeof x), name_of(s, p->b, 38, y, sizeof y));
    }
    if (!shown)
        printf("  no kernels overlapped on different streams\n");
}

enum { O_SERIES = 1, O_TOP };

static const cli_opt OPTS[] = {
    {O_SERIES, 0, "series", CLI_ARG_NONE, NULL,
     "the fill time series as CSV, one row per change of a device's state:\n"
     "pid,device_id,ts_ns,running,warp_fill_pct,sm_fill_pct,oversubscribed", NULL, NULL},
    {O_TOP, 0, "top", CLI_ARG_REQUIRED, "N", "kernel pairs to list per device (default 5)", NULL, NULL},
    {0},
};
const cli_cmd CLI_CONCURRENCY = {"concurrency", "<session> [--series] [--top N]", NULL, OPTS,
                                 "Fill uses theoretical occupancy (docs/occupancy.md, \"Concurrency\").\n", NULL, 0,
                                 CLI_POS_SESSION, NULL};

int cmd_concurrency(int argc, char **argv)
{
    const char *path = NULL;
    conc_ctx c = {0};
    long long top = 5;
    cli_parser p;
    cli_init(&p, &CLI_CONCURRENCY, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_SERIES: c.series = 1; break;
        case O_TOP:
            if (kf_parse_count(p.arg, &top) != 0)
                return cli_error(&CLI_CONCURRENCY, "--top needs a positive number, got '%s'", p.arg);
            break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path)
        return cli_error(&CLI_CONCURRENCY, "no session given (usage: warplens concurrency <session> [options])");
    char err[512];
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    if (c.series)
        printf("pid,device_id,ts_ns,running,warp_fill_pct,sm_fill_pct,oversubscribed\n");
    wl_conc_callbacks cb = {on_kernel, on_point, c.series ? NULL : on_pair, &c};
    int64_t n = wl_session_concurrency(s, NULL, &cb, err, sizeof err);
    int rc = 0;
    if (n < 0 || c.oom) {
        cli_read_error(s, "warplens concurrency: %s\n", n < 0 ? err : "out of memory");
        rc = 1;
    } else if (!c.series) {
        printf("Kernel concurrency (theoretical occupancy; %lld timed kernels)\n", (long long)n);
        if (c.npairs)
            qsort(c.pairs, c.npairs, sizeof *c.pairs, by_overlap);
        for (int i = 0; i < c.ndevs; i++)
            print_device(s, &c, &c.devs[i], (int)top);
        if (!c.ndevs)
            printf("(no timed kernels recorded)\n");
    }
    free(c.devs);
    free(c.pairs);
    return cli_session_close(s, rc);
}
