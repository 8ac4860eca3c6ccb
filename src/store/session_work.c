/* GPU work with its launching call, and the host calls that wait for the GPU (session_work.h).
 * The kernels come either through kernel_by_start (start order, a table seek per row: about
 * three times the CPU of reading the table in its own order at 10 M kernels) or, when the caller
 * can start over, in table order folded inside SQLite and put back in start order by a reorder
 * window (reorder.h); the copies and sets, far fewer, always through their ordered statements. */
#include "store/session_work.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/kernel_config.h"
#include "store/reorder.h"
#include "store/session_cursors_internal.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

/* Three ordered statements (kernels, copies, sets) merged by start. Column layout shared:
 * 0 id, 1 pid, 2 device, 3 stream, 4 start, 5 end, 6 api_id, 7 api start, 8 api end, 9 tid,
 * 10 graph, then kind-specific columns. */
static const char *const WORK_SQL[3] = {
    "SELECT k.id, k.pid, k.device_id, k.stream_id, k.start_ns, k.end_ns, k.api_id, a.start_ns, a.end_ns,"
    " coalesce(k.tid, a.tid), k.graph_id, k.name_id, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y,"
    " k.block_z, k.cluster_x, k.cluster_y, k.cluster_z, k.registers_per_thread, k.static_smem, k.dynamic_smem,"
    " k.smem_limit_config, k.carveout_requested, k.cache_config_requested, k.submitted_ns"
    " FROM kernel k LEFT JOIN api_call a ON a.id = k.api_id WHERE k.has_timestamps AND k.end_ns >= k.start_ns"
    " ORDER BY k.start_ns",
    "SELECT c.id, c.pid, c.device_id, c.stream_id, c.start_ns, c.end_ns, c.api_id, a.start_ns, a.end_ns,"
    " coalesce(c.tid, a.tid), c.graph_id, c.bytes, c.kind, c.src_kind, c.dst_kind, c.is_async"
    " FROM memcpy c LEFT JOIN api_call a ON a.id = c.api_id WHERE c.end_ns >= c.start_ns ORDER BY c.start_ns",
    "SELECT m.id, m.pid, m.device_id, m.stream_id, m.start_ns, m.end_ns, m.api_id, a.start_ns, a.end_ns,"
    " coalesce(m.tid, a.tid), m.graph_id, m.bytes"
    " FROM memset m LEFT JOIN api_call a ON a.id = m.api_id WHERE m.end_ns >= m.start_ns ORDER BY m.start_ns",
};

/* A row's cells: from a statement, or from the values a fold is given (sql_util.h). */
typedef struct cells {
    sqlite3_stmt *st;
    sqlite3_value **v;
} cells;

/* A NULL cell reads as 0 (SQLite's rule for both calls), so col_or is only for columns whose NULL
 * means something else: the type test is a call per cell, 10 M rows a walk. */
static int64_t col_int(const cells *q, int col)
{
    return q->st ? sqlite3_column_int64(q->st, col) : sqlite3_value_int64(q->v[col]);
}

static int64_t col_or(const cells *q, int col, int64_t none)
{
    int null = q->st ? sqlite3_column_type(q->st, col) == SQLITE_NULL : sqlite3_value_type(q->v[col]) == SQLITE_NULL;
    return null ? none : col_int(q, col);
}

static void col_text(const cells *q, int col, char *out, size_t n)
{
    const unsigned char *t = q->st ? sqlite3_column_text(q->st, col) : sqlite3_value_text(q->v[col]);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

static wl_copy_dir copy_dir(const char *kind)
{
    if (!strcmp(kind, "HtoD"))
        return WL_COPY_HTOD;
    if (!strcmp(kind, "DtoH"))
        return WL_COPY_DTOH;
    if (!strcmp(kind, "DtoD"))
        return WL_COPY_DTOD;
    return WL_COPY_OTHER;
}

/* Cell i of a configuration (kernel_config.h), `none` where NULL. */
static int64_t cfg_or(const wl_kcfg *k, int i, int64_t none) { return k->null_mask >> i & 1 ? none : k->v[i]; }

/* The row's cells; a kernel's configuration from cfg when given (NARROW_KERNELS' rows), else from
 * columns 12-26. */
static void read_row(const cells *q, wl_work_kind kind, wl_work_row *w, const wl_kcfg *cfg)
{
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->id = col_int(q, 0);
    w->pid = (uint32_t)col_int(q, 1);
    w->device_id = (uint32_t)col_int(q, 2);
    w->stream_id = col_or(q, 3, -1);
    w->start_ns = (uint64_t)col_int(q, 4);
    w->end_ns = (uint64_t)col_int(q, 5);
    w->api_id = col_or(q, 6, -1);
    w->api_start_ns = col_or(q, 7, -1);
    w->api_end_ns = col_or(q, 8, -1);
    w->tid = col_or(q, 9, -1);
    w->graph_id = col_or(q, 10, -1);
    w->submitted_ns = -1;
    if (kind == WL_WORK_KERNEL) {
        wl_kernel_config *c = &w->cfg;
        c->name_id = col_int(q, 11);
        c->pid = w->pid;
        c->device_id = w->device_id;
        if (cfg) {
            for (int i = 0; i < 3; i++) {
                c->grid[i] = (int)cfg_or(cfg, WL_KCFG_GRID + i, 1);
                c->block[i] = (int)cfg_or(cfg, WL_KCFG_BLOCK + i, 1);
                c->cluster[i] = (int)cfg->v[WL_KCFG_CLUSTER + i];
            }
            c->registers_per_thread = (int)cfg->v[WL_KCFG_REGS];
            c->static_smem = cfg->v[WL_KCFG_SSMEM];
            c->dynamic_smem = cfg->v[WL_KCFG_DSMEM];
            c->smem_limit_config = (int)cfg->v[WL_KCFG_SMEM_LIMIT];
            c->carveout_requested = (int)cfg_or(cfg, WL_KCFG_CARVEOUT, -1);
            c->cache_config_requested = (int)cfg->v[WL_KCFG_CACHE_REQ];
        } else {
            for (int i = 0; i < 3; i++) {
                c->grid[i] = (int)col_or(q, 12 + i, 1);
                c->block[i] = (int)col_or(q, 15 + i, 1);
                c->cluster[i] = (int)col_int(q, 18 + i);
            }
            c->registers_per_thread = (int)col_int(q, 21);
            c->static_smem = col_int(q, 22);
            c->dynamic_smem = col_int(q, 23);
            c->smem_limit_config = (int)col_int(q, 24);
            c->carveout_requested = (int)col_or(q, 25, -1);
            c->cache_config_requested = (int)col_int(q, 26);
        }
        int64_t sub = col_int(q, cfg ? 13 : 27);
        w->submitted_ns = sub > 0 ? sub : -1;
        c->calls = 1;
        c->total_ns = w->end_ns - w->start_ns;
    } else {
        int64_t b = col_int(q, 11);
        w->bytes = b > 0 ? (uint64_t)b : 0;
    }
    if (kind == WL_WORK_COPY) {
        char k[16], src[24], dst[24];
        col_text(q, 12, k, sizeof k);
        col_text(q, 13, src, sizeof src);
        col_text(q, 14, dst, sizeof dst);
        w->dir = copy_dir(k);
        w->host_pageable = !strcmp(src, "pageable") || !strcmp(dst, "pageable");
        w->is_async = (int)col_int(q, 15) != 0;
    }
}

typedef struct work_visit {
    int (*fn)(const wl_work_row *, void *);
    void *arg;
} work_visit;

static int work_row(int which, sqlite3_stmt *q, void *arg)
{
    const work_visit *v = arg;
    wl_work_row w;
    cells c = {q, NULL};
    read_row(&c, (wl_work_kind)(which + 1), &w, NULL);
    return v->fn(&w, v->arg);
}

/* The three statements merged by start (column 4), the kernels through kernel_by_start. */
static long each_by_index(wl_session *s, int (*fn)(const wl_work_row *, void *), void *arg)
{
    sqlite3_stmt *st[3] = {NULL, NULL, NULL};
    long rc = -1;
    int prepared = 1;
    for (int i = 0; i < 3; i++)
        prepared &= sqlite3_prepare_v2(s->db, WORK_SQL[i], -1, &st[i], NULL) == SQLITE_OK;
    work_visit v = {fn, arg};
    if (prepared)
        rc = wl_sql_merge_ordered(st, 3, 4, work_row, &v);
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(st[i]);
    return rc;
}

/* ---- the kernels in table order, through a reorder window ---------------------------------- */

#define WORK_WINDOW 8192 /* kernels held back: far more than run at once on the GPUs of a session */

/* The kernels' statement in table order, its rows folded (the same columns, wl_fold's ?1 first);
 * in sessions with kernel.config_id, its columns 0-11, the config id and submitted_ns. */
#define NARROW_KERNELS                                                                                  \
    "SELECT wl_fold(?1, k.id, k.pid, k.device_id, k.stream_id, k.start_ns, k.end_ns, k.api_id, a.start_ns," \
    " a.end_ns, coalesce(k.tid, a.tid), k.graph_id, k.name_id, k.config_id, k.submitted_ns)"            \
    " FROM kernel k LEFT JOIN api_call a ON a.id = k.api_id WHERE k.has_timestamps AND k.end_ns >= k.start_ns"
static const char KERNELS_IN_TABLE_ORDER[] =
    "SELECT wl_fold(?1, k.id, k.pid, k.device_id, k.stream_id, k.start_ns, k.end_ns, k.api_id, a.start_ns,"
    " a.end_ns, coalesce(k.tid, a.tid), k.graph_id, k.name_id, k.grid_x, k.grid_y, k.grid_z, k.block_x,"
    " k.block_y, k.block_z, k.cluster_x, k.cluster_y, k.cluster_z, k.registers_per_thread, k.static_smem,"
    " k.dynamic_smem, k.smem_limit_config, k.carveout_requested, k.cache_config_requested, k.submitted_ns)"
    " FROM kernel k LEFT JOIN api_call a ON a.id = k.api_id WHERE k.has_timestamps AND k.end_ns >= k.start_ns";

typedef struct walk {
    int (*fn)(const wl_work_row *, void *);
    void *arg;
    sqlite3_stmt *other[2];   /* copies, sets: in start order */
    wl_work_row next[2];      /* the next row of each, when has_next */
    int has_next[2], read_err;
    wl_reorder win;           /* kernels by start; val: the slot holding the row */
    wl_work_row *slots;       /* rows of the window's slots */
    int stopped, broken;
    long n;
    int narrow;               /* NARROW_KERNELS, the configurations from cfgs */
    wl_kcfg_cache cfgs;
} walk;

static void other_next(walk *w, int i)
{
    int r = sqlite3_step(w->other[i]);
    w->has_next[i] = r == SQLITE_ROW;
    if (r == SQLITE_ROW) {
        cells c = {w->other[i], NULL};
        read_row(&c, i == 0 ? WL_WORK_COPY : WL_WORK_SET, &w->next[i], NULL);
    } else if (r != SQLITE_DONE) {
        w->read_err = 1;
    }
}

static int pass_on(walk *w, const wl_work_row *r)
{
    w->n++;
    return w->stopped = w->fn(r, w->arg) != 0;
}

/* The copies and sets that start before key (all of them with all), copies first at equal
 * starts: the order of the merge by index, where kernels go first at equal starts. */
static int pass_others(walk *w, uint64_t key, int all)
{
    for (;;) {
        int pick = -1;
        for (int i = 0; i < 2; i++)
            if (w->has_next[i] && (all || wl_reorder_key_i64((int64_t)w->next[i].start_ns) < key) &&
                (pick < 0 || (int64_t)w->next[i].start_ns < (int64_t)w->next[pick].start_ns))
                pick = i;
        if (pick < 0)
            return 0;
        wl_work_row r = w->next[pick];
        other_next(w, pick);
        if (pass_on(w, &r))
            return 1;
    }
}

/* The earliest kernel in the window leaves it, after the copies and sets before it. */
static int pass_kernel(void *arg)
{
    walk *w = arg;
    wl_reorder_item it;
    if (!wl_reorder_pop(&w->win, &it))
        return 0;
    int stop = pass_others(w, it.key, 0) || pass_on(w, &w->slots[it.val]);
    wl_reorder_release(&w->win, (uint32_t)it.val);
    return stop;
}

static int kernel_in(void *arg, sqlite3_value **v)
{
    walk *w = arg;
    uint64_t key = wl_reorder_key_i64(sqlite3_value_int64(v[4]));
    uint32_t slot;
    int admit = wl_reorder_admit(&w->win, key, pass_kernel, w, &slot);
    if (admit) {
        w->broken |= admit < 0; /* later than the window allows: order broken */
        return 1;
    }
    cells c = {NULL, v};
    const wl_kcfg *cfg = NULL;
    if (w->narrow &&
        !(cfg = wl_kcfg_get(&w->cfgs, sqlite3_value_int64(v[12]), sqlite3_value_type(v[12]) != SQLITE_NULL,
                            sqlite3_value_int64(v[0])))) {
        wl_reorder_release(&w->win, slot);
        w->read_err = 1;
        return 1;
    }
    read_row(&c, WL_WORK_KERNEL, &w->slots[slot], cfg);
    wl_reorder_push(&w->win, key, slot);
    return 0;
}

/* The rows passed; -1 on a read error; WL_WORK_RESTART when the order broke after rows were
 * passed; -3 when it broke before any (the caller reads by index, with nothing to forget). */
static long each_in_table_order(wl_session *s, int (*fn)(const wl_work_row *, void *), void *arg)
{
    walk w;
    memset(&w, 0, sizeof w);
    w.fn = fn;
    w.arg = arg;
    sqlite3_stmt *k = NULL;
    long rc = -1;
    w.narrow = wl_sql_has_column(s->db, "kernel", "config_id");
    if (wl_reorder_init_slots(&w.win, WORK_WINDOW) || !(w.slots = malloc(WORK_WINDOW * sizeof *w.slots)) ||
        sqlite3_prepare_v2(s->db, WORK_SQL[1], -1, &w.other[0], NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, WORK_SQL[2], -1, &w.other[1], NULL) != SQLITE_OK ||
        (w.narrow && wl_kcfg_cache_open(&w.cfgs, s->db)) ||
        sqlite3_prepare_v2(s->db, w.narrow ? NARROW_KERNELS : KERNELS_IN_TABLE_ORDER, -1, &k, NULL) != SQLITE_OK)
        goto done;
    other_next(&w, 0);
    other_next(&w, 1);
    int folded = wl_sql_fold(k, kernel_in, &w);
    if (w.broken) {
        rc = w.n ? WL_WORK_RESTART : -3;
        goto done;
    }
    if (w.stopped) {
        rc = w.n;
        goto done;
    }
    if (folded || w.read_err)
        goto done;
    while (w.win.n && !w.stopped) /* the window's last kernels, then the copies and sets after */
        pass_kernel(&w);
    if (!w.stopped)
        pass_others(&w, 0, 1);
    rc = w.read_err ? -1 : w.n;
done:
    sqlite3_finalize(k);
    sqlite3_finalize(w.other[0]);
    sqlite3_finalize(w.other[1]);
    wl_kcfg_cache_close(&w.cfgs);
    wl_reorder_free(&w.win);
    free(w.slots);
    return rc;
}

long wl_session_each_work(wl_session *s, int can_restart, int (*fn)(const wl_work_row *, void *), void *arg)
{
    /* table order where it can be near start order: one process (a session of several holds
     * each one's rows apart), not found out of order before on this handle */
    if (can_restart && !s->work_unordered && wl_sql_scalar_u64(s->db, "SELECT count(DISTINCT pid) FROM process") <= 1) {
        long rc = each_in_table_order(s, fn, arg);
        if (rc == WL_WORK_RESTART || rc == -3)
            s->work_unordered = 1;
        if (rc != -3)
            return rc;
    }
    return each_by_index(s, fn, arg);
}

static long blocking_calls(sqlite3 *db, int (*fn)(const wl_blocking_call *, void *), void *arg)
{
    sqlite3_stmt *q = NULL;
    /* cudaMemcpy / cuMemcpyHtoD_v2 wait for the copy; their *Async forms do not (a pageable
     * async copy may still block while staging: that is the pageable-copy rule's business). */
    if (sqlite3_prepare_v2(db,
                           "SELECT id, pid, tid, start_ns, end_ns, name, category <> 'sync' FROM api_call"
                           " WHERE (category = 'sync' OR (category IN ('memcpy', 'memset') AND name NOT LIKE"
                           " '%Async%')) AND end_ns >= start_ns ORDER BY start_ns",
                           -1, &q, NULL) != SQLITE_OK)
        return -1;
    long n = 0;
    int r;
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
        wl_blocking_call b;
        memset(&b, 0, sizeof b);
        b.id = sqlite3_column_int64(q, 0);
        b.pid = (uint32_t)sqlite3_column_int64(q, 1);
        b.tid = (uint32_t)sqlite3_column_int64(q, 2);
        b.start_ns = (uint64_t)sqlite3_column_int64(q, 3);
        b.end_ns = (uint64_t)sqlite3_column_int64(q, 4);
        wl_sql_text_col(q, 5, b.name, sizeof b.name);
        b.implicit = sqlite3_column_int(q, 6);
        n++;
        if (fn(&b, arg))
            break;
    }
    sqlite3_finalize(q);
    return r == SQLITE_ROW || r == SQLITE_DONE ? n : -1;
}

long wl_session_each_blocking_call(wl_session *s, int (*fn)(const wl_blocking_call *, void *), void *arg)
{
    return blocking_calls(s->db, fn, arg);
}

struct wl_blocking_read {
    sqlite3 *db; /* its own connection, NULL when read in place */
    pthread_t thread;
    int (*fn)(const wl_blocking_call *, void *);
    void *arg;
    long rc;
};

static void *blocking_thread(void *arg)
{
    wl_blocking_read *r = arg;
    r->rc = blocking_calls(r->db, r->fn, r->arg);
    return NULL;
}

wl_blocking_read *wl_session_blocking_calls_begin(wl_session *s, int (*fn)(const wl_blocking_call *, void *),
                                                  void *arg)
{
    wl_blocking_read *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fn = fn;
    r->arg = arg;
    if (s->read_threads > 1 && (r->db = wl_cur_db_scan(s)) != NULL) {
        if (pthread_create(&r->thread, NULL, blocking_thread, r) == 0)
            return r;
        sqlite3_close(r->db);
        r->db = NULL;
    }
    r->rc = blocking_calls(s->db, fn, arg); /* no second thread: read now */
    return r;
}

long wl_session_blocking_calls_end(wl_blocking_read *r)
{
    if (!r)
        return -1;
    if (r->db) {
        pthread_join(r->thread, NULL);
        sqlite3_close(r->db);
    }
    long rc = r->rc;
    free(r);
    return rc;
}
