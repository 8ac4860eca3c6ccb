/* Timer side files (<pid>.wltimers, written by the timer API under `warplens run`; format in
 * docs/timer.md) -> the session's timer and timer_category tables. Text from another process is
 * parsed defensively: bounded lines, every field checked, errors name the line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_writer_internal.h"

#define MAX_LINE 4096
#define MAX_FIELDS 12

/* Splits on tabs in place; returns the number of fields. */
static int split(char *line, char **f)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < MAX_FIELDS; p++) {
        if (*p == '\t') {
            *p = 0;
            f[n++] = p + 1;
        }
    }
    return n;
}

static int parse_u64(const char *s, int base, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || end == s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

int wl_session_writer_import_timers(wl_session_writer *w, const char *path, uint64_t *imported, char *err,
                                    size_t err_size)
{
    *imported = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return wl_store_set_err(err, err_size, "cannot open %s: %s", path, strerror(errno));
    sqlite3_stmt *ins_t = NULL, *ins_c = NULL;
    if (sqlite3_prepare_v2(w->db,
                           "INSERT INTO timer (pid, idx, kind, category, status, host_timed, start_ns, duration_ns,"
                           " tid, stream, name) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &ins_t, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO timer_category (pid, id, name) VALUES (?,?,?)", -1, &ins_c,
                           NULL) != SQLITE_OK) {
        fclose(f);
        sqlite3_finalize(ins_t);
        return wl_store_set_err(err, err_size, "SQLite: %s", sqlite3_errmsg(w->db));
    }
    char line[MAX_LINE + 2];
    char *fld[MAX_FIELDS];
    uint64_t pid = 0, lineno = 0, declared = 0;
    int rc = 0, have_header = 0, have_end = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        else if (!feof(f)) {
            rc = wl_store_set_err(err, err_size, "%s:%llu: line longer than %d bytes", path,
                                  (unsigned long long)lineno, MAX_LINE);
            break;
        }
        if (!len || line[0] == '#')
            continue;
        int n = split(line, fld);
        if (!have_header) {
            if (n != 2 || strcmp(fld[0], "wltimers") != 0 || strcmp(fld[1], "1") != 0) {
                rc = wl_store_set_err(err, err_size, "%s:%llu: not a version-1 timer file", path,
                                      (unsigned long long)lineno);
                break;
            }
            have_header = 1;
        } else if (!strcmp(fld[0], "pid") && n == 2) {
            if (parse_u64(fld[1], 10, &pid) != 0)
                rc = wl_store_set_err(err, err_size, "%s:%llu: bad pid", path, (unsigned long long)lineno);
        } else if (!strcmp(fld[0], "category") && n == 3) {
            uint64_t id;
            if (parse_u64(fld[1], 10, &id) != 0 || id > 1000) {
                rc = wl_store_set_err(err, err_size, "%s:%llu: bad category id", path, (unsigned long long)lineno);
                break;
            }
            sqlite3_reset(ins_c);
            sqlite3_bind_int64(ins_c, 1, (sqlite3_int64)pid);
            sqlite3_bind_int64(ins_c, 2, (sqlite3_int64)id);
            sqlite3_bind_text(ins_c, 3, fld[2], -1, SQLITE_TRANSIENT);
            if (sqlite3_step(ins_c) != SQLITE_DONE)
                rc = wl_store_set_err(err, err_size, "SQLite: %s", sqlite3_errmsg(w->db));
        } else if (!strcmp(fld[0], "interval") && n == 11) {
            uint64_t idx, cat, host_timed, start, dur, tid, stream;
            const char *kind = fld[2], *status = fld[4];
            int ok = !parse_u64(fld[1], 10, &idx) && !parse_u64(fld[3], 10, &cat) &&
                     !parse_u64(fld[5], 10, &host_timed) && host_timed <= 1 && !parse_u64(fld[6], 10, &start) &&
                     !parse_u64(fld[7], 10, &dur) && !parse_u64(fld[8], 10, &tid) &&
                     !parse_u64(fld[9], 16, &stream) &&
                     (!strcmp(kind, "gpu") || !strcmp(kind, "span") || !strcmp(kind, "host")) &&
                     (!strcmp(status, "open") || !strcmp(status, "pending") || !strcmp(status, "done") ||
                      !strcmp(status, "failed"));
            if (!ok) {
                rc = wl_store_set_err(err, err_size, "%s:%llu: malformed interval line", path,
                                      (unsigned long long)lineno);
                break;
            }
            sqlite3_reset(ins_t);
            sqlite3_bind_int64(ins_t, 1, (sqlite3_int64)pid);
            sqlite3_bind_int64(ins_t, 2, (sqlite3_int64)idx);
            sqlite3_bind_text(ins_t, 3, kind, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(ins_t, 4, (sqlite3_int64)cat);
            sqlite3_bind_text(ins_t, 5, status, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int(ins_t, 6, (int)host_timed);
            sqlite3_bind_int64(ins_t, 7, (sqlite3_int64)start);
            if (!strcmp(status, "done"))
                sqlite3_bind_int64(ins_t, 8, (sqlite3_int64)dur);
            else
                sqlite3_bind_null(ins_t, 8);
            sqlite3_bind_int64(ins_t, 9, (sqlite3_int64)tid);
            sqlite3_bind_int64(ins_t, 10, (sqlite3_int64)stream);
            sqlite3_bind_text(ins_t, 11, fld[10], -1, SQLITE_TRANSIENT);
            if (sqlite3_step(ins_t) != SQLITE_DONE)
                rc = wl_store_set_err(err, err_size, "SQLite: %s", sqlite3_errmsg(w->db));
            else
                (*imported)++;
        } else if (!strcmp(fld[0], "end") && n == 2) {
            if (parse_u64(fld[1], 10, &declared) != 0)
                rc = wl_store_set_err(err, err_size, "%s:%llu: bad end line", path, (unsigned long long)lineno);
            have_end = 1;
        } else if (!strcmp(fld[0], "backend") || !strcmp(fld[0], "overflow") || !strcmp(fld[0], "errors")) {
            /* informational; the timer API's own summary reports them */
        } else {
            rc = wl_store_set_err(err, err_size, "%s:%llu: unknown record '%.32s'", path, (unsigned long long)lineno,
                                  fld[0]);
        }
    }
    fclose(f);
    sqlite3_finalize(ins_t);
    sqlite3_finalize(ins_c);
    if (rc == 0 && !have_header)
        rc = wl_store_set_err(err, err_size, "%s: empty timer file", path);
    if (rc == 0 && (!have_end || declared != *imported))
        rc = wl_store_set_err(err, err_size, "%s: truncated (%llu intervals, end line %s)", path,
                              (unsigned long long)*imported, have_end ? "disagrees" : "missing");
    return rc;
}
