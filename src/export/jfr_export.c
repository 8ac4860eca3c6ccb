/* Session -> Java Flight Recorder recording (see session_export.h; fields and sources in
 * docs/formats.md, "JFR"). A sink of the timeline model in flat mode (every slice, no lanes):
 *  - host slices become CudaApiEvent, NvtxRangeEvent, ScopeEvent and TimerEvent on their thread;
 *  - copies and sets become GpuMemcpyEvent / GpuMemsetEvent on the thread that issued them;
 *  - kernels become GpuKernelEvent on their launching thread. A kernel is held until the walk has
 *    passed its end, so that every kernel of its process and device on another stream that
 *    overlaps it has been seen (concurrentKernels); the walk is in start order, so what is held
 *    is the kernels running at one instant;
 *  - changes of a device's running kernels (the model's gpu_state) and NVML samples become
 *    GpuOccupancyEvents, when jfr_snapshots.c says;
 *  - kernels CUPTI gave no GPU times (kernel replay) are written after the walk at their launch
 *    call, gpuTimestamps = false.
 * Memory: one chunk (jfr_chunk.h), the held kernels, the session's NVML samples (a few per
 * second of the run) and the distinct kernel names. */
#include "export/session_export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_backend.h"
#include "common/grow.h"
#include "export/export_rerun.h"
#include "export/jfr_chunk.h"
#include "export/jfr_snapshots.h"
#include "export/jfr_types.h"
#include "export/timeline_internal.h"
#include "store/session_kernels.h"
#include "store/torch_range.h"

#define CHUNK_BYTES (8u << 20)

typedef struct dev_info {
    uint32_t pid, device;
    int sm_count, warp_size, max_warps;
} dev_info;

typedef struct held {          /* a kernel waiting for the walk to pass its end */
    uint64_t start, end;
    uint32_t pid, device, tid;
    int has_tid;
    int64_t stream, name_id, op_id; /* op_id -1: none */
    wl_jfr_value v[WL_JK_COUNT];
    char scope[256], op[512], shape[1024], tier[64]; /* the item's, while it is held */
} held;

typedef struct name_slot {     /* kernel name by kernel_name id, kept for held kernels */
    int64_t id;
    char *name;
    size_t len;
    const char *backend;       /* analysis/kernel_backend.h, decided once per name */
} name_slot;

typedef struct jfr_sink {
    wl_session *s;
    wl_jfr_chunk *c;
    wl_export_stats *st;
    int failed;
    dev_info *devs;
    size_t n_devs, cap_devs;
    held **held;               /* the kernels held, in no order; spare ones kept for reuse */
    size_t n_held, cap_held, n_alloc;
    uint64_t min_end;          /* earliest end among held kernels */
    name_slot *names;
    size_t n_names, cap_names;
    jfr_snapshots *snaps;      /* when GpuOccupancyEvents are written */
    int annotations;           /* the session has per-kernel annotations */
    uint64_t origin;
} jfr_sink;

static int grow(void **p, size_t *cap, size_t n, size_t elem) { return wl_grow(p, cap, n, elem, 16); }

static int32_t sat32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v; }
/* a * b, saturated at INT64_MAX (hostile sessions hold any grid) */
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) || r > INT64_MAX ? INT64_MAX : r;
}
static int64_t nonneg(int64_t v) { return v > 0 ? v : 0; }

/* dst and src: arrays of the same size holding a terminated string (only its bytes are copied) */
#define copy_str(dst, src) memcpy((dst), (src), strnlen((src), sizeof(dst) - 1) + 1)

static wl_jfr_value vi(int64_t i) { return (wl_jfr_value){.i = i}; }
static wl_jfr_value vd(double d) { return (wl_jfr_value){.d = isfinite(d) ? d : 0}; }
static wl_jfr_value vs(const char *s) { return (wl_jfr_value){.s = s, .n = s ? strlen(s) : 0}; }
/* "" reads as null: the session's empty text means "none" */
static wl_jfr_value vs_opt(const char *s) { return vs(s && s[0] ? s : NULL); }

static const dev_info *find_dev(const jfr_sink *k, uint32_t pid, uint32_t device, int any_pid)
{
    for (size_t i = 0; i < k->n_devs; i++)
        if (k->devs[i].device == device && (any_pid || k->devs[i].pid == pid))
            return &k->devs[i];
    return NULL;
}

static void on_device(const wl_device_row *d, void *arg)
{
    jfr_sink *k = arg;
    if (grow((void **)&k->devs, &k->cap_devs, k->n_devs, sizeof *k->devs)) {
        k->failed = 1;
        return;
    }
    int warp = d->warp_size > 0 ? d->warp_size : 32;
    k->devs[k->n_devs++] = (dev_info){d->pid, d->device_id, d->sm_count > 0 ? d->sm_count : 0, warp,
                                      d->max_threads_per_sm > 0 ? d->max_threads_per_sm / warp : 0};
}

/* ---- writing one event --------------------------------------------------------------------- */

/* One event, its string fields written by str (a pool reference each). */
static int write_event_str(jfr_sink *k, wl_jfr_event_id id, uint64_t start, uint64_t end, uint64_t thread,
                           const wl_jfr_value *v, wl_jfr_string_fn str, void *str_ctx)
{
    if (end < start)
        end = start;
    wl_pb_buf *b = wl_jfr_chunk_events(k->c);
    if (wl_jfr_write_event(b, id, wl_jfr_chunk_ticks(k->c, start), end - start, thread, v, str, str_ctx) ||
        wl_jfr_chunk_commit(k->c, start, end))
        return -1;
    k->st->jfr[id]++;
    k->st->events++;
    return 0;
}

static int write_event(jfr_sink *k, wl_jfr_event_id id, uint64_t start, uint64_t end, uint64_t thread,
                       const wl_jfr_value *v)
{
    return write_event_str(k, id, start, end, thread, v, wl_jfr_chunk_string, k->c);
}

/* ---- kernel names -------------------------------------------------------------------------- */

/* The slot of id in a table of cap (a power of two) slots: its own, or the empty one it goes to. */
static size_t name_slot_of(const name_slot *t, size_t cap, int64_t id)
{
    size_t j = (size_t)((uint64_t)id * 0x9e3779b97f4a7c15u >> 32) & (cap - 1);
    while (t[j].name && t[j].id != id)
        j = (j + 1) & (cap - 1);
    return j;
}

/* The kept copy of a kernel name (added from name the first time); NULL when out of memory. */
static const name_slot *kernel_name(jfr_sink *k, int64_t id, const char *name, const char *short_name)
{
    if (k->cap_names) {
        size_t j = name_slot_of(k->names, k->cap_names, id);
        if (k->names[j].name)
            return &k->names[j];
    }
    if ((k->n_names + 1) * 2 > k->cap_names) {
        size_t ncap = k->cap_names ? k->cap_names * 2 : 256;
        name_slot *n = calloc(ncap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < k->cap_names; i++)
            if (k->names[i].name)
                n[name_slot_of(n, ncap, k->names[i].id)] = k->names[i];
        free(k->names);
        k->names = n;
        k->cap_names = ncap;
    }
    size_t j = name_slot_of(k->names, k->cap_names, id);
    size_t len = strlen(name);
    char *d = malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, name, len + 1);
    k->names[j] = (name_slot){id, d, len, wl_kernel_backend(short_name, name, NULL)};
    k->n_names++;
    return &k->names[j];
}

/* String fields of a kernel, most of them found in the pool without hashing their bytes: the
 * name by its kernel_name id, the operation and shape by their op id, the backend and limiter
 * (static strings) by address; the others by their bytes. Key spaces: ids * 4 + 1..3 (below
 * 2^62), addresses with the top bit set. */
typedef struct kernel_strings {
    jfr_sink *k;
    const held *h;
    const char *name;
} kernel_strings;

static void kernel_string(void *ctx, wl_pb_buf *b, const char *s, size_t n)
{
    kernel_strings *ks = ctx;
    const held *h = ks->h;
    uint64_t key = 0;
    if (!s || !n)
        key = 0;
    else if (s == ks->name)
        key = (uint64_t)h->name_id * 4 + 1;
    else if (s == h->op && h->op_id >= 0)
        key = (uint64_t)h->op_id * 4 + 2;
    else if (s == h->shape && h->op_id >= 0)
        key = (uint64_t)h->op_id * 4 + 3;
    else if (s == h->v[WL_JK_BACKEND].s || s == h->v[WL_JK_LIMITER].s)
        key = (uint64_t)(uintptr_t)s | (UINT64_C(1) << 63);
    if (key)
        wl_jfr_chunk_keyed_string(ks->k->c, b, key, s, n);
    else
        wl_jfr_chunk_string(ks->k->c, b, s, n);
}

static int write_kernel(jfr_sink *k, held *h)
{
    const name_slot *ns = kernel_name(k, h->name_id, "", "");
    if (!ns)
        return -1;
    h->v[WL_JK_NAME] = (wl_jfr_value){.s = ns->name, .n = ns->len};
    h->v[WL_JK_BACKEND] = vs(ns->backend);
    h->v[WL_JK_SCOPE_NAME] = vs_opt(h->scope);
    h->v[WL_JK_OPERATION] = vs_opt(h->op);
    h->v[WL_JK_SHAPE] = vs_opt(h->shape);
    h->v[WL_JK_TIER] = vs_opt(h->tier);
    uint64_t thread = h->has_tid ? wl_jfr_chunk_thread(k->c, h->pid, h->tid) : 0;
    kernel_strings ks = {k, h, ns->name};
    return write_event_str(k, WL_JFR_KERNEL, h->start, h->end, thread, h->v, kernel_string, &ks);
}

/* Writes the held kernels that ended by ts (all when ts = UINT64_MAX). */
static int release_held(jfr_sink *k, uint64_t ts)
{
    if (ts < k->min_end)
        return 0;
    uint64_t min_end = UINT64_MAX;
    for (size_t i = 0; i < k->n_held;) {
        held *h = k->held[i];
        if (h->end > ts) {
            if (h->end < min_end)
                min_end = h->end;
            i++;
            continue;
        }
        h->v[WL_JK_CONCURRENT] = vi(sat32(h->v[WL_JK_CONCURRENT].i));
        if (write_kernel(k, h))
            return -1;
        /* swap with the last held one: the list keeps its spare objects past n_held */
        k->held[i] = k->held[--k->n_held];
        k->held[k->n_held] = h;
    }
    k->min_end = min_end;
    return 0;
}

/* Work counts of a kernel: its annotation, else the --metrics counters among its args. */
static void work_counts(jfr_sink *k, const wl_tl_slice *s, double *flops, double *bytes)
{
    *flops = *bytes = 0;
    char prec[16];
    if (k->annotations && wl_session_kernel_annotation(k->s, s->gpu->id, flops, bytes, prec, sizeof prec) == 0 &&
        (*flops > 0 || *bytes > 0))
        return;
    for (size_t i = 0; i < s->n_args; i++) {
        const char *n = s->args[i].name;
        if (strncmp(n, "metrics.", 8))
            continue;
        n += 8;
        if (!strcmp(n, "dram__bytes_read.sum") || !strcmp(n, "dram__bytes_write.sum"))
            *bytes += s->args[i].d;
        else if (!strcmp(n, "fp32_flop") || !strcmp(n, "fp16_flop") || !strcmp(n, "fp64_flop"))
            *flops += s->args[i].d;
    }
}

/* The fields a kernel's row gives, shared by timed and untimed kernels. */
static void kernel_values(wl_jfr_value *v, const dev_info *dev, uint32_t pid, uint32_t device, int64_t id,
                          const int grid[3], const int block[3], int registers, int64_t static_smem,
                          int64_t dynamic_smem, int64_t local_mem, int64_t stream, uint32_t correlation,
                          int64_t scope_id, const tl_occ *occ)
{
    int warp = dev ? dev->warp_size : 32;
    uint64_t blocks = 1, tpb = 1;
    for (int i = 0; i < 3; i++) {
        blocks = sat_mul(blocks, (uint64_t)(grid[i] > 0 ? grid[i] : 0));
        tpb = sat_mul(tpb, (uint64_t)(block[i] > 0 ? block[i] : 0));
    }
    uint64_t wpb = tpb / (uint64_t)warp + (tpb % (uint64_t)warp != 0);
    v[WL_JK_DEVICE] = vi(device);
    v[WL_JK_GRID_X] = vi(grid[0]), v[WL_JK_GRID_Y] = vi(grid[1]), v[WL_JK_GRID_Z] = vi(grid[2]);
    v[WL_JK_BLOCK_X] = vi(block[0]), v[WL_JK_BLOCK_Y] = vi(block[1]), v[WL_JK_BLOCK_Z] = vi(block[2]);
    v[WL_JK_THREADS] = vi((int64_t)sat_mul(blocks, tpb));
    v[WL_JK_WARPS] = vi((int64_t)sat_mul(blocks, wpb));
    v[WL_JK_BLOCKS] = vi(sat32((int64_t)blocks));
    v[WL_JK_REGISTERS] = vi(registers);
    v[WL_JK_STATIC_SMEM] = vi(sat32(static_smem));
    v[WL_JK_DYNAMIC_SMEM] = vi(sat32(dynamic_smem));
    v[WL_JK_LOCAL_MEM] = vi(sat32(local_mem));
    if (occ->valid) {
        v[WL_JK_OCC_PCT] = vi(llround(occ->occupancy_pct));
        v[WL_JK_OCC_FRACTION] = vd(occ->occupancy_pct / 100.0);
        v[WL_JK_BLOCKS_PER_SM] = vi(occ->active_blocks_per_sm);
        v[WL_JK_LIMITER] = vs(occ->limiter);
    }
    if (dev && dev->sm_count > 0) {
        v[WL_JK_ACTIVE_SMS] = vi(blocks < (uint64_t)dev->sm_count ? (int64_t)blocks : dev->sm_count);
        if (occ->valid) {
            uint64_t resident = (uint64_t)occ->active_blocks_per_sm * (uint64_t)dev->sm_count;
            v[WL_JK_ACTIVE_WARPS] = vi((int64_t)sat_mul(blocks < resident ? blocks : resident, wpb));
        }
    }
    v[WL_JK_STREAM] = vi(stream);
    v[WL_JK_SCOPE_ID] = vi(nonneg(scope_id));
    v[WL_JK_CORRELATION] = vi(correlation);
    v[WL_JK_PID] = vi(pid);
    v[WL_JK_KERNEL_ID] = vi(id);
}

static void throughput(wl_jfr_value *v, double flops, double bytes, uint64_t gpu_ns)
{
    v[WL_JK_BYTES] = vi(bytes > 0 && bytes < 9.2e18 ? (int64_t)bytes : 0);
    if (gpu_ns > 0) {
        v[WL_JK_TFLOPS] = vd(flops / (double)gpu_ns / 1e3);
        v[WL_JK_GBPS] = vd(bytes / (double)gpu_ns);
    }
}

static int on_kernel(jfr_sink *k, const wl_tl_slice *s)
{
    const wl_gpu_item *it = s->gpu;
    if (k->n_held == k->n_alloc) { /* no spare object: one more */
        if (grow((void **)&k->held, &k->cap_held, k->n_alloc, sizeof *k->held) ||
            !(k->held[k->n_alloc] = malloc(sizeof **k->held)))
            return -1;
        k->n_alloc++;
    }
    held *h = k->held[k->n_held];
    memset(h->v, 0, sizeof h->v);
    h->start = it->start_ns, h->end = it->end_ns;
    h->pid = it->pid, h->device = it->device_id, h->stream = it->stream_id, h->name_id = it->name_id;
    h->op_id = it->op_id;
    h->has_tid = it->tid >= 0, h->tid = (uint32_t)it->tid;
    if (!kernel_name(k, it->name_id, it->name, it->short_name))
        return -1;
    /* copies of the item's strings, which it holds terminated in buffers of the same sizes */
    copy_str(h->scope, it->scope);
    copy_str(h->op, it->op);
    copy_str(h->shape, it->shape);
    copy_str(h->tier, it->tier);
    h->v[WL_JK_VTHREAD] = vi(it->app_thread);
    tl_occ occ = {.valid = s->occupancy_pct >= 0, .occupancy_pct = s->occupancy_pct,
                  .active_blocks_per_sm = s->active_blocks_per_sm, .limiter = s->limiter};
    kernel_values(h->v, find_dev(k, it->pid, it->device_id, 0), it->pid, it->device_id, it->id, it->grid,
                  it->block, it->registers, it->static_smem, it->dynamic_smem, it->local_mem, it->stream_id,
                  it->correlation_id, it->scope_id, &occ);
    uint64_t gpu_ns = it->end_ns > it->start_ns ? it->end_ns - it->start_ns : 0;
    h->v[WL_JK_GPU_TIME_US] = vi((int64_t)(gpu_ns / 1000));
    h->v[WL_JK_LAUNCH_NS] = vi(nonneg(s->launch_ns));
    h->v[WL_JK_QUEUE_NS] = vi(nonneg(it->queue_delay_ns));
    h->v[WL_JK_SUBMIT_NS] = vi(nonneg(it->submit_delay_ns));
    h->v[WL_JK_TIMED] = vi(1);
    double flops, bytes;
    work_counts(k, s, &flops, &bytes);
    throughput(h->v, flops, bytes, gpu_ns);
    /* overlaps with the held kernels of its process and device on other streams */
    int64_t concurrent = 0;
    for (size_t i = 0; i < k->n_held; i++) {
        held *o = k->held[i];
        if (o->pid == h->pid && o->device == h->device && o->stream != h->stream && o->start < h->end &&
            o->end > h->start) {
            o->v[WL_JK_CONCURRENT].i++;
            concurrent++;
        }
    }
    h->v[WL_JK_CONCURRENT] = vi(concurrent);
    if (h->end < k->min_end)
        k->min_end = h->end;
    k->n_held++;
    return 0;
}

static int on_copy(jfr_sink *k, const wl_tl_slice *s)
{
    const wl_gpu_item *it = s->gpu;
    uint64_t thread = it->tid >= 0 ? wl_jfr_chunk_thread(k->c, it->pid, (uint32_t)it->tid) : 0;
    wl_jfr_value v[16];
    memset(v, 0, sizeof v);
    if (it->kind == WL_GPU_MEMCPY) {
        v[0] = vs_opt(it->copy_kind), v[1] = vi((int64_t)(it->bytes > INT64_MAX ? INT64_MAX : it->bytes));
        v[2] = vd(it->gbps), v[3] = vs_opt(it->src_kind), v[4] = vs_opt(it->dst_kind), v[5] = vi(it->device_id);
        v[6] = vi(it->stream_id), v[7] = vi(it->correlation_id), v[8] = vi(nonneg(it->scope_id));
        v[9] = vs_opt(it->scope), v[10] = vi(it->pid);
        return write_event(k, WL_JFR_MEMCPY, it->start_ns, it->end_ns, thread, v);
    }
    v[0] = vi((int64_t)(it->bytes > INT64_MAX ? INT64_MAX : it->bytes)), v[1] = vd(it->gbps);
    v[2] = vs_opt(it->dst_kind), v[3] = vi(it->device_id), v[4] = vi(it->stream_id), v[5] = vi(it->correlation_id);
    v[6] = vi(nonneg(it->scope_id)), v[7] = vs_opt(it->scope), v[8] = vi(it->pid);
    return write_event(k, WL_JFR_MEMSET, it->start_ns, it->end_ns, thread, v);
}

static int on_host(jfr_sink *k, const wl_tl_slice *s)
{
    const wl_host_item *it = s->host;
    uint64_t thread = wl_jfr_chunk_thread(k->c, it->pid, it->tid);
    wl_jfr_value v[8];
    memset(v, 0, sizeof v);
    switch (s->kind) {
    case WL_TL_API:
        v[0] = vs(it->name), v[1] = vs_opt(it->group), v[2] = vi(it->correlation_id), v[3] = vi(it->return_value);
        v[4] = vs_opt(it->scope), v[5] = vi(it->pid);
        return write_event(k, WL_JFR_API, it->start_ns, it->end_ns, thread, v);
    case WL_TL_NVTX: {
        wl_torch_range op; /* the identity its kernels get (session_identity.h) */
        v[0] = vs(it->name), v[1] = vs_opt(it->group), v[4] = vi(it->id), v[5] = vi(it->open_end), v[6] = vi(it->pid);
        if (wl_torch_range_parse(it->name, strlen(it->name), &op)) {
            v[2] = (wl_jfr_value){.s = op.name, .n = op.name_len};
            if (op.shape)
                v[3] = (wl_jfr_value){.s = op.shape, .n = op.shape_len};
        } else {
            v[2] = vs(it->name);
        }
        return write_event(k, WL_JFR_NVTX, it->start_ns, it->end_ns, thread, v);
    }
    case WL_TL_SCOPE:
        v[0] = vi(it->id), v[1] = vs(it->name), v[2] = vi(it->app_thread), v[3] = vi(it->open_end), v[4] = vi(it->pid);
        return write_event(k, WL_JFR_SCOPE, it->start_ns, it->end_ns, thread, v);
    case WL_TL_TIMER:
        v[0] = vs(it->name), v[1] = vs_opt(it->group), v[2] = vi(it->pid);
        return write_event(k, WL_JFR_TIMER, it->start_ns, it->end_ns, thread, v);
    default:
        return 0;
    }
}

/* ---- occupancy snapshots (when: jfr_snapshots.c) ------------------------------------------ */

static int write_snapshot(void *ctx, const wl_tl_gpu_state *g, uint64_t ts, const jfr_nvml *nv)
{
    jfr_sink *k = ctx;
    if (ts < k->origin)
        return 0; /* before every record (an NVML sample taken early): ticks count from the origin */
    const dev_info *dev = find_dev(k, nv ? nv->pid : 0, g->device, !nv);
    if (nv && !dev)
        dev = find_dev(k, 0, g->device, 1);
    wl_jfr_value v[WL_JO_COUNT];
    memset(v, 0, sizeof v);
    double fill = g->fill < 0 ? 0 : g->fill;
    int sm = dev ? dev->sm_count : 0, maxw = dev ? dev->max_warps : 0;
    v[WL_JO_DEVICE] = vi(g->device);
    v[WL_JO_STREAMS] = vi(sat32((int64_t)g->streams));
    v[WL_JO_KERNELS] = vi(sat32((int64_t)g->kernels));
    v[WL_JO_OCC_PCT] = vi(sat32(llround(fill * 100.0)));
    v[WL_JO_WARPS] = vi(llround(fill * sm * maxw));
    v[WL_JO_SM_COUNT] = vi(sm);
    v[WL_JO_MAX_WARPS] = vi(maxw);
    v[WL_JO_FILL] = vd(fill);
    v[WL_JO_SOURCE] = vs(nv ? "nvml" : "kernels");
    v[WL_JO_PID] = vi(nv ? nv->pid : dev ? dev->pid : 0);
    if (nv) {
        v[WL_JO_NVML_GPU] = vi(nv->gpu >= 0 ? sat32(nv->gpu) : 0);
        v[WL_JO_NVML_MEM] = vi(nv->mem >= 0 ? sat32(nv->mem) : 0);
    }
    return write_event(k, WL_JFR_OCCUPANCY, ts, ts, 0, v);
}

static int sink_gpu_state(void *ctx, const wl_tl_gpu_state *g)
{
    jfr_sink *k = ctx;
    return jfr_snapshots_state(k->snaps, g);
}

/* ---- the sink ------------------------------------------------------------------------------ */

static int sink_track(void *ctx, const wl_tl_track *t)
{
    jfr_sink *k = ctx;
    if (t->type == WL_TL_PROCESS)
        return wl_jfr_chunk_name_process(k->c, t->pid, t->name);
    if (t->type == WL_TL_THREAD)
        return wl_jfr_chunk_name_thread(k->c, t->pid, t->tid, t->name);
    return 0;
}

static int sink_slice(void *ctx, const wl_tl_slice *s)
{
    jfr_sink *k = ctx;
    if (release_held(k, s->start_ns))
        return -1;
    switch (s->kind) {
    case WL_TL_KERNEL:
        return on_kernel(k, s);
    case WL_TL_MEMCPY:
    case WL_TL_MEMSET:
        return on_copy(k, s);
    case WL_TL_API:
    case WL_TL_NVTX:
    case WL_TL_SCOPE:
    case WL_TL_TIMER:
        return on_host(k, s);
    default: /* in-kernel regions and capture ranges have no JFR event type */
        return 0;
    }
}

/* Kernels without GPU timestamps, at their launch call (or the session's start without one). */
static int untimed_kernels(jfr_sink *k, char *err, size_t err_size)
{
    wl_kernel_filter f = {-1, -1, WL_KERNEL_UNTIMED};
    wl_kernel_cursor *cur = wl_kernel_cursor_open(k->s, &f, err, err_size);
    tl_occ_cache *occ = tl_occ_cache_new();
    if (!cur || !occ) {
        wl_kernel_cursor_close(cur);
        tl_occ_cache_free(occ);
        return -1;
    }
    for (size_t i = 0; i < k->n_devs; i++) {
        wl_device_row d;
        if (wl_session_device(k->s, k->devs[i].pid, k->devs[i].device, &d) == 0 && tl_occ_add_device(occ, &d))
            k->failed = 1;
    }
    wl_kernel_row r;
    int rc = 0;
    while (!k->failed && (rc = wl_kernel_cursor_next(cur, &r)) == 1) {
        wl_gpu_item *g = calloc(1, sizeof *g);
        if (!g) {
            k->failed = 1;
            break;
        }
        g->kind = WL_GPU_KERNEL, g->pid = r.pid, g->device_id = r.device_id;
        memcpy(g->grid, r.grid, sizeof g->grid);
        memcpy(g->block, r.block, sizeof g->block);
        g->cluster_size = r.cluster[0] * r.cluster[1] * r.cluster[2];
        if (g->cluster_size < 1)
            g->cluster_size = 1;
        g->registers = r.registers_per_thread, g->static_smem = (int)r.static_smem;
        g->dynamic_smem = (int)r.dynamic_smem, g->smem_limit_config = r.smem_limit_config;
        g->carveout = r.carveout_requested;
        tl_occ o;
        tl_occ_kernel(occ, g, &o);
        free(g);
        held h;
        memset(&h, 0, sizeof h);
        kernel_values(h.v, find_dev(k, r.pid, r.device_id, 0), r.pid, r.device_id, r.id, r.grid, r.block,
                      r.registers_per_thread, r.static_smem, r.dynamic_smem, r.local_mem_per_thread, r.stream_id,
                      r.correlation_id, r.scope_id, &o);
        h.v[WL_JK_LAUNCH_NS] = vi(nonneg(r.api_duration_ns));
        h.v[WL_JK_QUEUE_NS] = vi(nonneg(r.queue_delay_ns));
        h.v[WL_JK_SUBMIT_NS] = vi(nonneg(r.submit_delay_ns));
        double flops = 0, bytes = 0;
        char prec[16];
        if (k->annotations)
            wl_session_kernel_annotation(k->s, r.id, &flops, &bytes, prec, sizeof prec);
        throughput(h.v, 0, bytes, 0);
        h.start = h.end = r.api_start_ns ? r.api_start_ns : k->origin;
        h.pid = r.pid, h.device = r.device_id, h.stream = r.stream_id, h.name_id = r.name_id;
        h.op_id = -1; /* found by their bytes */
        h.has_tid = r.tid >= 0, h.tid = (uint32_t)r.tid;
        snprintf(h.scope, sizeof h.scope, "%s", r.scope_name);
        snprintf(h.op, sizeof h.op, "%s", r.operation);
        snprintf(h.shape, sizeof h.shape, "%s", r.shape);
        snprintf(h.tier, sizeof h.tier, "%s", r.tier);
        h.v[WL_JK_VTHREAD] = vi(r.app_thread);
        if (!kernel_name(k, r.name_id, r.name[0] ? r.name : r.mangled, r.short_name) || write_kernel(k, &h))
            k->failed = 1;
    }
    wl_kernel_cursor_close(cur);
    tl_occ_cache_free(occ);
    return k->failed || rc < 0 ? -1 : 0;
}

static int has_kernel_annotations(wl_session *s)
{
    wl_annotated_work *w = NULL;
    int n = wl_session_annotated_work(s, &w), found = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(w[i].kind, "kernel"))
            found = 1;
    free(w);
    return found;
}

/* One pass (export_rerun.h). */
static int jfr_pass(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err, size_t err_size)
{
    memset(st, 0, sizeof *st);
    jfr_sink k;
    memset(&k, 0, sizeof k);
    k.s = s, k.st = st, k.min_end = UINT64_MAX;
    wl_session_span span;
    wl_session_get_bounds(s, &span);
    k.origin = span.origin_ns;
    wl_tl_options opt = o ? *o : (wl_tl_options){0};
    opt.flat = 1;
    int rc = -1;
    snprintf(err, err_size, "JFR export failed (out of memory or output error)");
    k.c = wl_jfr_chunk_open(fp, k.origin, CHUNK_BYTES);
    if (k.c && wl_session_each_device(s, on_device, &k) >= 0 && !k.failed &&
        (k.snaps = jfr_snapshots_open(s, write_snapshot, &k))) {
        k.annotations = has_kernel_annotations(s);
        wl_tl_sink sink = {&k, sink_track, sink_slice, NULL, NULL, sink_gpu_state};
        int walked = wl_timeline_walk(s, &opt, &sink, &st->tl, err, err_size);
        /* the untimed kernels' own scan reads the whole kernel table: not when the walk saw none */
        if (walked == 0 && release_held(&k, UINT64_MAX) == 0 &&
            (st->tl.untimed_kernels == 0 || untimed_kernels(&k, err, err_size) == 0) &&
            jfr_snapshots_finish(k.snaps) == 0)
            rc = 0;
        else if (walked == WL_TL_RESTART)
            rc = WL_TL_RESTART;
    }
    if (k.c && wl_jfr_chunk_close(k.c, &st->bytes, &st->chunks) && rc == 0) {
        snprintf(err, err_size, "writing the JFR file failed");
        rc = -1;
    }
    if (rc == 0)
        err[0] = 0;
    for (size_t i = 0; i < k.cap_names; i++)
        free(k.names[i].name);
    free(k.names);
    for (size_t i = 0; i < k.n_alloc; i++)
        free(k.held[i]);
    free(k.held);
    free(k.devs);
    jfr_snapshots_close(k.snaps);
    return rc;
}

int wl_export_jfr(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err, size_t err_size)
{
    return wl_export_rerun(jfr_pass, s, fp, o, st, err, err_size);
}
