/* The host cursor (see session_cursors.h): NVTX ranges, scopes, timer intervals and API calls,
 * merged from ordered statements by a heap, thread by thread or in start order across threads,
 * each API call with the flow ids of the GPU work it started. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "store/row_pack.h"
#include "store/session_cursors.h"
#include "store/session_cursors_internal.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

/* Host intervals come thread by thread, or in start order across all threads (by_start: then
 * consecutive rows are close in the tables and in the indexes the flow look-ups probe); at equal
 * starts the longer first, then NVTX, scope, API. Sources: NVTX ranges and scopes, each one
 * statement over all threads, and one statement per thread for API calls (the api_by_thread
 * index orders each thread's calls).
 * Columns: 0 pid, 1 tid, 2 start, 3 end, 4 id, 5 name, 6 group, 7 open_end; API only:
 * 8 correlation id, 9 return value, 10 scope id (-1 none), 11 flow id (NULL none). */
#define NVTX_SQL                                                                                        \
    "SELECT pid, coalesce(tid, 0), start_ns, max(coalesce(end_ns, ?1), start_ns), id, name, coalesce(domain, ''),"\
    " end_ns IS NULL FROM nvtx_range ORDER BY "
#define SCOPE_SQL                                                                                       \
    "SELECT pid, tid, start_ns, max(coalesce(end_ns, ?1), start_ns), scope_id, name, '', end_ns IS NULL,"  \
    " %s FROM scope ORDER BY "
/* column 8 of scopes: the application thread id attached (session_identity.h), where recorded */
/* Completed timer-API intervals (a session without the timer table gets an empty source). */
#define TIMER_SQL                                                                                       \
    "SELECT t.pid, coalesce(t.tid, 0), t.start_ns, t.start_ns + t.duration_ns, t.idx, t.name,"           \
    " t.kind || ' ' || coalesce(c.name, t.category), 0 FROM timer t LEFT JOIN timer_category c"          \
    " ON c.pid = t.pid AND c.id = t.category WHERE t.status = 'done' AND t.duration_ns IS NOT NULL ORDER BY "
#define NO_TIMER_SQL "SELECT 0, 0, 0, 0, 0, '', '', 0 WHERE 0 ORDER BY "
static const char *const BY_START = WL_CUR_BY_START, *const BY_THREAD = "1, 2, 3, 4 DESC, 5";
/* One row per kernel a launch started (graph launches: several, in kernel id order), else one row
 * with a NULL flow; non-launch calls do not probe (the index key is NULL). */
static const char *const API_SQL =
    "SELECT a.pid, a.tid, a.start_ns, max(a.end_ns, a.start_ns), a.id, a.name, a.category, 0, a.correlation_id,"
    " a.return_value, coalesce(a.scope_id, -1), k.id * 4 + 1 FROM api_call a"
    " LEFT JOIN kernel k ON k.pid = CASE WHEN a.category IN ('launch', 'graph_launch') THEN a.pid END"
    "  AND k.correlation_id = a.correlation_id AND k.api_id = a.id AND k.has_timestamps AND k.start_ns >= a.start_ns"
    " WHERE a.pid = ?1 AND a.tid = ?2 ORDER BY a.start_ns, a.id";
/* Sessions whose api_call rows carry flow_id (filled at import by WL_FLOW_LINK_SQL): column 11
 * is the call's one flow id, 0 for none, NULL when it has several (looked up by probing). */
static const char *const API_FLOW_SQL = WL_CUR_API_THREAD_SQL;
/* Past WL_CUR_MAX_THREAD_SOURCES threads (a session whose tids were damaged into one per call,
 * say), statements per thread would cost memory and time with their number (each step of SQLite
 * walks the connection's open cursors): then one statement sorts all API calls, in the merge's
 * order (pid, tid first when by thread; then start, the longer first, id). */
#define MAX_THREAD_SOURCES WL_CUR_MAX_THREAD_SOURCES
static const char *const API_ALL_SQL[2] = {
    "SELECT a.pid, a.tid, a.start_ns, max(a.end_ns, a.start_ns) e, a.id, a.name, a.category, 0, a.correlation_id,"
    " a.return_value, coalesce(a.scope_id, -1), k.id * 4 + 1 FROM api_call a"
    " LEFT JOIN kernel k ON k.pid = CASE WHEN a.category IN ('launch', 'graph_launch') THEN a.pid END"
    "  AND k.correlation_id = a.correlation_id AND k.api_id = a.id AND k.has_timestamps AND k.start_ns >= a.start_ns"
    " ORDER BY ",
    WL_CUR_API_ALL_SQL};
static const char *const API_ALL_ORDER[2] = {"1, 2, 3, 4 DESC, 5", WL_CUR_BY_START};
/* The flow rule (the GPU cursor applies the same one, so a flow is written on both sides or on
 * neither; WL_FLOW_LINK_SQL too): GPU work of the call's process and correlation id, linked to
 * the call, with timestamps, not starting before the call; the category says which table. ?1 pid,
 * ?2 correlation id, ?3 api id, ?4 api start; one row per flow id, in id order. */
enum { PROBE_MEMCPY, PROBE_MEMSET, PROBE_KERNEL, N_PROBES };
static const char *const PROBE_SQL[N_PROBES] = {
    "SELECT id * 4 + 2 FROM memcpy WHERE pid = ?1 AND correlation_id = ?2 AND api_id = ?3 AND end_ns >= start_ns"
    " AND start_ns >= ?4 ORDER BY id",
    "SELECT id * 4 + 3 FROM memset WHERE pid = ?1 AND correlation_id = ?2 AND api_id = ?3 AND end_ns >= start_ns"
    " AND start_ns >= ?4 ORDER BY id",
    "SELECT id * 4 + 1 FROM kernel WHERE pid = ?1 AND correlation_id = ?2 AND api_id = ?3 AND has_timestamps"
    " AND start_ns >= ?4 ORDER BY id",
};
struct wl_host_cursor {
    sqlite3 *db;
    wl_cur_source *src;    /* 0 NVTX, 1 scope, 2 timers, 3.. API calls of one thread each */
    int nsrc;
    int *heap;      /* sources with a row ready, smallest first */
    int nheap;
    int started, by_start;
    int flow_col;          /* api_call has flow_id: API_FLOW_SQL, else API_SQL's join */
    /* by start, from the export pack (row_pack.h): sources 0 NVTX, 1 scopes, 3 API calls, each
     * with its ready row (the statement's columns) */
    wl_cur_pack *pack[4];
    const wl_pack_row *prow[4];
    wl_cur_name_cache scopes;
    sqlite3_stmt *probe[N_PROBES];
    uint64_t *flows;
    size_t flow_cap;
};

void wl_host_cursor_close(wl_host_cursor *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nsrc; i++)
        sqlite3_finalize(c->src[i].st);
    wl_cur_cache_close(&c->scopes);
    for (int i = 0; i < N_PROBES; i++)
        sqlite3_finalize(c->probe[i]);
    for (int i = 0; i < 4; i++)
        wl_cur_pack_close(c->pack[i]);
    sqlite3_close(c->db);
    free(c->src);
    free(c->heap);
    free(c->flows);
    free(c);
}

static int add_source(wl_host_cursor *c, const char *sql, int64_t a, int64_t b, int cap)
{
    if (c->nsrc == cap || sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &c->src[c->nsrc].st,
                                             NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(c->src[c->nsrc].st, 1, a);
    sqlite3_bind_int64(c->src[c->nsrc].st, 2, b);
    c->src[c->nsrc++].nkeys = 4;
    return 0;
}

static wl_host_cursor *host_open(wl_session *s, uint64_t open_end_ns, int by_start, char *err, size_t err_size)
{
    wl_host_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->by_start = by_start;
    if (!(c->db = wl_cur_db(s, err, err_size))) {
        free(c);
        return NULL;
    }
    sqlite3_stmt *threads = NULL;
    char nvtx[512], scope[512], timer[512];
    snprintf(nvtx, sizeof nvtx, "%s%s", NVTX_SQL, by_start ? BY_START : BY_THREAD);
    snprintf(scope, sizeof scope, SCOPE_SQL "%s",
             wl_sql_has_column(c->db, "scope", "app_thread_id") ? "coalesce(app_thread_id, 0)" : "0",
             by_start ? BY_START : BY_THREAD);
    int has_timers = wl_sql_has_table(c->db, "timer");
    snprintf(timer, sizeof timer, "%s%s", has_timers ? TIMER_SQL : NO_TIMER_SQL, by_start ? BY_START : BY_THREAD);
    /* sessions imported before api_call.flow_id existed lack the column: join as they always did */
    c->flow_col = wl_sql_has_column(c->db, "api_call", "flow_id");
    int cap = 16, rc = wl_cur_cache_open_runs(&c->scopes, c->db, SCOPE_NAME_SQL, SCOPE_RUN_SQL);
    if (rc == 0 && !(c->src = calloc((size_t)cap, sizeof *c->src)))
        rc = -1;
    /* in start order, what a pack the census matched to the rows holds comes from it: NVTX ranges,
     * scopes, and API calls in the order the statements below would merge them (row_pack_build.c) */
    if (rc == 0 && by_start && s->pack) {
        c->pack[0] = wl_cur_pack_open(c->db, WL_PACK_NVTX, (int64_t)open_end_ns);
        c->pack[1] = wl_cur_pack_open(c->db, WL_PACK_SCOPE, (int64_t)open_end_ns);
        c->pack[3] = c->flow_col ? wl_cur_pack_open(c->db, WL_PACK_API, (int64_t)open_end_ns) : NULL;
        if (c->pack[0] || c->pack[1] || c->pack[3])
            wl_cur_db_packed(c->db);
    }
    if (rc == 0)
        rc = (c->pack[0] ? (c->nsrc++, 0) : add_source(c, nvtx, (int64_t)open_end_ns, 0, cap)) ||
             (c->pack[1] ? (c->nsrc++, 0) : add_source(c, scope, (int64_t)open_end_ns, 0, cap)) ||
             add_source(c, timer, (int64_t)open_end_ns, 0, cap);
    if (rc == 0 && sqlite3_prepare_v2(c->db, WL_CUR_THREADS_SQL, -1, &threads, NULL) != SQLITE_OK)
        rc = -1;
    for (int i = 0; rc == 0 && i < N_PROBES; i++)
        if (sqlite3_prepare_v3(c->db, PROBE_SQL[i], -1, SQLITE_PREPARE_PERSISTENT, &c->probe[i], NULL) != SQLITE_OK)
            rc = -1;
    /* the API calls: the pack's (source 3, no statement); else one statement per thread with API
     * calls (next (pid, tid) after the last one, by index seek), or one for all of them past
     * MAX_THREAD_SOURCES threads */
    if (rc == 0 && c->pack[3]) {
        c->nsrc++;
        sqlite3_finalize(threads);
        if ((c->heap = malloc((size_t)c->nsrc * sizeof *c->heap)))
            return c;
        wl_host_cursor_close(c);
        return NULL;
    }
    int started = 0, order_err = 0, nthreads = 0;
    int64_t (*thread)[2] = rc == 0 ? malloc((MAX_THREAD_SOURCES + 1) * sizeof *thread) : NULL;
    if (rc == 0 && !thread)
        rc = -1;
    for (int64_t pid = 0, tid = 0; rc == 0 && nthreads <= MAX_THREAD_SOURCES;) {
        int r = wl_cur_next_api_thread(threads, &started, &pid, &tid);
        if (r != 1) {
            if (r < 0 && sqlite3_errcode(c->db) == SQLITE_OK)
                order_err = 1;
            rc = r;
            break;
        }
        thread[nthreads][0] = pid, thread[nthreads++][1] = tid;
    }
    sqlite3_finalize(threads);
    int all = nthreads > MAX_THREAD_SOURCES, need = 3 + (all ? 1 : nthreads);
    if (rc == 0 && need > cap) {
        wl_cur_source *ns = realloc(c->src, (size_t)need * sizeof *ns);
        if (ns) {
            memset(ns + cap, 0, (size_t)(need - cap) * sizeof *ns);
            c->src = ns;
            cap = need;
        } else {
            rc = -1;
        }
    }
    if (rc == 0 && all) {
        char sql[1024];
        snprintf(sql, sizeof sql, "%s%s", API_ALL_SQL[c->flow_col], API_ALL_ORDER[by_start]);
        rc = add_source(c, sql, 0, 0, cap);
    }
    for (int i = 0; rc == 0 && !all && i < nthreads; i++)
        rc = add_source(c, c->flow_col ? API_FLOW_SQL : API_SQL, thread[i][0], thread[i][1], cap);
    free(thread);
    if (rc == 0 && !(c->heap = malloc((size_t)c->nsrc * sizeof *c->heap)))
        rc = -1;
    if (rc) {
        if (order_err && err && err_size)
            snprintf(err, err_size, "api_call: (pid, tid) not integers in index order (damaged session)");
        else
            wl_cur_set_err(err, err_size, "host cursor", c->db);
        wl_host_cursor_close(c);
        return NULL;
    }
    return c;
}

wl_host_cursor *wl_host_cursor_open(wl_session *s, uint64_t open_end_ns, char *err, size_t err_size)
{
    return host_open(s, open_end_ns, 0, err, err_size);
}

wl_host_cursor *wl_host_cursor_open_by_start(wl_session *s, uint64_t open_end_ns, char *err, size_t err_size)
{
    return host_open(s, open_end_ns, 1, err, err_size);
}

/* Order: [pid, tid,] start ascending, end descending (parents first), NVTX, scope, API, thread. */
static int host_less(const wl_host_cursor *c, int ia, int ib)
{
    const int64_t *a = c->src[ia].key, *b = c->src[ib].key;
    if (!c->by_start && (a[0] != b[0] || a[1] != b[1]))
        return a[0] != b[0] ? a[0] < b[0] : a[1] < b[1];
    if (a[2] != b[2])
        return a[2] < b[2];
    if (a[3] != b[3])
        return a[3] > b[3];
    int ka = ia < 2 ? ia : 2, kb = ib < 2 ? ib : 2;
    if (ka != kb)
        return ka < kb;
    if (a[0] != b[0])
        return a[0] < b[0];
    if (a[1] != b[1])
        return a[1] < b[1];
    return ia < ib;
}

static void sift_down(wl_host_cursor *c, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < c->nheap && host_less(c, c->heap[l], c->heap[m]))
            m = l;
        if (r < c->nheap && host_less(c, c->heap[r], c->heap[m]))
            m = r;
        if (m == i)
            return;
        int t = c->heap[i];
        c->heap[i] = c->heap[m];
        c->heap[m] = t;
        i = m;
    }
}

static int add_flow(wl_host_cursor *c, size_t *n, uint64_t v)
{
    if (wl_grow((void **)&c->flows, &c->flow_cap, *n, sizeof *c->flows, 16))
        return -1;
    c->flows[(*n)++] = v;
    return 0;
}

/* Which table holds the GPU work an API call of this category starts (-1: none). */
static int probe_of(const char *category)
{
    if (!strcmp(category, "launch") || !strcmp(category, "graph_launch"))
        return PROBE_KERNEL;
    return !strcmp(category, "memcpy") ? PROBE_MEMCPY : !strcmp(category, "memset") ? PROBE_MEMSET : -1;
}

/* Appends the rows of a probe statement (bound by the caller) to the item's flows. */
static int probe_flows(wl_host_cursor *c, sqlite3_stmt *st, const wl_host_item *it, size_t *n)
{
    sqlite3_bind_int64(st, 1, it->pid);
    sqlite3_bind_int64(st, 2, it->correlation_id);
    sqlite3_bind_int64(st, 3, it->id);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)it->start_ns);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        if (add_flow(c, n, (uint64_t)sqlite3_column_int64(st, 0)))
            r = SQLITE_NOMEM;
    sqlite3_reset(st);
    return r == SQLITE_DONE ? 0 : -1;
}

/* Source i's next row from the pack, made ready: 1, 0 at the end, -1 damaged. */
static int pack_peek(wl_host_cursor *c, int i)
{
    wl_cur_source *src = &c->src[i];
    if (src->state)
        return src->state == 1;
    int got = wl_cur_pack_next(c->pack[i], &c->prow[i]);
    if (got <= 0) {
        src->state = 2;
        return got;
    }
    memcpy(src->key, c->prow[i]->v, sizeof src->key); /* pid, tid, start, end */
    src->state = 1;
    return 1;
}

static int from_pack(const wl_host_cursor *c, int i) { return i < 4 && c->pack[i]; }

static int peek(wl_host_cursor *c, int i) { return from_pack(c, i) ? pack_peek(c, i) : wl_cur_peek(&c->src[i]); }

/* Column i of the ready row of source src (the pack's, or its statement's). */
static int64_t col_i64(const wl_host_cursor *c, int src, int i)
{
    return from_pack(c, src) ? c->prow[src]->v[i] : sqlite3_column_int64(c->src[src].st, i);
}

static void col_text(const wl_host_cursor *c, int src, int i, char *out, size_t n)
{
    if (!from_pack(c, src)) {
        wl_cur_text_col(c->src[src].st, i, out, n);
        return;
    }
    const wl_pack_row *r = c->prow[src];
    size_t len = r->len[i] < n ? r->len[i] : n - 1; /* as wl_cur_text_col copies a column */
    memcpy(out, r->text[i], len);
    out[len] = 0;
}

int wl_host_cursor_next(wl_host_cursor *c, wl_host_item *it)
{
    if (!c->started) { /* every wl_cur_source steps once, then the heap keeps the ready ones ordered */
        c->started = 1;
        for (int i = 0; i < c->nsrc; i++) {
            int r = peek(c, i);
            if (r < 0)
                return -1;
            if (r)
                c->heap[c->nheap++] = i;
        }
        for (int i = c->nheap / 2 - 1; i >= 0; i--)
            sift_down(c, i);
    }
    if (c->nheap == 0)
        return 0;
    int best = c->heap[0];
    wl_cur_source *src = &c->src[best];
    sqlite3_stmt *st = src->st;
    it->kind = best == 0 ? WL_HOST_NVTX : best == 1 ? WL_HOST_SCOPE : best == 2 ? WL_HOST_TIMER : WL_HOST_API;
    it->pid = (uint32_t)src->key[0];
    it->tid = (uint32_t)src->key[1];
    it->start_ns = (uint64_t)src->key[2];
    it->end_ns = (uint64_t)src->key[3];
    it->id = col_i64(c, best, 4);
    col_text(c, best, 5, it->name, sizeof it->name);
    it->name_key = from_pack(c, best) ? ((uint64_t)c->prow[best]->v[5] + 1) << 1 : 0; /* even: see the model */
    col_text(c, best, 6, it->group, sizeof it->group);
    it->open_end = (int)col_i64(c, best, 7);
    it->scope[0] = 0;
    it->correlation_id = 0;
    it->return_value = 0;
    it->app_thread = it->kind == WL_HOST_SCOPE ? col_i64(c, best, 8) : 0;
    it->flows = NULL;
    it->n_flows = 0;
    src->state = 0;
    if (it->kind == WL_HOST_API) {
        it->correlation_id = (uint32_t)col_i64(c, best, 8);
        it->return_value = col_i64(c, best, 9);
        int64_t scope = col_i64(c, best, 10);
        if (scope >= 0) {
            const wl_cur_name_slot *sl = wl_cur_cache_get(&c->scopes, it->pid, scope);
            if (!sl)
                return -1;
            wl_cur_copy_len(it->scope, sizeof it->scope, sl->s1, sl->n1);
        }
        int r = 1, probe;
        if (c->flow_col) { /* the row's flow; several (NULL) are looked up */
            int several = from_pack(c, best) ? (int)(c->prow[best]->nulls >> 11 & 1)
                                             : sqlite3_column_type(st, 11) == SQLITE_NULL;
            if (!several) {
                uint64_t f = (uint64_t)col_i64(c, best, 11);
                if (f && add_flow(c, &it->n_flows, f))
                    return -1;
            } else if ((probe = probe_of(it->group)) >= 0)
                r = probe_flows(c, c->probe[probe], it, &it->n_flows) ? -1 : 1;
        }
        /* joined: a launch's flows are its consecutive rows; copies and sets probe their table */
        else if (sqlite3_column_type(st, 11) != SQLITE_NULL) {
            if (add_flow(c, &it->n_flows, (uint64_t)sqlite3_column_int64(st, 11)))
                return -1;
            while ((r = wl_cur_peek(src)) > 0 && sqlite3_column_int64(st, 4) == it->id) {
                if (add_flow(c, &it->n_flows, (uint64_t)sqlite3_column_int64(st, 11)))
                    return -1;
                src->state = 0;
            }
        } else if ((probe = probe_of(it->group)) == PROBE_MEMCPY || probe == PROBE_MEMSET)
            r = probe_flows(c, c->probe[probe], it, &it->n_flows) ? -1 : 1;
        it->flows = c->flows;
        if (r < 0)
            return -1;
    }
    /* the wl_cur_source's next row replaces it at the top of the heap, or the wl_cur_source leaves */
    int r = peek(c, best);
    if (r < 0)
        return -1;
    if (!r)
        c->heap[0] = c->heap[--c->nheap];
    if (c->nheap)
        sift_down(c, 0);
    return 1;
}

