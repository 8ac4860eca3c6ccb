/* Hardware metrics as slice args (see timeline_internal.h). Arg names are "metrics." + the CUPTI
 * metric name, kept here for the whole walk so the Perfetto writer can intern them by address;
 * the derived values (DRAM bytes/s, FLOPs) come from the same summary as `warplens kernels`.
 * NVTX ranges and scopes are combined from summed counters over the kernels inside them
 * (analysis/range_view.h), computed when the slice is written. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/range_view.h"
#include "export/timeline_internal.h"

typedef struct launch_row {
    int64_t api_id, kernel_id;
    long row;                   /* in the metric table */
} launch_row;

struct tl_metrics {
    wl_range_view v;            /* measured kernels only */
    char names[WL_METRICS_MAX][WL_METRIC_NAME_MAX + 8];
    wl_metric_acc acc;
    launch_row *launches;       /* measured kernels without timestamps, by launch call id */
    size_t n_launches;
};

/* The summary fields that are not themselves a recorded metric. */
static const struct {
    int field;
    const char *arg;
} DERIVED[] = {{4, "metrics.dram_bytes_per_s"}, {8, "metrics.fp32_flop"}, {9, "metrics.fp16_flop"},
               {10, "metrics.fp64_flop"}};

static int cmp_launch(const void *pa, const void *pb)
{
    const launch_row *a = pa, *b = pb;
    return (a->api_id > b->api_id) - (a->api_id < b->api_id);
}

/* Launch calls whose one measured kernel drew no GPU slice; a call with several is ambiguous. */
static int index_launches(tl_metrics *m)
{
    const wl_range_view *v = &m->v;
    m->launches = malloc((v->n_launches ? v->n_launches : 1) * sizeof *m->launches);
    if (!m->launches)
        return -1;
    for (size_t i = 0; i < v->n_launches; i++)
        if (!v->launches[i].has_timestamps && v->launches[i].api_id >= 0 && v->metric_row[i] >= 0)
            m->launches[m->n_launches++] = (launch_row){v->launches[i].api_id, v->launches[i].kernel_id,
                                                        v->metric_row[i]};
    if (m->n_launches > 1)
        qsort(m->launches, m->n_launches, sizeof *m->launches, cmp_launch);
    size_t w = 0;
    for (size_t i = 0; i < m->n_launches;) {
        size_t j = i;
        while (j < m->n_launches && m->launches[j].api_id == m->launches[i].api_id)
            j++;
        if (j - i == 1)
            m->launches[w++] = m->launches[i];
        i = j;
    }
    m->n_launches = w;
    return 0;
}

tl_metrics *tl_metrics_open(wl_session *s, int *failed, char *err, size_t err_size)
{
    *failed = 0;
    if (!wl_session_has_metrics(s)) /* one index probe: nothing else is read without metrics */
        return NULL;
    tl_metrics *m = calloc(1, sizeof *m);
    int rc = m ? wl_range_view_open(s, 1, &m->v, err, err_size) : -1;
    if (rc == 0 && index_launches(m))
        rc = -1, snprintf(err, err_size, "out of memory reading the hardware metrics");
    if (!m)
        snprintf(err, err_size, "out of memory reading the hardware metrics");
    if (rc) {
        *failed = 1;
        tl_metrics_close(m);
        return NULL;
    }
    for (int i = 0; i < m->v.metrics.n; i++)
        snprintf(m->names[i], sizeof m->names[i], "metrics.%s", m->v.metrics.names[i]);
    return m;
}

void tl_metrics_close(tl_metrics *m)
{
    if (!m)
        return;
    wl_range_view_close(&m->v);
    free(m->launches);
    free(m);
}

/* counters are exact integers in the billions: JSON writes them with every digit */
static wl_pf_arg arg_d(const char *n, double v) { return (wl_pf_arg){.name = n, .kind = WL_PF_ARG_DOUBLE_EXACT, .d = v}; }
static wl_pf_arg arg_u(const char *n, uint64_t v) { return (wl_pf_arg){.name = n, .kind = WL_PF_ARG_UINT, .u = v}; }

static size_t derived_args(const wl_metric_acc *a, wl_pf_arg *args)
{
    wl_metric_summary s;
    double f[WL_METRIC_SUMMARY_FIELDS];
    wl_metric_acc_summary(a, &s);
    wl_metric_summary_values(&s, f);
    size_t n = 0;
    for (size_t i = 0; i < sizeof DERIVED / sizeof DERIVED[0]; i++)
        if (!isnan(f[DERIVED[i].field]))
            args[n++] = arg_d(DERIVED[i].arg, f[DERIVED[i].field]);
    return n;
}

/* One kernel's own values (a single kernel's ratio needs no combining), then the derived ones. */
static size_t row_args(tl_metrics *m, long row, wl_pf_arg *args)
{
    const double *v = m->v.metrics.values + (size_t)row * (size_t)m->v.metrics.n;
    m->acc = m->v.blank;
    wl_metric_acc_add(&m->acc, v);
    size_t n = derived_args(&m->acc, args);
    for (int i = 0; i < m->v.metrics.n; i++)
        if (!isnan(v[i]))
            args[n++] = arg_d(m->names[i], v[i]);
    return n;
}

size_t tl_metrics_kernel(tl_metrics *m, int64_t kernel_id, wl_pf_arg *args)
{
    const wl_kernel_metrics *km = &m->v.metrics;
    const double *v = wl_kernel_metrics_find(km, kernel_id);
    return v ? row_args(m, (long)((v - km->values) / km->n), args) : 0;
}

size_t tl_metrics_launch(tl_metrics *m, int64_t api_id, wl_pf_arg *args)
{
    size_t lo = 0, hi = m->n_launches;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->launches[mid].api_id < api_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == m->n_launches || m->launches[lo].api_id != api_id)
        return 0;
    args[0] = arg_u("metrics.kernel_id", (uint64_t)m->launches[lo].kernel_id);
    return 1 + row_args(m, m->launches[lo].row, args + 1);
}

size_t tl_metrics_range(tl_metrics *m, wl_host_kind kind, uint32_t pid, int64_t id, wl_pf_arg *args)
{
    long r = wl_range_view_find(&m->v, kind == WL_HOST_NVTX ? WL_RANGE_NVTX : WL_RANGE_SCOPE, pid, id);
    if (r < 0)
        return 0;
    wl_range_totals t;
    wl_range_view_instance(&m->v, (size_t)r, &t, &m->acc);
    if (!t.measured)
        return 0;
    args[0] = arg_u("metrics.kernels", t.measured);
    size_t n = 1 + derived_args(&m->acc, args + 1);
    for (int i = 0; i < m->acc.n; i++) {
        double v = wl_metric_acc_value(&m->acc, i);
        if (!isnan(v))
            args[n++] = arg_d(m->names[i], v);
    }
    return n;
}
