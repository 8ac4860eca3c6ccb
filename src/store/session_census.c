/* The census (see session_guard_internal.h): every row of every table checked once at open, in
 * units of rowid ranges shared by up to four threads, the largest tables first; the keys other
 * tables reference collected first, since the checks of those tables look them up. The same pass
 * sums the export pack's hash of each kernel and API call (row_pack.h) and compares the sums
 * with the pack, decoded whole: a pack is read by the exports only when they match. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cpus.h"
#include "store/row_pack.h"
#include "store/session_guard_internal.h"

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
    int digest;                /* not rows: the export pack decoded whole (census_work's sums) */
} census_unit;

sqlite3_stmt *wl_census_rows(const wl_guard *g, sqlite3 *db, int i, const char *key, int ranged, int faults)
{
    const wl_table_rule *t = &WL_CONTRACT[i];
    char *call = wl_guard_fault_call(g, i, faults || !g->packed[i] ? "wl_fault" : "wl_fault_pack");
    char *sql = call ? sqlite3_mprintf("SELECT * FROM (SELECT %s, %s AS fault, %s, \"%w\", \"%w\", \"%w\" FROM"
                                       " main.\"%w\" WHERE %s) WHERE %s LIMIT %d",
                                       t->rowid ? "rowid" : "NULL", call, key, keycol(t, 0), keycol(t, 1),
                                       keycol(t, 2), t->name, ranged ? "rowid BETWEEN ?1 AND ?2" : "1",
                                       faults ? "fault IS NOT NULL" : "1", faults ? faults : -1)
                     : NULL;
    free(call);
    sqlite3_stmt *st = NULL;
    if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        st = NULL;
    sqlite3_free(sql);
    return st;
}

void wl_census_describe(const wl_table_rule *t, sqlite3_stmt *st, char *out, size_t n)
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
    sqlite3_stmt *st = wl_census_rows(g, db, u->table, key, u->ranged, 0);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, u->lo);
    sqlite3_bind_int64(st, 2, u->hi);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int type = sqlite3_column_type(st, 1);
        u->rows++;
        if (type == SQLITE_INTEGER) { /* sound, with its pack hash */
            u->hashed++;
            u->sum += (uint64_t)sqlite3_column_int64(st, 1);
        }
        if (type != SQLITE_TEXT) {
            if (refs && add_ref(refs, &cap, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3))) {
                rc = SQLITE_NOMEM;
                break;
            }
            continue;
        }
        if (u->skipped++)
            continue;
        char row[400];
        wl_census_describe(t, st, row, sizeof row);
        snprintf(u->first, sizeof u->first, "%s %s", t->name, row);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return -1;
    if (refs && refs->n)
        qsort(refs->keys, refs->n, sizeof *refs->keys, wl_guard_key_cmp);
    return 0;
}

/* Tables split into units first, largest first, so that the workers finish about together
 * (kernels, API calls, PM samples and metric values are the bulk of a session). */
static const char *const BIG_FIRST[] = {"kernel", "api_call", "pm_sample", "kernel_metric", "inkernel_event",
                                        "device_sample", "nvtx_range", "scope", "memcpy", "memset", "sync"};
#define MAX_WORKERS 4
#define CHUNK_ROWS 65536
#define MAX_CHUNKS 32
#define MAX_UNITS (MAX_TABLES + 1 + MAX_CHUNKS * (int)(sizeof BIG_FIRST / sizeof BIG_FIRST[0]))

typedef struct census_work {
    wl_guard *g;
    census_unit unit[MAX_UNITS];
    int n;
    atomic_int next;
    /* the digest unit's result: the pack's sums, or why it cannot be decoded (rc -1) */
    wl_pack_sums sums;
    int digest_rc;
    char digest_why[220];
} census_work;

static void census_fail(census_unit *u, sqlite3 *db)
{
    u->failed = sqlite3_errcode(db) ? sqlite3_errcode(db) : SQLITE_ERROR;
    snprintf(u->why, sizeof u->why, "%s", sqlite3_errmsg(db));
}

static void census_run(census_work *w, sqlite3 *db)
{
    for (int k; (k = atomic_fetch_add(&w->next, 1)) < w->n;) {
        if (w->unit[k].digest) /* beside the rows, on a worker of its own while they are read */
            w->digest_rc = wl_pack_digest(db, &w->sums, w->digest_why, sizeof w->digest_why);
        else if (census_pass(w->g, db, &w->unit[k], NULL, "0, 0"))
            census_fail(&w->unit[k], db);
    }
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
    for (int kind = WL_PACK_KERNEL; kind < WL_PACK_KINDS; kind++) {
        const wl_table_rule *t = wl_contract_table(WL_PACK_TABLE[kind]);
        int i = t ? (int)(t - WL_CONTRACT) : -1;
        if (i < 0 || !g->present[i] || t->ncols > 64)
            continue;
        const char *cols[64];
        for (int c = 0; c < t->ncols; c++)
            cols[c] = t->cols[c].name;
        /* a table without the columns the pack holds has no pack the readers would use */
        g->packed[i] = wl_pack_census_init(&g->pack_of[i], WL_PACK_TABLE[kind], cols, t->ncols, g->absent[i]) == 0;
    }
    g->pack = -1; /* until the sums match */
    snprintf(g->pack_why, sizeof g->pack_why, "its tables lack columns the export pack holds");
}

/* The pack decoded whole against the census's sums, kind by kind: the rows hashed (kernels: the
 * timed ones, the others counted as untimed) and the sum of their hashes. */
static void pack_compare(wl_guard *g, const census_work *w)
{
    static const char *const WHAT[WL_PACK_KINDS] = {"", "", "kernels", "API calls", "NVTX ranges", "scopes"};
    if (g->pack == 0)
        return;
    int ti[WL_PACK_KINDS];
    for (int kind = WL_PACK_KERNEL; kind < WL_PACK_KINDS; kind++) {
        const wl_table_rule *t = wl_contract_table(WL_PACK_TABLE[kind]);
        ti[kind] = t ? (int)(t - WL_CONTRACT) : -1;
        if (ti[kind] >= 0 && g->skipped[ti[kind]]) { /* read through the guard's views: the pack is not used */
            g->pack = 0;
            return;
        }
    }
    if (ti[WL_PACK_KERNEL] < 0 || !g->packed[ti[WL_PACK_KERNEL]])
        return;
    if (w->digest_rc) {
        snprintf(g->pack_why, sizeof g->pack_why, "%s", w->digest_why);
        return;
    }
    for (int kind = WL_PACK_KERNEL; kind < WL_PACK_KINDS; kind++) {
        uint64_t rows = 0, hashed = 0, sum = 0;
        for (int k = 0; k < w->n; k++) {
            const census_unit *u = &w->unit[k];
            if (u->table == ti[kind] && !u->digest)
                rows += u->rows, hashed += u->hashed, sum += u->sum;
        }
        const wl_pack_sums *ps = &w->sums;
        int ok = ps->rows[kind] < 0 ||
                 (ti[kind] >= 0 && g->packed[ti[kind]] && (uint64_t)ps->rows[kind] == hashed && ps->sum[kind] == sum &&
                  (kind != WL_PACK_KERNEL || ps->untimed == rows - hashed));
        if (!ok) {
            snprintf(g->pack_why, sizeof g->pack_why,
                     "the export pack does not match the %s (changed since it was written)", WHAT[kind]);
            return;
        }
    }
    g->pack = 1;
    g->pack_why[0] = 0;
}

/* The referenced tables first (the checks of the others look their ids up), then the rest, by
 * up to MAX_WORKERS workers: this thread on db, the others on connections of their own. */
int wl_census(wl_guard *g, sqlite3 *db, int tolerate, int one_thread, char *err, size_t err_size, int *code)
{
    pack_setup(g, db);
    census_work *w = calloc(1, sizeof *w);
    if (!w || wl_guard_register(g, db)) {
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
    int ki = (int)(wl_contract_table("kernel") - WL_CONTRACT);
    if (g->packed[ki]) /* first: it takes about as long as a table's share of the rows */
        w->unit[w->n++] = (census_unit){.table = ki, .digest = 1};
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
    long cpus = wl_cpus_usable();
    int helpers = one_thread || cpus < 2 ? 0 : cpus > MAX_WORKERS ? MAX_WORKERS - 1 : (int)cpus - 1;
    census_helper h[MAX_WORKERS];
    memset(h, 0, sizeof h);
    const char *path = sqlite3_db_filename(db, "main");
    for (int k = 0; k < helpers && path && path[0] && w->n - first > 1; k++) {
        h[k].w = w;
        if (sqlite3_open_v2(path, &h[k].db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK &&
            sqlite3_busy_timeout(h[k].db, 2000) == SQLITE_OK && wl_guard_register(g, h[k].db) == 0)
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
            wl_guard_add_problem(g, "table %s cannot be read whole: %s%s", WL_CONTRACT[i].name, u->why, "");
            g->present[i] = 0;
        }
        if (u->skipped && !g->skipped[i])
            snprintf(g->first[i], sizeof g->first[i], "%s", u->first);
        g->skipped[i] += u->skipped;
    }
    if (rc == 0)
        pack_compare(g, w);
    free(w);
    return rc;
}
