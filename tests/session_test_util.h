/* Small helpers shared by the tests that build a session from a crafted capture and query it. */
#ifndef WARPLENS_TESTS_SESSION_TEST_UTIL_H
#define WARPLENS_TESTS_SESSION_TEST_UTIL_H

#include <sqlite3.h>
#include <stdio.h>

#include "store/session_writer.h"

/* The first column of the first row as an integer; -999 (and a message) when the SQL fails. */
static inline long long test_sql_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "SQL: %s: %s\n", sql, sqlite3_errmsg(db));
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Imports one capture file into a new session at out; stats may be NULL. 0, or -1 with err set. */
static inline int test_import_capture(const char *cap, const char *out, wl_import_stats *stats, char *err, size_t n)
{
    wl_import_stats ignored;
    wl_session_writer *w = wl_session_writer_create(out, err, n);
    if (!w)
        return -1;
    if (wl_session_writer_import(w, cap, stats ? stats : &ignored, err, n) != 0) {
        wl_session_writer_abort(w);
        return -1;
    }
    return wl_session_writer_finish(w, err, n);
}

#endif
