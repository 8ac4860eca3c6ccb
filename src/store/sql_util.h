/* Small SQLite helpers shared by the store's readers. */
#ifndef WARPLENS_STORE_SQL_UTIL_H
#define WARPLENS_STORE_SQL_UTIL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* Control characters (a newline in a message SQLite quotes a schema with) become spaces: errors are
 * one line. */
void wl_store_one_line(char *s);
/* Formats a one-line error into err (when err is given); returns -1, for `return set_err(...)`. */
int wl_store_set_err(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Copies a text column into out ("" for NULL), always terminated. */
void wl_sql_text_col(sqlite3_stmt *st, int col, char *out, size_t n);
/* The first column of the first row of sql as an integer; 0 when there is none or sql fails. */
uint64_t wl_sql_scalar_u64(sqlite3 *db, const char *sql);
/* 1 when the database has a table of that name. Tables added within schema version 1 (timer,
 * in-kernel, metrics, device samples) are missing from older sessions: readers ask first. */
int wl_sql_has_table(sqlite3 *db, const char *name);
/* 1 when the table has the column (columns added to a table after sessions with it existed). */
int wl_sql_has_column(sqlite3 *db, const char *table, const char *column);

/* Steps n statements, each ordered by integer column col, as one stream in that order (ties to the
 * lower index): fn(which, row, arg) for every row, which indexing st; fn returns non-zero to stop.
 * The rows passed, or -1 when a statement fails (the statements stay the caller's to finalize). */
long wl_sql_merge_ordered(sqlite3_stmt *const *st, int n, int col, int (*fn)(int which, sqlite3_stmt *row, void *arg),
                          void *arg);

/* A table read folded inside SQLite: st is "SELECT wl_fold(?1, columns...) FROM ...", and the
 * columns of each row come to fn as values, in the aggregate step, instead of each row being handed
 * back through sqlite3_step and read with a sqlite3_column_* call per cell (at 10 M kernels that
 * round trip was over a third of `stats`' CPU). wl_fold is registered on every connection the
 * store opens to read a session (wl_sql_fold_register); ?1 is bound here. fn returns non-zero to
 * stop. 0 when every row was folded, -1 when fn stopped or the statement failed (the statement
 * stays the caller's to finalize). */
int wl_sql_fold_register(sqlite3 *db);
int wl_sql_fold(sqlite3_stmt *st, int (*fn)(void *arg, sqlite3_value **v), void *arg);

#endif
