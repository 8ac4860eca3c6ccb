/* Opening a session file (see session.h): what kind of file it is and, when it cannot be read,
 * one line saying why with what to do about it: missing, not a file, empty, a capture file, not
 * SQLite, truncated, malformed, locked by a writer, not a warplens session, a newer schema, a
 * damaged structure. Then the guard (session_guard.h) is installed so that every read leaves out
 * the rows that break the contract. Failures SQLite meets later, mid-read, are caught through its
 * error log (process-wide, as SQLite's configuration is) and reported by
 * wl_session_read_failure. */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "store/check_cache.h"
#include "store/row_pack.h"
#include "store/schema.h"
#include "store/session_scan.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

#define BUSY_WAIT_MS 2000 /* a writer's commit takes milliseconds; a writer holding on is reported */

/* ---- failures SQLite reports mid-read --------------------------------------------------------- */

static atomic_int g_failed;
static char g_failure[256];

static void sqlite_log(void *arg, int code, const char *msg)
{
    (void)arg;
    int primary = code & 0xff;
    if (primary != SQLITE_CORRUPT && primary != SQLITE_NOTADB && primary != SQLITE_IOERR)
        return;
    int expected = 0;
    if (atomic_compare_exchange_strong(&g_failed, &expected, 2)) {
        (void)msg; /* ("database corruption at line N of [source id]": SQLite's, not the user's, business) */
        snprintf(g_failure, sizeof g_failure, "%s", sqlite3_errstr(code));
        atomic_store(&g_failed, 1);
    }
}

static void install_log(void) { sqlite3_config(SQLITE_CONFIG_LOG, sqlite_log, NULL); }

void wl_store_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_log);
}

int wl_session_read_failure(wl_session *s, char *out, size_t n)
{
    (void)s;
    if (atomic_load(&g_failed) != 1) {
        if (n)
            out[0] = 0;
        return 0;
    }
    snprintf(out, n, "%s", g_failure);
    if (n)
        wl_store_one_line(out);
    return 1;
}

/* ---- what kind of file ---------------------------------------------------------------------- */

/* Appends the remedy for a damaged file to the len bytes of err; returns -1. */
static int with_recover(char *err, size_t n, int len, const char *path)
{
    if (len > 0 && (size_t)len < n)
        snprintf(err + len, n - (size_t)len,
                 "recover its readable rows with `sqlite3 %s .recover | sqlite3 recovered.wlsession`", path);
    if (n)
        wl_store_one_line(err);
    return -1;
}

/* Looks at the file's first bytes: 0 when it may be an SQLite database whole, else -1 with err. */
static int classify(const char *path, const struct stat *sb, char *err, size_t n)
{
    if (sb->st_size == 0)
        return wl_store_set_err(err, n, "%s is empty (0 bytes), not a session: the run or copy that made it did not finish",
                       path);
    unsigned char h[100];
    FILE *f = fopen(path, "rb");
    if (!f)
        return wl_store_set_err(err, n, "%s: cannot read: %s", path, strerror(errno));
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    if (got >= 5 && !memcmp(h, "WLCAP", 5))
        return wl_store_set_err(err, n, "%s is a capture file, not a session: make one with `warplens import -o OUT.wlsession %s`",
                       path, path);
    if (got < 16 || memcmp(h, "SQLite format 3", 16))
        return wl_store_set_err(err, n, "%s is not a warplens session (not an SQLite database)", path);
    if (got < sizeof h)
        return wl_store_set_err(err, n, "%s is truncated (%zu bytes, less than an SQLite header): copy it again", path, got);
    /* page size (1 means 65536) and, when the header says it is valid, the page count */
    unsigned page = (unsigned)h[16] << 8 | h[17];
    if (page == 1)
        page = 65536;
    uint32_t count = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
    int count_valid = !memcmp(h + 24, h + 92, 4) && count;
    if (page < 512 || (page & (page - 1)))
        return with_recover(err, n, snprintf(err, n, "%s is damaged: its header gives a page size of %u bytes; ", path,
                                             page), path);
    if ((uint64_t)sb->st_size % page || (count_valid && (uint64_t)sb->st_size < (uint64_t)count * page))
        return with_recover(err, n,
                            snprintf(err, n, "%s is truncated (%lld bytes of %lld): copy it again, or ", path,
                                     (long long)sb->st_size,
                                     count_valid ? (long long)count * page : (long long)sb->st_size),
                            path);
    return 0;
}

/* One line for an SQLite failure at open: malformed, locked, not a database, I/O (msg: SQLite's
 * message, NULL for db's). */
static int sqlite_err(sqlite3 *db, const char *path, int rc, const char *msg, char *err, size_t n)
{
    if (!msg)
        msg = sqlite3_errmsg(db);
    int primary = rc & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
        return wl_store_set_err(err, n, "%s is locked by a process writing to it (an import or sqlite3 still running?): read it"
                               " when that is done, or read a copy", path);
    if (primary == SQLITE_NOTADB)
        return wl_store_set_err(err, n, "%s is not a warplens session (not an SQLite database: %s)", path, msg);
    if (primary == SQLITE_CORRUPT)
        return with_recover(err, n, snprintf(err, n, "%s is damaged (%s): ", path, msg), path);
    return wl_store_set_err(err, n, "%s: cannot read: %s", path, msg);
}

/* The value of a meta key: 0 found, 1 absent, or an SQLite error code (< 0 never). */
static int meta_value(sqlite3 *db, const char *key, char *out, size_t n, int *rc_out)
{
    sqlite3_stmt *st;
    out[0] = 0;
    int rc = sqlite3_prepare_v2(db, "SELECT value FROM main.meta WHERE key = ?", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        *rc_out = rc;
        return -1;
    }
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    int found = rc == SQLITE_ROW;
    if (found) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out, n, "%s", t ? (const char *)t : "");
    }
    *rc_out = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    sqlite3_finalize(st);
    return *rc_out != SQLITE_OK ? -1 : found ? 0 : 1;
}

static int is_session(sqlite3 *db, int *rc)
{
    sqlite3_stmt *st;
    *rc = sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'meta'", -1, &st,
                             NULL);
    if (*rc != SQLITE_OK)
        return 0;
    int r = sqlite3_step(st);
    *rc = r == SQLITE_ROW || r == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    sqlite3_finalize(st);
    return r == SQLITE_ROW;
}

static wl_session *fail(sqlite3 *db, wl_guard *g)
{
    wl_guard_free(g);
    sqlite3_close(db);
    return NULL;
}

wl_session *wl_session_open_flags(const char *path, int flags, char *err, size_t err_size)
{
    wl_store_init();
    atomic_store(&g_failed, 0);
    struct stat sb;
    struct timespec began;
    clock_gettime(CLOCK_REALTIME, &began); /* before the stat: what check_cache.h keeps is checked from here */
    if (stat(path, &sb) != 0) {
        wl_store_set_err(err, err_size, "%s: no such file", path);
        return NULL;
    }
    if (!S_ISREG(sb.st_mode)) {
        wl_store_set_err(err, err_size, "%s is not a file", path);
        return NULL;
    }
    if (classify(path, &sb, err, err_size))
        return NULL;
    sqlite3 *db = NULL;
    /* one thread at a time uses a session's connection (cursors read through their own): no
     * mutex round trip on every sqlite3_column_* call */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        wl_store_set_err(err, err_size, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        return fail(db, NULL);
    }
    sqlite3_busy_timeout(db, BUSY_WAIT_MS);
    int rc;
    int session = is_session(db, &rc);
    if (rc != SQLITE_OK) {
        sqlite_err(db, path, rc, NULL, err, err_size);
        return fail(db, NULL);
    }
    char format[64], version[32];
    if (!session || meta_value(db, "format", format, sizeof format, &rc) != 0 || strcmp(format, WL_SESSION_FORMAT)) {
        if (rc != SQLITE_OK)
            sqlite_err(db, path, rc, NULL, err, err_size);
        else
            wl_store_set_err(err, err_size, "%s is an SQLite database but not a warplens session (no warplens meta table)", path);
        return fail(db, NULL);
    }
    if (meta_value(db, "schema_version", version, sizeof version, &rc) != 0) {
        if (rc != SQLITE_OK)
            sqlite_err(db, path, rc, NULL, err, err_size);
        else
            wl_store_set_err(err, err_size, "%s: session has no schema version", path);
        return fail(db, NULL);
    }
    char *end;
    errno = 0;
    long v = strtol(version, &end, 10);
    if (end == version || *end || errno || v < 1) {
        wl_store_set_err(err, err_size, "%s: invalid session schema version '%.40s' (meta.schema_version is damaged: it is 1 for"
                               " every session this warplens writes)", path, version);
        return fail(db, NULL);
    }
    if (v > WL_SCHEMA_VERSION) {
        wl_store_set_err(err, err_size, "%s: session schema version %ld is newer than this warplens reads (%d); upgrade warplens",
                path, v, WL_SCHEMA_VERSION);
        return fail(db, NULL);
    }
    char why[256];
    int known_sound = !(flags & WL_OPEN_RECHECK) && wl_check_cache_hit(path, &sb);
    wl_guard *g = wl_guard_build(db, flags & WL_OPEN_DAMAGED, known_sound || (flags & WL_OPEN_NO_CENSUS) != 0,
                                 (flags & WL_OPEN_ONE_THREAD) != 0, why, sizeof why, &rc);
    if (!g) {
        sqlite_err(db, path, rc, why, err, err_size);
        return fail(db, NULL);
    }
    if (wl_guard_sound(g))
        wl_check_cache_store(path, &sb, &began);
    if (!(flags & WL_OPEN_DAMAGED) && wl_guard_problem(g, 0, why, sizeof why) == 0) {
        wl_store_set_err(err, err_size, "%s is damaged: %s (`warplens info --check %s` lists what is wrong)", path, why, path);
        return fail(db, g);
    }
    if (wl_guard_install(g, db) || wl_sql_fold_register(db)) {
        sqlite_err(db, path, sqlite3_errcode(db), NULL, err, err_size);
        return fail(db, g);
    }
    wl_session *s = calloc(1, sizeof *s);
    if (!s) {
        wl_store_set_err(err, err_size, "out of memory");
        return fail(db, g);
    }
    s->db = db;
    s->schema_version = (int)v;
    s->guard = g;
    /* a census found the pack equal to the rows, now or (known sound) when the file was cached */
    s->pack = known_sound ? wl_pack_present(db) : wl_guard_pack(g, NULL, 0) == 1;
    s->read_threads = 2;
    snprintf(s->path, sizeof s->path, "%s", path);
    return s;
}

wl_session *wl_session_open(const char *path, char *err, size_t err_size)
{
    return wl_session_open_flags(path, 0, err, err_size);
}

void wl_session_close(wl_session *s)
{
    if (!s)
        return;
    sqlite3_finalize(s->annotation_by_kernel);
    sqlite3_close(s->db);
    wl_guard_free(s->guard);
    wl_scan_free(s->scan);
    free(s);
}

const char *wl_session_path(const wl_session *s) { return s->path; }

int wl_session_schema_version(const wl_session *s) { return s->schema_version; }

int wl_session_meta(wl_session *s, const char *key, char *out, size_t out_size)
{
    int rc;
    /* through the view: a meta row with a NULL value is left out like any damaged row */
    sqlite3_stmt *st;
    out[0] = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out, out_size, "%s", t ? (const char *)t : "");
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

int wl_session_damage(wl_session *s, int examples, wl_damage_count *out, int max)
{
    if (max > 0)
        memset(out, 0, (size_t)max * sizeof *out);
    return wl_guard_census(s->guard, s->db, examples, out, max);
}

int wl_session_damage_note(wl_session *s, char *out, size_t out_size)
{
    return wl_guard_note(s->guard, out, out_size);
}

int wl_session_pack_note(wl_session *s, char *out, size_t out_size)
{
    return wl_guard_pack(s->guard, out, out_size) < 0;
}

int wl_session_pack_info(wl_session *s, wl_session_pack *out)
{
    char why[220];
    memset(out, 0, sizeof *out);
    out->state = s->pack ? 1 : wl_guard_pack(s->guard, NULL, 0) < 0 ? -1 : 0;
    wl_pack_sums c;
    if (out->state && wl_pack_counts(s->db, &c, &out->bytes, why, sizeof why))
        out->state = -1;
    else if (out->state) {
        out->kernels = (uint64_t)c.rows[WL_PACK_KERNEL];
        out->api_calls = c.rows[WL_PACK_API];
        out->nvtx_ranges = c.rows[WL_PACK_NVTX];
        out->scopes = c.rows[WL_PACK_SCOPE];
    }
    return 0;
}

int wl_session_row_fault(wl_session *s, const char *table, int64_t rowid, char *out, size_t out_size)
{
    return wl_guard_row_fault(s->guard, s->db, table, rowid, out, out_size);
}

int wl_session_problem(wl_session *s, int i, char *out, size_t out_size)
{
    return wl_guard_problem(s->guard, i, out, out_size);
}
