/* NVML sample windows -> kernels (see device_samples.h; the overlap rule is window_overlap.c). */
#include "analysis/device_samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on_kernel(const wl_window_kernel *k, void *arg)
{
    wl_sample_attribution *a = arg;
    wl_window_overlap *w = &a->overlap;
    if (wl_window_overlap_add(w, k->id, k->start_ns, k->end_ns) && w->kernel_id == k->id)
        snprintf(a->kernel_name, sizeof a->kernel_name, "%s", k->short_name);
    return 0;
}

int wl_sample_attribute(wl_session *s, const wl_device_sample_row *r, wl_sample_attribution *out)
{
    memset(out, 0, sizeof *out);
    out->sample = *r;
    /* an empty window (the first sample at the instant its device was matched) covers its instant */
    wl_window_overlap_begin(&out->overlap, r->window_start_ns, r->ts_ns);
    if (wl_session_kernels_in_window(s, r->pid, r->device_id, out->overlap.start, out->overlap.end, on_kernel, out) < 0)
        return -1;
    out->kind = wl_window_overlap_kind(&out->overlap);
    out->kernels = out->overlap.kernels;
    out->kernel_id = out->overlap.kernel_id;
    out->busy_ns = out->overlap.busy_ns;
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
