// Shared by the GPU suite's checkers (tests/gpu/gpu_test_*.cu): one PASS/FAIL line per check, a
// scalar SQL query on a session, a relative-tolerance check against an analytical value, and
// running the test program itself under `warplens run`.
#ifndef WARPLENS_TESTS_GPU_CHECK_H
#define WARPLENS_TESTS_GPU_CHECK_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int g_pass, g_fail; // PASS and FAIL lines so far

static inline void verdict(const char *what, int ok, const char *detail)
{
    printf("%s %s: %s\n", ok ? "PASS" : "FAIL", what, detail);
    (ok ? g_pass : g_fail)++;
}

// verdict() with a printf-formatted detail, from a va_list (for checkers' own check(ok, what, fmt, ...))
static inline void vverdictf(const char *what, int ok, const char *fmt, va_list ap)
{
    char detail[512];
    vsnprintf(detail, sizeof detail, fmt, ap);
    verdict(what, ok, detail);
}

// The first column of the first row as a double; -1 when the query fails or gives no row or NULL.
static inline double qd(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    double v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "SQL: %s: %s\n", sql, sqlite3_errmsg(db));
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

// measured within [lo, hi] (relative, e.g. -0.02..0.02) of the analytical value
static inline void within(const char *what, double measured, double expect, double lo, double hi)
{
    char d[256];
    double rel = expect ? (measured - expect) / expect : 0;
    snprintf(d, sizeof d, "measured %.6g, analytical %.6g (%+.2f%%, allowed %+.0f%%..%+.0f%%)", measured, expect,
             rel * 100, lo * 100, hi * 100);
    verdict(what, measured >= 0 && rel >= lo && rel <= hi, d);
}

// `warplens run -o SESSION <options> -- SELF MODE`, its output into LOG; the exit status.
static inline int run_self(const char *warplens, const char *options, const char *self, const char *mode,
                    const char *session, const char *log)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' run -o '%s' %s -- '%s' %s > '%s' 2>&1", warplens, session, options, self, mode,
             log);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

// `what` judged on a run's exit status, then its session opened read-only: NULL, with a failed
// "session" check, when it cannot be
static inline sqlite3 *judge_run(const char *what, int rc, const char *session)
{
    char d[64];
    snprintf(d, sizeof d, "exit status %d", rc);
    verdict(what, rc == 0, d);
    sqlite3 *db;
    if (sqlite3_open_v2(session, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        verdict("session", 0, "cannot open the session");
        return NULL;
    }
    return db;
}

// whether a line of the command's output contains needle
static inline int output_has(const char *cmd, const char *needle)
{
    FILE *p = popen(cmd, "r");
    char line[2048];
    int found = 0;
    while (p && fgets(line, sizeof line, p))
        found |= strstr(line, needle) != NULL;
    if (p)
        pclose(p);
    return found;
}

// The checker's end: removes its scratch folder when every check passed (keeps it to look at
// otherwise), prints the counts and the verdict line; the exit status.
static inline int gpu_test_done(const char *dir, const char *name)
{
    if (!g_fail) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    } else {
        printf("session kept in %s\n", dir);
    }
    printf("%s: %d passed, %d failed\n", name, g_pass, g_fail);
    printf("%s %s\n", g_fail ? "FAIL" : "PASS", name);
    return g_fail != 0;
}

// main() of a test that runs itself under warplens: "--workload..." arguments go to workload(),
// otherwise checker(warplens binary from WARPLENS_BIN, this program's own path).
static inline int gpu_test_main(int argc, char **argv, int (*workload)(int, char **),
                                int (*checker)(const char *, const char *))
{
    if (argc > 1 && !strncmp(argv[1], "--workload", 10))
        return workload(argc, argv);
    const char *warplens = getenv("WARPLENS_BIN");
    if (!warplens) {
        fprintf(stderr, "usage: WARPLENS_BIN=path/to/warplens %s\n", argv[0]);
        return 2;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 2;
    self[n] = 0;
    return checker(warplens, self);
}

#endif
