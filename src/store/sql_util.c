/* SQLite helpers (see sql_util.h). */
#include "store/sql_util.h"

#include <stdarg.h>
#include <stdio.h>

void wl_sql_text_col(sqlite3_stmt *st, int col, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

uint64_t wl_sql_scalar_u64(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    uint64_t v = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = (uint64_t)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

int wl_sql_has_column(sqlite3 *db, const char *table, const char *column)
{
    sqlite3_stmt *st;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return found;
}

int wl_sql_has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return found;
}

void wl_store_one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

int wl_store_set_err(char *err, size_t n, const char *fmt, ...)
{
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
        wl_store_one_line(err);
    }
    return -1;
}

long wl_sql_merge_ordered(sqlite3_stmt *const *st, int n, int col, int (*fn)(int which, sqlite3_stmt *row, void *arg),
                          void *arg)
{
    enum { MAX_MERGED = 8 };
    int live[MAX_MERGED];
    if (n > MAX_MERGED)
        return -1;
    for (int i = 0; i < n; i++) {
        int r = sqlite3_step(st[i]);
        if (r != SQLITE_ROW && r != SQLITE_DONE)
            return -1;
        live[i] = r == SQLITE_ROW;
    }
    long rows = 0;
    for (;;) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (live[i] && (best < 0 || sqlite3_column_int64(st[i], col) < sqlite3_column_int64(st[best], col)))
                best = i;
        if (best < 0)
            return rows;
        rows++;
        if (fn(best, st[best], arg))
            return rows;
        int r = sqlite3_step(st[best]);
        if (r != SQLITE_ROW && r != SQLITE_DONE)
            return -1;
        live[best] = r == SQLITE_ROW;
    }
}

/* ---- folds ------------------------------------------------------------------------------- */

typedef struct fold_call {
    int (*fn)(void *arg, sqlite3_value **v);
    void *arg;
    int stopped;
} fold_call;

static void fold_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    /* the bound fold, looked up once per statement run (the look-up compares type names) */
    fold_call **pc = sqlite3_aggregate_context(ctx, sizeof *pc);
    if (pc && !*pc && argc > 0)
        *pc = sqlite3_value_pointer(argv[0], "wl_fold");
    fold_call *c = pc ? *pc : NULL;
    if (!c) {
        sqlite3_result_error(ctx, "wl_fold: called without its fold", -1);
        return;
    }
    if (!c->stopped && c->fn(c->arg, argv + 1)) {
        c->stopped = 1;
        sqlite3_result_error(ctx, "wl_fold: stopped", -1); /* ends the statement */
    }
}

static void fold_final(sqlite3_context *ctx) { sqlite3_result_null(ctx); }

int wl_sql_fold_register(sqlite3 *db)
{
    return sqlite3_create_function_v2(db, "wl_fold", -1, SQLITE_UTF8, NULL, NULL, fold_step, fold_final, NULL) ==
                   SQLITE_OK
               ? 0
               : -1;
}

int wl_sql_fold(sqlite3_stmt *st, int (*fn)(void *arg, sqlite3_value **v), void *arg)
{
    fold_call c = {fn, arg, 0};
    if (sqlite3_bind_pointer(st, 1, &c, "wl_fold", NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st) == SQLITE_ROW && sqlite3_step(st) == SQLITE_DONE && !c.stopped ? 0 : -1;
    sqlite3_reset(st); /* c goes out of scope: the statement no longer runs with it */
    return rc;
}
