/* NVML sample windows -> kernels (see device_samples.h). Kernels of a window arrive in start
 * order, so the busy time is a running union of clipped intervals. */
#include "analysis/device_samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wl_sample_attr_name(wl_sample_attr_kind k)
{
    return k == WL_SAMPLE_EXACT ? "exact" : k == WL_SAMPLE_SHARED ? "shared (upper bound)" : "idle";
}

typedef struct win {
    wl_sample_attribution *a;
    uint64_t start, end, covered_to, best_overlap;
} win;

static int on_kernel(const wl_window_kernel *k, void *arg)
{
    win *w = arg;
    uint64_t s = k->start_ns > w->start ? k->start_ns : w->start;
    uint64_t e = k->end_ns < w->end ? k->end_ns : w->end;
    if (e <= s)
        return 0;
    w->a->kernels++;
    if (e - s > w->best_overlap || w->a->kernel_id < 0) {
        w->best_overlap = e - s;
        w->a->kernel_id = k->id;
        snprintf(w->a->kernel_name, sizeof w->a->kernel_name, "%s", k->short_name);
    }
    if (s < w->covered_to)
        s = w->covered_to;
    if (e > s) {
        w->a->busy_ns += e - s;
        w->covered_to = e;
    }
    return 0;
}

int wl_sample_attribute(wl_session *s, const wl_device_sample_row *r, wl_sample_attribution *out)
{
    memset(out, 0, sizeof *out);
    out->sample = *r;
    out->kernel_id = -1;
    win w = {out, r->window_start_ns, r->ts_ns, r->window_start_ns, 0};
    /* an empty window (the first sample at the instant its device was matched) covers its instant */
    if (w.end <= w.start)
        w.end = w.start + 1;
    if (wl_session_kernels_in_window(s, r->pid, r->device_id, w.start, w.end, on_kernel, &w) < 0)
        return -1;
    out->kind = out->kernels == 0 ? WL_SAMPLE_IDLE : out->kernels == 1 ? WL_SAMPLE_EXACT : WL_SAMPLE_SHARED;
    return 0;
}

typedef struct walk {
    wl_session *s;
    int (*fn)(const wl_sample_attribution *, void *);
    void *arg;
    int failed;
} walk;

static int on_sample(const wl_device_sample_row *r, void *arg)
{
    walk *w = arg;
    wl_sample_attribution a;
    if (wl_sample_attribute(w->s, r, &a) != 0) {
        w->failed = 1;
        return 1;
    }
    return w->fn(&a, w->arg);
}

int wl_device_samples_attribute(wl_session *s, int (*fn)(const wl_sample_attribution *, void *), void *arg)
{
    walk w = {s, fn, arg, 0};
    int n = wl_session_each_device_sample(s, on_sample, &w);
    return w.failed ? -1 : n;
}

int wl_kernel_device_samples(wl_session *s, int64_t kernel_id, int (*fn)(const wl_sample_attribution *, void *),
                             void *arg)
{
    uint32_t pid, dev;
    uint64_t start, end;
    if (wl_session_kernel_interval(s, kernel_id, &pid, &dev, &start, &end) != 0)
        return -1;
    walk w = {s, fn, arg, 0};
    int n = wl_session_device_samples_between(s, pid, dev, start, end > start ? end : start + 1, on_sample, &w);
    return w.failed ? -1 : n;
}

/* ---- summaries -------------------------------------------------------------------------------- */

typedef struct acc {
    wl_device_sample_summary *v;
    size_t n, cap;
    double util_sum, mem_sum, power_sum;
    uint64_t util_n, power_n;
    int64_t energy_first, energy_last;
    int failed;
} acc;

static void finish_device(acc *a)
{
    if (!a->n)
        return;
    wl_device_sample_summary *d = &a->v[a->n - 1];
    d->gpu_util_mean = a->util_n ? a->util_sum / (double)a->util_n : -1;
    d->mem_util_mean = a->util_n ? a->mem_sum / (double)a->util_n : -1;
    d->power_mean_w = a->power_n ? a->power_sum / (double)a->power_n / 1000.0 : -1;
    d->energy_j = a->energy_first >= 0 && a->energy_last >= a->energy_first
                      ? (double)(a->energy_last - a->energy_first) / 1000.0
                      : -1;
}

static void max_i(int64_t *m, int64_t v)
{
    if (v >= 0 && v > *m)
        *m = v;
}

static int on_summary_sample(const wl_sample_attribution *s, void *arg)
{
    acc *a = arg;
    const wl_device_sample_row *r = &s->sample;
    wl_device_sample_summary *d = a->n ? &a->v[a->n - 1] : NULL;
    if (!d || d->pid != r->pid || d->device_id != r->device_id) {
        finish_device(a);
        if (a->n == a->cap) {
            size_t cap = a->cap ? a->cap * 2 : 8;
            wl_device_sample_summary *v = realloc(a->v, cap * sizeof *v);
            if (!v) {
                a->failed = 1;
                return 1;
            }
            a->v = v, a->cap = cap;
        }
        d = &a->v[a->n++];
        memset(d, 0, sizeof *d);
        d->pid = r->pid, d->device_id = r->device_id;
        d->gpu_util_max = d->sm_clock_max = d->mem_clock_max = d->temperature_max = d->memory_used_max = -1;
        d->sm_clock_min = -1;
        d->power_max_w = -1;
        a->util_sum = a->mem_sum = a->power_sum = 0;
        a->util_n = a->power_n = 0;
        a->energy_first = a->energy_last = -1;
    }
    d->samples++;
    d->exact += s->kind == WL_SAMPLE_EXACT;
    d->shared += s->kind == WL_SAMPLE_SHARED;
    d->idle += s->kind == WL_SAMPLE_IDLE;
    if (r->gpu_util_pct >= 0) {
        a->util_sum += (double)r->gpu_util_pct, a->mem_sum += (double)(r->mem_util_pct >= 0 ? r->mem_util_pct : 0);
        a->util_n++;
    }
    max_i(&d->gpu_util_max, r->gpu_util_pct);
    max_i(&d->sm_clock_max, r->sm_clock_mhz);
    if (r->sm_clock_mhz >= 0 && (d->sm_clock_min < 0 || r->sm_clock_mhz < d->sm_clock_min))
        d->sm_clock_min = r->sm_clock_mhz;
    max_i(&d->mem_clock_max, r->mem_clock_mhz);
    max_i(&d->temperature_max, r->temperature_c);
    max_i(&d->memory_used_max, r->memory_used_bytes);
    if (r->power_mw >= 0) {
        a->power_sum += (double)r->power_mw, a->power_n++;
        if ((double)r->power_mw / 1000.0 > d->power_max_w)
            d->power_max_w = (double)r->power_mw / 1000.0;
    }
    if (r->energy_mj >= 0) {
        if (a->energy_first < 0)
            a->energy_first = r->energy_mj;
        a->energy_last = r->energy_mj;
    }
    return 0;
}

int wl_device_sample_summaries(wl_session *s, wl_device_sample_summary **out)
{
    acc a;
    memset(&a, 0, sizeof a);
    *out = NULL;
    int n = wl_device_samples_attribute(s, on_summary_sample, &a);
    if (n < 0 || a.failed) {
        free(a.v);
        return -1;
    }
    finish_device(&a);
    *out = a.v;
    return (int)a.n;
}
