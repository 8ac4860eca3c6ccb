/* The timeline model (see timeline_model.h): tracks for processes, threads, GPUs and streams,
 * lane assignment so slices nest on every track, slice annotations and flows. Host intervals and
 * GPU work come in start order, merged (timeline_prefetch.c reads both ahead in two threads);
 * ends are emitted lazily, just before the next begin on the same lane (or when the walk ends),
 * so each lane's events are in time order with END before a BEGIN at the same timestamp. */
#include "export/timeline_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/collective_match.h"
#include "analysis/kernel_backend.h"
#include "export/timeline_index.h"
#include "export/timeline_internal.h"

#define MAX_DEPTH 256          /* Perfetto allows < 512 nested slices per track */
#define HOST_LANE_TID 0x40000000u
#define RANK_STREAM_TID 0x20000000u /* ranked sessions: a rank's streams, under its process: + device << 16 */

typedef struct tl_lane {
    wl_tl_track t;
    char name[192];
    uint64_t *ends;            /* open slices' end times, innermost last */
    int depth, cap;
} tl_lane;

typedef struct tl_group {      /* a thread or a stream with its lanes */
    uint32_t pid, tid, device;
    int64_t stream;
    tl_lane **lanes;
    int n;
} tl_group;

typedef struct tl_gpu {
    uint32_t device;
    wl_tl_track t;
    char name[192];
    tl_counters counters;
    wl_tl_track samples[TL_SAMPLE_SERIES]; /* NVML series, declared at the first sample (uuid 0 before) */
    uint32_t next_tid;
} tl_gpu;

typedef struct ptr_list {
    void **p;
    size_t n, cap;
} ptr_list;

typedef struct backend_slot { /* the backend of a kernel name, decided once per name */
    int64_t name_id;
    const char *backend;
} backend_slot;

typedef struct model {
    wl_session *s;
    const wl_tl_options *o;
    const wl_tl_sink *sink;
    wl_tl_stats *st;
    int max_lanes;
    uint64_t next_uuid;
    uint32_t next_host_lane_tid;
    ptr_list procs, threads, streams, gpus; /* tl_group (procs: lane 0 only), tl_gpu */
    tl_index by_key;           /* processes, threads, GPUs and streams by their key */
    tl_occ_cache *occ;
    tl_flows flows;            /* started by an API call, not yet ended by its GPU work */
    tl_metrics *metrics;       /* NULL: the session has no hardware metrics */
    backend_slot backends[1024];
    int ranked;                /* several ranks or hosts: processes named host / rank N / pid, each with its GPUs */
    wl_coll_links *coll;       /* collectives run by several processes: flows first -> last arrival */
    tl_flows coll_started;     /* those flows drawn from their first arrival */
    uint64_t done, total;
    int failed;
} model;

static int list_add(ptr_list *l, void *p)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16;
        void **q = realloc(l->p, ncap * sizeof *q);
        if (!q)
            return -1;
        l->p = q;
        l->cap = ncap;
    }
    l->p[l->n++] = p;
    return 0;
}

static int emit_track(model *m, const wl_tl_track *t)
{
    m->st->tracks++;
    return m->sink->track && m->sink->track(m->sink->ctx, t) ? -1 : 0;
}

static tl_lane *new_lane(model *m, wl_tl_track_type type, uint64_t parent, uint32_t pid, uint32_t tid,
                         const char *name, int sort_index, int64_t stream)
{
    tl_lane *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    snprintf(l->name, sizeof l->name, "%s", name);
    l->t = (wl_tl_track){.uuid = ++m->next_uuid, .parent_uuid = parent, .type = type, .pid = pid, .tid = tid,
                         .name = l->name, .sort_index = sort_index, .stream_id = stream};
    if (emit_track(m, &l->t)) {
        free(l);
        return NULL;
    }
    return l;
}

static void free_group(tl_group *g)
{
    for (int i = 0; g && i < g->n; i++) {
        free(g->lanes[i]->ends);
        free(g->lanes[i]);
    }
    if (g)
        free(g->lanes);
    free(g);
}

static tl_group *new_group(model *m, tl_lane *base, uint32_t pid, uint32_t tid, uint32_t device, int64_t stream)
{
    tl_group *g = calloc(1, sizeof *g);
    if (!g || !base || !(g->lanes = malloc(sizeof *g->lanes))) {
        free(g);
        free(base);
        return NULL;
    }
    g->lanes[0] = base;
    g->n = 1;
    g->pid = pid, g->tid = tid, g->device = device, g->stream = stream;
    (void)m;
    return g;
}

/* ---- processes and threads -------------------------------------------------------------------- */

static tl_group *find_proc(model *m, uint32_t pid)
{
    return tl_index_get(&m->by_key, (tl_key){TL_KEY_PROC, pid, 0, 0});
}

/* Adds an object to its list and the index; -1 out of memory (the object is the caller's to free
 * unless it made the list). */
static int keep(model *m, ptr_list *l, tl_key k, void *p)
{
    if (list_add(l, p))
        return -1;
    if (tl_index_put(&m->by_key, k, p)) {
        l->n--;
        return -1;
    }
    return 0;
}

static tl_group *declare_proc(model *m, uint32_t pid, const char *cmdline, const wl_process_row *row)
{
    tl_group *g = find_proc(m, pid);
    if (g)
        return g;
    /* the program's base name: "python3", "warplens_demo"; in a ranked session where it ran */
    char name[160] = "";
    size_t len = strcspn(cmdline, " ");
    const char *p = cmdline;
    for (size_t i = 0; i < len; i++)
        if (cmdline[i] == '/')
            p = cmdline + i + 1;
    snprintf(name, sizeof name, "%.*s", (int)(cmdline + len - p), p);
    if (!name[0])
        snprintf(name, sizeof name, "process %u", pid);
    if (m->ranked && row) {
        const char *host = row->hostname[0] ? row->hostname : "?";
        if (row->rank >= 0)
            snprintf(name, sizeof name, "%.100s / rank %d / %u", host, row->rank, pid);
        else
            snprintf(name, sizeof name, "%.100s / %u", host, pid);
    }
    tl_lane *l = new_lane(m, WL_TL_PROCESS, 0, pid, pid, name, (int)m->procs.n, -1);
    g = new_group(m, l, pid, pid, 0, -1);
    if (!g || keep(m, &m->procs, (tl_key){TL_KEY_PROC, pid, 0, 0}, g)) {
        free_group(g);
        return NULL;
    }
    return g;
}

static void on_process(const wl_process_row *r, void *arg)
{
    model *m = arg;
    if (!declare_proc(m, r->pid, r->cmdline, r))
        m->failed = 1;
}

typedef struct rank_census {
    int ranks, procs;
    char host[128];
    int hosts; /* 1, or 2 for more */
} rank_census;

static void count_rank(const wl_process_row *r, void *arg)
{
    rank_census *c = arg;
    c->procs++;
    c->ranks += r->rank >= 0;
    if (!c->hosts) {
        snprintf(c->host, sizeof c->host, "%s", r->hostname);
        c->hosts = 1;
    } else if (strcmp(c->host, r->hostname)) {
        c->hosts = 2;
    }
}

/* A ranked session: several processes of which two have a rank, or processes of two hosts (a
 * merged job). */
static int session_ranked(wl_session *s)
{
    rank_census c = {0};
    if (wl_session_each_process(s, count_rank, &c) < 0)
        return 0;
    return c.procs > 1 && (c.ranks > 1 || c.hosts > 1);
}

static tl_group *declare_thread(model *m, uint32_t pid, uint32_t tid, const char *name)
{
    tl_group *p = declare_proc(m, pid, "", NULL);
    if (!p)
        return NULL;
    char label[160];
    if (name && name[0])
        snprintf(label, sizeof label, "%s", name);
    else
        snprintf(label, sizeof label, tid ? "thread %u" : "unknown thread", tid);
    tl_lane *l = new_lane(m, WL_TL_THREAD, p->lanes[0]->t.uuid, pid, tid, label, (int)m->threads.n, -1);
    tl_group *g = new_group(m, l, pid, tid, 0, -1);
    if (!g || keep(m, &m->threads, (tl_key){TL_KEY_THREAD, pid, tid, 0}, g)) {
        free_group(g);
        return NULL;
    }
    return g;
}

static void on_thread(uint32_t pid, uint32_t tid, const char *name, void *arg)
{
    model *m = arg;
    if (!declare_thread(m, pid, tid, name))
        m->failed = 1;
}

static tl_group *find_thread(model *m, uint32_t pid, uint32_t tid)
{
    tl_group *g = tl_index_get(&m->by_key, (tl_key){TL_KEY_THREAD, pid, tid, 0});
    if (g)
        return g;
    char name[160];
    wl_session_thread_name(m->s, pid, tid, name, sizeof name);
    return declare_thread(m, pid, tid, name);
}

/* ---- GPUs and streams ------------------------------------------------------------------------- */

/* The GPU device of process pid: in a ranked session each process's own, a track under its
 * process (pid 0: a device no process is named for); else one synthetic process per device. */
static tl_gpu *find_gpu(model *m, uint32_t pid, uint32_t device, const char *name)
{
    uint32_t owner = m->ranked ? pid : 0;
    tl_gpu *g = tl_index_get(&m->by_key, (tl_key){TL_KEY_GPU, owner, device, 0});
    if (g)
        return g;
    tl_group *proc = owner ? declare_proc(m, owner, "", NULL) : NULL;
    if (owner && !proc)
        return NULL;
    g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->device = device;
    g->next_tid = owner ? RANK_STREAM_TID + (device << 16) + 1 : 1;
    snprintf(g->name, sizeof g->name, "GPU %u%s%s%s", device, name && name[0] ? " (" : "", name ? name : "",
             name && name[0] ? ")" : "");
    uint32_t gpid = owner ? owner : WL_TL_GPU_PID_BASE + device;
    g->t = (wl_tl_track){.uuid = ++m->next_uuid, .parent_uuid = proc ? proc->lanes[0]->t.uuid : 0, .type = WL_TL_GPU,
                         .pid = gpid, .tid = 0, .name = g->name, .sort_index = 1000 + (int)device, .stream_id = -1};
    tl_counters_init(&g->counters, device);
    g->counters.fill_track = (wl_tl_track){.uuid = ++m->next_uuid, .parent_uuid = g->t.uuid, .type = WL_TL_COUNTER,
                                           .pid = gpid, .name = "GPU fill (estimated %)", .sort_index = 0,
                                           .unit = "%", .stream_id = -1};
    g->counters.count_track = (wl_tl_track){.uuid = ++m->next_uuid, .parent_uuid = g->t.uuid,
                                            .type = WL_TL_COUNTER, .pid = gpid, .name = "Concurrent kernels",
                                            .sort_index = 1, .unit = "kernels", .stream_id = -1};
    if (keep(m, &m->gpus, (tl_key){TL_KEY_GPU, owner, device, 0}, g)) {
        tl_counters_free(&g->counters);
        free(g);
        return NULL;
    }
    if (emit_track(m, &g->t) || emit_track(m, &g->counters.fill_track) || emit_track(m, &g->counters.count_track))
        return NULL; /* g is the list's */
    return g;
}

static void on_device(const wl_device_row *d, void *arg)
{
    model *m = arg;
    if (!find_gpu(m, d->pid, d->device_id, d->name) || tl_occ_add_device(m->occ, d))
        m->failed = 1;
}

static tl_group *find_stream(model *m, const wl_gpu_item *it)
{
    tl_key k = {TL_KEY_STREAM, it->pid, it->device_id, (uint64_t)it->stream_id};
    tl_group *g = tl_index_get(&m->by_key, k);
    if (g)
        return g;
    tl_gpu *gpu = find_gpu(m, it->pid, it->device_id, NULL);
    if (!gpu)
        return NULL;
    char name[96];
    int many_procs = m->procs.n > 1 && !m->ranked; /* ranked: under the process already */
    if (many_procs)
        snprintf(name, sizeof name, "Stream %lld (pid %u)", (long long)it->stream_id, it->pid);
    else
        snprintf(name, sizeof name, "Stream %lld", (long long)it->stream_id);
    tl_lane *l = new_lane(m, WL_TL_STREAM, gpu->t.uuid, gpu->t.pid, gpu->next_tid++, name,
                          (int)(it->stream_id * 64), it->stream_id);
    g = new_group(m, l, it->pid, 0, it->device_id, it->stream_id);
    if (!g || keep(m, &m->streams, k, g)) {
        free_group(g);
        return NULL;
    }
    return g;
}

/* ---- lanes ------------------------------------------------------------------------------------ */

static int pop_until(model *m, tl_lane *l, uint64_t ts)
{
    while (l->depth && l->ends[l->depth - 1] <= ts) {
        uint64_t e = l->ends[--l->depth];
        if (m->sink->slice_end && m->sink->slice_end(m->sink->ctx, &l->t, e))
            return -1;
    }
    return 0;
}

static int flush_group(model *m, tl_group *g)
{
    for (int i = 0; i < g->n; i++)
        if (pop_until(m, g->lanes[i], UINT64_MAX))
            return -1;
    return 0;
}

/* First lane where [start, end] nests; NULL when none within max_lanes (*err on failure). */
static tl_lane *place(model *m, tl_group *g, uint64_t start, uint64_t end, int *err)
{
    if (m->o && m->o->flat)
        return g->lanes[0];
    for (int i = 0; i < m->max_lanes; i++) {
        if (i == g->n) {
            tl_lane **nl = realloc(g->lanes, (size_t)(g->n + 1) * sizeof *nl);
            if (!nl)
                break;
            g->lanes = nl;
            const wl_tl_track *b = &g->lanes[0]->t;
            char name[224];
            snprintf(name, sizeof name, "%s (overlap %d)", b->name, i);
            uint32_t tid = b->type == WL_TL_STREAM ? ((tl_gpu *)find_gpu(m, g->pid, g->device, NULL))->next_tid++
                                                   : HOST_LANE_TID + m->next_host_lane_tid++;
            tl_lane *l = new_lane(m, WL_TL_LANE, b->uuid, b->pid, tid, name, b->sort_index + i, b->stream_id);
            if (!l)
                break;
            g->lanes[g->n++] = l;
            m->st->lanes_added++;
        }
        tl_lane *l = g->lanes[i];
        if (pop_until(m, l, start))
            break;
        if (l->depth == 0 || (l->ends[l->depth - 1] >= end && l->depth < MAX_DEPTH)) {
            if (l->depth == l->cap) {
                int ncap = l->cap ? l->cap * 2 : 8;
                uint64_t *e = realloc(l->ends, (size_t)ncap * sizeof *e);
                if (!e)
                    break;
                l->ends = e;
                l->cap = ncap;
            }
            l->ends[l->depth++] = end;
            return l;
        }
        if (i + 1 == m->max_lanes)
            return NULL;
    }
    *err = 1;
    return NULL;
}

/* ---- slices ----------------------------------------------------------------------------------- */

static wl_pf_arg arg_u(const char *n, uint64_t v) { return (wl_pf_arg){.name = n, .kind = WL_PF_ARG_UINT, .u = v}; }
static wl_pf_arg arg_i(const char *n, int64_t v) { return (wl_pf_arg){.name = n, .kind = WL_PF_ARG_INT, .i = v}; }
static wl_pf_arg arg_d(const char *n, double v) { return (wl_pf_arg){.name = n, .kind = WL_PF_ARG_DOUBLE, .d = v}; }
static wl_pf_arg arg_s(const char *n, const char *v) { return (wl_pf_arg){.name = n, .kind = WL_PF_ARG_STRING, .s = v}; }
static wl_pf_arg arg_b(const char *n, int v) { return (wl_pf_arg){.name = n, .kind = WL_PF_ARG_BOOL, .u = (uint64_t)!!v}; }

/* "264x1x1" without printf (this runs once per kernel) */
static const char *dims(char *b, const int d[3])
{
    char *p = b;
    for (int i = 0; i < 3; i++) {
        char t[12];
        int n = 0;
        unsigned v = d[i] > 0 ? (unsigned)d[i] : 0;
        do {
            t[n++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (n)
            *p++ = t[--n];
        *p++ = i < 2 ? 'x' : 0;
    }
    return b;
}

static void progress(model *m)
{
    if (m->o && m->o->progress.update && (++m->done & 0xffff) == 0)
        wl_progress_note(&m->o->progress, m->done, m->total);
}

static int host_item(model *m, tl_group *g, const wl_host_item *it)
{
    int err = 0;
    tl_lane *l = place(m, g, it->start_ns, it->end_ns, &err);
    if (err)
        return -1;
    if (!l) { /* its flows are not started, so their destinations end none */
        m->st->slices_dropped++;
        return 0;
    }
    wl_pf_arg args[6 + TL_METRIC_ARGS];
    size_t n = 0;
    wl_tl_slice s = {.track = &l->t, .start_ns = it->start_ns, .end_ns = it->end_ns, .name = it->name,
                     .host = it, .occupancy_pct = -1, .launch_ns = -1};
    if (it->kind == WL_HOST_API) {
        s.kind = WL_TL_API;
        s.category = "cuda_api";
        args[n++] = arg_s("category", it->group);
        args[n++] = arg_u("correlation_id", it->correlation_id);
        if (it->scope[0])
            args[n++] = arg_s("scope", it->scope);
        if (it->return_value)
            args[n++] = arg_i("return_value", it->return_value);
        if (m->metrics)
            n += tl_metrics_launch(m->metrics, it->id, args + n);
        s.flows_out = it->flows;
        s.n_flows_out = it->n_flows;
        m->st->flows += it->n_flows;
        for (size_t i = 0; i < it->n_flows; i++)
            if (tl_flows_add(&m->flows, it->flows[i], it->end_ns - it->start_ns))
                return -1;
    } else if (it->kind == WL_HOST_TIMER) {
        s.kind = WL_TL_TIMER;
        s.category = "timer";
        args[n++] = arg_s("timer", it->group);
    } else {
        s.kind = it->kind == WL_HOST_NVTX ? WL_TL_NVTX : WL_TL_SCOPE;
        s.category = it->kind == WL_HOST_NVTX ? "nvtx" : "scope";
        if (it->group[0])
            args[n++] = arg_s("domain", it->group);
        if (it->kind == WL_HOST_SCOPE)
            args[n++] = arg_u("scope_id", (uint64_t)it->id);
        if (it->open_end)
            args[n++] = arg_b("unterminated", 1);
        if (m->metrics)
            n += tl_metrics_range(m->metrics, it->kind, it->pid, it->id, args + n);
    }
    s.args = args;
    s.n_args = n;
    m->st->slices++;
    m->st->host_slices++;
    return m->sink->slice_begin && m->sink->slice_begin(m->sink->ctx, &s) ? -1 : 0;
}

static const char *backend_of(model *m, const wl_gpu_item *it)
{
    backend_slot *b = &m->backends[(uint64_t)it->name_id & 1023];
    if (!b->backend || b->name_id != it->name_id)
        *b = (backend_slot){it->name_id, wl_kernel_backend(it->short_name, it->name, NULL)};
    return b->backend;
}

static int gpu_item(model *m, const wl_gpu_item *it)
{
    tl_group *g = find_stream(m, it);
    tl_gpu *gpu = g ? find_gpu(m, it->pid, it->device_id, NULL) : NULL;
    if (!gpu)
        return -1;
    tl_occ occ = {0};
    if (it->kind == WL_GPU_KERNEL) {
        tl_occ_kernel(m->occ, it, &occ);
        if (tl_counters_kernel(&gpu->counters, it->start_ns, it->end_ns, occ.valid ? occ.fill : 0.0, it->stream_id,
                               m->sink, m->st))
            return -1;
    }
    /* the flow of its API call when that call was drawn (it came first: it started no later) */
    uint64_t flow = it->kind == WL_GPU_KERNEL ? WL_FLOW_KERNEL(it->id)
                    : it->kind == WL_GPU_MEMCPY ? WL_FLOW_MEMCPY(it->id) : WL_FLOW_MEMSET(it->id);
    uint64_t launch_ns = 0;
    if (!tl_flows_take(&m->flows, flow, &launch_ns))
        flow = 0;
    int err = 0;
    tl_lane *l = place(m, g, it->start_ns, it->end_ns, &err);
    if (err)
        return -1;
    if (!l) {
        m->st->slices_dropped++;
        return 0;
    }
    char grid[48], block[48], name[40];
    wl_pf_arg args[21 + TL_METRIC_ARGS];
    size_t n = 0;
    wl_tl_slice s = {.track = &l->t, .start_ns = it->start_ns, .end_ns = it->end_ns, .gpu = it,
                     .occupancy_pct = occ.valid ? occ.occupancy_pct : -1, .fill = occ.valid ? occ.fill : 0,
                     .active_blocks_per_sm = occ.active_blocks_per_sm, .limiter = occ.valid ? occ.limiter : NULL,
                     .launch_ns = flow ? (int64_t)launch_ns : -1};
    /* a collective other ranks ran too: a flow from the first rank to arrive to the last */
    uint64_t coll_out = 0, coll_in = 0, unused;
    if (m->coll && it->kind == WL_GPU_KERNEL) {
        wl_coll_links_get(m->coll, it->pid, it->stream_id, it->start_ns, &coll_out, &coll_in);
        if (coll_out) {
            if (tl_flows_add(&m->coll_started, coll_out, 0))
                return -1;
            s.flows_out = &coll_out;
            s.n_flows_out = 1;
            m->st->flows++;
        }
        if (coll_in && tl_flows_take(&m->coll_started, coll_in, &unused))
            s.rank_flow_in = coll_in;
    }
    if (it->kind == WL_GPU_KERNEL) {
        s.kind = WL_TL_KERNEL;
        s.category = "kernel";
        s.name = it->name;
        s.name_key = ((uint64_t)it->name_id << 1) | 1; /* the name comes from kernel_name by this id */
        args[n++] = arg_s("grid", dims(grid, it->grid));
        args[n++] = arg_s("block", dims(block, it->block));
        args[n++] = arg_u("registers_per_thread", (uint64_t)it->registers);
        args[n++] = arg_u("static_smem", (uint64_t)it->static_smem);
        args[n++] = arg_u("dynamic_smem", (uint64_t)it->dynamic_smem);
        if (occ.valid) {
            args[n++] = arg_d("occupancy_pct", occ.occupancy_pct);
            args[n++] = arg_s("occupancy_limiter", occ.limiter);
            args[n++] = arg_u("active_blocks_per_sm", (uint64_t)occ.active_blocks_per_sm);
        }
        if (it->queue_delay_ns >= 0)
            args[n++] = arg_u("queue_delay_ns", (uint64_t)it->queue_delay_ns);
        if (it->graph_id >= 0)
            args[n++] = arg_u("graph_id", (uint64_t)it->graph_id);
        /* identity (store/session_identity.h, analysis/kernel_backend.h) */
        args[n++] = arg_s("backend", backend_of(m, it));
        if (it->op[0])
            args[n++] = arg_s("operation", it->op);
        if (it->shape[0])
            args[n++] = arg_s("shape", it->shape);
        if (it->tier[0])
            args[n++] = arg_s("tier", it->tier);
        if (it->app_thread)
            args[n++] = arg_i("app_thread_id", it->app_thread);
    } else {
        s.kind = it->kind == WL_GPU_MEMCPY ? WL_TL_MEMCPY : WL_TL_MEMSET;
        s.category = it->kind == WL_GPU_MEMCPY ? "memcpy" : "memset";
        if (it->kind == WL_GPU_MEMCPY)
            snprintf(name, sizeof name, "Memcpy %s", it->copy_kind);
        else
            snprintf(name, sizeof name, "Memset");
        s.name = name;
        args[n++] = arg_u("bytes", it->bytes);
        if (it->src_kind[0])
            args[n++] = arg_s("src", it->src_kind);
        args[n++] = arg_s(it->kind == WL_GPU_MEMCPY ? "dst" : "memory", it->dst_kind);
        args[n++] = arg_d("bandwidth_gbps", it->gbps);
    }
    args[n++] = arg_u("correlation_id", it->correlation_id);
    if (it->scope[0])
        args[n++] = arg_s("scope", it->scope);
    if (m->metrics && it->kind == WL_GPU_KERNEL)
        n += tl_metrics_kernel(m->metrics, it->id, args + n);
    s.flow_in = flow;
    s.args = args;
    s.n_args = n;
    m->st->slices++;
    m->st->gpu_slices++;
    return m->sink->slice_begin && m->sink->slice_begin(m->sink->ctx, &s) ? -1 : 0;
}

/* ---- NVML device samples ---------------------------------------------------------------------- */

/* One time-ordered series per device and metric, written after the walk (trace viewers sort
 * events by time; each counter track is in order by itself). Samples before the session's origin
 * are left out: timestamps are written relative to it. */
static int on_sample(const wl_device_sample_row *r, void *arg)
{
    model *m = arg;
    if (r->ts_ns < m->st->origin_ns)
        return 0;
    tl_gpu *g = find_gpu(m, r->pid, r->device_id, NULL);
    if (!g) {
        m->failed = 1;
        return 1;
    }
    for (int i = 0; i < TL_SAMPLE_SERIES; i++) {
        double v;
        if (!tl_sample_value(r, i, &v))
            continue;
        wl_tl_track *t = &g->samples[i];
        if (!t->uuid) {
            const char *name, *unit;
            tl_sample_series(i, &name, &unit);
            *t = (wl_tl_track){.uuid = ++m->next_uuid, .parent_uuid = g->t.uuid, .type = WL_TL_COUNTER,
                               .pid = g->t.pid, .name = name, .sort_index = 2 + i, .unit = unit, .stream_id = -1};
            if (emit_track(m, t))
                goto fail;
        }
        if (m->sink->counter && m->sink->counter(m->sink->ctx, t, r->ts_ns, v))
            goto fail;
        m->st->counter_events++;
    }
    return 0;
fail:
    m->failed = 1;
    return 1;
}

static const wl_tl_track *pm_gpu(void *ctx, uint32_t device)
{
    tl_gpu *g = find_gpu(ctx, 0, device, NULL);
    return g ? &g->t : NULL;
}

/* ---- the walk --------------------------------------------------------------------------------- */

/* Host and GPU rows, each read ahead by its own thread, are merged by start time (host first on
 * ties): every thread and stream stays open until the end, and an API call is laid out before
 * the GPU work it started, so a dropped call's flows are known when its work arrives. */
static int walk(model *m, uint64_t open_end, char *err, size_t n)
{
    int flags = m->o && m->o->table_order ? WL_CUR_TABLE_ORDER : 0;
    tl_reader *hr = tl_reader_host(m->s, open_end, err, n);
    tl_reader *gr = hr ? tl_reader_gpu(m->s, flags, err, n) : NULL;
    int rc = hr && gr ? 0 : -1, hfail = 0, gfail = 0;
    const wl_host_item *h = rc == 0 ? tl_reader_next_host(hr, &hfail) : NULL;
    const wl_gpu_item *g = rc == 0 ? tl_reader_next_gpu(gr, &gfail) : NULL;
    tl_group *tg = NULL;
    uint64_t until = m->o && m->o->until_ns ? m->o->until_ns : UINT64_MAX;
    while (rc == 0) {
        /* both cursors run in start order: the first row past the window ends its side */
        if (h && h->start_ns >= until)
            h = NULL;
        if (g && g->start_ns >= until)
            g = NULL;
        if (!h && !g)
            break;
        if (h && (!g || h->start_ns <= g->start_ns)) {
            if ((!tg || tg->pid != h->pid || tg->tid != h->tid) && !(tg = find_thread(m, h->pid, h->tid)))
                rc = -1;
            else if (host_item(m, tg, h))
                rc = -1;
            h = tl_reader_next_host(hr, &hfail);
        } else {
            if (gpu_item(m, g))
                rc = -1;
            g = tl_reader_next_gpu(gr, &gfail);
        }
        if (hfail || gfail) /* the rest of the other side would be read for nothing */
            break;
        progress(m);
    }
    if (rc == 0 && !h && !g && !hfail && !gfail) /* both sides read to their end */
        m->st->untimed_kernels = tl_reader_untimed(gr);
    if (rc == 0 && (hfail == WL_CUR_RESTART || gfail == WL_CUR_RESTART)) {
        snprintf(err, n, "kernels read in table order came out of start order"); /* export_rerun.h starts over */
        rc = WL_TL_RESTART;
    } else if (rc == 0 && (hfail || gfail)) {
        snprintf(err, n, "reading %s records failed", hfail ? "host" : "GPU");
        rc = -1;
    }
    tl_reader_close(hr);
    tl_reader_close(gr);
    for (size_t i = 0; rc == 0 && i < m->threads.n; i++)
        if (flush_group(m, m->threads.p[i]))
            rc = -1;
    for (size_t i = 0; rc == 0 && i < m->streams.n; i++)
        if (flush_group(m, m->streams.p[i]))
            rc = -1;
    for (size_t i = 0; rc == 0 && i < m->gpus.n; i++)
        if (tl_counters_finish(&((tl_gpu *)m->gpus.p[i])->counters, m->sink, m->st))
            rc = -1;
    if (rc == 0 && (wl_session_each_device_sample_by_time(m->s, on_sample, m) < 0 || m->failed))
        rc = -1;
    if (rc == 0 && tl_pm_walk(m->s, m->sink, m->st, &m->next_uuid, pm_gpu, m) != 0)
        rc = -1;
    return rc;
}

static int inkernel_stream(void *ctx, uint32_t pid, uint32_t device, int64_t stream, const wl_tl_track **base,
                           uint32_t *tid)
{
    model *m = ctx;
    wl_gpu_item it;
    memset(&it, 0, sizeof it);
    it.pid = pid, it.device_id = device, it.stream_id = stream;
    tl_group *g = find_stream(m, &it);
    tl_gpu *gpu = g ? find_gpu(m, pid, device, NULL) : NULL;
    if (!gpu)
        return -1;
    *base = &g->lanes[0]->t;
    *tid = gpu->next_tid++;
    return 0;
}

static int process_track(void *ctx, uint32_t pid, const wl_tl_track **track)
{
    tl_group *g = find_proc(ctx, pid);
    if (!g)
        return -1;
    *track = &g->lanes[0]->t;
    return 0;
}

int wl_timeline_walk(wl_session *s, const wl_tl_options *o, const wl_tl_sink *sink, wl_tl_stats *st, char *err,
                     size_t err_size)
{
    model m;
    memset(&m, 0, sizeof m);
    memset(st, 0, sizeof *st);
    st->untimed_kernels = -1;
    m.s = s, m.o = o, m.sink = sink, m.st = st;
    m.max_lanes = o && o->max_lanes > 0 ? o->max_lanes : 32;
    wl_session_span span; /* the row counts only serve progress reports */
    if (o && o->progress.update)
        wl_session_get_span(s, &span);
    else
        wl_session_get_bounds(s, &span);
    st->origin_ns = span.origin_ns;
    st->end_ns = span.end_ns;
    m.total = span.api_calls + span.nvtx_ranges + span.scopes + span.timers + span.kernels + span.memcpys + span.memsets;
    int rc = -1, metrics_failed = 0;
    m.metrics = tl_metrics_open(s, &metrics_failed, err, err_size);
    if (metrics_failed)
        return -1;
    snprintf(err, err_size, "timeline export failed (out of memory or output error)");
    m.ranked = session_ranked(s);
    if (m.ranked) {
        char why[256];
        m.coll = wl_coll_links_build(s, why, sizeof why);
        if (!m.coll && why[0]) {
            snprintf(err, err_size, "%s", why);
            tl_metrics_close(m.metrics);
            return -1;
        }
    }
    int walked = -1;
    if ((m.occ = tl_occ_cache_new()) && wl_session_each_process(s, on_process, &m) >= 0 && !m.failed &&
        wl_session_each_thread(s, on_thread, &m) >= 0 && !m.failed && wl_session_each_device(s, on_device, &m) >= 0 &&
        !m.failed && (walked = walk(&m, span.end_ns, err, err_size)) == 0 &&
        tl_inkernel_walk(s, sink, st, &m.next_uuid, o ? o->inkernel_max_lanes : 0, inkernel_stream, &m, err,
                         err_size) == 0 &&
        tl_capture_walk(s, sink, st, &m.next_uuid, process_track, &m, err, err_size) == 0)
        rc = 0;
    else if (walked == WL_TL_RESTART)
        rc = WL_TL_RESTART;
    if (rc == 0)
        err[0] = 0;
    if (o && rc != WL_TL_RESTART)
        wl_progress_note(&o->progress, m.total, m.total);
    for (size_t i = 0; i < m.procs.n; i++)
        free_group(m.procs.p[i]);
    for (size_t i = 0; i < m.threads.n; i++)
        free_group(m.threads.p[i]);
    for (size_t i = 0; i < m.streams.n; i++)
        free_group(m.streams.p[i]);
    for (size_t i = 0; i < m.gpus.n; i++) {
        tl_counters_free(&((tl_gpu *)m.gpus.p[i])->counters);
        free(m.gpus.p[i]);
    }
    free(m.procs.p);
    free(m.threads.p);
    free(m.streams.p);
    free(m.gpus.p);
    tl_index_free(&m.by_key);
    tl_flows_free(&m.flows);
    tl_flows_free(&m.coll_started);
    wl_coll_links_free(m.coll);
    tl_occ_cache_free(m.occ);
    tl_metrics_close(m.metrics);
    return rc;
}
