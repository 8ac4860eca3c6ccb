/* The GPU cursor (see session_cursors.h): kernels, copies and sets in start order, merged from
 * three statements that each walk a start-time index (kernels and copies) or SQLite's sorter
 * (sets), decoding only the row handed out. wl_gpu_cursor_each with WL_CUR_TABLE_ORDER reads the
 * kernels in the table's own order instead, folded inside SQLite (sql_util.h), and puts them back
 * in start order through a reorder window (reorder.h): the start-index walk seeks the table row
 * by row and every cell costs an API call, about twice the CPU at 10 M kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/kernel_config.h"
#include "store/reorder.h"
#include "store/row_pack.h"
#include "store/session_cursors.h"
#include "store/session_cursors_internal.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

/* Columns shared by the three GPU statements: 0 start, 1 end, 2 id, 3 pid, 4 device, 5 stream,
 * 6 correlation id, 7 flow, 8 graph id, 9 scope id (-1 none), 10 launching thread (-1 none); then per
 * kind (see gpu_decode).
 * NULL reads as 0 through sqlite3_column_*, so only columns whose NULL means something else are
 * coalesced (every expression costs per row). Linked statements join the API call for the flow
 * rule; unlinked ones (the timeline's) have flow 0 and no join. Rows come in start order only:
 * ties are rare and any order of equal starts nests or lands on an overlap lane. The kernels'
 * columns (WL_CUR_KERNEL_COLUMNS) are in session_cursors_internal.h: the export pack holds them.
 * Sessions with kernel.config_id (kernel_config.h): the 16 configuration cells come from the
 * cursor's cache by id instead (12 config id, 13 queue delay, 14 submit delay, 15-16 identity). */
#define KERNEL_NARROW(flow, ident)                                                                      \
    "k.start_ns, k.end_ns, k.id, k.pid, k.device_id, k.stream_id, k.correlation_id, " flow ","          \
    " coalesce(k.graph_id, -1), coalesce(k.scope_id, -1), coalesce(k.tid, -1), k.name_id, k.config_id," \
    " coalesce(k.queue_delay_ns, -1), coalesce(k.submit_delay_ns, -1)" ident
#define KERNEL_SQL(cols, flow, join, ident)                                                             \
    "SELECT " cols(flow, ident) " FROM kernel k" join " WHERE k.has_timestamps ORDER BY k.start_ns"
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
#define IDENT WL_CUR_IDENT
#define NO_IDENT WL_CUR_NO_IDENT
#define KERNEL_FLOW FLOW_IF("k", "IN ('launch', 'graph_launch')", "1")
#define KERNEL_SQLS_OF(cols)                                                                            \
    {{KERNEL_SQL(cols, "0", "", NO_IDENT), KERNEL_SQL(cols, "0", "", IDENT)},                           \
     {KERNEL_SQL(cols, KERNEL_FLOW, JOIN_API("k"), NO_IDENT), KERNEL_SQL(cols, KERNEL_FLOW, JOIN_API("k"), IDENT)}}
static const char *const KERNEL_SQLS[2][2][2] = {KERNEL_SQLS_OF(WL_CUR_KERNEL_COLUMNS), KERNEL_SQLS_OF(KERNEL_NARROW)};
static const char *const GPU_SQL[2][3] = {
    {NULL, MEMCPY_SQL("0", ""), MEMSET_SQL("0", "")},
    {NULL, MEMCPY_SQL(FLOW_IF("m", "= 'memcpy'", "2"), JOIN_API("m")),
     MEMSET_SQL(FLOW_IF("z", "= 'memset'", "3"), JOIN_API("z"))},
};
/* The unlinked kernels' columns folded in table order (wl_fold's ?1 first, then KERNEL_SQL's and
 * has_timestamps: the kernels without timestamps are counted on the way, see
 * wl_gpu_cursor_untimed). */
#define KERNEL_FOLD_SQL(cols, ident) "SELECT wl_fold(?1, " cols("0", ident) ", k.has_timestamps) FROM kernel k"
static const char *const KERNEL_FOLD_SQLS[2][2] = {
    {KERNEL_FOLD_SQL(WL_CUR_KERNEL_COLUMNS, NO_IDENT), KERNEL_FOLD_SQL(WL_CUR_KERNEL_COLUMNS, IDENT)},
    {KERNEL_FOLD_SQL(KERNEL_NARROW, NO_IDENT), KERNEL_FOLD_SQL(KERNEL_NARROW, IDENT)}};
#define KERNEL_COLS 29 /* columns of a kernel row: 28 integers, then the tier (text) */
#define NARROW_COLS 17 /* ... as KERNEL_NARROW reads them: 16 integers, then the tier */
/* Kernels held back by the table-order read: far more than run at once on the GPUs of a process
 * (CUPTI hands records over in completion order; the H100 sessions of tests/data need at most
 * 100). 4096 rows of 296 bytes (1.2 MiB) stay in a core's L2 cache, which 8192 would not. */
#define KERNEL_WINDOW 4096
/* A scope's name and the application thread id attached to it (session_identity.h). */
#define SCOPE_THREAD_SQL "SELECT name, app_thread_id FROM scope WHERE pid = ?1 AND scope_id = ?2"
#define SCOPE_THREAD_RUN_SQL                                                                            \
    "SELECT scope_id, name, app_thread_id FROM scope WHERE pid = ?1 AND scope_id >= ?2 ORDER BY scope_id LIMIT 64"

/* A kernel row's cells: the integers by column, the tier apart. */
typedef struct kernel_row {
    int64_t v[KERNEL_COLS - 1];
    char tier[64];
} kernel_row;

struct wl_gpu_cursor {
    wl_session *s;             /* told at close when the table order broke */
    sqlite3 *db;               /* the cursor's own connection */
    wl_cur_source src[3];
    int last;
    int ident;                 /* the session carries kernel identity */
    int narrow;                /* ... and kernel.config_id: KERNEL_NARROW's columns */
    wl_kcfg_cache cfgs;        /* the configurations seen, by id */
    wl_pack_reader *pack;      /* the kernels come from the export pack (row_pack.h), not src[0] */
    int table;                 /* wl_gpu_cursor_each folds the kernels in table order */
    int broke;                 /* ... and they came later than the window allows */
    int64_t untimed;           /* kernels without timestamps the table-order walk saw; -1 unknown */
    wl_cur_name_cache scopes, kernels, ops;
    kernel_row row;            /* the kernel being decoded (read from its statement) */
    wl_pack_row prow;          /* or from the pack */
};

void wl_gpu_cursor_close(wl_gpu_cursor *c)
{
    if (!c)
        return;
    if (c->broke) /* later opens on this handle read through the index (the caller's thread) */
        c->s->work_unordered = 1;
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(c->src[i].st);
    wl_cur_cache_close(&c->scopes);
    wl_cur_cache_close(&c->kernels);
    wl_cur_cache_close(&c->ops);
    wl_kcfg_cache_close(&c->cfgs);
    wl_pack_close(c->pack);
    sqlite3_close(c->db);
    free(c);
}

/* Whether kernels sampled across the table are in start order wherever they are more than a
 * window apart: two that are not would break the table-order read for certain (the earlier one
 * has left the window when the later one comes), after rows were handed out; an export would
 * start over. 64 look-ups by rowid catch a table put out of order as a whole (edited, rebuilt)
 * before anything is read; disorder between the samples is still caught as the rows come. */
#define ORDER_SAMPLES 64
static int samples_in_order(sqlite3 *db)
{
    sqlite3_stmt *range = NULL, *at = NULL;
    int64_t lo = 0, hi = 0, id[ORDER_SAMPLES], start[ORDER_SAMPLES];
    int n = 0, ok = 1;
    /* two subqueries: min() and max() in one SELECT scan the table, each alone is a seek */
    if (sqlite3_prepare_v2(db, "SELECT (SELECT min(rowid) FROM kernel), (SELECT max(rowid) FROM kernel)", -1, &range,
                           NULL) == SQLITE_OK &&
        sqlite3_step(range) == SQLITE_ROW) {
        lo = sqlite3_column_int64(range, 0);
        hi = sqlite3_column_int64(range, 1);
    }
    sqlite3_finalize(range);
    if (hi - lo <= KERNEL_WINDOW ||
        sqlite3_prepare_v2(db, "SELECT rowid, start_ns FROM kernel WHERE rowid >= ?1 AND has_timestamps ORDER BY rowid"
                               " LIMIT 1", -1, &at, NULL) != SQLITE_OK) {
        sqlite3_finalize(at);
        return 1; /* a table no longer than the window cannot break it */
    }
    for (int i = 0; i < ORDER_SAMPLES && ok; i++, sqlite3_reset(at)) {
        sqlite3_bind_int64(at, 1, lo + (int64_t)((double)(hi - lo) * i / (ORDER_SAMPLES - 1)));
        if (sqlite3_step(at) != SQLITE_ROW)
            continue;
        id[n] = sqlite3_column_int64(at, 0), start[n] = sqlite3_column_int64(at, 1);
        /* rowids more than a window apart: rows more than a window apart, unless rows were deleted
         * between them (then the index serves where the window would have: only time is lost) */
        for (int j = 0; j < n; j++)
            if (id[n] - id[j] > KERNEL_WINDOW && start[j] > start[n])
                ok = 0;
        n++;
    }
    sqlite3_finalize(at);
    return ok;
}

static wl_gpu_cursor *gpu_open(wl_session *s, int linked, int flags, char *err, size_t err_size)
{
    wl_gpu_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->last = -1;
    c->s = s;
    c->untimed = -1;
    if (!(c->db = wl_cur_db(s, err, err_size))) {
        free(c);
        return NULL;
    }
    c->ident = wl_cur_has_ident(c->db);
    int rc = wl_cur_cache_open_runs(&c->scopes, c->db, c->ident ? SCOPE_THREAD_SQL : SCOPE_NAME_SQL,
                                    c->ident ? SCOPE_THREAD_RUN_SQL : SCOPE_RUN_SQL) ||
             wl_cur_cache_open(&c->kernels, c->db,
                        "SELECT CASE WHEN demangled <> '' THEN demangled ELSE mangled END, short_name FROM kernel_name"
                        " WHERE id = ?1 AND ?2 = 0") ||
             (c->ident && wl_cur_cache_open(&c->ops, c->db, "SELECT name, shape FROM op WHERE id = ?1 AND ?2 = 0"));
    c->narrow = rc == 0 && wl_sql_has_column(c->db, "kernel", "config_id");
    if (c->narrow)
        rc = wl_kcfg_cache_open(&c->cfgs, c->db);
    /* the export pack, when the census matched it to the rows: the timeline's unlinked read (a pack
     * that cannot be opened after all leaves the rows to be read) */
    char why[200];
    if (rc == 0 && !linked && s->pack && c->ident && (c->pack = wl_pack_open(c->db, WL_PACK_KERNEL, why, sizeof why))) {
        c->untimed = (int64_t)wl_pack_untimed(c->pack);
        wl_cur_db_packed(c->db);
    }
    for (int i = c->pack ? 1 : 0; rc == 0 && i < 3; i++) {
        const char *sql = i == 0 ? KERNEL_SQLS[c->narrow][linked][c->ident] : GPU_SQL[linked][i];
        rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &c->src[i].st, NULL);
        c->src[i].nkeys = 1;
    }
    /* table order where it can be near start order: unlinked (no join), one process (the rows of
     * several are held apart in the table), not found out of order before on this handle */
    c->table = rc == 0 && !c->pack && !linked && (flags & WL_CUR_TABLE_ORDER) && !s->work_unordered &&
               wl_sql_scalar_u64(c->db, "SELECT count(DISTINCT pid) FROM process") <= 1 && samples_in_order(c->db);
    if (rc) {
        wl_cur_set_err(err, err_size, "GPU cursor", c->db);
        wl_gpu_cursor_close(c);
        return NULL;
    }
    return c;
}

wl_gpu_cursor *wl_gpu_cursor_open(wl_session *s, char *err, size_t err_size)
{
    return gpu_open(s, 1, 0, err, err_size);
}

wl_gpu_cursor *wl_gpu_cursor_open_unlinked(wl_session *s, int flags, char *err, size_t err_size)
{
    return gpu_open(s, 0, flags, err, err_size);
}

/* The configuration cells of kernel row r (its id in column 2), whose config_id cell is id
 * (has_id 0: NULL), into the columns KERNEL_COLUMNS computes from them. 0, or -1 when the row
 * cannot be read. */
static int fill_config(wl_gpu_cursor *c, kernel_row *r, int64_t id, int has_id)
{
    const wl_kcfg *k = wl_kcfg_get(&c->cfgs, id, has_id, r->v[2]);
    if (!k)
        return -1;
    for (int i = 0; i < 6; i++) /* grid, block */
        r->v[12 + i] = k->v[WL_KCFG_GRID + i];
    int64_t cluster = 1; /* max(1, the product of the dimensions, a NULL one counting 1) */
    for (int i = 0; i < 3; i++)
        if (!(k->null_mask >> (WL_KCFG_CLUSTER + i) & 1) &&
            __builtin_mul_overflow(cluster, k->v[WL_KCFG_CLUSTER + i], &cluster))
            cluster = INT64_MAX;
    r->v[18] = cluster < 1 ? 1 : cluster;
    r->v[19] = k->v[WL_KCFG_REGS];
    r->v[20] = k->v[WL_KCFG_SSMEM];
    r->v[21] = k->v[WL_KCFG_DSMEM];
    r->v[22] = k->v[WL_KCFG_SMEM_LIMIT];
    r->v[23] = k->null_mask >> WL_KCFG_CARVEOUT & 1 ? -1 : k->v[WL_KCFG_CARVEOUT];
    r->v[25] = k->v[WL_KCFG_LOCAL];
    return 0;
}

/* A narrow row's cells (get(arg, i): column i) into the wide row's places. */
#define READ_NARROW(r, get, arg)                                                                        \
    do {                                                                                                \
        for (int i_ = 0; i_ < 12; i_++)                                                                 \
            (r)->v[i_] = get(arg, i_);                                                                  \
        (r)->v[24] = get(arg, 13);                                                                      \
        (r)->v[26] = get(arg, 14);                                                                      \
        (r)->v[27] = get(arg, 15);                                                                      \
    } while (0)

static int read_kernel(wl_gpu_cursor *c, sqlite3_stmt *st, kernel_row *r)
{
    if (c->narrow) {
        READ_NARROW(r, sqlite3_column_int64, st);
        wl_cur_text_col(st, NARROW_COLS - 1, r->tier, sizeof r->tier);
        return fill_config(c, r, sqlite3_column_int64(st, 12), sqlite3_column_type(st, 12) != SQLITE_NULL);
    }
    for (int i = 0; i < KERNEL_COLS - 1; i++)
        r->v[i] = sqlite3_column_int64(st, i);
    wl_cur_text_col(st, KERNEL_COLS - 1, r->tier, sizeof r->tier);
    return 0;
}

static int gpu_less(const wl_cur_source *a, int ka, const wl_cur_source *b, int kb)
{
    if (a->key[0] != b->key[0])
        return a->key[0] < b->key[0];
    return ka < kb;
}

/* Column i of the row handed out: the kernel row's (k), or the copy's or set's statement's. */
static int64_t cell(sqlite3_stmt *st, const int64_t *kv, int i) { return kv ? kv[i] : sqlite3_column_int64(st, i); }

/* Decodes the ready row of kind: a kernel from its cells kv and tier, a copy or a set from its
 * statement st. */
static int gpu_decode(wl_gpu_cursor *c, sqlite3_stmt *st, const int64_t *kv, const char *tier, wl_gpu_kind kind,
                      wl_gpu_item *it)
{
    it->kind = kind;
    it->start_ns = (uint64_t)cell(st, kv, 0);
    it->end_ns = (uint64_t)cell(st, kv, 1);
    it->id = cell(st, kv, 2);
    it->pid = (uint32_t)cell(st, kv, 3);
    it->device_id = (uint32_t)cell(st, kv, 4);
    it->stream_id = cell(st, kv, 5);
    it->correlation_id = (uint32_t)cell(st, kv, 6);
    it->flow = (uint64_t)cell(st, kv, 7);
    it->graph_id = cell(st, kv, 8);
    int64_t scope = cell(st, kv, 9);
    it->scope_id = scope;
    it->tid = cell(st, kv, 10);
    it->scope[0] = 0;
    it->app_thread = 0;
    if (scope >= 0) {
        const wl_cur_name_slot *sl = wl_cur_cache_get(&c->scopes, it->pid, scope);
        if (!sl)
            return -1;
        wl_cur_copy_len(it->scope, sizeof it->scope, sl->s1, sl->n1);
        if (sl->s2)
            it->app_thread = sl->i2;
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
        int64_t name_id = kv[11];
        if (it->name_cursor != c || it->name_id != name_id) {
            const wl_cur_name_slot *sl = wl_cur_cache_get(&c->kernels, name_id, 0);
            if (!sl)
                return -1;
            wl_cur_copy_len(it->name, sizeof it->name, sl->s1, sl->n1);
            wl_cur_copy_len(it->short_name, sizeof it->short_name, sl->s2, sl->n2);
            it->name_id = name_id;
            it->name_cursor = c;
        }
        for (int i = 0; i < 3; i++) { /* as sqlite3_column_int reads them: the low 32 bits */
            it->grid[i] = (int)kv[12 + i];
            it->block[i] = (int)kv[15 + i];
        }
        it->cluster_size = (int)kv[18];
        it->registers = (int)kv[19];
        it->static_smem = (int)kv[20];
        it->dynamic_smem = (int)kv[21];
        it->smem_limit_config = (int)kv[22];
        it->carveout = (int)kv[23];
        it->queue_delay_ns = kv[24];
        it->local_mem = kv[25];
        it->submit_delay_ns = kv[26];
        int64_t op = kv[27];
        if (op >= 0 && c->ident) {
            it->op_id = op;
            const wl_cur_name_slot *o = wl_cur_cache_get(&c->ops, op, 0);
            if (!o)
                return -1;
            wl_cur_copy_len(it->op, sizeof it->op, o->s1, o->n1);
            wl_cur_copy_len(it->shape, sizeof it->shape, o->s2, o->n2);
        }
        wl_cur_copy_str(it->tier, sizeof it->tier, tier);
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

/* The pack's next kernel as source 0's ready row, decoded into c->prow: 1, 0 at the end, -1 damaged. */
static int pack_peek(wl_gpu_cursor *c)
{
    wl_cur_source *src = &c->src[0];
    if (src->state)
        return src->state == 1;
    int got = wl_pack_next(c->pack, &c->prow);
    if (got <= 0) {
        src->state = 2;
        return got;
    }
    src->key[0] = c->prow.v[0];
    src->state = 1;
    return 1;
}

int wl_gpu_cursor_next(wl_gpu_cursor *c, wl_gpu_item *it)
{
    if (c->last >= 0)
        c->src[c->last].state = 0;
    int best = -1;
    for (int i = 0; i < 3; i++) {
        int r = i == 0 && c->pack ? pack_peek(c) : wl_cur_peek(&c->src[i]);
        if (r < 0)
            return -1;
        if (r && (best < 0 || gpu_less(&c->src[i], i, &c->src[best], best)))
            best = i;
    }
    c->last = best;
    if (best < 0)
        return 0;
    if (best == 0 && !c->pack && read_kernel(c, c->src[0].st, &c->row))
        return -1;
    const int64_t *kv = best ? NULL : c->pack ? c->prow.v : c->row.v;
    /* a pack's strings end in a NUL (row_pack.h); the item keeps as much of the tier as a column copy */
    const char *tier = best ? NULL : c->pack ? c->prow.text[KERNEL_COLS - 1] : c->row.tier;
    return gpu_decode(c, c->src[best].st, kv, tier, (wl_gpu_kind)(best + 1), it) ? -1 : 1;
}

/* ---- every row, kernels in table order --------------------------------------------------------- */

typedef struct each_walk {
    wl_gpu_cursor *c;
    wl_gpu_item *(*slot)(void *arg);
    int (*emit)(void *arg);
    void *arg;
    wl_reorder win;            /* kernels by start; val: the slot holding the row */
    kernel_row *rows;          /* rows of the window's slots */
    int stopped, failed, broken;
    int64_t untimed;
} each_walk;


/* Decodes one row into the caller's next slot and hands it over; 1 when the walk must stop. */
static int hand_over(each_walk *w, sqlite3_stmt *st, const kernel_row *k, wl_gpu_kind kind)
{
    wl_gpu_item *it = w->slot(w->arg);
    if (!it)
        return w->stopped = 1;
    if (gpu_decode(w->c, st, k ? k->v : NULL, k ? k->tier : NULL, kind, it)) {
        w->failed = 1;
        return 1;
    }
    return w->stopped = w->emit(w->arg) != 0;
}

/* The copies and sets that start before key (all of them with all; at equal starts kernels go
 * first, then copies, then sets: gpu_less's order). */
static int hand_over_others(each_walk *w, uint64_t key, int all)
{
    for (;;) {
        int pick = -1;
        for (int i = 1; i < 3; i++) {
            int r = wl_cur_peek(&w->c->src[i]);
            if (r < 0) {
                w->failed = 1;
                return 1;
            }
            if (r && (all || wl_reorder_key_i64(w->c->src[i].key[0]) < key) &&
                (pick < 0 || gpu_less(&w->c->src[i], i, &w->c->src[pick], pick)))
                pick = i;
        }
        if (pick < 0)
            return 0;
        int stop = hand_over(w, w->c->src[pick].st, NULL, (wl_gpu_kind)(pick + 1));
        w->c->src[pick].state = 0;
        if (stop)
            return 1;
    }
}

/* The earliest kernel in the window leaves it, after the copies and sets before it. */
static int hand_over_kernel(void *arg)
{
    each_walk *w = arg;
    wl_reorder_item it;
    if (!wl_reorder_pop(&w->win, &it))
        return 0;
    int stop = hand_over_others(w, it.key, 0) || hand_over(w, NULL, &w->rows[it.val], WL_GPU_KERNEL);
    wl_reorder_release(&w->win, (uint32_t)it.val);
    return stop;
}

static int64_t value_i64(sqlite3_value **v, int i) { return sqlite3_value_int64(v[i]); }

static int kernel_in(void *arg, sqlite3_value **v)
{
    each_walk *w = arg;
    int ncols = w->c->narrow ? NARROW_COLS : KERNEL_COLS;
    if (!sqlite3_value_int64(v[ncols])) { /* no timestamps: not in the walk, only counted */
        w->untimed++;
        return 0;
    }
    uint64_t key = wl_reorder_key_i64(sqlite3_value_int64(v[0]));
    uint32_t slot;
    int admit = wl_reorder_admit(&w->win, key, hand_over_kernel, w, &slot);
    if (admit) {
        w->broken |= admit < 0; /* later than the window allows: order broken */
        return 1;
    }
    kernel_row *r = &w->rows[slot];
    if (w->c->narrow) {
        READ_NARROW(r, value_i64, v);
        if (fill_config(w->c, r, sqlite3_value_int64(v[12]), sqlite3_value_type(v[12]) != SQLITE_NULL)) {
            wl_reorder_release(&w->win, slot);
            w->failed = 1;
            return 1;
        }
    } else {
        for (int i = 0; i < KERNEL_COLS - 1; i++)
            r->v[i] = sqlite3_value_int64(v[i]);
    }
    const unsigned char *t = sqlite3_value_text(v[ncols - 1]);
    wl_cur_copy_str(r->tier, sizeof r->tier, (const char *)t);
    wl_reorder_push(&w->win, key, slot);
    return 0;
}

static int each_in_table_order(wl_gpu_cursor *c, wl_gpu_item *(*slot)(void *), int (*emit)(void *), void *arg)
{
    each_walk w;
    memset(&w, 0, sizeof w);
    w.c = c, w.slot = slot, w.emit = emit, w.arg = arg;
    sqlite3_stmt *k = NULL;
    int rc = -1;
    if (wl_reorder_init_slots(&w.win, KERNEL_WINDOW) || !(w.rows = malloc(KERNEL_WINDOW * sizeof *w.rows)) ||
        sqlite3_prepare_v2(c->db, KERNEL_FOLD_SQLS[c->narrow][c->ident], -1, &k, NULL) != SQLITE_OK)
        goto done;
    int folded = wl_sql_fold(k, kernel_in, &w);
    if (w.broken) {
        c->broke = 1;
        rc = WL_CUR_RESTART;
        goto done;
    }
    if (w.failed || (folded && !w.stopped))
        goto done;
    while (w.win.n && !w.stopped && !w.failed) /* the window's last kernels, then the copies and sets after */
        hand_over_kernel(&w);
    if (!w.stopped && !w.failed)
        hand_over_others(&w, 0, 1);
    rc = w.failed ? -1 : w.stopped ? 1 : 0;
    if (rc == 0)
        c->untimed = w.untimed;
done:
    sqlite3_finalize(k);
    wl_reorder_free(&w.win);
    free(w.rows);
    return rc;
}

int wl_gpu_cursor_each(wl_gpu_cursor *c, wl_gpu_item *(*slot)(void *arg), int (*emit)(void *arg), void *arg)
{
    if (c->table)
        return each_in_table_order(c, slot, emit, arg);
    for (;;) {
        wl_gpu_item *it = slot(arg);
        if (!it)
            return 1;
        int r = wl_gpu_cursor_next(c, it);
        if (r <= 0)
            return r;
        if (emit(arg))
            return 1;
    }
}

int64_t wl_gpu_cursor_untimed(const wl_gpu_cursor *c) { return c->untimed; }

int wl_gpu_cursor_table_order(const wl_gpu_cursor *c) { return c->table; }
