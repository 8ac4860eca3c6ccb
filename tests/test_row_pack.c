/* The export pack (store/row_pack.h). A synthetic session gets one when written; Perfetto, Chrome
 * JSON and JFR exports read it and must give the bytes the same session gives without it (the
 * rows through SQLite), for: the generator's session; API calls of one thread that start
 * together with different ends (the host cursor's tie order); more threads than the cursor keeps
 * statements for (one sorted statement instead); API names past the string limits, in number or
 * in length (the calls stay unpacked, the kernels packed); the rows edited after the pack was
 * written (not read, said so, and `import --upgrade` writes it again); NVTX ranges and scopes
 * starting together, some never closed (runs sorted as read), and more of one start than a run
 * may hold (unpacked); a block larger than any
 * writer makes (refused unread); and a pack damaged at random, blob by blob (never a crash or a
 * wrong export: the census does not match it and the rows are read; the reader itself, asked
 * directly, stops with an error naming the block). Each comparison is made again on one CPU
 * (WARPLENS_CPUS=1: no reader threads, the model steps the cursors itself): the same bytes. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/session_export.h"
#include "store/row_pack.h"
#include "store/session.h"
#include "store/session_identity.h"
#include "session_test_util.h"
#include "test.h"

typedef int (*export_fn)(wl_session *, FILE *, const wl_tl_options *, wl_export_stats *, char *, size_t);
static const export_fn FORMATS[] = {wl_export_perfetto, wl_export_chrome_json, wl_export_jfr};
#define NFORMATS 3

static char g_dir[64];

static int sql(const char *path, const char *q)
{
    sqlite3 *db;
    int rc = sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db, q, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    if (rc)
        fprintf(stderr, "sql: %s: %s\n", q, sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    char buf[65536];
    size_t n;
    int rc = a && b ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, a)) > 0)
        rc = fwrite(buf, 1, n, b) == n ? 0 : -1;
    if (a)
        fclose(a);
    if (b && fclose(b))
        rc = -1;
    return rc;
}

/* Every format's bytes of the session at path; the pack's state into *state. */
static int exports(const char *path, char *out[NFORMATS], size_t n[NFORMATS], wl_session_pack *pack)
{
    char err[512];
    wl_session *s = wl_session_open(path, err, sizeof err);
    CHECK(s != NULL);
    if (!s) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    wl_session_pack_info(s, pack);
    int rc = 0;
    for (int f = 0; f < NFORMATS; f++) {
        FILE *m = open_memstream(&out[f], &n[f]);
        wl_export_stats st;
        if (!m || FORMATS[f](s, m, NULL, &st, err, sizeof err)) {
            fprintf(stderr, "export %d: %s\n", f, err);
            rc = -1;
        }
        if (m)
            fclose(m);
    }
    wl_session_close(s);
    return rc;
}

/* The session at path read with its pack in `want` state against a copy without the pack. */
static void same_as_rows(const char *path, int want, int64_t want_api, const char *what)
{
    char bare[128];
    snprintf(bare, sizeof bare, "%s/bare.wlsession", g_dir);
    CHECK(copy_file(path, bare) == 0 && sql(bare, "DROP TABLE IF EXISTS pack_block") == 0);
    char *a[NFORMATS] = {0}, *b[NFORMATS] = {0};
    size_t na[NFORMATS] = {0}, nb[NFORMATS] = {0};
    wl_session_pack pa, pb;
    CHECK(exports(path, a, na, &pa) == 0);
    CHECK(exports(bare, b, nb, &pb) == 0);
    if (pa.state != want)
        fprintf(stderr, "%s: pack state %d, want %d\n", what, pa.state, want);
    CHECK_EQ_INT(pa.state, want);
    CHECK_EQ_INT(pb.state, 0);
    if (want == 1)
        CHECK_EQ_INT(pa.api_calls, want_api);
    /* on one CPU the model steps the cursors itself (no reader threads): the same bytes */
    char *c[NFORMATS] = {0}, *d[NFORMATS] = {0};
    size_t nc[NFORMATS] = {0}, nd[NFORMATS] = {0};
    wl_session_pack pc, pd;
    setenv("WARPLENS_CPUS", "1", 1);
    CHECK(exports(path, c, nc, &pc) == 0);
    CHECK(exports(bare, d, nd, &pd) == 0);
    unsetenv("WARPLENS_CPUS");
    CHECK_EQ_INT(pc.state, want);
    for (int f = 0; f < NFORMATS; f++) {
        int same = a[f] && b[f] && na[f] == nb[f] && !memcmp(a[f], b[f], na[f]);
        if (!same)
            fprintf(stderr, "%s: format %d differs with the pack (%zu bytes, %zu without)\n", what, f, na[f], nb[f]);
        CHECK(same);
        CHECK(na[f] > 1000);
        int one = c[f] && d[f] && nc[f] == na[f] && nd[f] == na[f] && !memcmp(c[f], a[f], na[f]) &&
                  !memcmp(d[f], a[f], na[f]);
        if (!one)
            fprintf(stderr, "%s: format %d differs on one CPU (%zu and %zu bytes, %zu on all)\n", what, f, nc[f],
                    nd[f], na[f]);
        CHECK(one);
        free(a[f]);
        free(b[f]);
        free(c[f]);
        free(d[f]);
    }
    unlink(bare);
}

static void upgrade(const char *path)
{
    char err[512];
    int rc = wl_session_upgrade(path, err, sizeof err);
    if (rc)
        fprintf(stderr, "upgrade: %s\n", err);
    CHECK_EQ_INT(rc, 0);
}

static long long count(const char *path, const char *q)
{
    sqlite3 *db;
    long long v = -1;
    if (sqlite3_open(path, &db) == SQLITE_OK)
        v = test_sql_int(db, q);
    sqlite3_close(db);
    return v;
}

/* The reader on its own over the pack as it is (as after a cache hit): rows or an error with the
 * block named, within the rows the header allows. */
static void read_directly(const char *path)
{
    sqlite3 *db;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    for (int kind = WL_PACK_KERNEL; kind <= WL_PACK_API; kind++) {
        char err[256] = "";
        wl_pack_reader *r = wl_pack_open(db, kind, err, sizeof err);
        if (!r)
            continue;
        wl_pack_row row;
        long long n = 0;
        int got;
        while ((got = wl_pack_next(r, &row)) == 1 && n < 10000000)
            n++;
        CHECK(got == 0 || got == -1);
        if (got < 0)
            CHECK(strstr(wl_pack_error(r), "pack_block kind") != NULL);
        wl_pack_close(r);
    }
    sqlite3_close(db);
}

/* Random damage to one block at a time: a byte changed, the blob cut short or grown, the row
 * count changed. */
static void damage_blocks(const char *path)
{
    char copy[128];
    snprintf(copy, sizeof copy, "%s/damaged.wlsession", g_dir);
    long long blocks = count(path, "SELECT count(*) FROM pack_block");
    CHECK(blocks > 3);
    unsigned seed = 12345;
    int refused = 0;
    for (int i = 0; i < 60; i++) {
        seed = seed * 1103515245u + 12345u;
        long long pick = (seed >> 8) % (unsigned long long)blocks;
        seed = seed * 1103515245u + 12345u;
        unsigned at = seed >> 8;
        char q[512];
        switch (i % 4) {
        case 0: /* one byte */
            snprintf(q, sizeof q,
                     "UPDATE pack_block SET data = substr(data, 1, %u %% length(data)) || x'%02x' ||"
                     " substr(data, %u %% length(data) + 2) WHERE rowid ="
                     " (SELECT rowid FROM pack_block LIMIT 1 OFFSET %lld)",
                     at, (at >> 3) & 0xff, at, pick);
            break;
        case 1: /* cut */
            snprintf(q, sizeof q, "UPDATE pack_block SET data = substr(data, 1, %u %% length(data)) WHERE rowid ="
                                  " (SELECT rowid FROM pack_block LIMIT 1 OFFSET %lld)", at, pick);
            break;
        case 2: /* grown */
            snprintf(q, sizeof q, "UPDATE pack_block SET data = data || x'ff81' WHERE rowid ="
                                  " (SELECT rowid FROM pack_block LIMIT 1 OFFSET %lld)", pick);
            break;
        default: /* row count */
            snprintf(q, sizeof q, "UPDATE pack_block SET n = n + %d WHERE rowid ="
                                  " (SELECT rowid FROM pack_block LIMIT 1 OFFSET %lld)", (int)(at % 3) - 1, pick);
        }
        CHECK(copy_file(path, copy) == 0 && sql(copy, q) == 0);
        read_directly(copy);
        char err[512];
        wl_session *s = wl_session_open(copy, err, sizeof err);
        CHECK(s != NULL);
        if (!s)
            continue;
        wl_session_pack p;
        wl_session_pack_info(s, &p);
        /* a change that leaves the blob as it was (same byte, count + 0) keeps it readable */
        CHECK(p.state == -1 || p.state == 1);
        refused += p.state == -1;
        wl_session_close(s);
        if (i % 10 == 0)
            same_as_rows(copy, p.state, p.api_calls, "damaged block");
    }
    if (refused < 50)
        fprintf(stderr, "damage: %d of 60 packs refused\n", refused);
    CHECK(refused >= 50);
    unlink(copy);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/wl_row_pack_XXXXXX");
    CHECK(mkdtemp(g_dir) != NULL);
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/s.wlsession", g_dir);
    CHECK_EQ_INT(test_synth_walk_session(path, 20000, err, sizeof err), 0);
    long long calls = count(path, "SELECT count(*) FROM api_call");
    same_as_rows(path, 1, calls, "synthetic");
    read_directly(path);

    /* rows edited after the pack: not read, said so; written again by the upgrade */
    CHECK(sql(path, "UPDATE api_call SET return_value = 1 WHERE id = 100") == 0);
    same_as_rows(path, -1, 0, "stale");
    char note[256] = "";
    wl_session *s = wl_session_open(path, err, sizeof err);
    CHECK(s && wl_session_pack_note(s, note, sizeof note) == 1 && strstr(note, "does not match the API calls"));
    wl_session_close(s);
    upgrade(path);
    same_as_rows(path, 1, calls, "upgraded");

    /* calls of one thread starting together, ends apart: the cursor's order at equal starts */
    CHECK(sql(path, "UPDATE api_call SET start_ns = start_ns - start_ns % 50000,"
                    " duration_ns = end_ns - (start_ns - start_ns % 50000)") == 0);
    CHECK(count(path, "SELECT count(*) FROM (SELECT 1 FROM api_call GROUP BY pid, tid, start_ns HAVING count(*) > 1"
                      " AND count(DISTINCT end_ns) > 1)") > 10);
    upgrade(path);
    same_as_rows(path, 1, calls, "equal starts");

    /* NVTX ranges and scopes starting together, some never closed (they end at the session's end,
     * which only the reader knows): each run of equal starts sorted the statements' way */
    CHECK(sql(path, "UPDATE nvtx_range SET start_ns = start_ns - start_ns % 200000,"
                    " duration_ns = end_ns - (start_ns - start_ns % 200000);"
                    "UPDATE nvtx_range SET end_ns = NULL, duration_ns = NULL WHERE id % 3 = 0;"
                    "UPDATE scope SET start_ns = start_ns - start_ns % 200000,"
                    " duration_ns = end_ns - (start_ns - start_ns % 200000);"
                    "UPDATE scope SET end_ns = NULL, duration_ns = NULL WHERE scope_id % 4 = 0") == 0);
    CHECK(count(path, "SELECT count(*) FROM (SELECT 1 FROM nvtx_range GROUP BY start_ns HAVING count(*) > 1"
                      " AND count(end_ns) < count(*) AND count(end_ns) > 0)") > 5);
    CHECK(count(path, "SELECT count(*) FROM (SELECT 1 FROM scope GROUP BY start_ns HAVING count(*) > 1)") > 5);
    upgrade(path);
    CHECK(count(path, "SELECT count(*) FROM pack_block WHERE kind IN (4, 5)") >= 2);
    same_as_rows(path, 1, calls, "ranges and scopes starting together, some open");

    /* more threads than statements: one sorted statement, and the pack in its order */
    CHECK(sql(path, "UPDATE api_call SET tid = 1000 + id % 300") == 0);
    upgrade(path);
    same_as_rows(path, 1, calls, "300 threads");

    /* damage to the pack's blocks */
    damage_blocks(path);
    /* a block larger than any writer makes: refused before it is read into memory */
    char big[128];
    snprintf(big, sizeof big, "%s/big.wlsession", g_dir);
    CHECK(copy_file(path, big) == 0 &&
          sql(big, "UPDATE pack_block SET data = zeroblob(4000000) WHERE kind = 2 AND seq = 1") == 0);
    read_directly(big);
    same_as_rows(big, -1, 0, "a huge block");
    /* the header: a byte too many, another format, a count out of range */
    static const char *const HEADERS[] = {"data || x'00'", "x'0402020200'", "x'02030202020000'", "x'02020202'"};
    for (size_t h = 0; h < sizeof HEADERS / sizeof *HEADERS; h++) {
        char q[160];
        snprintf(q, sizeof q, "UPDATE pack_block SET data = %s WHERE kind = 0", HEADERS[h]);
        CHECK(copy_file(path, big) == 0 && sql(big, q) == 0);
        read_directly(big);
        same_as_rows(big, -1, 0, HEADERS[h]);
    }
    unlink(big);
    /* one API name longer than a strings block: the calls unpacked */
    CHECK(sql(path, "UPDATE api_call SET name = printf('%.70000c', 'x') WHERE id = 5") == 0);
    upgrade(path);
    same_as_rows(path, 1, -1, "a 70,000-byte name");

    /* API names past the string limit: the calls unpacked, the kernels still packed */
    snprintf(path, sizeof path, "%s/names.wlsession", g_dir);
    CHECK_EQ_INT(test_synth_walk_session(path, WL_PACK_MAX_STRINGS + 4000, err, sizeof err), 0);
    CHECK(sql(path, "UPDATE api_call SET name = 'call' || id") == 0);
    CHECK(count(path, "SELECT count(DISTINCT name) FROM api_call") > WL_PACK_MAX_STRINGS);
    upgrade(path);
    CHECK_EQ_INT(count(path, "SELECT count(*) FROM pack_block WHERE kind = 3"), 0);
    same_as_rows(path, 1, -1, "names past the limit");
    /* more NVTX ranges of one start than a run may hold: the ranges unpacked, the rest packed */
    CHECK(count(path, "SELECT count(*) FROM nvtx_range") > WL_PACK_MAX_GROUP);
    CHECK(sql(path, "UPDATE nvtx_range SET start_ns = (SELECT min(start_ns) FROM nvtx_range),"
                    " duration_ns = end_ns - (SELECT min(start_ns) FROM nvtx_range)") == 0);
    upgrade(path);
    CHECK_EQ_INT(count(path, "SELECT count(*) FROM pack_block WHERE kind = 4"), 0);
    CHECK(count(path, "SELECT count(*) FROM pack_block WHERE kind = 5") > 0);
    same_as_rows(path, 1, -1, "a run of equal starts past the limit");

    unlink(path);
    snprintf(path, sizeof path, "%s/s.wlsession", g_dir);
    unlink(path);
    rmdir(g_dir);
    return test_report("test_row_pack");
}
