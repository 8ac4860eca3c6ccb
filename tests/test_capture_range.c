/* Capture ranges (`warplens run --capture-range profiler-api`) in the store: the MODE/START/STOP
 * records become process.capture_range and capture_range rows, a range still open at the end is
 * closed by the process's end, the reader's totals and the overview line say what was traced, the
 * trace exports and the HTML report draw each span on its process, and captures whose range
 * records contradict each other are refused with the offending offset. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capture_builder.h"
#include "export/html_report.h"
#include "export/session_export.h"
#include "session_test_util.h"
#include "store/session.h"
#include "test.h"
#include "test_files.h"

#define T0 1700000000000000000ull
#define PID 5151u
#define TID 5151u

static char g_dir[512];

static void add_process(capbuf *b)
{
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = PID;
    p.start_ns = T0;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    p.cmdline_str = cb_string(b, "./ranged");
    p.record_mask = WL_RECORD_ALL;
    cb_record(b, WLCAP_PROCESS, &p, sizeof p);
}

static void add_range(capbuf *b, uint32_t kind, uint64_t ts)
{
    wlcap_capture_range r = {ts, kind, TID};
    cb_record(b, WLCAP_CAPTURE_RANGE, &r, sizeof r);
}

static void add_kernel(capbuf *b, uint32_t name, uint32_t corr, uint64_t start)
{
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.queued = start - 2000, k.submitted = start - 1000, k.start = start, k.end = start + 5000;
    k.correlation_id = corr;
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = 32, k.block_y = k.block_z = 1;
    k.name_str = name;
    cb_record(b, WLCAP_KERNEL, &k, sizeof k);
}

static void add_end(capbuf *b, uint64_t end_ns)
{
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = end_ns;
    e.reason = WLCAP_END_EXIT;
    cb_record(b, WLCAP_END, &e, sizeof e);
}

/* `warplens stats SESSION` (the overview `warplens run` prints too) contains needle; true without
 * WARPLENS_BIN (the CLI is not at hand). */
static int stats_say(const char *session, const char *name, const char *needle)
{
    const char *bin = getenv("WARPLENS_BIN");
    if (!bin)
        return 1;
    char cmd[1600], txt[700];
    snprintf(txt, sizeof txt, "%s/%s.txt", g_dir, name);
    snprintf(cmd, sizeof cmd, "'%s' stats '%s' > '%s' 2>&1", bin, session, txt);
    CHECK_EQ_INT(system(cmd), 0);
    size_t len;
    char *text = (char *)slurp(txt, &len);
    int found = text && strstr(text, needle);
    if (!found)
        fprintf(stderr, "stats of %s lacks \"%s\"; it said:\n%s\n", name, needle, text ? text : "(nothing)");
    free(text);
    return found;
}

/* Imports the capture into g_dir/name.wlsession (path in out, the capture freed) and opens it. */
static wl_session *import_open(capbuf *b, const char *name, char *out, size_t out_size)
{
    char err[512];
    CHECK(test_capture_session(b, g_dir, name, out, out_size, err, sizeof err) == 0);
    free(b->data);
    wl_session *s = wl_session_open(out, err, sizeof err);
    CHECK(s != NULL);
    return s;
}

/* Exports the session as Chrome JSON, a Perfetto trace and the HTML report into g_dir/name.*; the
 * Chrome JSON's text (caller frees) and the timeline stats. */
static char *export_all(wl_session *s, const char *name, wl_export_stats *pst, wl_export_stats *jst)
{
    char path[700], err[512];
    snprintf(path, sizeof path, "%s/%s.pftrace", g_dir, name);
    FILE *fp = fopen(path, "wb");
    CHECK(fp && wl_export_perfetto(s, fp, NULL, pst, err, sizeof err) == 0);
    if (fp)
        fclose(fp);
    snprintf(path, sizeof path, "%s/%s.html", g_dir, name);
    wl_report_stats rst;
    fp = fopen(path, "wb");
    CHECK(fp && wl_report_html(s, fp, NULL, &rst, err, sizeof err) == 0);
    if (fp)
        fclose(fp);
    snprintf(path, sizeof path, "%s/%s.json", g_dir, name);
    fp = fopen(path, "wb");
    CHECK(fp && wl_export_chrome_json(s, fp, NULL, jst, err, sizeof err) == 0);
    if (fp)
        fclose(fp);
    size_t len;
    return (char *)slurp(path, &len);
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Two ranges: [T0+1 ms, T0+3 ms] closed by cudaProfilerStop, then one from T0+6 ms that the
 * process's end (T0+10 ms) closes. */
static void build_two_ranges(capbuf *b)
{
    cb_init(b, PID, T0);
    add_process(b);
    add_range(b, WLCAP_CAPTURE_MODE, T0);
    uint32_t name = cb_string(b, "_Z4stepv");
    add_range(b, WLCAP_CAPTURE_START, T0 + 1000000);
    add_kernel(b, name, 1, T0 + 1500000);
    add_kernel(b, name, 2, T0 + 2000000);
    add_range(b, WLCAP_CAPTURE_STOP, T0 + 3000000);
    add_range(b, WLCAP_CAPTURE_START, T0 + 6000000);
    add_kernel(b, name, 3, T0 + 7000000);
    add_end(b, T0 + 10000000);
}

static void test_two_ranges(void)
{
    capbuf b;
    build_two_ranges(&b);
    char out[700], err[512];
    wl_session *s = import_open(&b, "ranges", out, sizeof out);

    sqlite3 *db;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM process WHERE capture_range = 'profiler-api'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM capture_range"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT duration_ns FROM capture_range WHERE ended_by = 'stop'"), 2000000);
    CHECK_EQ_INT(test_sql_int(db, "SELECT end_ns - start_ns FROM capture_range WHERE ended_by = 'exit'"), 4000000);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM capture_range WHERE start_tid = 5151 AND pid = 5151"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM capture_range WHERE end_tid = 5151"), 1);
    sqlite3_close(db);
    if (!s)
        return;
    wl_capture_ranges cr;
    CHECK_EQ_INT(wl_session_capture_ranges(s, &cr), 0);
    CHECK_EQ_INT(cr.processes, 1);
    CHECK_EQ_INT(cr.ranges, 2);
    CHECK_EQ_INT(cr.open, 1);
    CHECK_EQ_INT(cr.traced_ns, 6000000);
    CHECK_EQ_INT(cr.run_ns, 10000000);

    /* the exports: one "traced" slice per span on the process's capture-range track, 2 ms and 4 ms */
    wl_export_stats pst, jst;
    char *json = export_all(s, "ranges", &pst, &jst);
    CHECK_EQ_INT(pst.tl.slices, 3 + 2); /* the kernels and the spans */
    CHECK_EQ_INT(jst.tl.slices, 3 + 2);
    CHECK_EQ_INT(pst.tl.slices_dropped, 0);
    CHECK(json != NULL);
    if (json) {
        CHECK_EQ_INT(count_of(json, "\"cat\":\"capture\",\"name\":\"traced\""), 2);
        CHECK(strstr(json, "\"name\":\"capture ranges (cudaProfilerStart .. Stop)\"") != NULL);
        CHECK(strstr(json, "\"dur\":2000,") != NULL);
        CHECK(strstr(json, "\"dur\":4000,") != NULL);
        CHECK_EQ_INT(count_of(json, "\"ended_by\":\"cudaProfilerStop\""), 1);
        CHECK_EQ_INT(count_of(json, "\"ended_by\":\"the process's exit\""), 1);
        CHECK_EQ_INT(count_of(json, "\"started_by_tid\":5151"), 2);
    }
    free(json);
    size_t len;
    char path[700];
    snprintf(path, sizeof path, "%s/ranges.pftrace", g_dir);
    char *pf = (char *)slurp(path, &len);
    CHECK(pf && memmem(pf, len, "capture ranges (cudaProfilerStart .. Stop)", 41) != NULL);
    free(pf);
    snprintf(path, sizeof path, "%s/ranges.html", g_dir);
    char *html = (char *)slurp(path, &len);
    CHECK(html && strstr(html, "capture ranges (cudaProfilerStart .. Stop)") != NULL);
    free(html);
    wl_session_close(s);

    CHECK(stats_say(out, "ranges", "capture   only between cudaProfilerStart and cudaProfilerStop: 2 ranges,"
                                   " 6.00 ms traced of 10.00 ms run (the last range was still open at the end)"));

    /* a session file edited by hand: a span overlapping the first is left out of the exports and
     * counted there; one ending before it starts breaks the schema, so every reader leaves it out
     * (the store counts it: docs/schema.md, "Damaged sessions") */
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(db,
                       "INSERT INTO capture_range (pid, start_ns, end_ns, duration_ns, ended_by) VALUES"
                       " (5151, 1700000000002000000, 1700000000004000000, 2000000, 'stop'),"
                       " (5151, 1700000000009000000, 1700000000008000000, -1000000, 'stop')",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    s = wl_session_open(out, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    json = export_all(s, "ranges-edited", &pst, &jst);
    CHECK_EQ_INT(jst.tl.slices, 3 + 2);
    CHECK_EQ_INT(jst.tl.slices_dropped, 1);
    free(json);
    wl_damage_count d[4];
    CHECK_EQ_INT(wl_session_damage(s, 1, d, 4), 1);
    CHECK(!strcmp(d[0].table, "capture_range") && d[0].rows == 1);
    CHECK(!strcmp(d[0].example[0], "row 4: duration_ns is -1000000, below 0"));
    wl_session_close(s);
}

/* The program never called cudaProfilerStart: nothing traced, and the overview says why. */
static void test_never_started(void)
{
    capbuf b;
    cb_init(&b, PID, T0);
    add_process(&b);
    add_range(&b, WLCAP_CAPTURE_MODE, T0);
    add_end(&b, T0 + 5000000);
    char out[700];
    wl_session *s = import_open(&b, "never", out, sizeof out);
    if (!s)
        return;
    wl_capture_ranges cr;
    CHECK_EQ_INT(wl_session_capture_ranges(s, &cr), 0);
    CHECK_EQ_INT(cr.processes, 1);
    CHECK_EQ_INT(cr.ranges, 0);
    wl_session_close(s);
    CHECK(stats_say(out, "never", "never called cudaProfilerStart: nothing was traced"));
}

/* A whole-run session (no MODE record) reports no capture range. */
static void test_whole_run(void)
{
    capbuf b;
    cb_init(&b, PID, T0);
    add_process(&b);
    add_end(&b, T0 + 5000000);
    char out[700];
    wl_session *s = import_open(&b, "whole", out, sizeof out);
    if (!s)
        return;
    wl_capture_ranges cr;
    CHECK_EQ_INT(wl_session_capture_ranges(s, &cr), 0);
    CHECK_EQ_INT(cr.processes, 0);
    wl_session_close(s);
}

/* A process killed inside a span: no stop, no end record. The span is drawn to the session's end
 * and says it has no recorded end. */
static void test_killed_inside(void)
{
    capbuf b;
    cb_init(&b, PID, T0);
    add_process(&b);
    add_range(&b, WLCAP_CAPTURE_MODE, T0);
    add_range(&b, WLCAP_CAPTURE_START, T0 + 1000000);
    add_kernel(&b, cb_string(&b, "_Z4stepv"), 1, T0 + 2000000);
    char out[700];
    wl_session *s = import_open(&b, "killed", out, sizeof out);
    if (!s)
        return;
    wl_export_stats pst, jst;
    char *json = export_all(s, "killed", &pst, &jst);
    CHECK_EQ_INT(jst.tl.slices, 1 + 1);
    CHECK_EQ_INT(jst.tl.slices_dropped, 0);
    CHECK(json && strstr(json, "\"ended_by\":\"unknown (the process ended without a record)\"") != NULL);
    /* to the session's end as the exports bound never-ended ranges (here the last kernel's start) */
    CHECK(json && strstr(json, "\"cat\":\"capture\",\"name\":\"traced\",\"pid\":5151,\"tid\":4294967280,\"ts\":1000,"
                               "\"dur\":1000,") != NULL);
    free(json);
    wl_session_close(s);
}

/* Range records that contradict each other are refused, naming the record's offset. */
static void test_contradictions(void)
{
    static const struct { const char *name; uint32_t kinds[3]; int n; const char *needle; } cases[] = {
        {"stop_first", {WLCAP_CAPTURE_MODE, WLCAP_CAPTURE_STOP}, 2, "a range ends that never started"},
        {"double_start", {WLCAP_CAPTURE_MODE, WLCAP_CAPTURE_START, WLCAP_CAPTURE_START}, 3,
         "a range starts while one is open"},
        {"no_mode", {WLCAP_CAPTURE_START}, 1, "comes before the capture-range mode record"},
        {"two_modes", {WLCAP_CAPTURE_MODE, WLCAP_CAPTURE_MODE}, 2, "a second mode record"},
        {"bad_kind", {WLCAP_CAPTURE_MODE, 7}, 2, "unknown kind 7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capbuf b;
        cb_init(&b, PID, T0);
        add_process(&b);
        for (int k = 0; k < cases[i].n; k++)
            add_range(&b, cases[i].kinds[k], T0 + (uint64_t)k * 1000);
        test_expect_import_error(&b, g_dir, cases[i].name, cases[i].needle);
        test_expect_import_error(&b, g_dir, cases[i].name, "capture_range record at offset ");
        free(b.data);
    }
}

/* `test_capture_range --make-session FILE`: writes the two-span session for the report's browser
 * check (tests/cli/test_report_cli.sh). */
static int make_session(const char *path)
{
    capbuf b;
    build_two_ranges(&b);
    char out[700], err[512];
    int rc = test_capture_session(&b, g_dir, "ranges", out, sizeof out, err, sizeof err);
    free(b.data);
    if (rc != 0 || rename(out, path) != 0) {
        fprintf(stderr, "test_capture_range: cannot write %s: %s\n", path, rc ? err : strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *base = getenv("WARPLENS_BUILD_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/test_capture_range.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    if (argc == 3 && !strcmp(argv[1], "--make-session")) {
        int rc = make_session(argv[2]);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        (void)!system(cmd);
        return rc;
    }
    test_two_ranges();
    test_never_started();
    test_killed_inside();
    test_whole_run();
    test_contradictions();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (!test_failed_)
        (void)!system(cmd);
    return test_report("capture_range");
}
