/* The GPU cursor (see session_cursors.h): kernels, copies and sets in start order, merged from
 * three statements that each walk a start-time index (kernels and copies) or SQLite's sorter
 * (sets), decoding only the row handed out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_cursors.h"
#include "store/session_cursors_internal.h"
#include "store/sql_util.h"

/* Columns shared by the three GPU statements: 0 start, 1 end, 2 id, 3 pid, 4 device, 5 stream,
 * 6 correlation id, 7 flow, 8 graph id, 9 scope id (-1 none), 10 launching thread (-1 none); then per
 * kind (see gpu_decode).
 * NULL reads as 0 through sqlite3_column_*, so only columns whose NULL means something else are
 * coalesced (every expression costs per row). Linked statements join the API call for the flow
 * rule; unlinked ones (the timeline's) have flow 0 and no join. Rows come in start order only:
 * ties are rare and any order of equal starts nests or lands on an overlap lane. */
#define KERNEL_SQL(flow, join, ident)                                                                   \
    "SELECT k.start_ns, k.end_ns, k.id, k.pid, k.device_id, k.stream_id, k.correlation_id, " flow ","   \
    " coalesce(k.graph_id, -1), coalesce(k.scope_id, -1), coalesce(k.tid, -1), k.name_id,"              \
    " k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,"                                   \
    " max(1, coalesce(k.cluster_x, 1) * coalesce(k.cluster_y, 1) * coalesce(k.cluster_z, 1)),"          \
    " k.registers_per_thread, k.static_smem, k.dynamic_smem, k.smem_limit_config,"                      \
    " coalesce(k.carveout_requested, -1), coalesce(k.queue_delay_ns, -1), k.local_mem_per_thread,"      \
    " coalesce(k.submit_delay_ns, -1)" ident " FROM kernel k" join                                      \
    " WHERE k.has_timestamps ORDER BY k.start_ns"
#define MEMCPY_SQL(flow, join)                                                                          \
    "SELECT m.start_ns, m.end_ns, m.id, m.pid, m.device_id, m.stream_id, m.correlation_id, " flow ","   \
    " coalesce(m.graph_id, -1), coalesce(m.scope_id, -1), coalesce(m.tid, -1), m.kind, m.src_kind,"     \
    " m.dst_kind, m.bytes, m.bandwidth_gbps FROM memcpy m" join                                         \
    " WHERE m.start_ns IS NOT NULL AND m.end_ns >= m.start_ns ORDER BY m.start_ns"
#define MEMSET_SQL(flow, join)                                                                          \
    "SELECT z.start_ns, z.end_ns, z.id, z.pid, z.device_id, z.stream_id, z.correlation_id, " flow ","   \
    " coalesce(z.graph_id, -1), coalesce(z.scope_id, -1), coalesce(z.tid, -1), z.memory_kind, z.bytes," \
    " z.bandwidth_gbps FROM memset z" join " WHERE z.start_ns IS NOT NULL AND z.end_ns >= z.start_ns"   \
    " ORDER BY z.start_ns"
#define FLOW_IF(t, cat, n)                                                                              \
    "CASE WHEN a.id IS NOT NULL AND a.pid = " t ".pid AND a.correlation_id = " t ".correlation_id"      \
    " AND a.category " cat " AND " t ".start_ns >= a.start_ns THEN " t ".id * 4 + " n " ELSE 0 END"
#define JOIN_API(t) " LEFT JOIN api_call a ON a.id = " t ".api_id"
/* Kernel identity (session_identity.h), in sessions that carry it: 27 op id (-1 none), 28 tier. */
#define IDENT ", coalesce(k.op_id, -1), k.tier"
#define NO_IDENT ", -1, NULL"
#define KERNEL_FLOW FLOW_IF("k", "IN ('launch', 'graph_launch')", "1")
static const char *const KERNEL_SQLS[2][2] = {
    {KERNEL_SQL("0", "", NO_IDENT), KERNEL_SQL("0", "", IDENT)},
    {KERNEL_SQL(KERNEL_FLOW, JOIN_API("k"), NO_IDENT), KERNEL_SQL(KERNEL_FLOW, JOIN_API("k"), IDENT)},
};
static const char *const GPU_SQL[2][3] = {
    {NULL, MEMCPY_SQL("0", ""), MEMSET_SQL("0", "")},
    {NULL, MEMCPY_SQL(FLOW_IF("m", "= 'memcpy'", "2"), JOIN_API("m")),
     MEMSET_SQL(FLOW_IF("z", "= 'memset'", "3"), JOIN_API("z"))},
};
/* A scope's name and the application thread id attached to it (session_identity.h). */
#define SCOPE_THREAD_SQL "SELECT name, app_thread_id FROM scope WHERE pid = ?1 AND scope_id = ?2"

struct wl_gpu_cursor {
    sqlite3 *db;               /* the cursor's own connection */
    wl_cur_source src[3];
    int last;
    int ident;                 /* the session carries kernel identity */
    wl_cur_name_cache scopes, kernels, ops;
};

void wl_gpu_cursor_close(wl_gpu_cursor *c)
{
    if (!c)
        return;
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(c->src[i].st);
    wl_cur_cache_close(&c->scopes);
    wl_cur_cache_close(&c->kernels);
    wl_cur_cache_close(&c->ops);
    sqlite3_close(c->db);
    free(c);
}

static wl_gpu_cursor *gpu_open(wl_session *s, int linked, char *err, size_t err_size)
{
    wl_gpu_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->last = -1;
    if (!(c->db = wl_cur_db(s, err, err_size))) {
        free(c);
        return NULL;
    }
    c->ident = wl_sql_has_table(c->db, "op") && wl_sql_has_column(c->db, "kernel", "op_id") &&
               wl_sql_has_column(c->db, "scope", "app_thread_id");
    int rc = wl_cur_cache_open(&c->scopes, c->db, c->ident ? SCOPE_THREAD_SQL : SCOPE_NAME_SQL) ||
             wl_cur_cache_open(&c->kernels, c->db,
                        "SELECT CASE WHEN demangled <> '' THEN demangled ELSE mangled END, short_name FROM kernel_name"
                        " WHERE id = ?1 AND ?2 = 0") ||
             (c->ident && wl_cur_cache_open(&c->ops, c->db, "SELECT name, shape FROM op WHERE id = ?1 AND ?2 = 0"));
    for (int i = 0; rc == 0 && i < 3; i++) {
        const char *sql = i == 0 ? KERNEL_SQLS[linked][c->ident] : GPU_SQL[linked][i];
        rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &c->src[i].st, NULL);
        c->src[i].nkeys = 1;
    }
    if (rc) {
        wl_cur_set_err(err, err_size, "GPU cursor", c->db);
        wl_gpu_cursor_close(c);
        return NULL;
    }
    return c;
}

wl_gpu_cursor *wl_gpu_cursor_open(wl_session *s, char *err, size_t err_size) { return gpu_open(s, 1, err, err_size); }

wl_gpu_cursor *wl_gpu_cursor_open_unlinked(wl_session *s, char *err, size_t err_size)
{
    return gpu_open(s, 0, err, err_size);
}

static int gpu_less(const wl_cur_source *a, int ka, const wl_cur_source *b, int kb)
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
    it->scope_id = scope;
    it->tid = sqlite3_column_int64(st, 10);
    it->scope[0] = 0;
    it->app_thread = 0;
    if (scope >= 0) {
        const wl_cur_name_slot *sl = wl_cur_cache_get(&c->scopes, it->pid, scope);
        if (!sl)
            return -1;
        wl_cur_copy_str(it->scope, sizeof it->scope, sl->s1);
        if (sl->s2)
            it->app_thread = strtoll(sl->s2, NULL, 10);
    }
    it->op[0] = it->shape[0] = it->tier[0] = 0;
    it->op_id = -1;
    it->copy_kind[0] = it->src_kind[0] = it->dst_kind[0] = 0;
    it->bytes = 0;
    it->gbps = 0;
    if (kind != WL_GPU_KERNEL) {
        it->name[0] = it->short_name[0] = 0;
        it->name_id = -1;
        it->name_cursor = NULL;
    }
    if (kind == WL_GPU_KERNEL) {
        /* names are kilobytes: an item that holds this cursor's copy of the same name keeps it */
        int64_t name_id = sqlite3_column_int64(st, 11);
        if (it->name_cursor != c || it->name_id != name_id) {
            const wl_cur_name_slot *sl = wl_cur_cache_get(&c->kernels, name_id, 0);
            if (!sl)
                return -1;
            wl_cur_copy_str(it->name, sizeof it->name, sl->s1);
            wl_cur_copy_str(it->short_name, sizeof it->short_name, sl->s2);
            it->name_id = name_id;
            it->name_cursor = c;
        }
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
        it->local_mem = sqlite3_column_int64(st, 25);
        it->submit_delay_ns = sqlite3_column_int64(st, 26);
        int64_t op = sqlite3_column_int64(st, 27);
        if (op >= 0 && c->ident) {
            it->op_id = op;
            const wl_cur_name_slot *o = wl_cur_cache_get(&c->ops, op, 0);
            if (!o)
                return -1;
            wl_cur_copy_str(it->op, sizeof it->op, o->s1);
            wl_cur_copy_str(it->shape, sizeof it->shape, o->s2);
        }
        wl_cur_text_col(st, 28, it->tier, sizeof it->tier);
    } else if (kind == WL_GPU_MEMCPY) {
        wl_cur_text_col(st, 11, it->copy_kind, sizeof it->copy_kind);
        wl_cur_text_col(st, 12, it->src_kind, sizeof it->src_kind);
        wl_cur_text_col(st, 13, it->dst_kind, sizeof it->dst_kind);
        it->bytes = (uint64_t)sqlite3_column_int64(st, 14);
        it->gbps = sqlite3_column_double(st, 15);
    } else {
        snprintf(it->copy_kind, sizeof it->copy_kind, "memset");
        wl_cur_text_col(st, 11, it->dst_kind, sizeof it->dst_kind);
        it->bytes = (uint64_t)sqlite3_column_int64(st, 12);
        it->gbps = sqlite3_column_double(st, 13);
    }
    return 0;
}

int wl_gpu_cursor_next(wl_gpu_cursor *c, wl_gpu_item *it)
{
    if (c->last >= 0)
        c->src[c->last].state = 0;
    int best = -1;
    for (int i = 0; i < 3; i++) {
        int r = wl_cur_peek(&c->src[i]);
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
