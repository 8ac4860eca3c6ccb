/* Small helpers shared by the tests that build a session from a crafted capture and query it. */
#ifndef WARPLENS_TESTS_SESSION_TEST_UTIL_H
#define WARPLENS_TESTS_SESSION_TEST_UTIL_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_builder.h"
#include "store/session.h"
#include "store/session_synth.h"
#include "store/session_writer.h"
#include "test.h"

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

/* Writes b to dir/name.wlcap (a CHECK) and imports it into a new session dir/name.wlsession (its path
 * into out). 0, or -1 with err set. */
static inline int test_capture_session(const capbuf *b, const char *dir, const char *name, char *out, size_t out_n,
                                       char *err, size_t err_n)
{
    char cap[700];
    snprintf(cap, sizeof cap, "%s/%s.wlcap", dir, name);
    snprintf(out, out_n, "%s/%s.wlsession", dir, name);
    int written = cb_write(b, cap) == 0;
    CHECK(written);
    if (!written) {
        snprintf(err, err_n, "cannot write %.300s", cap);
        return -1;
    }
    return test_import_capture(cap, out, NULL, err, err_n);
}

/* The import of b (as dir/name.wlcap) must fail with needle in its message and leave no session. */
static inline void test_expect_import_error(const capbuf *b, const char *dir, const char *name, const char *needle)
{
    char out[700], err[512] = "";
    CHECK(test_capture_session(b, dir, name, out, sizeof out, err, sizeof err) != 0);
    if (!strstr(err, needle)) {
        fprintf(stderr, "%s: error '%s' lacks '%s'\n", name, err, needle);
        CHECK(0);
    }
    CHECK(access(out, F_OK) != 0);
}

/* Opens tests/data/name (or $WARPLENS_TEST_DATA/name), its path into path; NULL (said) when it cannot. */
static inline wl_session *test_open_data_session(const char *name, char *path, size_t n)
{
    const char *data = getenv("WARPLENS_TEST_DATA");
    char err[512];
    snprintf(path, n, "%s/%s", data ? data : "tests/data", name);
    wl_session *s = wl_session_open(path, err, sizeof err);
    if (!s)
        fprintf(stderr, "%s: %s\n", path, err);
    return s;
}

/* A synthetic session for the walks that read the kernel table in its own order through a
 * reorder window (4 threads, 4 streams, copies, sets and the generator's edge cases): 0, or -1
 * with err set. TEST_REVERSE_KERNELS_SQL then renumbers its kernels from the last to the first,
 * which puts the table far from start order. */
static inline int test_synth_walk_session(const char *path, uint64_t kernels, char *err, size_t n)
{
    wl_synth_options o;
    wl_synth_defaults(&o);
    o.kernels = kernels;
    o.threads = 4;
    o.streams = 4;
    o.copy_every = 50;
    o.memset_every = 200;
    o.edge_cases = 1;
    wl_synth_counts c;
    return wl_synth_session(path, &o, &c, err, n);
}
#define TEST_REVERSE_KERNELS_SQL "UPDATE kernel SET id = id + 10000000; UPDATE kernel SET id = 30000001 - id;"

#endif
