/* Reading only sound rows (see session_guard.h). The check runs as an SQL function in the WHERE
 * clause of each TEMP view: `SELECT * FROM main.t WHERE wl_fault(t, rowid, columns...) IS NULL`.
 * The view is flattened into every query that reads it, so the query plans and the indexes they
 * use stay the same (the function's arguments are not index expressions); each row read costs
 * one call. The function returns NULL for a sound row, else what is wrong with it. */
#include "store/session_guard.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/row_pack.h"
#include "store/session_contract.h"

#define MAX_TABLES 40
#define MAX_PROBLEMS 16
#define WINDOW_SLACK_NS (24ll * 3600 * 1000000000) /* one day either side of the processes */

typedef struct ref_key {
    int64_t a, b;
} ref_key;

typedef struct ref_set {
    ref_key *keys;
    size_t n;
} ref_set;

struct wl_guard {
    int present[MAX_TABLES];  /* the table is in the file */
    uint64_t absent[MAX_TABLES]; /* its contract columns the file lacks (optional ones) */
    wl_contract_env env;
    ref_set refs[WL_N_REFS];
    char problems[MAX_PROBLEMS][320];
    int nproblems;
    /* the census at open: rows left out per table and the first of them */
    int census_ran;             /* 0: the file was known sound (check_cache.h) */
    /* the export pack (row_pack.h): the hash each census pass sums per table (NULL: none), and
     * what the comparison found: 1 it matches the rows, -1 it does not (why), 0 not compared */
    const char *pack_expr[MAX_TABLES];
    int pack;
    char pack_why[220];
    uint64_t skipped[MAX_TABLES];
    char first[MAX_TABLES][420];
};

static void problem(wl_guard *g, const char *fmt, const char *a, const char *b, const char *c)
{
    if (g->nproblems < MAX_PROBLEMS)
        snprintf(g->problems[g->nproblems++], sizeof g->problems[0], fmt, a, b, c);
}

static int key_cmp(const void *x, const void *y)
{
    const ref_key *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

static int has_ref(const void *arg, wl_ref_kind kind, int64_t a, int64_t b)
{
    const ref_set *r = &((const wl_guard *)arg)->refs[kind];
    ref_key k = {a, b};
    return r->n && bsearch(&k, r->keys, r->n, sizeof k, key_cmp) != NULL;
}

/* ---- the row check ------------------------------------------------------------------------ */

/* wl_fault(table index, rowid, cells...): NULL, or "<column> <what is wrong>". Pure: SQLite may
 * call it with a column replaced by a constant the query compares it with (constant propagation)
 * for rows the query then leaves out anyway, so it records nothing. */
static void fault_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const wl_guard *g = sqlite3_user_data(ctx);
    int ti = sqlite3_value_int(argv[0]);
    if (ti < 0 || ti >= WL_CONTRACT_TABLES || argc != WL_CONTRACT[ti].ncols + 2)
        return; /* cannot happen: the views pass what the contract lists */
    const wl_table_rule *t = &WL_CONTRACT[ti];
    wl_cell cells[64];
    for (int i = 0; i < t->ncols; i++) {
        sqlite3_value *v = argv[i + 2];
        wl_cell *c = &cells[i];
        c->type = sqlite3_value_type(v);
        c->i = c->type == SQLITE_INTEGER ? sqlite3_value_int64(v) : 0;
        c->d = c->type == SQLITE_FLOAT ? sqlite3_value_double(v) : 0;
        c->text = NULL;
        c->len = 0;
    }
    char why[160];
    int bad = wl_contract_check(t, cells, g->absent[ti], &g->env, why, sizeof why);
    if (bad < 0)
        return;
    /* the message shows the cell: its text is only read now */
    wl_cell *c = &cells[bad];
    if (c->type == SQLITE_TEXT || c->type == SQLITE_BLOB) {
        sqlite3_value *v = argv[bad + 2];
        c->text = c->type == SQLITE_TEXT ? sqlite3_value_text(v) : sqlite3_value_blob(v);
        c->len = sqlite3_value_bytes(v);
        (void)wl_contract_check(t, cells, g->absent[ti], &g->env, why, sizeof why); /* same fault, with its text */
    }
    char msg[256];
    snprintf(msg, sizeof msg, "%s %s", t->cols[bad].name, why);
    sqlite3_result_text(ctx, msg, -1, SQLITE_TRANSIENT);
}

/* ---- building ----------------------------------------------------------------------------- */

static int table_present(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return found;
}

/* Columns of main.t the contract lists but the file lacks. */
static uint64_t absent_columns(wl_guard *g, sqlite3 *db, const wl_table_rule *t)
{
    uint64_t absent = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1, 'main') WHERE name = ?2", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    for (int i = 0; i < t->ncols; i++) {
        sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, t->cols[i].name, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) {
            absent |= 1ull << i;
            if (!t->cols[i].optional)
                problem(g, "table %s has no column %s%s", t->name, t->cols[i].name, "");
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return absent;
}

static void check_indexes(wl_guard *g, sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_master WHERE type = 'index' AND name = ?1 AND tbl_name = ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    for (int i = 0; i < WL_INDEX_COUNT; i++) {
        const wl_index_rule *x = &WL_INDEXES[i];
        const wl_table_rule *t = wl_contract_table(x->table);
        if (!t || !g->present[t - WL_CONTRACT])
            continue;
        sqlite3_bind_text(st, 1, x->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, x->table, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) {
            char create[160];
            snprintf(create, sizeof create, "CREATE INDEX %s ON %s(%s)", x->name, x->table, x->columns);
            problem(g, "index %s is missing (reading would slow down with the square of the rows; add it with"
                       " sqlite3 SESSION '%s')", x->name, create, "");
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
}

/* The session's window: the processes' span, one day wider each side (host timers and clocks of
 * other hosts may stray a little; times of 0 or in 2262 may not). Without a process row with a
 * start: [0, 2^62]; with one whose end is missing (killed): no upper bound but 2^62. */
static void build_window(wl_guard *g, sqlite3 *db)
{
    g->env.window_lo = 0;
    g->env.window_hi = WL_TIME_MAX;
    sqlite3_stmt *st;
    if (!g->present[1] || sqlite3_prepare_v2(db, "SELECT start_ns, end_ns FROM main.process", -1, &st, NULL) != SQLITE_OK)
        return;
    int64_t lo = WL_TIME_MAX, hi = 0;
    int open = 0, any = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
            continue;
        int64_t s = sqlite3_column_int64(st, 0);
        if (s < 0 || s > WL_TIME_MAX)
            continue;
        any = 1;
        lo = s < lo ? s : lo;
        int64_t e = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? sqlite3_column_int64(st, 1) : -1;
        if (e < s || e > WL_TIME_MAX)
            open = 1;
        else
            hi = e > hi ? e : hi;
    }
    sqlite3_finalize(st);
    if (!any)
        return;
    g->env.window_lo = lo > WINDOW_SLACK_NS ? lo - WINDOW_SLACK_NS : 0;
    if (!open)
        g->env.window_hi = hi < WL_TIME_MAX - WINDOW_SLACK_NS ? hi + WINDOW_SLACK_NS : WL_TIME_MAX;
}

/* "wl_fault(i, rowid, c0, c1, ...)" for table i (NULL for the columns the file lacks). */
static char *fault_call(const wl_guard *g, int i)
{
    const wl_table_rule *t = &WL_CONTRACT[i];
    size_t cap = 64 + (size_t)t->ncols * 40, o = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    o += (size_t)snprintf(s, cap, "wl_fault(%d, %s", i, t->rowid ? "rowid" : "NULL");
    for (int c = 0; c < t->ncols; c++)
        o += (size_t)snprintf(s + o, cap - o, ", %s%s%s", g->absent[i] >> c & 1 ? "NULL" : "\"",
                              g->absent[i] >> c & 1 ? "" : t->cols[c].name, g->absent[i] >> c & 1 ? "" : "\"");
    snprintf(s + o, cap - o, ")");
    return s;
}

/* The tables other tables reference by id, and the key of each of their rows. */
static const struct {
    const char *table;
    wl_ref_kind kind;
    const char *key; /* SQL: the two parts of the key */
} REFERENCED[] = {
    {"kernel_name", WL_REF_KERNEL_NAME, "id, 0"},
    {"metric", WL_REF_METRIC, "id, 0"},
    {"stall_reason", WL_REF_STALL_REASON, "id, 0"},
    {"inkernel_buffer", WL_REF_INKERNEL_BUFFER, "id, 0"},
    {"pm_metric", WL_REF_PM_METRIC, "pid << 32 | device_id, metric_index"},
};

static int add_ref(ref_set *r, size_t *cap, int64_t a, int64_t b)
{
    if (r->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        ref_key *p = realloc(r->keys, nc * sizeof *p);
        if (!p)
            return -1;
        r->keys = p;
        *cap = nc;
    }
    r->keys[r->n++] = (ref_key){a, b};
    return 0;
}

/* ---- the census: every row of every table, once, at open ---------------------------------- */

/* The k-th column of a table (its first when it has fewer): rows without a rowid are named by
 * their leading columns. */
static const char *keycol(const wl_table_rule *t, int k) { return t->cols[k < t->ncols ? k : 0].name; }

/* A piece of the census: the rows of table i with rowid in [lo, hi] (all rows when !ranged). */
typedef struct census_unit {
    int table, ranged;
    int64_t lo, hi;
    uint64_t skipped;
    char first[420];
    int failed;                /* SQLite's error code when the rows could not be read */
    char why[160];
    uint64_t rows, hashed, sum; /* with a pack hash: rows read, rows hashed, the hashes' sum */
} census_unit;

/* The statement that checks table i's rows: columns 0 rowid (NULL without one), 1 the fault
 * (NULL: sound), 2-3 key (SQL for the two parts of the row's key, when other tables reference
 * it), 4-6 the leading columns, which name a row without a rowid. ranged: rowid in [?1, ?2];
 * faults: only the unsound rows, at most that many. */
static sqlite3_stmt *check_rows(const wl_guard *g, sqlite3 *db, int i, const char *key, int ranged, int faults)
{
    const wl_table_rule *t = &WL_CONTRACT[i];
    char *call = fault_call(g, i);
    /* column 7: the export pack's hash of the row (the expressions name the table k) */
    const char *hash = g->pack_expr[i] && !faults ? g->pack_expr[i] : "NULL";
    char *sql = call ? sqlite3_mprintf("SELECT * FROM (SELECT %s, %s AS fault, %s, \"%w\", \"%w\", \"%w\", %s FROM"
                                       " main.\"%w\" AS k WHERE %s) WHERE %s LIMIT %d",
                                       t->rowid ? "rowid" : "NULL", call, key, keycol(t, 0), keycol(t, 1),
                                       keycol(t, 2), hash, t->name, ranged ? "rowid BETWEEN ?1 AND ?2" : "1",
                                       faults ? "fault IS NOT NULL" : "1", faults ? faults : -1)
                     : NULL;
    free(call);
    sqlite3_stmt *st = NULL;
    if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        st = NULL;
    sqlite3_free(sql);
    return st;
}

/* "row 12: <fault>", or for a row without a rowid "row with pid 1, device_id 0, ...: <fault>" */
static void describe(const wl_table_rule *t, sqlite3_stmt *st, char *out, size_t n)
{
    const char *why = (const char *)sqlite3_column_text(st, 1);
    if (t->rowid)
        snprintf(out, n, "row %lld: %s", (long long)sqlite3_column_int64(st, 0), why ? why : "");
    else
        snprintf(out, n, "row with %s %lld, %s %lld, %s %lld: %s", keycol(t, 0), (long long)sqlite3_column_int64(st, 4),
                 keycol(t, 1), (long long)sqlite3_column_int64(st, 5), keycol(t, 2),
                 (long long)sqlite3_column_int64(st, 6), why ? why : "");
}

/* One pass over a unit: its unsound rows counted, the first described; when other tables
 * reference the table, the keys of its sound rows go to refs. */
static int census_pass(wl_guard *g, sqlite3 *db, census_unit *u, ref_set *refs, const char *key)
{
    const wl_table_rule *t = &WL_CONTRACT[u->table];
    sqlite3_stmt *st = check_rows(g, db, u->table, key, u->ranged, 0);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, u->lo);
    sqlite3_bind_int64(st, 2, u->hi);
    size_t cap = 0;
    int rc;
    int hashing = g->pack_expr[u->table] != NULL;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (hashing) {
            u->rows++;
            if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
                u->hashed++;
                u->sum += (uint64_t)sqlite3_column_int64(st, 7);
            }
        }
        if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
            if (refs && add_ref(refs, &cap, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3))) {
                rc = SQLITE_NOMEM;
                break;
            }
            continue;
        }
        if (u->skipped++)
            continue;
        char row[400];
        describe(t, st, row, sizeof row);
        snprintf(u->first, sizeof u->first, "%s %s", t->name, row);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return -1;
    if (refs && refs->n)
        qsort(refs->keys, refs->n, sizeof *refs->keys, key_cmp);
    return 0;
}

/* Tables split into units first, largest first, so that the workers finish about together
 * (kernels, API calls, PM samples and metric values are the bulk of a session). */
static const char *const BIG_FIRST[] = {"kernel", "api_call", "pm_sample", "kernel_metric", "inkernel_event",
                                        "device_sample", "nvtx_range", "scope", "memcpy", "memset", "sync"};
#define MAX_WORKERS 4
#define CHUNK_ROWS 65536
#define MAX_CHUNKS 32
#define MAX_UNITS (MAX_TABLES + MAX_CHUNKS * (int)(sizeof BIG_FIRST / sizeof BIG_FIRST[0]))

typedef struct census_work {
    wl_guard *g;
    census_unit unit[MAX_UNITS];
    int n;
    atomic_int next;
} census_work;

static void census_fail(census_unit *u, sqlite3 *db)
{
    u->failed = sqlite3_errcode(db) ? sqlite3_errcode(db) : SQLITE_ERROR;
    snprintf(u->why, sizeof u->why, "%s", sqlite3_errmsg(db));
}

static void census_run(census_work *w, sqlite3 *db)
{
    for (int k; (k = atomic_fetch_add(&w->next, 1)) < w->n;)
        if (census_pass(w->g, db, &w->unit[k], NULL, "0, 0"))
            census_fail(&w->unit[k], db);
}

typedef struct census_helper {
    census_work *w;
    sqlite3 *db;
    pthread_t th;
    int running;
} census_helper;

static void *census_thread(void *arg)
{
    census_helper *h = arg;
    census_run(h->w, h->db);
    return NULL;
}

static int register_check(wl_guard *g, sqlite3 *db)
{
    return sqlite3_create_function_v2(db, "wl_fault", -1, SQLITE_UTF8, g, fault_fn, NULL, NULL, NULL) == SQLITE_OK &&
                   wl_pack_register(db) == 0
               ? 0
               : -1;
}

/* Units of a rowid table: chunks of about CHUNK_ROWS rowids (at most MAX_CHUNKS). */
static void split(census_work *w, sqlite3 *db, int i)
{
    /* two subqueries: min() and max() together in one SELECT scan the whole table, each alone is a seek */
    char *sql = sqlite3_mprintf("SELECT (SELECT min(rowid) FROM main.\"%w\"), (SELECT max(rowid) FROM main.\"%w\")",
                                WL_CONTRACT[i].name, WL_CONTRACT[i].name);
    sqlite3_stmt *st;
    int64_t lo = 0, hi = -1;
    if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
            lo = sqlite3_column_int64(st, 0), hi = sqlite3_column_int64(st, 1);
        sqlite3_finalize(st);
    }
    sqlite3_free(sql);
    uint64_t span = hi >= lo ? (uint64_t)hi - (uint64_t)lo + 1 : 0, chunks = span / CHUNK_ROWS + 1;
    if (span < 2 * CHUNK_ROWS) {
        w->unit[w->n++] = (census_unit){.table = i};
        return;
    }
    if (chunks > MAX_CHUNKS)
        chunks = MAX_CHUNKS;
    for (uint64_t c = 0; c < chunks; c++) {
        uint64_t a = span / chunks * c, b = c + 1 == chunks ? span - 1 : span / chunks * (c + 1) - 1;
        w->unit[w->n++] = (census_unit){.table = i, .ranged = 1, .lo = (int64_t)((uint64_t)lo + a),
                                        .hi = (int64_t)((uint64_t)lo + b)};
    }
}

/* The tables the export pack repeats, when the file has one and them: their census passes sum
 * the hash of each row (row_pack.h). */
static void pack_setup(wl_guard *g, sqlite3 *db)
{
    if (!wl_pack_present(db))
        return;
    static const char *const PACKED[] = {"kernel", "api_call"};
    for (int p = 0; p < 2; p++) {
        const wl_table_rule *t = wl_contract_table(PACKED[p]);
        int i = t ? (int)(t - WL_CONTRACT) : -1;
        /* a table without the columns the hash reads has no pack the readers would use */
        char *probe = i >= 0 && g->present[i]
                          ? sqlite3_mprintf("SELECT %s FROM main.\"%w\" AS k LIMIT 0", wl_pack_census_expr(PACKED[p]),
                                            PACKED[p])
                          : NULL;
        sqlite3_stmt *st = NULL;
        if (probe && wl_pack_register(db) == 0 && sqlite3_prepare_v2(db, probe, -1, &st, NULL) == SQLITE_OK)
            g->pack_expr[i] = wl_pack_census_expr(PACKED[p]);
        sqlite3_finalize(st);
        sqlite3_free(probe);
    }
    g->pack = -1; /* until the sums match */
    snprintf(g->pack_why, sizeof g->pack_why, "its tables lack columns the export pack holds");
}

/* The pack decoded whole against the census's sums: kernels (timed ones hashed, the others
 * counted as untimed) and API calls. */
static void pack_compare(wl_guard *g, sqlite3 *db, const census_work *w)
{
    if (g->pack == 0)
        return;
    int ki = (int)(wl_contract_table("kernel") - WL_CONTRACT), ai = (int)(wl_contract_table("api_call") - WL_CONTRACT);
    if (!g->pack_expr[ki])
        return;
    if (g->skipped[ki] || g->skipped[ai]) { /* read through the guard's views: the pack is not used */
        g->pack = 0;
        return;
    }
    uint64_t rows[2] = {0, 0}, hashed[2] = {0, 0}, sum[2] = {0, 0};
    for (int k = 0; k < w->n; k++) {
        const census_unit *u = &w->unit[k];
        int p = u->table == ki ? 0 : u->table == ai ? 1 : -1;
        if (p >= 0)
            rows[p] += u->rows, hashed[p] += u->hashed, sum[p] += u->sum;
    }
    wl_pack_sums ps;
    if (wl_pack_digest(db, &ps, g->pack_why, sizeof g->pack_why))
        return;
    int api_ok = ps.api_calls < 0 || (g->pack_expr[ai] && (uint64_t)ps.api_calls == hashed[1] && ps.api_sum == sum[1]);
    if (ps.kernels != hashed[0] || ps.kernel_sum != sum[0] || ps.untimed != rows[0] - hashed[0] || !api_ok) {
        snprintf(g->pack_why, sizeof g->pack_why, "the export pack does not match the %s (changed since it was written)",
                 api_ok ? "kernels" : "API calls");
        return;
    }
    g->pack = 1;
    g->pack_why[0] = 0;
}

/* The referenced tables first (the checks of the others look their ids up), then the rest, by
 * up to MAX_WORKERS workers: this thread on db, the others on connections of their own. */
static int census(wl_guard *g, sqlite3 *db, int tolerate, int one_thread, char *err, size_t err_size, int *code)
{
    census_work *w = calloc(1, sizeof *w);
    if (!w || register_check(g, db)) {
        free(w);
        snprintf(err, err_size, "out of memory");
        *code = SQLITE_NOMEM;
        return -1;
    }
    w->g = g;
    int queued[MAX_TABLES] = {0};
    for (size_t r = 0; r < sizeof REFERENCED / sizeof REFERENCED[0]; r++) {
        int i = (int)(wl_contract_table(REFERENCED[r].table) - WL_CONTRACT);
        queued[i] = 1;
        if (!g->present[i])
            continue;
        census_unit *u = &w->unit[w->n++];
        *u = (census_unit){.table = i};
        if (census_pass(g, db, u, &g->refs[REFERENCED[r].kind], REFERENCED[r].key))
            census_fail(u, db);
    }
    int first = w->n;
    for (size_t b = 0; b < sizeof BIG_FIRST / sizeof BIG_FIRST[0]; b++) {
        int i = (int)(wl_contract_table(BIG_FIRST[b]) - WL_CONTRACT);
        if (!g->present[i] || queued[i])
            continue;
        queued[i] = 1;
        if (WL_CONTRACT[i].rowid)
            split(w, db, i);
        else
            w->unit[w->n++] = (census_unit){.table = i};
    }
    for (int i = 0; i < WL_CONTRACT_TABLES; i++)
        if (g->present[i] && !queued[i])
            w->unit[w->n++] = (census_unit){.table = i};
    atomic_store(&w->next, first);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int helpers = one_thread || cpus < 2 ? 0 : cpus > MAX_WORKERS ? MAX_WORKERS - 1 : (int)cpus - 1;
    census_helper h[MAX_WORKERS];
    memset(h, 0, sizeof h);
    const char *path = sqlite3_db_filename(db, "main");
    for (int k = 0; k < helpers && path && path[0] && w->n - first > 1; k++) {
        h[k].w = w;
        if (sqlite3_open_v2(path, &h[k].db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK &&
            sqlite3_busy_timeout(h[k].db, 2000) == SQLITE_OK && register_check(g, h[k].db) == 0)
            h[k].running = pthread_create(&h[k].th, NULL, census_thread, &h[k]) == 0;
    }
    census_run(w, db);
    for (int k = 0; k < helpers; k++) {
        if (h[k].running)
            pthread_join(h[k].th, NULL);
        sqlite3_close(h[k].db);
    }
    /* a table's units are in rowid order: its first unsound row is in its first unit with one */
    int rc = 0;
    for (int k = 0; k < w->n && rc == 0; k++) {
        census_unit *u = &w->unit[k];
        int i = u->table;
        if (u->failed && g->present[i]) {
            if (!tolerate) {
                snprintf(err, err_size, "%s", u->why);
                *code = u->failed;
                rc = -1;
                break;
            }
            problem(g, "table %s cannot be read whole: %s%s", WL_CONTRACT[i].name, u->why, "");
            g->present[i] = 0;
        }
        if (u->skipped && !g->skipped[i])
            snprintf(g->first[i], sizeof g->first[i], "%s", u->first);
        g->skipped[i] += u->skipped;
    }
    if (rc == 0)
        pack_compare(g, db, w);
    free(w);
    return rc;
}

wl_guard *wl_guard_build(sqlite3 *db, int tolerate, int known_sound, int one_thread, char *err, size_t err_size,
                         int *code)
{
    *code = SQLITE_OK;
    wl_guard *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    g->env.has_ref = has_ref;
    g->env.ref_arg = g;
    sqlite3_stmt *st;
    /* a schema SQLite cannot parse fails here, before anything else is read */
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM main.sqlite_master", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        snprintf(err, err_size, "%s", sqlite3_errmsg(db));
        *code = sqlite3_errcode(db);
        sqlite3_finalize(st);
        wl_guard_free(g);
        return NULL;
    }
    sqlite3_finalize(st);
    for (int i = 0; i < WL_CONTRACT_TABLES; i++) {
        const wl_table_rule *t = &WL_CONTRACT[i];
        g->present[i] = table_present(db, t->name);
        if (!g->present[i]) {
            if (t->required)
                problem(g, "table %s is missing%s%s", t->name, "", "");
            continue;
        }
        g->absent[i] = absent_columns(g, db, t);
    }
    check_indexes(g, db);
    build_window(g, db);
    if (known_sound)
        return g;
    g->census_ran = 1;
    pack_setup(g, db);
    if (census(g, db, tolerate, one_thread, err, err_size, code)) {
        wl_guard_free(g);
        return NULL;
    }
    return g;
}

int wl_guard_sound(const wl_guard *g)
{
    if (!g->census_ran || g->nproblems || g->pack < 0)
        return 0;
    for (int i = 0; i < WL_CONTRACT_TABLES; i++)
        if (g->skipped[i])
            return 0;
    return 1;
}

void wl_guard_free(wl_guard *g)
{
    if (!g)
        return;
    for (int i = 0; i < WL_N_REFS; i++)
        free(g->refs[i].keys);
    free(g);
}

int wl_guard_pack(const wl_guard *g, char *why, size_t n)
{
    if (why && n)
        snprintf(why, n, "%s", g->pack < 0 ? g->pack_why : "");
    return g->pack;
}

int wl_guard_has(const wl_guard *g, const char *table)
{
    const wl_table_rule *t = wl_contract_table(table);
    return t && g->present[t - WL_CONTRACT];
}

int wl_guard_problem(const wl_guard *g, int i, char *out, size_t n)
{
    if (i < 0 || i >= g->nproblems)
        return -1;
    snprintf(out, n, "%s", g->problems[i]);
    return 0;
}

int wl_guard_install(wl_guard *g, sqlite3 *db)
{
    if (sqlite3_create_function_v2(db, "wl_fault", -1, SQLITE_UTF8, g, fault_fn, NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    int rc = SQLITE_OK;
    for (int i = 0; i < WL_CONTRACT_TABLES && rc == SQLITE_OK; i++) {
        if (!g->present[i] || !g->skipped[i]) /* sound tables are read as they are */
            continue;
        char *call = fault_call(g, i);
        char *sql = call ? sqlite3_mprintf("CREATE TEMP VIEW \"%w\" AS SELECT * FROM main.\"%w\" WHERE %s IS NULL",
                                           WL_CONTRACT[i].name, WL_CONTRACT[i].name, call)
                         : NULL;
        rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        free(call);
    }
    return rc == SQLITE_OK ? 0 : -1;
}

int wl_guard_note(const wl_guard *g, char *out, size_t n)
{
    uint64_t total = 0;
    int first = -1;
    size_t o = 0;
    if (n)
        out[0] = 0;
    for (int i = 0; i < WL_CONTRACT_TABLES; i++)
        if (g->skipped[i]) {
            total += g->skipped[i];
            first = first < 0 ? i : first;
        }
    if (!total)
        return 0;
    o += (size_t)snprintf(out, n, "%llu row%s (", (unsigned long long)total, total == 1 ? "" : "s");
    for (int i = 0; i < WL_CONTRACT_TABLES && o < n; i++)
        if (g->skipped[i])
            o += (size_t)snprintf(out + o, n - o, "%s%s %llu", i == first ? "" : ", ", WL_CONTRACT[i].name,
                                  (unsigned long long)g->skipped[i]);
    if (o < n)
        snprintf(out + o, n - o, "; first: %s)", g->first[first]);
    return 1;
}

int wl_guard_row_fault(const wl_guard *g, sqlite3 *db, const char *table, int64_t rowid, char *out, size_t n)
{
    const wl_table_rule *t = wl_contract_table(table);
    if (n)
        out[0] = 0;
    if (!t || !t->rowid || !g->present[t - WL_CONTRACT] || !g->skipped[t - WL_CONTRACT])
        return 0;
    sqlite3_stmt *st = check_rows(g, db, (int)(t - WL_CONTRACT), "0, 0", 1, 1);
    int found = 0;
    if (st) {
        sqlite3_bind_int64(st, 1, rowid);
        sqlite3_bind_int64(st, 2, rowid);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *why = sqlite3_column_text(st, 1);
            snprintf(out, n, "%s", why ? (const char *)why : "");
            found = 1;
        }
        sqlite3_finalize(st);
    }
    return found;
}

int wl_guard_census(const wl_guard *g, sqlite3 *db, int examples, wl_damage_count *out, int max)
{
    int found = 0;
    for (int i = 0; i < WL_CONTRACT_TABLES; i++) {
        if (!g->skipped[i])
            continue;
        const wl_table_rule *t = &WL_CONTRACT[i];
        wl_damage_count *d = found < max ? &out[found] : NULL;
        found++;
        if (!d)
            continue;
        snprintf(d->table, sizeof d->table, "%s", t->name);
        d->rows = g->skipped[i];
        if (examples <= 0)
            continue;
        sqlite3_stmt *st = check_rows(g, db, i, "0, 0", 0, examples);
        if (!st)
            return -1;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW &&
               (size_t)d->nexamples < sizeof d->example / sizeof d->example[0])
            describe(t, st, d->example[d->nexamples++], sizeof d->example[0]);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE && rc != SQLITE_ROW)
            return -1;
    }
    return found;
}
