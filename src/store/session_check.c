/* `warplens info --check` (see session_check.h): SQLite's own integrity check of the file, the
 * structure the readers need, the rows that break the contract (left out by every reader), and
 * the consistency of sound rows with each other, read as they are: a link that names no row is
 * no link (a kernel whose api_id names no API call has no launch call, a scope whose parent is
 * missing is outermost), a row that repeats another is counted twice. */
#include "store/session_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_internal.h"
#include "store/sql_util.h"

static int say(wl_check_fn fn, void *arg, const char *section, const char *line)
{
    fn(section, line, arg);
    return 1;
}

/* PRAGMA integrity_check: "ok", or what is wrong with the b-trees (up to 20 lines). */
static int file_check(wl_session *s, wl_check_fn fn, void *arg)
{
    sqlite3_stmt *st;
    int problems = 0, rc;
    char line[512];
    if (sqlite3_prepare_v2(s->db, "PRAGMA main.integrity_check(20)", -1, &st, NULL) != SQLITE_OK) {
        snprintf(line, sizeof line, "the integrity check cannot run: %s", sqlite3_errmsg(s->db));
        return say(fn, arg, "file", line);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        if (!t || !strcmp((const char *)t, "ok"))
            continue;
        /* a row may hold several lines, the first naming the database */
        for (const char *p = (const char *)t; *p;) {
            size_t len = strcspn(p, "\n");
            snprintf(line, sizeof line, "%.*s", (int)len, p);
            if (line[0] && strncmp(line, "*** in database ", 16))
                problems += say(fn, arg, "file", line);
            p += len + (p[len] == '\n');
        }
    }
    if (rc != SQLITE_DONE) {
        snprintf(line, sizeof line, "the integrity check stopped: %s", sqlite3_errmsg(s->db));
        problems += say(fn, arg, "file", line);
    }
    sqlite3_finalize(st);
    return problems;
}

/* Consistency of sound rows: (table, the table it needs, what is wrong with a row, SQL counting
 * the rows at fault). */
static const struct {
    const char *table, *needs, *what, *sql;
} LINKS[] = {
    {"kernel", "process", "whose pid has no process row",
     "SELECT count(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM process p WHERE p.pid = k.pid)"},
    {"kernel", "device", "whose (pid, device_id) has no device row (no occupancy for them)",
     "SELECT count(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM device d WHERE d.pid = k.pid AND d.device_id ="
     " k.device_id)"},
    {"kernel", "api_call", "whose api_id names no API call (shown without a launch call)",
     "SELECT count(*) FROM kernel k WHERE k.api_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM api_call a WHERE a.id ="
     " k.api_id)"},
    {"kernel", "scope", "whose scope_id names no scope (shown outside any scope)",
     "SELECT count(*) FROM kernel k WHERE k.scope_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM scope s WHERE s.pid ="
     " k.pid AND s.scope_id = k.scope_id)"},
    {"memcpy", "api_call", "whose api_id names no API call",
     "SELECT count(*) FROM memcpy m WHERE m.api_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM api_call a WHERE a.id ="
     " m.api_id)"},
    {"memset", "api_call", "whose api_id names no API call",
     "SELECT count(*) FROM memset m WHERE m.api_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM api_call a WHERE a.id ="
     " m.api_id)"},
    {"api_call", "process", "whose pid has no process row",
     "SELECT count(*) FROM api_call a WHERE NOT EXISTS (SELECT 1 FROM process p WHERE p.pid = a.pid)"},
    {"scope", "scope", "whose parent_id names no scope of the process (read as outermost)",
     "SELECT count(*) FROM scope s WHERE s.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM scope p WHERE p.pid ="
     " s.pid AND p.scope_id = s.parent_id)"},
    {"scope", "scope", "in a cycle of parent_id links (read as outermost where the cycle closes)",
     "WITH RECURSIVE up(pid, id, at, depth) AS (SELECT pid, scope_id, parent_id, 0 FROM scope UNION ALL"
     " SELECT up.pid, up.id, s.parent_id, up.depth + 1 FROM up JOIN scope s ON s.pid = up.pid AND s.scope_id = up.at"
     " WHERE up.depth < 64) SELECT count(DISTINCT pid || ',' || id) FROM up WHERE at = id"},
    {"kernel_metric", "kernel", "whose kernel_id names no kernel (counted as unattributed)",
     "SELECT count(*) FROM kernel_metric m WHERE m.kernel_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM kernel k"
     " WHERE k.id = m.kernel_id)"},
    {"kernel_stall", "kernel", "whose kernel_id names no kernel (counted as unattributed)",
     "SELECT count(*) FROM kernel_stall m WHERE m.kernel_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM kernel k"
     " WHERE k.id = m.kernel_id)"},
    {"annotation", "kernel", "whose kernel_id names no kernel",
     "SELECT count(*) FROM annotation a WHERE a.kernel_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM kernel k"
     " WHERE k.id = a.kernel_id)"},
    {"inkernel_buffer", "kernel", "whose kernel_id names no kernel",
     "SELECT count(*) FROM inkernel_buffer b WHERE b.kernel_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM kernel k"
     " WHERE k.id = b.kernel_id)"},
    /* a stream runs one kernel at a time, a thread makes one call at a time: a second row with the
     * same start is a copy */
    {"kernel", "kernel", "repeating another (same process, device, stream, correlation id and start; counted"
     " twice)",
     "SELECT count(*) FROM kernel k WHERE k.has_timestamps AND EXISTS (SELECT 1 FROM kernel o WHERE o.start_ns ="
     " k.start_ns AND o.pid = k.pid AND o.device_id = k.device_id AND o.stream_id = k.stream_id AND o.correlation_id ="
     " k.correlation_id AND o.id < k.id)"},
    {"api_call", "api_call", "repeating another (same process, thread, correlation id and start; counted twice)",
     "SELECT count(*) FROM api_call a WHERE EXISTS (SELECT 1 FROM api_call o WHERE o.pid = a.pid AND o.tid = a.tid AND"
     " o.start_ns = a.start_ns AND o.correlation_id = a.correlation_id AND o.id < a.id)"},
    {"memcpy", "memcpy", "repeating another (same process, stream, correlation id and start; counted twice)",
     "SELECT count(*) FROM memcpy m WHERE m.start_ns IS NOT NULL AND EXISTS (SELECT 1 FROM memcpy o WHERE o.start_ns ="
     " m.start_ns AND o.pid = m.pid AND o.stream_id IS m.stream_id AND o.correlation_id IS m.correlation_id AND"
     " o.id < m.id)"},
};

static int link_checks(wl_session *s, wl_check_fn fn, void *arg)
{
    int problems = 0;
    char line[256];
    for (size_t i = 0; i < sizeof LINKS / sizeof LINKS[0]; i++) {
        if (!wl_guard_has(s->guard, LINKS[i].table) || !wl_guard_has(s->guard, LINKS[i].needs))
            continue; /* absent, or unreadable (listed with the structure) */
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db, LINKS[i].sql, -1, &st, NULL) != SQLITE_OK) {
            snprintf(line, sizeof line, "%s: cannot check: %s", LINKS[i].table, sqlite3_errmsg(s->db));
            problems += say(fn, arg, "consistency", line);
            continue;
        }
        int rc = sqlite3_step(st);
        long long n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        if (rc != SQLITE_ROW) {
            snprintf(line, sizeof line, "%s: cannot check: %s", LINKS[i].table, sqlite3_errmsg(s->db));
            problems += say(fn, arg, "consistency", line);
        } else if (n) {
            snprintf(line, sizeof line, "%s: %lld row%s %s", LINKS[i].table, n, n == 1 ? "" : "s", LINKS[i].what);
            problems += say(fn, arg, "consistency", line);
        }
        sqlite3_finalize(st);
    }
    return problems;
}

int wl_session_check(wl_session *s, int examples, wl_check_fn fn, void *arg)
{
    int problems = file_check(s, fn, arg);
    char line[512];
    for (int i = 0; wl_session_problem(s, i, line, sizeof line) == 0; i++)
        problems += say(fn, arg, "structure", line);
    wl_damage_count d[40];
    int n = wl_session_damage(s, examples, d, 40);
    if (n < 0) {
        snprintf(line, sizeof line, "the rows cannot be checked: %s", sqlite3_errmsg(s->db));
        problems += say(fn, arg, "rows", line);
    }
    for (int i = 0; i < n && i < 40; i++) {
        snprintf(line, sizeof line, "%.32s: %llu row%s left out", d[i].table, (unsigned long long)d[i].rows,
                 d[i].rows == 1 ? "" : "s");
        problems += say(fn, arg, "rows", line);
        for (int j = 0; j < d[i].nexamples; j++) {
            snprintf(line, sizeof line, "  %.200s", d[i].example[j]);
            say(fn, arg, "rows", line);
        }
    }
    return problems + link_checks(s, fn, arg);
}
