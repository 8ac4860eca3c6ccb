/* Reading only sound rows (see session_guard.h). The check runs as an SQL function in the WHERE
 * clause of each TEMP view: `SELECT * FROM main.t WHERE wl_fault(t, rowid, columns...) IS NULL`.
 * The view is flattened into every query that reads it, so the query plans and the indexes they
 * use stay the same (the function's arguments are not index expressions); each row read costs
 * one call. The function returns NULL for a sound row, else what is wrong with it. */
#include "store/session_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/row_pack.h"
#include "store/session_contract.h"
#include "store/session_guard_internal.h"

#define WINDOW_SLACK_NS (24ll * 3600 * 1000000000) /* one day either side of the processes */

void wl_guard_add_problem(wl_guard *g, const char *fmt, const char *a, const char *b, const char *c)
{
    if (g->nproblems < MAX_PROBLEMS)
        snprintf(g->problems[g->nproblems++], sizeof g->problems[0], fmt, a, b, c);
}

int wl_guard_key_cmp(const void *x, const void *y)
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
    return r->n && bsearch(&k, r->keys, r->n, sizeof k, wl_guard_key_cmp) != NULL;
}

/* ---- the row check ------------------------------------------------------------------------ */

/* Row ti's cells (argv: table index, rowid, the contract's columns) against the contract: 1 with
 * "<column> <what is wrong>" in msg, 0 when the row is sound, -1 for a call the views never make. */
static int check_row(const wl_guard *g, int argc, sqlite3_value **argv, char *msg, size_t msg_size)
{
    int ti = sqlite3_value_int(argv[0]);
    if (ti < 0 || ti >= WL_CONTRACT_TABLES || argc != WL_CONTRACT[ti].ncols + 2)
        return -1; /* cannot happen: the views pass what the contract lists */
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
        return 0;
    /* the message shows the cell: its text is only read now */
    wl_cell *c = &cells[bad];
    if (c->type == SQLITE_TEXT || c->type == SQLITE_BLOB) {
        sqlite3_value *v = argv[bad + 2];
        c->text = c->type == SQLITE_TEXT ? sqlite3_value_text(v) : sqlite3_value_blob(v);
        c->len = sqlite3_value_bytes(v);
        (void)wl_contract_check(t, cells, g->absent[ti], &g->env, why, sizeof why); /* same fault, with its text */
    }
    snprintf(msg, msg_size, "%s %s", t->cols[bad].name, why);
    return 1;
}

/* wl_fault(table index, rowid, cells...): NULL, or "<column> <what is wrong>". Pure: SQLite may
 * call it with a column replaced by a constant the query compares it with (constant propagation)
 * for rows the query then leaves out anyway, so it records nothing. */
static void fault_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    char msg[256];
    if (check_row(sqlite3_user_data(ctx), argc, argv, msg, sizeof msg) == 1)
        sqlite3_result_text(ctx, msg, -1, SQLITE_TRANSIENT);
}

/* wl_fault_pack(the same): the census's variant, which also hashes what the export pack holds of
 * a sound row: the fault (text), else the pack hash of a packed row (an integer), else NULL. The
 * hash comes from the cells the check already has: no column is read twice. */
static void fault_pack_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const wl_guard *g = sqlite3_user_data(ctx);
    char msg[256];
    int r = check_row(g, argc, argv, msg, sizeof msg);
    uint64_t h;
    if (r == 1)
        sqlite3_result_text(ctx, msg, -1, SQLITE_TRANSIENT);
    else if (r == 0 && g->packed[sqlite3_value_int(argv[0])] &&
             wl_pack_census_hash(&g->pack_of[sqlite3_value_int(argv[0])], sqlite3_value_int64(argv[1]), argv + 2, &h))
        sqlite3_result_int64(ctx, (int64_t)h);
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
                wl_guard_add_problem(g, "table %s has no column %s%s", t->name, t->cols[i].name, "");
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
            wl_guard_add_problem(g, "index %s is missing (reading would slow down with the square of the rows; add it with"
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

char *wl_guard_fault_call(const wl_guard *g, int i, const char *fn)
{
    const wl_table_rule *t = &WL_CONTRACT[i];
    size_t cap = 64 + (size_t)t->ncols * 40, o = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    o += (size_t)snprintf(s, cap, "%s(%d, %s", fn, i, t->rowid ? "rowid" : "NULL");
    for (int c = 0; c < t->ncols; c++)
        o += (size_t)snprintf(s + o, cap - o, ", %s%s%s", g->absent[i] >> c & 1 ? "NULL" : "\"",
                              g->absent[i] >> c & 1 ? "" : t->cols[c].name, g->absent[i] >> c & 1 ? "" : "\"");
    snprintf(s + o, cap - o, ")");
    return s;
}

int wl_guard_register(wl_guard *g, sqlite3 *db)
{
    return sqlite3_create_function_v2(db, "wl_fault", -1, SQLITE_UTF8, g, fault_fn, NULL, NULL, NULL) == SQLITE_OK &&
                   sqlite3_create_function_v2(db, "wl_fault_pack", -1, SQLITE_UTF8, g, fault_pack_fn, NULL, NULL,
                                              NULL) == SQLITE_OK
               ? 0
               : -1;
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
                wl_guard_add_problem(g, "table %s is missing%s%s", t->name, "", "");
            continue;
        }
        g->absent[i] = absent_columns(g, db, t);
    }
    check_indexes(g, db);
    build_window(g, db);
    if (known_sound)
        return g;
    g->census_ran = 1;
    if (wl_census(g, db, tolerate, one_thread, err, err_size, code)) {
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
        char *call = wl_guard_fault_call(g, i, "wl_fault");
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
    sqlite3_stmt *st = wl_census_rows(g, db, (int)(t - WL_CONTRACT), "0, 0", 1, 1);
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
        sqlite3_stmt *st = wl_census_rows(g, db, i, "0, 0", 0, examples);
        if (!st)
            return -1;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW &&
               (size_t)d->nexamples < sizeof d->example / sizeof d->example[0])
            wl_census_describe(t, st, d->example[d->nexamples++], sizeof d->example[0]);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE && rc != SQLITE_ROW)
            return -1;
    }
    return found;
}
