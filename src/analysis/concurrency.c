/* The concurrency sweep (see concurrency.h).
 *
 * Per device, kernels arrive in start order and wait in a min-heap keyed by end time until a
 * later arrival starts at or after their end. For kernel i:
 *   before(i) = kernels still running when i starts   (the heap's size at i's arrival)
 *   after(i)  = kernels that started while i ran      (arrivals between i's and its removal)
 * and overlaps(i) = before + after, minus the same two counts taken over i's own stream. Each
 * kernel costs one push and one pop: O(n log n) in all, memory bounded by the kernels running
 * at once. The fill series is the running sum of the kernels' fill shares, emitted once per
 * distinct timestamp with the state after every start and end at that time. */
#include "analysis/concurrency.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
    wl_conc_kernel k;
    uint64_t arrival, stream_arrival;   /* indexes among the device's / stream's kernels */
    uint64_t before, stream_before;
    int stream;                         /* index into dev_state.streams */
} entry;

typedef struct stream_state {
    uint32_t id;
    uint64_t arrivals;
    uint64_t running;
} stream_state;

typedef struct dev_state {
    uint32_t pid, device_id;
    entry *heap;
    size_t n, cap;
    stream_state *streams;
    int nstreams;
    uint64_t arrivals;
    uint64_t last_start, last_end;      /* order check */
    /* the fill state, and the point pending for the current timestamp */
    double warp_fill, sm_fill;
    int have_pending;
    uint64_t pending_ts;
    int have_emitted;
    wl_fill_point emitted;
} dev_state;

struct wl_conc_sweep {
    wl_conc_callbacks cb;
    dev_state *devs;
    int ndevs;
};

wl_conc_sweep *wl_conc_sweep_new(const wl_conc_callbacks *cb)
{
    wl_conc_sweep *sw = calloc(1, sizeof *sw);
    if (sw && cb)
        sw->cb = *cb;
    return sw;
}

static dev_state *device(wl_conc_sweep *sw, uint32_t pid, uint32_t device_id)
{
    for (int i = 0; i < sw->ndevs; i++)
        if (sw->devs[i].pid == pid && sw->devs[i].device_id == device_id)
            return &sw->devs[i];
    dev_state *p = realloc(sw->devs, (size_t)(sw->ndevs + 1) * sizeof *p);
    if (!p)
        return NULL;
    sw->devs = p;
    dev_state *d = &sw->devs[sw->ndevs++];
    memset(d, 0, sizeof *d);
    d->pid = pid;
    d->device_id = device_id;
    return d;
}

static int stream_index(dev_state *d, uint32_t id)
{
    for (int i = 0; i < d->nstreams; i++)
        if (d->streams[i].id == id)
            return i;
    stream_state *p = realloc(d->streams, (size_t)(d->nstreams + 1) * sizeof *p);
    if (!p)
        return -1;
    d->streams = p;
    d->streams[d->nstreams] = (stream_state){.id = id};
    return d->nstreams++;
}

/* ---- min-heap by end time ------------------------------------------------------------------- */

static void heap_swap(entry *a, entry *b)
{
    entry t = *a;
    *a = *b;
    *b = t;
}

static int heap_push(dev_state *d, const entry *e)
{
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 16;
        entry *p = realloc(d->heap, ncap * sizeof *p);
        if (!p)
            return -1;
        d->heap = p;
        d->cap = ncap;
    }
    size_t i = d->n++;
    d->heap[i] = *e;
    while (i > 0 && d->heap[(i - 1) / 2].k.end_ns > d->heap[i].k.end_ns) {
        heap_swap(&d->heap[(i - 1) / 2], &d->heap[i]);
        i = (i - 1) / 2;
    }
    return 0;
}

static entry heap_pop(dev_state *d)
{
    entry top = d->heap[0];
    d->heap[0] = d->heap[--d->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < d->n && d->heap[l].k.end_ns < d->heap[m].k.end_ns)
            m = l;
        if (r < d->n && d->heap[r].k.end_ns < d->heap[m].k.end_ns)
            m = r;
        if (m == i)
            break;
        heap_swap(&d->heap[i], &d->heap[m]);
        i = m;
    }
    return top;
}

/* ---- fill series ---------------------------------------------------------------------------- */

static void emit_pending(wl_conc_sweep *sw, dev_state *d)
{
    if (!d->have_pending)
        return;
    d->have_pending = 0;
    wl_fill_point p = {.pid = d->pid, .device_id = d->device_id, .ts_ns = d->pending_ts, .running = (int)d->n};
    if (d->n == 0)
        d->warp_fill = d->sm_fill = 0; /* drop rounding left over from the sums */
    p.warp_fill_pct = d->warp_fill * 100.0;
    p.sm_fill_pct = d->sm_fill * 100.0;
    p.oversubscribed = p.sm_fill_pct > 100.0 + 1e-9;
    /* An end and a start of equal shares at one timestamp leave the state unchanged. */
    if (d->have_emitted && d->emitted.running == p.running && d->emitted.warp_fill_pct == p.warp_fill_pct &&
        d->emitted.sm_fill_pct == p.sm_fill_pct)
        return;
    d->emitted = p;
    d->have_emitted = 1;
    if (sw->cb.fill_point)
        sw->cb.fill_point(&p, sw->cb.arg);
}

/* Called before the state changes at time ts: the point of an earlier timestamp is complete. */
static void at_time(wl_conc_sweep *sw, dev_state *d, uint64_t ts)
{
    if (d->have_pending && ts != d->pending_ts)
        emit_pending(sw, d);
    d->have_pending = 1;
    d->pending_ts = ts;
}

/* Removes the kernel that ends first and reports its count. */
static void retire(wl_conc_sweep *sw, dev_state *d)
{
    at_time(sw, d, d->heap[0].k.end_ns); /* before the state changes */
    entry e = heap_pop(d);
    stream_state *s = &d->streams[e.stream];
    s->running--;
    d->warp_fill -= e.k.warp_fill;
    d->sm_fill -= e.k.sm_share;
    uint64_t after = d->arrivals - e.arrival - 1;
    uint64_t stream_after = s->arrivals - e.stream_arrival - 1;
    uint64_t overlaps = (e.before - e.stream_before) + (after - stream_after);
    if (sw->cb.kernel_done)
        sw->cb.kernel_done(&e.k, overlaps, sw->cb.arg);
}

int wl_conc_sweep_add(wl_conc_sweep *sw, const wl_conc_kernel *k)
{
    if (k->end_ns < k->start_ns)
        return -1;
    dev_state *d = device(sw, k->pid, k->device_id);
    if (!d)
        return -1;
    if (d->arrivals && (k->start_ns < d->last_start || (k->start_ns == d->last_start && k->end_ns < d->last_end)))
        return -1;
    int si = stream_index(d, k->stream_id);
    if (si < 0)
        return -1;
    d->last_start = k->start_ns;
    d->last_end = k->end_ns;
    while (d->n && d->heap[0].k.end_ns <= k->start_ns)
        retire(sw, d);
    stream_state *s = &d->streams[si];
    entry e = {.k = *k, .arrival = d->arrivals, .stream_arrival = s->arrivals, .before = d->n,
               .stream_before = s->running, .stream = si};
    if (sw->cb.pair) {
        for (size_t i = 0; i < d->n; i++) {
            const wl_conc_kernel *o = &d->heap[i].k;
            if (o->stream_id == k->stream_id)
                continue;
            uint64_t end = o->end_ns < k->end_ns ? o->end_ns : k->end_ns;
            if (end > k->start_ns)
                sw->cb.pair(o, k, end - k->start_ns, sw->cb.arg);
        }
    }
    at_time(sw, d, k->start_ns); /* before the state changes */
    if (heap_push(d, &e) != 0)
        return -1;
    d->arrivals++;
    s->arrivals++;
    s->running++;
    d->warp_fill += k->warp_fill;
    d->sm_fill += k->sm_share;
    return 0;
}

void wl_conc_sweep_finish(wl_conc_sweep *sw)
{
    for (int i = 0; i < sw->ndevs; i++) {
        dev_state *d = &sw->devs[i];
        while (d->n)
            retire(sw, d);
        emit_pending(sw, d);
    }
}

void wl_conc_sweep_free(wl_conc_sweep *sw)
{
    if (!sw)
        return;
    for (int i = 0; i < sw->ndevs; i++) {
        free(sw->devs[i].heap);
        free(sw->devs[i].streams);
    }
    free(sw->devs);
    free(sw);
}

/* ---- summaries ------------------------------------------------------------------------------ */

void wl_fill_summary_add(wl_fill_summary *s, const wl_fill_point *p)
{
    if (s->have_prev && p->ts_ns > s->prev.ts_ns) {
        uint64_t dt = p->ts_ns - s->prev.ts_ns;
        if (s->prev.running >= 1)
            s->busy_ns += dt;
        if (s->prev.running >= 2)
            s->concurrent_ns += dt;
        if (s->prev.oversubscribed)
            s->oversubscribed_ns += dt;
        s->warp_fill_pct_ns += s->prev.warp_fill_pct * (double)dt;
    } else if (!s->have_prev) {
        s->pid = p->pid;
        s->device_id = p->device_id;
    }
    if (p->running > s->max_running)
        s->max_running = p->running;
    if (p->warp_fill_pct > s->peak_warp_fill_pct)
        s->peak_warp_fill_pct = p->warp_fill_pct;
    if (p->sm_fill_pct > s->peak_sm_fill_pct)
        s->peak_sm_fill_pct = p->sm_fill_pct;
    s->prev = *p;
    s->have_prev = 1;
}

double wl_fill_summary_mean_fill(const wl_fill_summary *s)
{
    return s->busy_ns ? s->warp_fill_pct_ns / (double)s->busy_ns : 0.0;
}
