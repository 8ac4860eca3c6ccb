/* The exports' kernels in table order (export/export_rerun.h, WL_CUR_TABLE_ORDER): written to a
 * regular file, where the kernels are read in the table's own order through a reorder window,
 * Perfetto, Chrome JSON and JFR must be byte for byte what the same export writes to a memory
 * stream, which reads through the start index. One kernel moved a second back in time, further
 * than the window reaches and between the rows the open samples: the file's export must start over
 * and still give those bytes, and so must a second export on the same handle (which then reads by
 * the index from the start). A table out of order as a whole (the kernels renumbered in reverse) is
 * seen by the open's samples: by the index from the start, nothing to start over. A session with
 * kernels without timestamps keeps them in JFR (the walk counts them on the way). Kernel
 * annotations looked up one by one (the JFR export's way: the first look-up scans, later ones seek
 * a TEMP copy's index) give what the table says, the first row by id winning. Every comparison
 * is made again on one CPU (WARPLENS_CPUS=1), where the readers have no threads of their own. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/session_export.h"
#include "store/session.h"
#include "session_test_util.h"
#include "test.h"

typedef int (*export_fn)(wl_session *, FILE *, const wl_tl_options *, wl_export_stats *, char *, size_t);
static const struct {
    const char *name;
    export_fn fn;
} FORMATS[] = {{"perfetto", wl_export_perfetto}, {"json", wl_export_chrome_json}, {"jfr", wl_export_jfr}};

/* The export's bytes through a memory stream (index order). */
static char *to_memory(wl_session *s, export_fn fn, size_t *n, wl_export_stats *st)
{
    char *buf = NULL, err[512];
    FILE *m = open_memstream(&buf, n);
    CHECK(m != NULL);
    if (!m)
        return NULL;
    CHECK_EQ_INT(fn(s, m, NULL, st, err, sizeof err), 0);
    fclose(m);
    return buf;
}

/* The export's bytes through a regular file (table order, starting over when it must). */
static char *to_file(wl_session *s, export_fn fn, const char *path, size_t *n, wl_export_stats *st)
{
    char err[512];
    FILE *f = fopen(path, "w+b");
    CHECK(f != NULL);
    if (!f)
        return NULL;
    CHECK(fputs("lead", f) >= 0); /* an export that starts after other bytes keeps them */
    CHECK_EQ_INT(fn(s, f, NULL, st, err, sizeof err), 0);
    long len = ftell(f);
    char *buf = len > 4 ? malloc((size_t)len) : NULL;
    CHECK(buf != NULL && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    CHECK(buf && !memcmp(buf, "lead", 4));
    *n = len > 4 ? (size_t)len - 4 : 0;
    if (buf)
        memmove(buf, buf + 4, *n);
    return buf;
}

/* How the file's exports on one handle must have read the kernels (PACK: both streams read the
 * export pack, row_pack.h, which knows the untimed kernels). */
enum { TABLE_ORDER, RESTART, BY_INDEX, PACK };

/* untimed: the kernels without timestamps a table-order read must have counted on the way. */
static void compare_once(const char *session, const char *out, int exports_per_handle, int how, int64_t untimed)
{
    char err[512];
    for (size_t f = 0; f < sizeof FORMATS / sizeof *FORMATS; f++) {
        wl_session *s = wl_session_open(session, err, sizeof err);
        CHECK(s != NULL);
        if (!s)
            return;
        size_t nm = 0;
        wl_export_stats sm, sf;
        char *m = to_memory(s, FORMATS[f].fn, &nm, &sm);
        for (int k = 0; k < exports_per_handle; k++) {
            size_t nf = 0;
            char *b = to_file(s, FORMATS[f].fn, out, &nf, &sf);
            int same = m && b && nm == nf && !memcmp(m, b, nm);
            if (!same)
                fprintf(stderr, "%s: the file's export (%d) is not the memory stream's (%zu and %zu bytes)\n",
                        FORMATS[f].name, k, nf, nm);
            CHECK(same);
            CHECK_EQ_INT(sf.events, sm.events);
            CHECK(sf.events > 40000);
            CHECK_EQ_INT(sm.restarted, 0); /* a memory stream reads by the index: nothing to start over */
            CHECK_EQ_INT(sm.tl.untimed_kernels, how == PACK ? untimed : -1);
            /* after a restart the handle reads by the index: every later export too */
            CHECK_EQ_INT(sf.restarted, how == RESTART && k == 0);
            CHECK_EQ_INT(sf.tl.untimed_kernels, how == TABLE_ORDER || how == PACK ? untimed : -1);
            free(b);
        }
        free(m);
        wl_session_close(s);
    }
}

/* The same on one CPU (WARPLENS_CPUS=1): the host rows and the kernels read by the index are
 * stepped by the model itself, kernels in table order still by their reader's thread. */
static void compare(const char *session, const char *out, int exports_per_handle, int how, int64_t untimed)
{
    compare_once(session, out, exports_per_handle, how, untimed);
    setenv("WARPLENS_CPUS", "1", 1);
    compare_once(session, out, exports_per_handle, how, untimed);
    unsetenv("WARPLENS_CPUS");
}

/* wl_session_kernel_annotation against the annotation table, for kernels with one, two and no
 * annotations, on the first look-up of a handle (a scan) and on later ones (the indexed copy). */
static void check_annotations(const char *path)
{
    char err[512], prec[16];
    wl_session *s = wl_session_open(path, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    const struct {
        int64_t id;
        int found;
        double flops;
    } want[] = {{300, 1, 300e9}, {3, 1, 3e9}, {301, 0, 0}, {600, 1, 600e9}, {9, 1, -1}, {300, 1, 300e9}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        double flops = 0, bytes = 0;
        int rc = wl_session_kernel_annotation(s, want[i].id, &flops, &bytes, prec, sizeof prec);
        CHECK_EQ_INT(rc, want[i].found ? 0 : -1);
        if (want[i].found && want[i].flops > 0)
            CHECK(flops == want[i].flops && bytes == want[i].flops / 1000 && !strcmp(prec, "fp32"));
        if (want[i].id == 9) /* two rows: the first by id */
            CHECK(flops == 1 && !strcmp(prec, "fp16"));
    }
    wl_session_close(s);
}

int main(void)
{
    char dir[] = "/tmp/wl_export_order_XXXXXX", path[256], out[256], err[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/s.wlsession", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    CHECK_EQ_INT(test_synth_walk_session(path, 20000, err, sizeof err), 0); /* windows' worth */
    compare(path, out, 1, PACK, 0);

    /* without the pack, the kernels' own table in its order */
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "DROP TABLE pack_block", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    compare(path, out, 1, TABLE_ORDER, 0);

    /* every third kernel annotated (kernel 9 twice: a first row, then another) */
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "INSERT INTO annotation (pid, tid, target, correlation_id, scope_id, kernel_id, flops, bytes,"
                           " precision) VALUES (1, 1, 'kernel', 0, NULL, 9, 1, 2, 'fp16');"
                           "INSERT INTO annotation (pid, tid, target, correlation_id, scope_id, kernel_id, flops, bytes,"
                           " precision) SELECT pid, tid, 'kernel', correlation_id, NULL, id, id * 1e9, id * 1e6, 'fp32'"
                           " FROM kernel WHERE id % 3 = 0",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    check_annotations(path);
    compare(path, out, 1, TABLE_ORDER, 0);

    /* some kernels without timestamps: JFR finds them (the walk counted them) */
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "UPDATE kernel SET has_timestamps = 0, duration_ns = NULL WHERE id % 997 = 0", NULL, NULL,
                       NULL) == SQLITE_OK);
    sqlite3_close(db);
    compare(path, out, 1, TABLE_ORDER, 20000 / 997);

    /* one kernel a second earlier, every timestamp of it (the row stays sound) */
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "UPDATE kernel SET queued_ns = queued_ns - 1000000000, submitted_ns = submitted_ns - 1000000000,"
                           " start_ns = start_ns - 1000000000, end_ns = end_ns - 1000000000,"
                           " completed_ns = completed_ns - 1000000000 WHERE id = 10007",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    compare(path, out, 2, RESTART, 0);

    /* the same kernels, the table's order reversed: ids renumbered from the last to the first */
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, TEST_REVERSE_KERNELS_SQL, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    compare(path, out, 2, BY_INDEX, 0);

    unlink(out);
    unlink(path);
    rmdir(dir);
    return test_report("test_export_order");
}
