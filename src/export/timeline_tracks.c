/* The timeline's tracks and lanes (see timeline_tracks.h). */
#include "export/timeline_tracks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256          /* Perfetto allows < 512 nested slices per track */
#define HOST_LANE_TID 0x40000000u
#define RANK_STREAM_TID 0x20000000u /* ranked sessions: a rank's streams, under its process: + device << 16 */

static int list_add(tl_ptr_list *l, void *p)
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

int tl_emit_track(tl_model *m, const wl_tl_track *t)
{
    m->st->tracks++;
    return m->sink->track && m->sink->track(m->sink->ctx, t) ? -1 : 0;
}

static tl_lane *new_lane(tl_model *m, wl_tl_track_type type, uint64_t parent, uint32_t pid, uint32_t tid,
                         const char *name, int sort_index, int64_t stream)
{
    tl_lane *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    snprintf(l->name, sizeof l->name, "%s", name);
    l->t = (wl_tl_track){.uuid = ++m->next_uuid, .parent_uuid = parent, .type = type, .pid = pid, .tid = tid,
                         .name = l->name, .sort_index = sort_index, .stream_id = stream};
    if (tl_emit_track(m, &l->t)) {
        free(l);
        return NULL;
    }
    return l;
}

void tl_free_group(tl_group *g)
{
    for (int i = 0; g && i < g->n; i++) {
        free(g->lanes[i]->ends);
        free(g->lanes[i]);
    }
    if (g)
        free(g->lanes);
    free(g);
}

static tl_group *new_group(tl_model *m, tl_lane *base, uint32_t pid, uint32_t tid, uint32_t device, int64_t stream)
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

tl_group *tl_find_proc(tl_model *m, uint32_t pid)
{
    return tl_index_get(&m->by_key, (tl_key){TL_KEY_PROC, pid, 0, 0});
}

/* Adds an object to its list and the index; -1 out of memory (the object is the caller's to free
 * unless it made the list). */
static int keep(tl_model *m, tl_ptr_list *l, tl_key k, void *p)
{
    if (list_add(l, p))
        return -1;
    if (tl_index_put(&m->by_key, k, p)) {
        l->n--;
        return -1;
    }
    return 0;
}

static tl_group *declare_proc(tl_model *m, uint32_t pid, const char *cmdline, const wl_process_row *row)
{
    tl_group *g = tl_find_proc(m, pid);
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
        tl_free_group(g);
        return NULL;
    }
    return g;
}

void tl_on_process(const wl_process_row *r, void *arg)
{
    tl_model *m = arg;
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
int tl_session_ranked(wl_session *s)
{
    rank_census c = {0};
    if (wl_session_each_process(s, count_rank, &c) < 0)
        return 0;
    return c.procs > 1 && (c.ranks > 1 || c.hosts > 1);
}

static tl_group *declare_thread(tl_model *m, uint32_t pid, uint32_t tid, const char *name)
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
        tl_free_group(g);
        return NULL;
    }
    return g;
}

void tl_on_thread(uint32_t pid, uint32_t tid, const char *name, void *arg)
{
    tl_model *m = arg;
    if (!declare_thread(m, pid, tid, name))
        m->failed = 1;
}

tl_group *tl_find_thread(tl_model *m, uint32_t pid, uint32_t tid)
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
tl_gpu *tl_find_gpu(tl_model *m, uint32_t pid, uint32_t device, const char *name)
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
    if (tl_emit_track(m, &g->t) || tl_emit_track(m, &g->counters.fill_track) || tl_emit_track(m, &g->counters.count_track))
        return NULL; /* g is the list's */
    return g;
}

void tl_on_device(const wl_device_row *d, void *arg)
{
    tl_model *m = arg;
    if (!tl_find_gpu(m, d->pid, d->device_id, d->name) || tl_occ_add_device(m->occ, d))
        m->failed = 1;
}

tl_group *tl_find_stream(tl_model *m, const wl_gpu_item *it)
{
    tl_key k = {TL_KEY_STREAM, it->pid, it->device_id, (uint64_t)it->stream_id};
    tl_group *g = tl_index_get(&m->by_key, k);
    if (g)
        return g;
    tl_gpu *gpu = tl_find_gpu(m, it->pid, it->device_id, NULL);
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
    if (g)
        g->gpu = gpu;
    if (!g || keep(m, &m->streams, k, g)) {
        tl_free_group(g);
        return NULL;
    }
    return g;
}

/* ---- lanes ------------------------------------------------------------------------------------ */

static int pop_until(tl_model *m, tl_lane *l, uint64_t ts)
{
    while (l->depth && l->ends[l->depth - 1] <= ts) {
        uint64_t e = l->ends[--l->depth];
        if (m->sink->slice_end && m->sink->slice_end(m->sink->ctx, &l->t, e))
            return -1;
    }
    return 0;
}

int tl_flush_group(tl_model *m, tl_group *g)
{
    for (int i = 0; i < g->n; i++)
        if (pop_until(m, g->lanes[i], UINT64_MAX))
            return -1;
    return 0;
}

/* First lane where [start, end] nests; NULL when none within max_lanes (*err on failure). */
tl_lane *tl_place(tl_model *m, tl_group *g, uint64_t start, uint64_t end, int *err)
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
            uint32_t tid = b->type == WL_TL_STREAM ? ((tl_gpu *)tl_find_gpu(m, g->pid, g->device, NULL))->next_tid++
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
