/* Streaming cursors for the exporters (see session_cursors.h): the session facts they need and the
 * pieces both cursors share (the host cursor is in session_cursors_host.c, the GPU cursor in
 * session_cursors_gpu.c).
 * Each cursor merges a few SQLite statements that already return rows in the wanted order
 * (through an index where the schema has one, else SQLite's external sorter, which spills to
 * temporary files rather than growing), and decodes only the row it hands out. */
#include "store/session_cursors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_cursors_internal.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

void wl_cur_text_col(sqlite3_stmt *st, int col, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    size_t len = t ? (size_t)sqlite3_column_bytes(st, col) : 0;
    if (len >= n)
        len = n - 1; /* truncated (names are bounded by the item's buffers) */
    if (len)
        memcpy(out, t, len);
    out[len] = 0;
}

int wl_cur_set_err(char *err, size_t n, const char *what, sqlite3 *db)
{
    if (err && n)
        snprintf(err, n, "%s: %s", what, sqlite3_errmsg(db));
    return -1;
}

int wl_cur_has_ident(sqlite3 *db)
{
    return wl_sql_has_table(db, "op") && wl_sql_has_column(db, "kernel", "op_id") &&
           wl_sql_has_column(db, "scope", "app_thread_id");
}

/* The (pid, tid) after ?1, ?2 with API calls: an index seek or two per thread (a row-value
 * comparison `(pid, tid) > (?1, ?2)` walks every index entry of the pid after the last thread). */
const char *const WL_CUR_THREADS_SQL =
    "SELECT * FROM (SELECT pid, tid FROM api_call WHERE ?3 AND pid = ?1 AND tid > ?2 ORDER BY tid LIMIT 1) UNION ALL"
    " SELECT * FROM (SELECT pid, tid FROM api_call WHERE ?3 AND pid > ?1 ORDER BY pid, tid LIMIT 1) UNION ALL"
    " SELECT * FROM (SELECT pid, tid FROM api_call WHERE NOT ?3 ORDER BY pid, tid LIMIT 1) LIMIT 1";

/* Steps *t (WL_CUR_THREADS_SQL) to the (pid, tid) after *pid, *tid (the first one when *started is 0).
 * Returns 1 with the pair, 0 after the last, -1 on an error. Progress by construction: every pair
 * must be integers and come strictly after the one before, so the walk visits each thread once
 * and ends; a pair that does not (a value SQLite orders apart from the integers, such as text, or
 * an index out of order) ends it with an error instead of seeking the same row again forever. */
int wl_cur_next_api_thread(sqlite3_stmt *t, int *started, int64_t *pid, int64_t *tid)
{
    sqlite3_bind_int64(t, 1, *pid);
    sqlite3_bind_int64(t, 2, *tid);
    sqlite3_bind_int(t, 3, *started);
    int r = sqlite3_step(t), rc = r == SQLITE_DONE ? 0 : -1;
    if (r == SQLITE_ROW && sqlite3_column_type(t, 0) == SQLITE_INTEGER && sqlite3_column_type(t, 1) == SQLITE_INTEGER) {
        int64_t p = sqlite3_column_int64(t, 0), q = sqlite3_column_int64(t, 1);
        if (!*started || p > *pid || (p == *pid && q > *tid)) {
            *pid = p, *tid = q, *started = 1;
            rc = 1;
        }
    }
    sqlite3_reset(t);
    return rc;
}

int wl_session_get_bounds(wl_session *s, wl_session_span *o)
{
    memset(o, 0, sizeof *o);
    /* min/max over indexed start columns are index look-ups; process rows are few. */
    uint64_t first = wl_sql_scalar_u64(s->db, "SELECT min(t) FROM (SELECT min(start_ns) t FROM process WHERE start_ns > 0"
                               " UNION ALL SELECT min(start_ns) FROM kernel UNION ALL SELECT min(start_ns) FROM memcpy"
                               " UNION ALL SELECT min(start_ns) FROM nvtx_range)");
    /* api_call has no start index: the first call of each thread, from the api_by_thread index */
    sqlite3_stmt *th = NULL, *mn = NULL;
    if (sqlite3_prepare_v2(s->db, WL_CUR_THREADS_SQL, -1, &th, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(s->db, "SELECT min(start_ns) FROM api_call WHERE pid = ?1 AND tid = ?2 AND start_ns > 0",
                           -1, &mn, NULL) == SQLITE_OK) {
        int started = 0;
        for (int64_t pid = 0, tid = 0; wl_cur_next_api_thread(th, &started, &pid, &tid) == 1; sqlite3_reset(mn)) {
            sqlite3_bind_int64(mn, 1, pid);
            sqlite3_bind_int64(mn, 2, tid);
            uint64_t t = sqlite3_step(mn) == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(mn, 0) : 0;
            if (t && (!first || t < first))
                first = t;
        }
    }
    sqlite3_finalize(th);
    sqlite3_finalize(mn);
    o->origin_ns = first;
    /* Closes ranges that were never ended; the process end is the natural bound. */
    o->end_ns = wl_sql_scalar_u64(s->db, "SELECT max(t) FROM (SELECT max(end_ns) t FROM process UNION ALL"
                          " SELECT max(start_ns) FROM kernel UNION ALL SELECT max(start_ns) FROM nvtx_range)");
    return 0;
}

int wl_session_get_span(wl_session *s, wl_session_span *o)
{
    wl_session_get_bounds(s, o);
    /* count(*) reads every page of a table's smallest b-tree: a second or so at millions of rows */
    o->api_calls = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM api_call");
    o->nvtx_ranges = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM nvtx_range");
    o->scopes = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM scope");
    o->kernels = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM kernel");
    o->memcpys = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM memcpy");
    o->memsets = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM memset");
    /* the scalar is 0 when the statement fails, as on sessions without the timer table */
    o->timers = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM timer WHERE status = 'done' AND duration_ns IS NOT NULL");
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
        wl_cur_text_col(st, 0, out, n);
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

int wl_cur_peek(wl_cur_source *src)
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

int wl_cur_cache_open(wl_cur_name_cache *c, sqlite3 *db, const char *sql)
{
    memset(c, 0, sizeof *c);
    return sqlite3_prepare_v2(db, sql, -1, &c->lookup, NULL) == SQLITE_OK ? 0 : -1;
}

int wl_cur_cache_open_runs(wl_cur_name_cache *c, sqlite3 *db, const char *sql, const char *run_sql)
{
    if (wl_cur_cache_open(c, db, sql))
        return -1;
    return sqlite3_prepare_v2(db, run_sql, -1, &c->run, NULL) == SQLITE_OK ? 0 : -1;
}

void wl_cur_cache_close(wl_cur_name_cache *c)
{
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(c->slot[i].s1);
        free(c->slot[i].s2);
    }
    sqlite3_finalize(c->lookup);
    sqlite3_finalize(c->run);
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

/* Consecutive b of one a take consecutive slots, so a run of them (wl_cur_cache_open_runs) is
 * cached without pushing out its own members. */
static wl_cur_name_slot *slot_of(wl_cur_name_cache *c, int64_t a, int64_t b)
{
    uint64_t h = (((uint64_t)a * 0x9e3779b97f4a7c15u) >> 40) + (uint64_t)b;
    return &c->slot[h & (CACHE_SLOTS - 1)];
}

/* Fills sl for (a, b) from the statement's columns from col on (none: empty strings). */
static int fill_slot(wl_cur_name_slot *sl, sqlite3_stmt *st, int col, int64_t a, int64_t b)
{
    free(sl->s1);
    free(sl->s2);
    memset(sl, 0, sizeof *sl);
    int two = sqlite3_column_count(st) > col + 1;
    int row = sqlite3_stmt_busy(st) && sqlite3_data_count(st) > 0;
    sl->s1 = row ? dup_col(st, col) : calloc(1, 1);
    sl->s2 = !two ? NULL : row ? dup_col(st, col + 1) : calloc(1, 1);
    if (!sl->s1 || (two && !sl->s2))
        return -1;
    sl->n1 = strlen(sl->s1);
    sl->n2 = sl->s2 ? strlen(sl->s2) : 0;
    sl->i2 = sl->s2 ? strtoll(sl->s2, NULL, 10) : 0;
    sl->used = 1, sl->a = a, sl->b = b;
    return 0;
}

/* Returns the cached slot for (a, b), looking it up on a miss; NULL on failure. */
const wl_cur_name_slot *wl_cur_cache_get(wl_cur_name_cache *c, int64_t a, int64_t b)
{
    wl_cur_name_slot *sl = slot_of(c, a, b);
    if (sl->used && sl->a == a && sl->b == b)
        return sl;
    if (c->run) { /* the row for b and those after it, in one statement */
        sqlite3_bind_int64(c->run, 1, a);
        sqlite3_bind_int64(c->run, 2, b);
        int r, failed = 0, found = 0;
        while (!failed && (r = sqlite3_step(c->run)) == SQLITE_ROW) {
            int64_t k = sqlite3_column_int64(c->run, 0);
            found |= k == b;
            failed = fill_slot(slot_of(c, a, k), c->run, 1, a, k);
        }
        sqlite3_reset(c->run);
        if (failed || (r != SQLITE_DONE && r != SQLITE_ROW))
            return NULL;
        if (found && sl->used && sl->a == a && sl->b == b)
            return sl;
    }
    sqlite3_bind_int64(c->lookup, 1, a);
    sqlite3_bind_int64(c->lookup, 2, b);
    sqlite3_step(c->lookup);
    int rc = fill_slot(sl, c->lookup, 0, a, b);
    sqlite3_reset(c->lookup);
    return rc ? NULL : sl;
}

void wl_cur_copy_str(char *out, size_t n, const char *s) { wl_cur_copy_len(out, n, s, s ? strlen(s) : 0); }

void wl_cur_copy_len(char *out, size_t n, const char *s, size_t len)
{
    if (len >= n)
        len = n - 1;
    if (len)
        memcpy(out, s, len);
    out[len] = 0;
}


/* ---- private connections -------------------------------------------------------------------- */

/* Each cursor reads through its own read-only connection without SQLite's per-call mutex (a
 * cursor is used by one thread at a time, and the exporters run the two cursors in two threads;
 * the session's own connection has no mutex either, so it cannot stand in for one).
 * Rows come in index order, so table pages are visited out of order: a page cache larger than
 * SQLite's 2 MiB default keeps them from being read again (bounded, whatever the session size).
 * NULL with err when the file cannot be opened again (removed since, out of file descriptors). */
sqlite3 *wl_cur_db(wl_session *s, char *err, size_t err_size)
{
    const char *path = sqlite3_db_filename(s->db, "main");
    sqlite3 *db = NULL;
    int rc = !path || !path[0] ? SQLITE_CANTOPEN
                               : sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    /* the same guard as the session's connection: the cursors see the same sound rows */
    if (rc == SQLITE_OK && (sqlite3_busy_timeout(db, 2000) != SQLITE_OK || wl_guard_install(s->guard, db) ||
                             wl_sql_fold_register(db)))
        rc = sqlite3_errcode(db) ? sqlite3_errcode(db) : SQLITE_ERROR;
    if (rc != SQLITE_OK) {
        if (err && err_size)
            snprintf(err, err_size, "cannot open %s again to read it: %s", path ? path : "the session",
                     db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_exec(db, "PRAGMA cache_size = -24576", NULL, NULL, NULL);
    return db;
}

void wl_cur_db_packed(sqlite3 *db) { sqlite3_exec(db, "PRAGMA cache_size = -2000", NULL, NULL, NULL); }

sqlite3 *wl_cur_db_scan(wl_session *s)
{
    sqlite3 *db = wl_cur_db(s, NULL, 0);
    if (db)
        sqlite3_exec(db, "PRAGMA cache_size = -2000", NULL, NULL, NULL);
    return db;
}
