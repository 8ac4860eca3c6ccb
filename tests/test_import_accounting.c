/* What the lossless-capture work changed on the session side, on crafted captures (no GPU):
 *  - CUDA graph launches at scale: 10 launches of a 10,000-node graph (all kernels of a launch
 *    share its correlation id) import with every kernel tied to its launch call; the link that
 *    once counted a launch's kernels per kernel (quadratic in the nodes) is gone;
 *  - losses counted once: a refused buffer request and the records CUPTI dropped for it are one
 *    loss, not two (older recorders wrote both), and the totals say so;
 *  - the recorder's STAT figures land in recorder_stat, unknown names included. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session_test_util.h"

static char g_dir[] = "/tmp/wl_test_accounting_XXXXXX";

static void process(capbuf *b, uint32_t pid)
{
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.start_ns = 1000000000ull;
    p.record_mask = WL_RECORD_ALL;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    cb_record(b, WLCAP_PROCESS, &p, sizeof p);
}

static void end(capbuf *b, uint64_t t)
{
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = t;
    e.reason = WLCAP_END_EXIT;
    cb_record(b, WLCAP_END, &e, sizeof e);
}

static void test_graph_launches(void)
{
    enum { LAUNCHES = 10, NODES = 10000 };
    capbuf b;
    cb_init(&b, 4242, 1000000000ull);
    process(&b, 4242);
    uint32_t name = cb_string(&b, "_Z12empty_kerneli");
    uint64_t t = 2000000000ull;
    for (uint32_t l = 0; l < LAUNCHES; l++) {
        wlcap_api a;
        memset(&a, 0, sizeof a);
        a.start = t;
        a.end = t + 2000;
        a.cbid = 514; /* cuGraphLaunch */
        a.tid = 4243 + l % 2;
        a.correlation_id = 100 + l;
        a.domain = 2;
        cb_record(&b, WLCAP_API, &a, sizeof a);
        for (uint32_t n = 0; n < NODES; n++) {
            wlcap_kernel k;
            memset(&k, 0, sizeof k);
            k.correlation_id = 100 + l;
            k.name_str = name;
            k.stream_id = 13;
            k.grid_x = k.grid_y = k.grid_z = 1;
            k.block_x = 32;
            k.block_y = k.block_z = 1;
            k.graph_id = 7;
            k.graph_node_id = n + 1;
            k.carveout_requested = 0xff;
            k.queued = t + 100;
            k.submitted = t + 200;
            k.start = t + 1000 + n * 1000ull;
            k.end = k.start + 800;
            cb_record(&b, WLCAP_KERNEL, &k, sizeof k);
        }
        t += NODES * 1000ull + 10000;
    }
    end(&b, t);
    char out[700], err[512] = "";
    CHECK_EQ_INT(test_capture_session(&b, g_dir, "graph", out, sizeof out, err, sizeof err), 0);
    free(b.data);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel"), LAUNCHES * NODES);
    /* every kernel tied to its own launch call and that call's thread */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel k JOIN api_call a ON a.id = k.api_id"
                                  " WHERE a.correlation_id = k.correlation_id AND k.tid = a.tid"),
                 LAUNCHES * NODES);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(DISTINCT graph_node_id) FROM kernel"), NODES);
    sqlite3_close(db);
}

static void test_lost_once(void)
{
    capbuf b;
    cb_init(&b, 4343, 1000000000ull);
    process(&b, 4343);
    /* an older recorder: 700 refused requests, for which CUPTI dropped 700 records */
    wlcap_dropped d = {700, WLCAP_DROP_BUFFER, 0, 0, 0};
    cb_record(&b, WLCAP_DROPPED, &d, sizeof d);
    d = (wlcap_dropped){700, WLCAP_DROP_CUPTI, 0, 0, 0};
    cb_record(&b, WLCAP_DROPPED, &d, sizeof d);
    d = (wlcap_dropped){5, WLCAP_DROP_API, 0, 0, 0};
    cb_record(&b, WLCAP_DROPPED, &d, sizeof d);
    d = (wlcap_dropped){3, WLCAP_DROP_PCSAMPLING, 0, WLCAP_PCS_LOST_OVERFLOWS, 0};
    cb_record(&b, WLCAP_DROPPED, &d, sizeof d);
    /* a newer one's figures, one of them unknown to this reader */
    const char *names[] = {"buffer_requests", "buffers_mapped_on_demand", "a_figure_from_the_future"};
    for (int i = 0; i < 3; i++) {
        wlcap_stat st = {cb_string(&b, names[i]), 0, 1000u + (uint64_t)i};
        cb_record(&b, WLCAP_STAT, &st, sizeof st);
    }
    end(&b, 3000000000ull);
    char out[700], err[512] = "";
    wl_import_stats is;
    char cap[700];
    snprintf(cap, sizeof cap, "%s/lost.wlcap", g_dir);
    snprintf(out, sizeof out, "%s/lost.wlsession", g_dir);
    CHECK_EQ_INT(cb_write(&b, cap), 0);
    free(b.data);
    CHECK_EQ_INT(test_import_capture(cap, out, &is, err, sizeof err), 0);
    CHECK_EQ_INT(is.lost, 705); /* the import's own count: records only */
    wl_session *s = wl_session_open(out, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_session_overview o;
    wl_session_get_overview(s, &o);
    CHECK_EQ_INT(o.lost_total, 705);
    wl_lost_row *r;
    int n = wl_session_lost(s, &r);
    CHECK_EQ_INT(n, 4);
    for (int i = 0; i < n; i++) {
        if (!strcmp(r[i].source, "buffer_refused"))
            CHECK_EQ_STR(r[i].unit, "requests");
        else if (!strcmp(r[i].source, "pc_buffer_overflows"))
            CHECK_EQ_STR(r[i].unit, "times");
        else
            CHECK_EQ_STR(r[i].unit, "records");
        CHECK_EQ_INT(wl_lost_counts_records(r[i].source), !strcmp(r[i].unit, "records"));
    }
    free(r);
    wl_session_close(s);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT value FROM recorder_stat WHERE name = 'buffers_mapped_on_demand'"), 1001);
    CHECK_EQ_INT(test_sql_int(db, "SELECT value FROM recorder_stat WHERE name = 'a_figure_from_the_future'"), 1002);
    sqlite3_close(db);
}

int main(void)
{
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_graph_launches();
    test_lost_once();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return test_report("import_accounting");
}
