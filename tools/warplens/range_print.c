/* User ranges in the CLI (see range_print.h). */
#include "range_print.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "metrics_print.h"

const char *range_kind_name(int kind) { return kind == WL_RANGE_NVTX ? "nvtx" : "scope"; }

const char *range_label(const wl_range_name *n, char *buf, size_t size)
{
    if (n->domain[0])
        snprintf(buf, size, "%s [%s]", n->name, n->domain);
    else
        snprintf(buf, size, "%s", n->name);
    return buf;
}

typedef struct name_time {
    size_t name;
    double gpu_ns;              /* the measured kernels' GPU time (metric) */
} name_time;

static int by_time(const void *pa, const void *pb)
{
    const name_time *a = pa, *b = pb;
    if (a->gpu_ns != b->gpu_ns)
        return a->gpu_ns < b->gpu_ns ? 1 : -1;
    return (a->name > b->name) - (a->name < b->name);
}

void print_range_metric_table(wl_range_view *v, int kind)
{
    if (!v->metrics.count)
        return;
    wl_metric_acc *acc = malloc(sizeof *acc);
    name_time *rows = malloc((v->r.n_names ? v->r.n_names : 1) * sizeof *rows);
    size_t n = 0;
    for (size_t g = 0; acc && rows && g < v->r.n_names; g++) {
        if (kind && v->r.names[g].kind != kind)
            continue;
        wl_range_totals t;
        wl_range_view_name(v, g, &t, acc);
        if (!t.measured)
            continue;
        double ns = wl_metric_acc_value(acc, wl_metric_acc_index(acc, WL_METRIC_GPU_TIME));
        rows[n++] = (name_time){g, isnan(ns) ? 0.0 : ns};
    }
    if (n) {
        qsort(rows, n, sizeof *rows, by_time);
        printf("\nHardware metrics per %s name (every measured kernel launched inside, nested ranges included;\n"
               "summed counters, %d replay pass%s; `warplens ranges` has every column and each range)\n",
               kind == WL_RANGE_NVTX ? "NVTX range" : kind == WL_RANGE_SCOPE ? "scope" : "range",
               v->metrics.max_passes, v->metrics.max_passes == 1 ? "" : "es");
        print_metric_columns_compact("Kernels");
    }
    for (size_t i = 0; i < n; i++) {
        const wl_range_name *nm = &v->r.names[rows[i].name];
        wl_range_totals t;
        wl_range_view_name(v, rows[i].name, &t, acc);
        char label[300], b[280];
        if (kind)
            range_label(nm, label, sizeof label);
        else
            snprintf(label, sizeof label, "%-5s %s", range_kind_name(nm->kind), range_label(nm, b, sizeof b));
        print_metric_row_compact(acc, label);
    }
    free(rows);
    free(acc);
}
