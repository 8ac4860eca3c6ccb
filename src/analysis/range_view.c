/* User ranges with their kernels and metrics (see range_view.h). */
#include "analysis/range_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct range_key {
    uint8_t kind;
    uint32_t pid;
    int64_t id;
    uint32_t idx;
} range_key;

static int cmp_range_key(const void *pa, const void *pb)
{
    const range_key *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int index_ranges(wl_range_view *v)
{
    size_t n = v->r.n;
    v->by_key = malloc((n ? n : 1) * sizeof *v->by_key);
    v->by_name = malloc((n ? n : 1) * sizeof *v->by_name);
    v->name_first = calloc(v->r.n_names + 1, sizeof *v->name_first);
    range_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!v->by_key || !v->by_name || !v->name_first || !k) {
        free(k);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        k[i] = (range_key){v->r.ranges[i].kind, v->r.ranges[i].pid, v->r.ranges[i].id, (uint32_t)i};
    if (n > 1)
        qsort(k, n, sizeof *k, cmp_range_key);
    for (size_t i = 0; i < n; i++)
        v->by_key[i] = k[i].idx;
    free(k);
    /* the store returns ranges grouped by name already; count them per name all the same */
    for (size_t i = 0; i < n; i++)
        v->name_first[v->r.ranges[i].name_idx + 1]++;
    for (size_t g = 0; g < v->r.n_names; g++)
        v->name_first[g + 1] += v->name_first[g];
    size_t *fill = malloc((v->r.n_names ? v->r.n_names : 1) * sizeof *fill);
    if (!fill)
        return -1;
    memcpy(fill, v->name_first, v->r.n_names * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        v->by_name[fill[v->r.ranges[i].name_idx]++] = (uint32_t)i;
    free(fill);
    return 0;
}

/* Each launch's row in the metric table: both are in kernel id order. */
static int map_metrics(wl_range_view *v)
{
    v->metric_row = malloc((v->n_launches ? v->n_launches : 1) * sizeof *v->metric_row);
    if (!v->metric_row)
        return -1;
    size_t j = 0;
    for (size_t i = 0; i < v->n_launches; i++) {
        while (j < v->metrics.count && v->metrics.kernel_ids[j] < v->launches[i].kernel_id)
            j++;
        v->metric_row[i] = j < v->metrics.count && v->metrics.kernel_ids[j] == v->launches[i].kernel_id ? (long)j : -1;
    }
    for (int m = 0; m < v->metrics.n; m++)
        v->metric_names[m] = v->metrics.names[m];
    wl_metric_acc_init(&v->blank, v->metric_names, v->metrics.n);
    return 0;
}

int wl_range_view_open(wl_session *s, int only_measured, wl_range_view *v, char *err, size_t err_size)
{
    memset(v, 0, sizeof *v);
    const char *what = NULL;
    long nl = -1;
    if (wl_session_user_ranges(s, &v->r) != 0)
        what = "cannot read the NVTX ranges and scopes";
    else if ((nl = wl_session_kernel_launches(s, only_measured, &v->launches)) < 0)
        what = "cannot read the kernels";
    else if (wl_session_kernel_metrics(s, &v->metrics) != 0)
        what = "cannot read the hardware metrics";
    if (!what) {
        v->n_launches = (size_t)nl;
        v->stamp = calloc(v->n_launches ? v->n_launches : 1, sizeof *v->stamp);
        if (!v->stamp || index_ranges(v) || map_metrics(v) ||
            wl_range_attribute(v->r.ranges, v->r.n, v->launches, v->n_launches, &v->members))
            what = "out of memory attributing kernels to ranges";
    }
    if (!what)
        return 0;
    snprintf(err, err_size, "%s", what);
    wl_range_view_close(v);
    return -1;
}

void wl_range_view_close(wl_range_view *v)
{
    wl_user_ranges_free(&v->r);
    wl_kernel_metrics_free(&v->metrics);
    wl_range_members_free(&v->members);
    free(v->launches);
    free(v->metric_row);
    free(v->name_first);
    free(v->by_name);
    free(v->by_key);
    free(v->stamp);
    memset(v, 0, sizeof *v);
}

long wl_range_view_find(const wl_range_view *v, wl_range_kind kind, uint32_t pid, int64_t id)
{
    size_t lo = 0, hi = v->r.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const wl_user_range *r = &v->r.ranges[v->by_key[mid]];
        int c = r->kind != kind ? (r->kind < kind ? -1 : 1)
                : r->pid != pid ? (r->pid < pid ? -1 : 1)
                : (r->id > id) - (r->id < id);
        if (c == 0)
            return (long)v->by_key[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static void add_duration(wl_range_totals *t, const wl_user_range *r)
{
    t->ranges++;
    if (r->open) {
        t->open++;
        return;
    }
    uint64_t d = r->end_ns - r->start_ns;
    if (t->ranges - t->open == 1 || d < t->min_ns)
        t->min_ns = d;
    if (d > t->max_ns)
        t->max_ns = d;
    t->total_ns += d;
}

/* Adds the range's kernels not yet counted in this generation. */
static void add_kernels(wl_range_view *v, size_t range, wl_range_totals *t, wl_metric_acc *acc)
{
    for (size_t i = v->members.first[range]; i < v->members.first[range + 1]; i++) {
        uint32_t k = v->members.kernel[i];
        if (v->stamp[k] == v->gen)
            continue;
        v->stamp[k] = v->gen;
        const wl_kernel_launch *l = &v->launches[k];
        t->kernels++;
        if (l->has_timestamps) {
            t->timed_kernels++;
            t->gpu_ns += l->gpu_ns;
        }
        if (v->metric_row[k] >= 0) {
            t->measured++;
            if (acc)
                wl_metric_acc_add(acc, v->metrics.values + (size_t)v->metric_row[k] * (size_t)v->metrics.n);
        }
    }
}

static void begin(wl_range_view *v, wl_range_totals *t, wl_metric_acc *acc)
{
    memset(t, 0, sizeof *t);
    if (acc)
        *acc = v->blank; /* a copy, not an init: ranges are many and the catalog look-ups add up */
    if (++v->gen == 0) { /* wrapped: clear the stamps so no kernel looks counted */
        memset(v->stamp, 0, (v->n_launches ? v->n_launches : 1) * sizeof *v->stamp);
        v->gen = 1;
    }
}

static void finish(wl_range_totals *t)
{
    uint64_t closed = t->ranges - t->open;
    t->mean_ns = closed ? (double)t->total_ns / (double)closed : 0.0;
}

void wl_range_view_instance(wl_range_view *v, size_t range, wl_range_totals *t, wl_metric_acc *acc)
{
    begin(v, t, acc);
    add_duration(t, &v->r.ranges[range]);
    add_kernels(v, range, t, acc);
    finish(t);
}

void wl_range_view_name(wl_range_view *v, size_t name_idx, wl_range_totals *t, wl_metric_acc *acc)
{
    begin(v, t, acc);
    for (size_t i = v->name_first[name_idx]; i < v->name_first[name_idx + 1]; i++) {
        add_duration(t, &v->r.ranges[v->by_name[i]]);
        add_kernels(v, v->by_name[i], t, acc);
    }
    finish(t);
}
