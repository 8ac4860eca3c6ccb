/* Timeline rules of `warplens advise` (advise_timeline.h): the sums of the timeline pass turned
 * into findings, each with its threshold, estimate, evidence and fix. The thresholds are in
 * docs/advise.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise_timeline_internal.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double median_u32(uint32_t *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_u32);
    return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + v[n / 2]);
}

/* Over the kept gaps of one size class (launch-scale: <= HOST_GAP_NS; host work: longer): their
 * count, idle time and what a CUDA graph (or overlapping the host work) would still leave,
 * max(0, gap - floor). Gaps beyond the kept ones count at the kept ones' mean. */
#define HOST_GAP_NS 100000.0
typedef struct gap_part {
    uint64_t count;
    double idle, recoverable;
} gap_part;

static gap_part gap_class(const gaps *g, double floor_ns, int long_gaps)
{
    gap_part p = {0, 0, 0};
    double kept = 0;
    for (size_t i = 0; i < g->n; i++) {
        kept += g->v[i];
        if ((g->v[i] > HOST_GAP_NS) != long_gaps)
            continue;
        p.count++;
        p.idle += g->v[i];
        p.recoverable += g->v[i] > floor_ns ? g->v[i] - floor_ns : 0;
    }
    if (g->dropped && kept > 0) {
        double scale = (double)g->total_ns / kept;
        p.count = (uint64_t)((double)p.count * scale);
        p.idle *= scale;
        p.recoverable *= scale;
    }
    return p;
}

static double recoverable(const gaps *g, double floor_ns)
{
    return gap_class(g, floor_ns, 0).recoverable + gap_class(g, floor_ns, 1).recoverable;
}

static void set_span(const tl *t, wl_finding *f, uint64_t span_ns)
{
    f->start_ns = t->first;
    f->end_ns = t->last;
    f->span_ns = span_ns;
    f->gain_pct = span_ns ? 100.0 * f->gain_ns / (double)span_ns : 0;
}

static long worst_step(const tl *t, const uint64_t *per)
{
    long best = -1;
    for (size_t i = 0; t->steps && i < t->steps->n; i++)
        if (per[i] && (best < 0 || per[i] > per[best]))
            best = (long)i;
    return best;
}

static void step_evidence(const tl *t, wl_finding *f, const uint64_t *per, const char *step_name)
{
    long w = worst_step(t, per);
    if (w < 0)
        return;
    uint64_t n = 0;
    for (size_t i = 0; i < t->steps->n; i++)
        n += per[i] > 0;
    snprintf(f->span_name, sizeof f->span_name, "%s", step_name);
    wl_finding_evidence(f, "steps_affected", 1, "%" PRIu64, n);
    wl_finding_evidence(f, "worst_step", 0, "%s #%ld [%" PRIu64 ", %" PRIu64 "] ns: %.1f us idle", step_name, w + 1,
                        t->steps->v[w].start, t->steps->v[w].end, per[w] / 1e3);
}

static void names_evidence(tl *t, wl_finding *f, const char *key, name_count *tab, int n)
{
    char buf[320] = "";
    size_t len = 0;
    for (int pass = 0; pass < 3; pass++) { /* the three most counted */
        int best = -1;
        for (int i = 0; i < n; i++)
            if (tab[i].n && (best < 0 || tab[i].n > tab[best].n))
                best = i;
        if (best < 0)
            break;
        char name[96], *short_name = NULL;
        if (wl_session_kernel_name(t->s, tab[best].name_id, NULL, &short_name, NULL) == 0 && short_name)
            snprintf(name, sizeof name, "%s", short_name);
        else
            snprintf(name, sizeof name, "name %" PRId64, tab[best].name_id);
        free(short_name);
        len += (size_t)snprintf(buf + len, len < sizeof buf ? sizeof buf - len : 0, "%s%s (%" PRIu64 ")",
                                pass ? ", " : "", name, tab[best].n);
        tab[best].n = 0;
        if (len >= sizeof buf)
            break;
    }
    if (buf[0])
        wl_finding_evidence(f, key, 0, "%s", buf);
}

static void ids_evidence(wl_finding *f, const char *key, const int64_t *ids, int n)
{
    char buf[160] = "[";
    size_t len = 1;
    for (int i = 0; i < n && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%" PRId64, i ? ", " : "", ids[i]);
    if (len < sizeof buf - 1) {
        buf[len] = ']';
        buf[len + 1] = 0;
        wl_finding_evidence(f, key, 1, "%s", buf);
    }
}

static void rule_launch(tl *t, wl_advise_result *r, double floor_ns, uint64_t span_ns)
{
    gaps *g = &t->g[GAP_LAUNCH];
    gap_part p = gap_class(g, floor_ns, 0);
    double gain = p.recoverable;
    /* threshold: 100 gaps and 5 % of the span: a handful of gaps is the program's start, not a loop */
    if (p.count < 100 || gain < 0.05 * (double)span_ns)
        return;
    wl_finding *f = wl_advise_add(r, "gpu-idle-launch", gain >= 0.2 * (double)span_ns ? WL_SEV_HIGH : WL_SEV_MEDIUM);
    if (!f)
        return;
    double med = median_u32(g->v, g->n);
    double mean_kernel = t->kernels ? (double)t->kernel_ns / (double)t->kernels : 0;
    double mean_call = t->launch_calls ? (double)t->launch_call_ns / (double)t->launch_calls : 0;
    f->gain_ns = gain;
    set_span(t, f, span_ns);
    snprintf(f->title, sizeof f->title, "GPU idle %.1f%% of the time waiting for the host to launch work (%" PRIu64 " gaps)",
             100.0 * p.idle / (double)span_ns, p.count);
    snprintf(f->measured, sizeof f->measured,
             "%.3f ms idle in %" PRIu64 " gaps of <= 100 us (median of all %.1f us) before work the host had not yet"
             " submitted; kernels average %.1f us on the GPU and %.1f us in their launch call",
             p.idle / 1e6, p.count, med / 1e3, mean_kernel / 1e3, mean_call / 1e3);
    snprintf(f->threshold, sizeof f->threshold, ">= 100 such gaps of <= 100 us and >= 5%% of the span recoverable");
    snprintf(f->estimate, sizeof f->estimate,
             "sum over the gaps of (gap - %.2f us), the device's own gap between queued work (median of %zu"
             " gaps where the next work was already queued%s): what a CUDA graph or fused kernels leave",
             floor_ns / 1e3, t->g[GAP_QUEUED].n, t->g[GAP_QUEUED].n < 32 ? "; too few, 1 us assumed" : "");
    wl_finding_evidence(f, "gaps", 1, "%" PRIu64, p.count);
    wl_finding_evidence(f, "idle_ns", 1, "%.0f", p.idle);
    wl_finding_evidence(f, "kernels_shorter_than_launch_call", 1, "%" PRIu64, t->slower_launch);
    wl_finding_evidence(f, "kernels", 1, "%" PRIu64, t->kernels);
    names_evidence(t, f, "kernels_after_gaps", t->after_launch_gap, 8);
    ids_evidence(f, "kernel_ids", t->first_after_gap, t->nfirst_after_gap);
    step_evidence(t, f, t->step_launch, r->step_name);
    snprintf(f->fix, sizeof f->fix,
             "The host cannot launch fast enough%s: capture the repeated work once into a CUDA graph and"
             " launch the graph (cudaStreamBeginCapture/cudaGraphLaunch; torch.cuda.CUDAGraph or"
             " torch.compile(mode=\"reduce-overhead\")), or fuse the small kernels so fewer, longer ones run;"
             " keep host work (Python, allocation, logging) out of the launch loop.",
             t->slower_launch * 2 > t->kernels ? " (most kernels run shorter than their own launch call)" : "");
}

static void rule_host(tl *t, wl_advise_result *r, double floor_ns, uint64_t span_ns)
{
    gap_part p = gap_class(&t->g[GAP_LAUNCH], floor_ns, 1);
    if (p.count < 3 || p.recoverable < 0.05 * (double)span_ns)
        return;
    wl_finding *f = wl_advise_add(r, "gpu-idle-host", p.recoverable >= 0.2 * (double)span_ns ? WL_SEV_HIGH : WL_SEV_MEDIUM);
    if (!f)
        return;
    f->gain_ns = p.recoverable;
    set_span(t, f, span_ns);
    snprintf(f->title, sizeof f->title, "GPU idle %.1f%% of the time while the host works between launches (%" PRIu64
             " gaps over 100 us)", 100.0 * p.idle / (double)span_ns, p.count);
    snprintf(f->measured, sizeof f->measured,
             "%.3f ms idle in %" PRIu64 " gaps longer than 100 us before work the host had not yet submitted (no"
             " call waiting for the GPU returned in them): the host was busy with something other than launching",
             p.idle / 1e6, p.count);
    snprintf(f->threshold, sizeof f->threshold, ">= 3 such gaps and >= 5%% of the span recoverable");
    snprintf(f->estimate, sizeof f->estimate,
             "sum over the gaps of (gap - %.2f us): an upper bound, reached when the host work overlaps the GPU's"
             " (it still has to fit in the GPU's busy time)", floor_ns / 1e3);
    wl_finding_evidence(f, "gaps", 1, "%" PRIu64, p.count);
    wl_finding_evidence(f, "idle_ns", 1, "%.0f", p.idle);
    step_evidence(t, f, t->step_launch, r->step_name);
    snprintf(f->fix, sizeof f->fix,
             "Overlap the host work with the GPU's: prepare the next batch while the GPU runs this one (DataLoader"
             " workers with pin_memory and prefetch, a producer thread), move preprocessing to the GPU, and keep"
             " logging, checkpointing and Python bookkeeping off the critical path or asynchronous.");
}

static void rule_sync(tl *t, wl_advise_result *r, double floor_ns, uint64_t span_ns)
{
    gaps *g = &t->g[GAP_SYNC];
    double gain = recoverable(g, floor_ns);
    if (g->count < 10 || gain < 0.03 * (double)span_ns)
        return;
    wl_finding *f = wl_advise_add(r, "gpu-idle-sync", gain >= 0.2 * (double)span_ns ? WL_SEV_HIGH : WL_SEV_MEDIUM);
    if (!f)
        return;
    f->gain_ns = gain;
    set_span(t, f, span_ns);
    snprintf(f->title, sizeof f->title,
             "GPU idle %.1f%% of the time after host synchronisations (%" PRIu64 " times the GPU drained and waited)",
             100.0 * (double)g->total_ns / (double)span_ns, g->count);
    snprintf(f->measured, sizeof f->measured,
             "%.3f ms idle in %" PRIu64 " gaps that began when a call waiting for the GPU returned and ended when"
             " the host submitted more; the host waited %.3f ms in %" PRIu64 " such calls",
             g->total_ns / 1e6, g->count, t->sync_wait_ns / 1e6, t->sync_matched);
    snprintf(f->threshold, sizeof f->threshold, ">= 10 such gaps and >= 3%% of the span recoverable");
    snprintf(f->estimate, sizeof f->estimate,
             "sum over the gaps of (gap - %.2f us, the device's own gap between queued work): the GPU keeps"
             " running while the host prepares the next work if it does not wait",
             floor_ns / 1e3);
    char calls[320] = "";
    size_t len = 0;
    for (int i = 0; i < 6 && len < sizeof calls; i++)
        if (t->sync_calls[i].n)
            len += (size_t)snprintf(calls + len, sizeof calls - len, "%s%s (%" PRIu64 ")", len ? ", " : "",
                                    t->sync_names[i], t->sync_calls[i].n);
    wl_finding_evidence(f, "calls", 0, "%s", calls);
    wl_finding_evidence(f, "gaps", 1, "%" PRIu64, g->count);
    wl_finding_evidence(f, "idle_ns", 1, "%" PRIu64, g->total_ns);
    wl_finding_evidence(f, "host_wait_ns", 1, "%" PRIu64, t->sync_wait_ns);
    ids_evidence(f, "api_call_ids", t->sync_call_ids, t->nsync_ids);
    if (t->steps && t->steps->n)
        wl_finding_evidence(f, "waits_per_step", 1, "%.1f", (double)t->sync_matched / (double)t->steps->n);
    step_evidence(t, f, t->step_sync, r->step_name);
    snprintf(f->fix, sizeof f->fix,
             "Do not wait for the GPU inside the loop: remove per-iteration cudaDeviceSynchronize/"
             "cudaStreamSynchronize (in PyTorch: .item(), .cpu(), print of a CUDA tensor, torch.cuda.synchronize);"
             " synchronise once per step, order streams with events (cudaEventRecord + cudaStreamWaitEvent),"
             " and use cudaMemcpyAsync from pinned memory instead of synchronous copies.");
}

static double pinned_bps(const tl *t, int dir)
{
    const copy_sum *c = &t->pinned_big[dir];
    return c->ns && c->bytes ? (double)c->bytes / ((double)c->ns / 1e9) : DEFAULT_PINNED_BPS;
}

static void rule_pageable(tl *t, wl_advise_result *r, uint64_t span_ns)
{
    static const char *const DIR[4] = {"other", "host to device", "device to host", "device to device"};
    double gain = 0;
    uint64_t n = 0, bytes = 0, ns = 0;
    char parts[240] = "";
    size_t len = 0;
    int assumed = 0;
    for (int d = WL_COPY_HTOD; d <= WL_COPY_DTOH; d++) {
        const copy_sum *c = &t->copy[d][1];
        if (!c->n)
            continue;
        double bps = pinned_bps(t, d);
        assumed |= t->pinned_big[d].ns == 0;
        double g = (double)c->ns - (double)c->bytes / bps * 1e9;
        if (g > 0)
            gain += g;
        n += c->n;
        bytes += c->bytes;
        ns += c->ns;
        len += (size_t)snprintf(parts + len, len < sizeof parts ? sizeof parts - len : 0,
                                "%s%s: %" PRIu64 " copies, %.1f MB at %.2f GB/s", len ? "; " : "", DIR[d], c->n,
                                c->bytes / 1e6, c->ns ? (double)c->bytes / (double)c->ns : 0);
    }
    if (!n || bytes < (1u << 20) || gain < 0.02 * (double)span_ns)
        return;
    wl_finding *f = wl_advise_add(r, "copy-pageable", gain >= 0.2 * (double)span_ns ? WL_SEV_HIGH : WL_SEV_MEDIUM);
    if (!f)
        return;
    f->gain_ns = gain;
    set_span(t, f, span_ns);
    snprintf(f->title, sizeof f->title, "%" PRIu64 " copies use pageable host memory (%.1f MB, %.3f ms on the GPU)", n,
             bytes / 1e6, ns / 1e6);
    snprintf(f->measured, sizeof f->measured, "%s", parts);
    snprintf(f->threshold, sizeof f->threshold, ">= 1 MiB pageable and >= 2%% of the span recoverable");
    snprintf(f->estimate, sizeof f->estimate,
             "their GPU time minus the same bytes at the pinned rate (%.1f GB/s host to device, %.1f device to"
             " host, %s)",
             pinned_bps(t, WL_COPY_HTOD) / 1e9, pinned_bps(t, WL_COPY_DTOH) / 1e9,
             assumed ? "assumed for PCIe 5 x16 where the session has no pinned copy >= 1 MiB"
                     : "measured on this session's pinned copies >= 1 MiB");
    wl_finding_evidence(f, "copies", 1, "%" PRIu64, n);
    wl_finding_evidence(f, "bytes", 1, "%" PRIu64, bytes);
    wl_finding_evidence(f, "gpu_ns", 1, "%" PRIu64, ns);
    ids_evidence(f, "memcpy_ids", t->pageable_ids, t->npageable_ids);
    snprintf(f->fix, sizeof f->fix,
             "Allocate the host buffers pinned (cudaMallocHost / cudaHostAlloc, or cudaHostRegister an existing"
             " buffer; PyTorch: tensor.pin_memory(), DataLoader(pin_memory=True)) and copy with"
             " cudaMemcpyAsync / .to(device, non_blocking=True): pageable copies are staged by the driver and"
             " block the host.");
}

static void rule_small_copies(tl *t, wl_advise_result *r, uint64_t span_ns)
{
    const copy_sum *c = &t->small;
    if (c->n < 100)
        return;
    double med = median_u32(t->small_api, t->nsmall_api);
    double bps = pinned_bps(t, WL_COPY_HTOD);
    /* one copy of all the bytes: one call plus the bytes at the pinned rate */
    double batched = med + (double)c->bytes / bps * 1e9;
    double now = t->small_api_n ? (double)t->small_api_ns : (double)c->ns;
    double gain = now - batched;
    if (gain < 0.03 * (double)span_ns)
        return;
    wl_finding *f = wl_advise_add(r, "copy-small", gain >= 0.2 * (double)span_ns ? WL_SEV_HIGH : WL_SEV_MEDIUM);
    if (!f)
        return;
    f->gain_ns = gain;
    set_span(t, f, span_ns);
    snprintf(f->title, sizeof f->title, "%" PRIu64 " small copies (< 64 KiB, %.1f KB in all) cost %.3f ms of host calls",
             c->n, c->bytes / 1e3, now / 1e6);
    snprintf(f->measured, sizeof f->measured,
             "%" PRIu64 " copies under 64 KiB between host and device, %.3f ms on the GPU, their calls %.3f ms"
             " (median %.1f us each)",
             c->n, c->ns / 1e6, t->small_api_ns / 1e6, med / 1e3);
    snprintf(f->threshold, sizeof f->threshold, ">= 100 copies under 64 KiB and >= 3%% of the span recoverable");
    snprintf(f->estimate, sizeof f->estimate,
             "their calls' time minus one call (the median, %.1f us) and the bytes at %.1f GB/s: the same data"
             " as one copy",
             med / 1e3, bps / 1e9);
    wl_finding_evidence(f, "copies", 1, "%" PRIu64, c->n);
    wl_finding_evidence(f, "bytes", 1, "%" PRIu64, c->bytes);
    wl_finding_evidence(f, "call_ns", 1, "%" PRIu64, t->small_api_ns);
    ids_evidence(f, "memcpy_ids", t->small_ids, t->nsmall_ids);
    snprintf(f->fix, sizeof f->fix,
             "Batch them: gather the pieces into one pinned staging buffer and move it with one cudaMemcpyAsync"
             " (or cudaMemcpy2DAsync / cudaMemcpyBatchAsync for strided or scattered pieces), or keep the data"
             " on the GPU between uses.");
}

static void rule_streams(tl *t, wl_advise_result *r, uint64_t span_ns)
{
    for (int di = 0; di < t->ndev; di++) {
        dev_state *d = &t->dev[di];
        stream_state *a = NULL, *b = NULL; /* the two busiest kernel streams */
        for (int i = 0; i < t->nstreams; i++) {
            stream_state *s = &t->streams[i];
            if (s->pid != d->pid || s->device != d->device)
                continue;
            if (!a || s->kernel_ns > a->kernel_ns) {
                b = a;
                a = s;
            } else if (!b || s->kernel_ns > b->kernel_ns)
                b = s;
        }
        if (!a || !b || !d->busy_ns)
            continue;
        double sa = a->kernel_ns ? a->share_ns / (double)a->kernel_ns : 1;
        double sb = b->kernel_ns ? b->share_ns / (double)b->kernel_ns : 1;
        /* two streams, each >= 10 % of the device's busy time, that never ran together although
         * their kernels would fit on the GPU at once */
        if ((double)b->kernel_ns < 0.1 * (double)d->busy_ns || (double)d->overlap_ns > 0.01 * (double)b->kernel_ns ||
            sa + sb > 1.0)
            continue;
        double gain = (double)b->kernel_ns;
        if (gain < 0.05 * (double)span_ns)
            continue;
        wl_finding *f = wl_advise_add(r, "serial-streams", WL_SEV_MEDIUM);
        if (!f)
            return;
        f->gain_ns = gain;
        set_span(t, f, span_ns);
        snprintf(f->title, sizeof f->title,
                 "Streams %" PRId64 " and %" PRId64 " of device %u never overlap although their kernels use %.0f%% and"
                 " %.0f%% of the GPU",
                 a->stream, b->stream, d->device, 100 * sa, 100 * sb);
        snprintf(f->measured, sizeof f->measured,
                 "stream %" PRId64 ": %" PRIu64 " kernels, %.3f ms; stream %" PRId64 ": %" PRIu64
                 " kernels, %.3f ms; time they ran together: %.3f ms",
                 a->stream, a->kernels, a->kernel_ns / 1e6, b->stream, b->kernels, b->kernel_ns / 1e6,
                 d->overlap_ns / 1e6);
        snprintf(f->threshold, sizeof f->threshold,
                 "two streams each >= 10%% of the device's busy time, < 1%% overlap, SM shares summing to <= 100%%");
        snprintf(f->estimate, sizeof f->estimate,
                 "the smaller stream's kernel time, which could run beside the other's (an upper bound: it"
                 " assumes the streams' work is independent)");
        wl_finding_evidence(f, "device", 1, "%u", d->device);
        wl_finding_evidence(f, "pid", 1, "%u", d->pid);
        wl_finding_evidence(f, "streams", 1, "[%" PRId64 ", %" PRId64 "]", a->stream, b->stream);
        wl_finding_evidence(f, "overlap_ns", 1, "%" PRIu64, d->overlap_ns);
        snprintf(f->fix, sizeof f->fix,
                 "If the two streams' work is independent, let it overlap: remove the synchronisation between them"
                 " (cudaDeviceSynchronize, the legacy default stream, events recorded after all work), create the"
                 " streams with cudaStreamNonBlocking, and order only true dependencies with"
                 " cudaStreamWaitEvent.");
    }
}


double wl_tl_floor_ns(tl *t)
{
    gaps *q = &t->g[GAP_QUEUED];
    return q->n >= 32 ? median_u32(q->v, q->n) : DEFAULT_GAP_NS;
}

void wl_tl_rules(tl *t, wl_advise_result *r, uint64_t span_ns)
{
    double floor_ns = wl_tl_floor_ns(t);
    rule_launch(t, r, floor_ns, span_ns);
    rule_host(t, r, floor_ns, span_ns);
    rule_sync(t, r, floor_ns, span_ns);
    rule_pageable(t, r, span_ns);
    rule_small_copies(t, r, span_ns);
    rule_streams(t, r, span_ns);
}
