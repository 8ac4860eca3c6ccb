/* PM windows -> kernels (see pm_samples.h): a sweep per device over two cursors, windows in time
 * order and the GPU's kernels in start order. `act` holds the kernels that started before the
 * current window's end and have not ended before its start, in start order. */
#include "analysis/pm_samples.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sweep {
    const wl_pm_walk *w;
    uint64_t additive;                 /* bit i: metric i of this device adds up over time */
    wl_pm_kernel_values *act;
    uint64_t *overlap;                 /* per active kernel: its time in the current window */
    size_t n, cap;
    int stopped;
} sweep;

static int push_active(sweep *sw, const wl_window_kernel *k, uint32_t pid, uint32_t dev)
{
    if (sw->n == sw->cap) {
        size_t cap = sw->cap ? sw->cap * 2 : 16;
        wl_pm_kernel_values *a = realloc(sw->act, cap * sizeof *a);
        if (!a)
            return -1;
        sw->act = a;
        uint64_t *o = realloc(sw->overlap, cap * sizeof *o);
        if (!o)
            return -1;
        sw->overlap = o;
        sw->cap = cap;
    }
    wl_pm_kernel_values *v = &sw->act[sw->n++];
    memset(v, 0, sizeof *v);
    v->kernel_id = k->id;
    v->pid = k->pid;
    v->device_id = k->device_id;
    v->sample_pid = pid;
    v->sample_device = dev;
    v->start_ns = k->start_ns;
    v->end_ns = k->end_ns;
    snprintf(v->name, sizeof v->name, "%s", k->short_name ? k->short_name : "");
    return 0;
}

/* Hands a kernel the sweep has passed to the caller (levels become averages). */
static void emit(sweep *sw, wl_pm_kernel_values *v)
{
    if (!v->windows || sw->stopped || !sw->w->kernel)
        return;
    for (int m = 0; m < WL_PM_SAMPLE_METRICS; m++)
        if ((v->valid & (1ull << m)) && !(sw->additive & (1ull << m)) && v->weight_ns[m] > 0)
            v->values[m] /= v->weight_ns[m];
    v->kind = v->shared_windows ? WL_SAMPLE_SHARED : WL_SAMPLE_EXACT;
    if (sw->w->kernel(v, sw->w->arg))
        sw->stopped = 1;
}

/* Emits and drops the active kernels that ended at or before t (all when t is UINT64_MAX). */
static void retire(sweep *sw, uint64_t t)
{
    size_t keep = 0;
    for (size_t i = 0; i < sw->n; i++) {
        if (sw->act[i].end_ns <= t || t == UINT64_MAX)
            emit(sw, &sw->act[i]);
        else if (keep != i)
            sw->act[keep++] = sw->act[i];
        else
            keep++;
    }
    sw->n = keep;
}

static void window(sweep *sw, const wl_pm_sample_row *r)
{
    wl_window_overlap ov;
    wl_window_overlap_begin(&ov, r->start_ns, r->end_ns);
    const char *name = "";
    for (size_t i = 0; i < sw->n; i++) {
        sw->overlap[i] = wl_window_overlap_add(&ov, sw->act[i].kernel_id, sw->act[i].start_ns, sw->act[i].end_ns);
        if (sw->overlap[i] && ov.kernel_id == sw->act[i].kernel_id)
            name = sw->act[i].name;
    }
    wl_sample_attr_kind kind = wl_window_overlap_kind(&ov);
    if (sw->w->window && !sw->stopped) {
        wl_pm_attribution a = {r, kind, ov.kernels, ov.busy_ns, ov.kernel_id, name};
        if (sw->w->window(&a, sw->w->arg))
            sw->stopped = 1;
    }
    for (size_t i = 0; i < sw->n; i++) {
        uint64_t o = sw->overlap[i];
        if (!o)
            continue;
        wl_pm_kernel_values *v = &sw->act[i];
        v->windows++;
        if (kind == WL_SAMPLE_EXACT)
            v->exact_windows++;
        else
            v->shared_windows++;
        for (int m = 0; m < WL_PM_SAMPLE_METRICS; m++) {
            uint64_t bit = 1ull << m;
            if (!(r->valid & bit))
                continue;
            v->valid |= bit;
            if (sw->additive & bit) {
                v->values[m] += r->values[m];
            } else {
                v->values[m] += r->values[m] * (double)o;
                v->weight_ns[m] += (double)o;
            }
        }
    }
}

static int sweep_device(wl_session *s, uint32_t pid, uint32_t dev, uint64_t additive, const wl_pm_walk *w,
                        uint64_t *visited)
{
    uint64_t to = w->to_ns ? w->to_ns : (uint64_t)INT64_MAX;
    wl_pm_cursor *pc = wl_pm_cursor_open(s, pid, dev, w->from_ns, to);
    if (!pc)
        return -1;
    wl_pm_sample_row row;
    int r = wl_pm_cursor_next(pc, &row);
    if (r <= 0) {
        wl_pm_cursor_close(pc);
        return r;
    }
    wl_gpu_kernel_cursor *kc = wl_gpu_kernels_open(s, pid, dev, row.start_ns);
    if (!kc) {
        wl_pm_cursor_close(pc);
        return -1;
    }
    sweep sw = {w, additive, NULL, NULL, 0, 0, 0};
    wl_window_kernel next;
    char next_name[256];
    int have_next = 0, kernels_done = 0, rc = 0;
    do {
        uint64_t we = row.end_ns > row.start_ns ? row.end_ns : row.start_ns + 1;
        while (!kernels_done) {
            if (!have_next) {
                int k = wl_gpu_kernels_next(kc, &next);
                if (k < 0) {
                    rc = -1;
                    break;
                }
                if (k == 0) {
                    kernels_done = 1;
                    break;
                }
                snprintf(next_name, sizeof next_name, "%s", next.short_name ? next.short_name : "");
                next.short_name = next_name;
                have_next = 1;
            }
            if (next.start_ns >= we)
                break;
            if (push_active(&sw, &next, pid, dev)) {
                rc = -1;
                break;
            }
            have_next = 0;
        }
        if (rc)
            break;
        retire(&sw, row.start_ns);
        window(&sw, &row);
        (*visited)++;
    } while (!sw.stopped && (r = wl_pm_cursor_next(pc, &row)) == 1);
    if (r < 0)
        rc = -1;
    if (rc == 0)
        retire(&sw, UINT64_MAX);
    free(sw.act);
    free(sw.overlap);
    wl_gpu_kernels_close(kc);
    wl_pm_cursor_close(pc);
    return rc ? rc : sw.stopped ? 1 : 0;
}

int wl_pm_attribute(wl_session *s, const wl_pm_metric_row *metrics, int nmetrics, const wl_pm_walk *walk)
{
    uint64_t visited = 0;
    for (int i = 0; i < nmetrics;) {
        uint32_t pid = metrics[i].pid, dev = metrics[i].device_id;
        uint64_t additive = 0;
        int j = i;
        for (; j < nmetrics && metrics[j].pid == pid && metrics[j].device_id == dev; j++)
            if (metrics[j].additive && metrics[j].metric_index < WL_PM_SAMPLE_METRICS)
                additive |= 1ull << metrics[j].metric_index;
        int rc = sweep_device(s, pid, dev, additive, walk, &visited);
        if (rc < 0)
            return -1;
        if (rc > 0)
            break; /* the caller stopped the walk */
        i = j;
    }
    return visited > INT32_MAX ? INT32_MAX : (int)visited;
}
