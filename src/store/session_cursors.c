/* Streaming cursors for the exporters (see session_cursors.h). Each cursor merges a few SQLite
 * statements that already return rows in the wanted order (through an index where the schema has
 * one, else SQLite's external sorter, which spills to temporary files rather than growing), and
 * decodes only the row it hands out. */
#include "store/session_cursors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_internal.h"

static void text_col(sqlite3_stmt *st, int col, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    size_t len = t ? (size_t)sqlite3_column_bytes(st, col) : 0;
    if (len >= n)
        len = n - 1; /* truncated (names are bounded by the item's buffers) */
    if (len)
        memcpy(out, t, len);
    out[len] = 0;
}

static int set_err(char *err, size_t n, const char *what, sqlite3 *db)
{
    if (err && n)
        snprintf(err, n, "%s: %s", what, sqlite3_errmsg(db));
    return -1;
}

static uint64_t scalar(wl_session *s, const char *sql)
{
    sqlite3_stmt *st;
    uint64_t v = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = (uint64_t)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

int wl_session_get_span(wl_session *s, wl_session_span *o)
{
    memset(o, 0, sizeof *o);
    /* min/max over indexed start columns are index look-ups; process rows are few. */
    uint64_t first = scalar(s, "SELECT min(t) FROM (SELECT min(start_ns) t FROM process WHERE start_ns > 0"
                               " UNION ALL SELECT min(start_ns) FROM kernel UNION ALL SELECT min(start_ns) FROM memcpy"
                               " UNION ALL SELECT min(start_ns) FROM nvtx_range)");
    uint64_t api_first = scalar(s, "SELECT min(start_ns) FROM api_call WHERE start_ns > 0");
    if (api_first && (!first || api_first < first))
        first = api_first;
    o->origin_ns = first;
    /* Closes ranges that were never ended; the process end is the natural bound. */
    o->end_ns = scalar(s, "SELECT max(t) FROM (SELECT max(end_ns) t FROM process UNION ALL"
                          " SELECT max(start_ns) FROM kernel UNION ALL SELECT max(start_ns) FROM nvtx_range)");
    o->api_calls = scalar(s, "SELECT count(*) FROM api_call");
    o->nvtx_ranges = scalar(s, "SELECT count(*) FROM nvtx_range");
    o->scopes = scalar(s, "SELECT count(*) FROM scope");
    o->kernels = scalar(s, "SELECT count(*) FROM kernel");
    o->memcpys = scalar(s, "SELECT count(*) FROM memcpy");
    o->memsets = scalar(s, "SELECT count(*) FROM memset");
    return 0;
}

uint64_t wl_session_nth_kernel_start(wl_session *s, uint64_t n)
{
    sqlite3_stmt *st;
    uint64_t v = UINT64_MAX;
    if (sqlite3_prepare_v2(s->db, "SELECT start_ns FROM kernel WHERE has_timestamps ORDER BY start_ns LIMIT 1 OFFSET ?",
                           -1, &st, NULL) != SQLITE_OK)
        return v;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)n);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int wl_session_thread_name(wl_session *s, uint32_t pid, uint32_t tid, char *out, size_t n)
{
    sqlite3_stmt *st;
    out[0] = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT name FROM thread WHERE pid = ? AND tid = ?", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, tid);
    if (sqlite3_step(st) == SQLITE_ROW)
        text_col(st, 0, out, n);
    sqlite3_finalize(st);
    return 0;
}

int wl_session_each_thread(wl_session *s, void (*fn)(uint32_t, uint32_t, const char *, void *), void *arg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT pid, tid, coalesce(name, '') FROM thread ORDER BY pid, tid", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        fn((uint32_t)sqlite3_column_int64(st, 0), (uint32_t)sqlite3_column_int64(st, 1),
           (const char *)sqlite3_column_text(st, 2), arg);
        n++;
    }
    sqlite3_finalize(st);
    return n;
}

/* ---- merging ordered statements ------------------------------------------------------------- */

typedef struct source {
    sqlite3_stmt *st;
    int state;      /* 0: must step, 1: row ready, 2: done */
    int nkeys;      /* leading columns that order the rows */
    int64_t key[4]; /* their values for the ready row (read once: every column call locks) */
} source;

/* Makes a row ready; returns 1 ready, 0 done, -1 error. */
static int peek(source *src)
{
    if (src->state == 0) {
        int rc = sqlite3_step(src->st);
        if (rc == SQLITE_ROW) {
            src->state = 1;
            for (int i = 0; i < src->nkeys; i++)
                src->key[i] = sqlite3_column_int64(src->st, i);
        }
        else if (rc == SQLITE_DONE)
            src->state = 2;
        else
            return -1;
    }
    return src->state == 1;
}

/* ---- small caches of names looked up by id ---------------------------------------------------- */

/* Scope and kernel names repeat across millions of rows: a direct-mapped cache in front of a
 * primary-key look-up is cheaper than joining the tables in every row. */
#define CACHE_SLOTS 1024
typedef struct name_slot {
    int used;
    int64_t a, b;
    char *s1, *s2;
} name_slot;

typedef struct name_cache {
    sqlite3_stmt *lookup; /* ?1, ?2 -> text column(s) 0 [and 1] */
    name_slot slot[CACHE_SLOTS];
} name_cache;

static int cache_open(name_cache *c, sqlite3 *db, const char *sql)
{
    memset(c, 0, sizeof *c);
    return sqlite3_prepare_v2(db, sql, -1, &c->lookup, NULL) == SQLITE_OK ? 0 : -1;
}

static void cache_close(name_cache *c)
{
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(c->slot[i].s1);
        free(c->slot[i].s2);
    }
    sqlite3_finalize(c->lookup);
    memset(c, 0, sizeof *c);
}

static char *dup_col(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    size_t n = t ? (size_t)sqlite3_column_bytes(st, col) : 0;
    char *d = malloc(n + 1);
    if (d) {
        if (n)
            memcpy(d, t, n);
        d[n] = 0;
    }
    return d;
}

/* Returns the cached slot for (a, b), looking it up on a miss; NULL on failure. */
static const name_slot *cache_get(name_cache *c, int64_t a, int64_t b)
{
    uint64_t h = ((uint64_t)a * 0x9e3779b97f4a7c15u) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4fu);
    name_slot *sl = &c->slot[(h >> 40) & (CACHE_SLOTS - 1)];
    if (sl->used && sl->a == a && sl->b == b)
        return sl;
    free(sl->s1);
    free(sl->s2);
    memset(sl, 0, sizeof *sl);
    sqlite3_bind_int64(c->lookup, 1, a);
    sqlite3_bind_int64(c->lookup, 2, b);
    int ncols = sqlite3_column_count(c->lookup);
    if (sqlite3_step(c->lookup) == SQLITE_ROW) {
        sl->s1 = dup_col(c->lookup, 0);
        sl->s2 = ncols > 1 ? dup_col(c->lookup, 1) : NULL;
    } else {
        sl->s1 = calloc(1, 1);
        sl->s2 = ncols > 1 ? calloc(1, 1) : NULL;
    }
    sqlite3_reset(c->lookup);
    if (!sl->s1 || (ncols > 1 && !sl->s2))
        return NULL;
    sl->used = 1, sl->a = a, sl->b = b;
    return sl;
}

static void copy_str(char *out, size_t n, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    if (len >= n)
        len = n - 1;
    if (len)
        memcpy(out, s, len);
    out[len] = 0;
}

#define SCOPE_NAME_SQL "SELECT name FROM scope WHERE pid = ?1 AND scope_id = ?2"

/* ---- host cursor ---------------------------------------------------------------------------- */

/* Columns shared by the three host statements: 0 pid, 1 tid, 2 start, 3 end, 4 id, 5 name, 6 group,
 * 7 open_end; API only: 8 correlation id, 9 return value, 10 scope id (-1 none), 11 flow ids. */
static const char *const HOST_SQL[3] = {
    "SELECT pid, coalesce(tid, 0), start_ns, max(coalesce(end_ns, ?1), start_ns), id, name, coalesce(domain, ''),"
    " end_ns IS NULL FROM nvtx_range ORDER BY 1, 2, 3, 4 DESC",
    "SELECT pid, tid, start_ns, max(coalesce(end_ns, ?1), start_ns), scope_id, name, '', end_ns IS NULL"
    " FROM scope ORDER BY 1, 2, 3, 4 DESC",
    "SELECT a.pid, a.tid, a.start_ns, max(a.end_ns, a.start_ns), a.id, a.name, a.category, 0, a.correlation_id,"
    " a.return_value, coalesce(a.scope_id, -1),"
    /* one probe per call, in the table its category can start work in; the GPU cursor applies
     * the same rule, so a flow is written on both sides or on neither */
    " CASE WHEN a.category IN ('launch', 'graph_launch') THEN (SELECT group_concat(k.id * 4 + 1) FROM kernel k"
    "   WHERE k.pid = a.pid AND k.correlation_id = a.correlation_id AND k.api_id = a.id AND k.has_timestamps"
    "   AND k.start_ns >= a.start_ns)"
    "  WHEN a.category = 'memcpy' THEN (SELECT group_concat(m.id * 4 + 2) FROM memcpy m"
    "   WHERE m.pid = a.pid AND m.correlation_id = a.correlation_id AND m.api_id = a.id"
    "   AND m.end_ns >= m.start_ns AND m.start_ns >= a.start_ns)"
    "  WHEN a.category = 'memset' THEN (SELECT group_concat(z.id * 4 + 3) FROM memset z"
    "   WHERE z.pid = a.pid AND z.correlation_id = a.correlation_id AND z.api_id = a.id"
    "   AND z.end_ns >= z.start_ns AND z.start_ns >= a.start_ns) END"
    /* no end-time tie break here: it would sort every thread's calls again; two calls starting
     * at the same nanosecond on one thread at worst land on an overlap lane */
    " FROM api_call a ORDER BY a.pid, a.tid, a.start_ns",
};

struct wl_host_cursor {
    wl_session *s;
    source src[3];
    name_cache scopes;
    int last; /* source handed out last time, -1 none */
    uint64_t *flows;
    size_t flow_cap;
};

void wl_host_cursor_close(wl_host_cursor *c)
{
    if (!c)
        return;
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(c->src[i].st);
    cache_close(&c->scopes);
    free(c->flows);
    free(c);
}

/* Rows come in index order, so table pages are visited out of order: a page cache larger than
 * SQLite's 2 MiB default keeps them from being read again (bounded, whatever the session size). */
static void larger_cache(wl_session *s)
{
    sqlite3_exec(s->db, "PRAGMA cache_size = -32768", NULL, NULL, NULL);
}

wl_host_cursor *wl_host_cursor_open(wl_session *s, uint64_t open_end_ns, char *err, size_t err_size)
{
    larger_cache(s);
    wl_host_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->s = s;
    c->last = -1;
    if (cache_open(&c->scopes, s->db, SCOPE_NAME_SQL)) {
        set_err(err, err_size, "host cursor", s->db);
        wl_host_cursor_close(c);
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        if (sqlite3_prepare_v2(s->db, HOST_SQL[i], -1, &c->src[i].st, NULL) != SQLITE_OK) {
            set_err(err, err_size, "host cursor", s->db);
            wl_host_cursor_close(c);
            return NULL;
        }
        if (i < 2)
            sqlite3_bind_int64(c->src[i].st, 1, (sqlite3_int64)open_end_ns);
        c->src[i].nkeys = 4;
    }
    return c;
}

/* Order: pid, tid, start ascending, end descending (parents first), then NVTX, scope, API. */
static int host_less(const source *a, int ka, const source *b, int kb)
{
    for (int col = 0; col < 4; col++) {
        int64_t x = a->key[col], y = b->key[col];
        if (x != y)
            return col == 3 ? x > y : x < y;
    }
    return ka < kb;
}

static int parse_flows(wl_host_cursor *c, const char *list, size_t *n)
{
    *n = 0;
    if (!list)
        return 0;
    for (const char *p = list; *p;) {
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p)
            break;
        if (*n == c->flow_cap) {
            size_t ncap = c->flow_cap ? c->flow_cap * 2 : 16;
            uint64_t *f = realloc(c->flows, ncap * sizeof *f);
            if (!f)
                return -1;
            c->flows = f;
            c->flow_cap = ncap;
        }
        c->flows[(*n)++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int wl_host_cursor_next(wl_host_cursor *c, wl_host_item *it)
{
    if (c->last >= 0)
        c->src[c->last].state = 0;
    int best = -1;
    for (int i = 0; i < 3; i++) {
        int r = peek(&c->src[i]);
        if (r < 0)
            return -1;
        if (r && (best < 0 || host_less(&c->src[i], i, &c->src[best], best)))
            best = i;
    }
    c->last = best;
    if (best < 0)
        return 0;
    sqlite3_stmt *st = c->src[best].st;
    it->kind = best == 0 ? WL_HOST_NVTX : best == 1 ? WL_HOST_SCOPE : WL_HOST_API;
    it->pid = (uint32_t)c->src[best].key[0];
    it->tid = (uint32_t)c->src[best].key[1];
    it->start_ns = (uint64_t)c->src[best].key[2];
    it->end_ns = (uint64_t)c->src[best].key[3];
    it->id = sqlite3_column_int64(st, 4);
    text_col(st, 5, it->name, sizeof it->name);
    text_col(st, 6, it->group, sizeof it->group);
    it->open_end = sqlite3_column_int(st, 7);
    it->scope[0] = 0;
    it->correlation_id = 0;
    it->return_value = 0;
    it->flows = NULL;
    it->n_flows = 0;
    if (it->kind == WL_HOST_API) {
        it->correlation_id = (uint32_t)sqlite3_column_int64(st, 8);
        it->return_value = sqlite3_column_int64(st, 9);
        int64_t scope = sqlite3_column_int64(st, 10);
        if (scope >= 0) {
            const name_slot *sl = cache_get(&c->scopes, it->pid, scope);
            if (!sl)
                return -1;
            copy_str(it->scope, sizeof it->scope, sl->s1);
        }
        if (parse_flows(c, (const char *)sqlite3_column_text(st, 11), &it->n_flows))
            return -1;
        it->flows = c->flows;
    }
    return 1;
}

/* ---- GPU cursor ----------------------------------------------------------------------------- */

/* Columns shared by the three GPU statements: 0 start, 1 end, 2 id, 3 pid, 4 device, 5 stream,
 * 6 correlation id, 7 flow, 8 graph id, 9 scope id (-1 none); then per kind (see gpu_decode).
 * Rows come in start order only: ties are rare and any order of equal starts nests or lands on
 * an overlap lane. */
static const char *const GPU_SQL[3] = {
    "SELECT k.start_ns, k.end_ns, k.id, k.pid, k.device_id, k.stream_id, k.correlation_id,"
    " CASE WHEN a.id IS NOT NULL AND a.pid = k.pid AND a.correlation_id = k.correlation_id"
    "  AND a.category IN ('launch', 'graph_launch') AND k.start_ns >= a.start_ns THEN k.id * 4 + 1 ELSE 0 END,"
    " coalesce(k.graph_id, -1), coalesce(k.scope_id, -1),"
    " k.name_id, 0, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,"
    " max(1, coalesce(k.cluster_x, 1) * coalesce(k.cluster_y, 1) * coalesce(k.cluster_z, 1)),"
    " coalesce(k.registers_per_thread, 0), coalesce(k.static_smem, 0), coalesce(k.dynamic_smem, 0),"
    " coalesce(k.smem_limit_config, 0), coalesce(k.carveout_requested, -1),"
    " coalesce(k.queue_delay_ns, -1), coalesce(k.submit_delay_ns, -1)"
    " FROM kernel k LEFT JOIN api_call a ON a.id = k.api_id"
    " WHERE k.has_timestamps ORDER BY k.start_ns",
    "SELECT m.start_ns, m.end_ns, m.id, m.pid, coalesce(m.device_id, 0), coalesce(m.stream_id, 0),"
    " coalesce(m.correlation_id, 0),"
    " CASE WHEN a.id IS NOT NULL AND a.pid = m.pid AND a.correlation_id = m.correlation_id"
    "  AND a.category = 'memcpy' AND m.start_ns >= a.start_ns THEN m.id * 4 + 2 ELSE 0 END,"
    " coalesce(m.graph_id, -1), coalesce(m.scope_id, -1),"
    " m.kind, m.src_kind, m.dst_kind, m.bytes, coalesce(m.bandwidth_gbps, 0)"
    " FROM memcpy m LEFT JOIN api_call a ON a.id = m.api_id"
    " WHERE m.start_ns IS NOT NULL AND m.end_ns >= m.start_ns ORDER BY m.start_ns",
    "SELECT z.start_ns, z.end_ns, z.id, z.pid, coalesce(z.device_id, 0), coalesce(z.stream_id, 0),"
    " coalesce(z.correlation_id, 0),"
    " CASE WHEN a.id IS NOT NULL AND a.pid = z.pid AND a.correlation_id = z.correlation_id"
    "  AND a.category = 'memset' AND z.start_ns >= a.start_ns THEN z.id * 4 + 3 ELSE 0 END,"
    " coalesce(z.graph_id, -1), coalesce(z.scope_id, -1),"
    " z.memory_kind, z.bytes, coalesce(z.bandwidth_gbps, 0)"
    " FROM memset z LEFT JOIN api_call a ON a.id = z.api_id"
    " WHERE z.start_ns IS NOT NULL AND z.end_ns >= z.start_ns ORDER BY z.start_ns",
};

struct wl_gpu_cursor {
    source src[3];
    int last;
    name_cache scopes, kernels;
};

void wl_gpu_cursor_close(wl_gpu_cursor *c)
{
    if (!c)
        return;
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(c->src[i].st);
    cache_close(&c->scopes);
    cache_close(&c->kernels);
    free(c);
}

wl_gpu_cursor *wl_gpu_cursor_open(wl_session *s, char *err, size_t err_size)
{
    larger_cache(s);
    wl_gpu_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->last = -1;
    if (cache_open(&c->scopes, s->db, SCOPE_NAME_SQL) ||
        cache_open(&c->kernels, s->db,
                   "SELECT CASE WHEN demangled <> '' THEN demangled ELSE mangled END, short_name FROM kernel_name"
                   " WHERE id = ?1 AND ?2 = 0")) {
        set_err(err, err_size, "GPU cursor", s->db);
        wl_gpu_cursor_close(c);
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        if (sqlite3_prepare_v2(s->db, GPU_SQL[i], -1, &c->src[i].st, NULL) != SQLITE_OK) {
            set_err(err, err_size, "GPU cursor", s->db);
            wl_gpu_cursor_close(c);
            return NULL;
        }
        c->src[i].nkeys = 1;
    }
    return c;
}

static int gpu_less(const source *a, int ka, const source *b, int kb)
{
    if (a->key[0] != b->key[0])
        return a->key[0] < b->key[0];
    return ka < kb;
}

static int gpu_decode(wl_gpu_cursor *c, sqlite3_stmt *st, wl_gpu_kind kind, wl_gpu_item *it)
{
    it->kind = kind;
    it->start_ns = (uint64_t)sqlite3_column_int64(st, 0);
    it->end_ns = (uint64_t)sqlite3_column_int64(st, 1);
    it->id = sqlite3_column_int64(st, 2);
    it->pid = (uint32_t)sqlite3_column_int64(st, 3);
    it->device_id = (uint32_t)sqlite3_column_int64(st, 4);
    it->stream_id = sqlite3_column_int64(st, 5);
    it->correlation_id = (uint32_t)sqlite3_column_int64(st, 6);
    it->flow = (uint64_t)sqlite3_column_int64(st, 7);
    it->graph_id = sqlite3_column_int64(st, 8);
    int64_t scope = sqlite3_column_int64(st, 9);
    it->scope[0] = 0;
    if (scope >= 0) {
        const name_slot *sl = cache_get(&c->scopes, it->pid, scope);
        if (!sl)
            return -1;
        copy_str(it->scope, sizeof it->scope, sl->s1);
    }
    it->name[0] = it->short_name[0] = it->copy_kind[0] = it->src_kind[0] = it->dst_kind[0] = 0;
    it->bytes = 0;
    it->gbps = 0;
    if (kind == WL_GPU_KERNEL) {
        const name_slot *sl = cache_get(&c->kernels, sqlite3_column_int64(st, 10), 0);
        if (!sl)
            return -1;
        copy_str(it->name, sizeof it->name, sl->s1);
        copy_str(it->short_name, sizeof it->short_name, sl->s2);
        for (int i = 0; i < 3; i++) {
            it->grid[i] = sqlite3_column_int(st, 12 + i);
            it->block[i] = sqlite3_column_int(st, 15 + i);
        }
        it->cluster_size = sqlite3_column_int(st, 18);
        it->registers = sqlite3_column_int(st, 19);
        it->static_smem = sqlite3_column_int(st, 20);
        it->dynamic_smem = sqlite3_column_int(st, 21);
        it->smem_limit_config = sqlite3_column_int(st, 22);
        it->carveout = sqlite3_column_int(st, 23);
        it->queue_delay_ns = sqlite3_column_int64(st, 24);
        it->submit_delay_ns = sqlite3_column_int64(st, 25);
    } else if (kind == WL_GPU_MEMCPY) {
        text_col(st, 10, it->copy_kind, sizeof it->copy_kind);
        text_col(st, 11, it->src_kind, sizeof it->src_kind);
        text_col(st, 12, it->dst_kind, sizeof it->dst_kind);
        it->bytes = (uint64_t)sqlite3_column_int64(st, 13);
        it->gbps = sqlite3_column_double(st, 14);
    } else {
        snprintf(it->copy_kind, sizeof it->copy_kind, "memset");
        text_col(st, 10, it->dst_kind, sizeof it->dst_kind);
        it->bytes = (uint64_t)sqlite3_column_int64(st, 11);
        it->gbps = sqlite3_column_double(st, 12);
    }
    return 0;
}

int wl_gpu_cursor_next(wl_gpu_cursor *c, wl_gpu_item *it)
{
    if (c->last >= 0)
        c->src[c->last].state = 0;
    int best = -1;
    for (int i = 0; i < 3; i++) {
        int r = peek(&c->src[i]);
        if (r < 0)
            return -1;
        if (r && (best < 0 || gpu_less(&c->src[i], i, &c->src[best], best)))
            best = i;
    }
    c->last = best;
    if (best < 0)
        return 0;
    return gpu_decode(c, c->src[best].st, (wl_gpu_kind)(best + 1), it) ? -1 : 1;
}
