/* Opening files that are not sessions, or sessions of another schema, fails with one clear line;
 * the real H100 sessions in tests/data open and read. */
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include "store/session.h"
#include "test.h"

static void expect_open_error(const char *path, const char *needle)
{
    char err[512] = "";
    wl_session *s = wl_session_open(path, err, sizeof err);
    CHECK(s == NULL);
    if (s)
        wl_session_close(s);
    if (!strstr(err, needle))
        fprintf(stderr, "  %s: error \"%s\" lacks \"%s\"\n", path, err, needle);
    CHECK(strstr(err, needle) != NULL);
    CHECK(strchr(err, '\n') == NULL); /* one line */
}

static void make_db(const char *path, const char *sql)
{
    unlink(path);
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
}

int main(void)
{
    char dir[512], p[600];
    const char *base = getenv("WARPLENS_BUILD_DIR");
    snprintf(dir, sizeof dir, "%s/test_session_open.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir))
        return 1;

    expect_open_error("/nonexistent/x.wlsession", "no such file");
    expect_open_error(dir, "is not a file");
    snprintf(p, sizeof p, "%s/text.wlsession", dir);
    FILE *f = fopen(p, "w");
    fputs("this is a text file, not a database\n", f);
    fclose(f);
    expect_open_error(p, "is not a warplens session");
    snprintf(p, sizeof p, "%s/other.db", dir);
    make_db(p, "CREATE TABLE t (x);");
    expect_open_error(p, "not a warplens session");
    snprintf(p, sizeof p, "%s/wrongformat.db", dir);
    make_db(p, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('format', 'other');");
    expect_open_error(p, "not a warplens session");
    snprintf(p, sizeof p, "%s/newer.wlsession", dir);
    make_db(p, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
               " INSERT INTO meta VALUES ('format', 'warplens-session'), ('schema_version', '7');");
    expect_open_error(p, "schema version 7 is newer than this warplens reads (1)");
    snprintf(p, sizeof p, "%s/noversion.wlsession", dir);
    make_db(p, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('format', 'warplens-session');");
    expect_open_error(p, "no schema version");

    /* real sessions recorded on the H100 */
    const char *data = getenv("WARPLENS_TEST_DATA");
    const char *names[] = {"demo-h100.wlsession", "torch-h100.wlsession", "capture-h100.wlsession",
                           "killed-h100.wlsession"};
    for (int i = 0; data && i < 4; i++) {
        char err[512];
        snprintf(p, sizeof p, "%s/%s", data, names[i]);
        wl_session *s = wl_session_open(p, err, sizeof err);
        CHECK(s != NULL);
        if (!s) {
            fprintf(stderr, "  %s\n", err);
            continue;
        }
        wl_session_overview o;
        wl_session_get_overview(s, &o);
        CHECK(o.kernels > 0);
        CHECK(o.devices == 1);
        CHECK(strstr(o.device_name, "H100") != NULL);
        CHECK_EQ_INT(o.lost_total, 0);
        int killed = strstr(names[i], "killed") != NULL;
        CHECK_EQ_INT(o.complete, !killed); /* the killed run is marked incomplete */
        if (!killed) {
            CHECK(o.api_calls > 0);
            wl_kernel_summary *k;
            int n = wl_session_kernel_summaries(s, &k);
            CHECK(n > 0);
            for (int j = 0; j < n; j++) {
                CHECK(k[j].p50_ns >= k[j].min_ns && k[j].p50_ns <= k[j].p99_ns && k[j].p99_ns <= k[j].max_ns);
                CHECK(k[j].mean_launch_ns > 0); /* every kernel linked to its launch call */
            }
            free(k);
        }
        wl_session_close(s);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)!system(cmd);
    return test_report("session_open");
}
