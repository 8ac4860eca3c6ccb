/* Store round trip: a capture file with every record type -> session database -> reader. Checks
 * the derived columns (threads, warps, durations, queue delays, bandwidth), the links the import
 * computes (kernel -> API call -> thread, scope by external correlation and by time, graph
 * replays), NVTX pairing, thread-name precedence, lost-record accounting, completeness, and the
 * CLI's `import`, `stats` and `info` on the result. */
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture_builder.h"
#include "session_test_util.h"
#include "store/session.h"
#include "store/session_writer.h"
#include "test.h"

#define T0 1700000000000000000ull
#define PID 4242u
#define MAIN_TID 4242u
#define WORKER_TID 4243u

static char g_dir[512];

static const char *path_in_dir(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
    return buf;
}

static void add_kernel(capbuf *b, uint32_t name, uint32_t corr, uint64_t start, uint64_t dur, uint32_t stream,
                       uint32_t graph)
{
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.queued = start - 5000;
    k.submitted = start - 600;
    k.start = start;
    k.end = start + dur;
    k.correlation_id = corr;
    k.stream_id = stream;
    k.graph_id = graph;
    k.graph_node_id = graph ? 77 : 0;
    k.grid_x = 64, k.grid_y = 2, k.grid_z = 1;
    k.block_x = 96, k.block_y = 1, k.block_z = 1; /* 3 warps per block */
    k.registers_per_thread = 32;
    k.static_smem = 4096;
    k.dynamic_smem = 1024;
    k.name_str = name;
    k.carveout_requested = 0xff;
    cb_record(b, WLCAP_KERNEL, &k, sizeof k);
}

static void add_api(capbuf *b, uint32_t cbid, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end)
{
    wlcap_api a;
    memset(&a, 0, sizeof a);
    a.start = start;
    a.end = end;
    a.cbid = cbid;
    a.tid = tid;
    a.correlation_id = corr;
    a.domain = WLCAP_API_DRIVER;
    cb_record(b, WLCAP_API, &a, sizeof a);
}

/* A complete capture of one process; `truncate_at` > 0 cuts the file there. */
static void build_capture(capbuf *b, int with_end)
{
    cb_init(b, PID, T0);
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = PID;
    p.ppid = 1;
    p.start_ns = T0;
    p.rank = 3, p.local_rank = 1, p.world_size = 8, p.ompi_rank = -1, p.slurm_procid = -1;
    p.hostname_str = cb_string(b, "testhost");
    p.cmdline_str = cb_string(b, "./app --flag 'a b'");
    p.record_mask = WL_RECORD_ALL;
    cb_record(b, WLCAP_PROCESS, &p, sizeof p);

    wlcap_device d;
    memset(&d, 0, sizeof d);
    d.name_str = cb_string(b, "NVIDIA H100 80GB HBM3");
    d.cc_major = 9, d.sm_count = 132, d.warp_size = 32, d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048, d.max_blocks_per_sm = 32, d.regs_per_sm = 65536, d.regs_per_block = 65536;
    d.smem_per_sm = 233472, d.smem_per_block = 49152, d.smem_per_block_optin = 232448;
    d.reserved_smem_per_block = 1024;
    cb_record(b, WLCAP_DEVICE, &d, sizeof d);

    uint32_t launch = cb_string(b, "cuLaunchKernel"), graph = cb_string(b, "cuGraphLaunch");
    uint32_t memcpy_name = cb_string(b, "cuMemcpyHtoDAsync");
    wlcap_api_name an[3] = {{WLCAP_API_DRIVER, 307, launch, 0}, {WLCAP_API_DRIVER, 514, graph, 0},
                            {WLCAP_API_DRIVER, 280, memcpy_name, 0}};
    for (int i = 0; i < 3; i++)
        cb_record(b, WLCAP_API_NAME, &an[i], sizeof an[i]);

    uint32_t kname = cb_string(b, "_Z6kernelPfi"), gname = cb_string(b, "graph_node");
    /* scope 1 on the main thread, 3 launches inside (tagged by external correlation) */
    wlcap_scope sb = {T0 + 1000, 1, 0, MAIN_TID, WLCAP_SCOPE_BEGIN, cb_string(b, "batch-1"), 0};
    cb_record(b, WLCAP_SCOPE, &sb, sizeof sb);
    for (uint32_t i = 0; i < 3; i++) {
        add_api(b, 307, MAIN_TID, 10 + i, T0 + 2000 + i * 10000, T0 + 6000 + i * 10000);
        wlcap_extcorr e = {1, 10 + i, 3};
        cb_record(b, WLCAP_EXTCORR, &e, sizeof e);
        add_kernel(b, kname, 10 + i, T0 + 20000 + i * 10000, 8000, 7, 0);
    }
    wlcap_scope se = {T0 + 40000, 1, 0, MAIN_TID, WLCAP_SCOPE_END, 0, 0};
    cb_record(b, WLCAP_SCOPE, &se, sizeof se);
    /* scope 2 on the worker, one launch, no external correlation: found by time on the thread */
    wlcap_scope wb = {T0 + 50000, 2, 0, WORKER_TID, WLCAP_SCOPE_BEGIN, cb_string(b, "worker-scope"), 0};
    cb_record(b, WLCAP_SCOPE, &wb, sizeof wb);
    add_api(b, 307, WORKER_TID, 20, T0 + 51000, T0 + 55000);
    add_kernel(b, kname, 20, T0 + 60000, 4000, 8, 0);
    wlcap_scope we = {T0 + 70000, 2, 0, WORKER_TID, WLCAP_SCOPE_END, 0, 0};
    cb_record(b, WLCAP_SCOPE, &we, sizeof we);
    /* two graph replays of two kernels each */
    for (uint32_t r = 0; r < 2; r++) {
        add_api(b, 514, MAIN_TID, 30 + r, T0 + 80000 + r * 20000, T0 + 83000 + r * 20000);
        for (uint32_t k = 0; k < 2; k++)
            add_kernel(b, gname, 30 + r, T0 + 85000 + r * 20000 + k * 5000, 3000, 9, 5);
    }
    /* a kernel whose timestamps were lost */
    wlcap_kernel lost_k;
    memset(&lost_k, 0, sizeof lost_k);
    lost_k.name_str = kname;
    lost_k.correlation_id = 99;
    lost_k.grid_x = lost_k.grid_y = lost_k.grid_z = 1;
    lost_k.block_x = lost_k.block_y = lost_k.block_z = 32;
    lost_k.carveout_requested = 0xff;
    cb_record(b, WLCAP_KERNEL, &lost_k, sizeof lost_k);
    /* a 1 MiB pinned HtoD copy taking 40 us -> 26.2 GB/s */
    add_api(b, 280, MAIN_TID, 40, T0 + 130000, T0 + 131000);
    wlcap_memcpy m;
    memset(&m, 0, sizeof m);
    m.bytes = 1 << 20;
    m.start = T0 + 132000;
    m.end = m.start + 40000;
    m.correlation_id = 40;
    m.copy_kind = 1;  /* HtoD */
    m.src_kind = 2;   /* pinned */
    m.dst_kind = 3;   /* device */
    m.flags = 1;      /* async */
    cb_record(b, WLCAP_MEMCPY, &m, sizeof m);
    /* NVTX: a range (start/end by id), a range never closed, an instant */
    uint32_t dom = cb_string(b, "my-domain");
    wlcap_marker mk = {T0 + 500, 1, WLCAP_MARK_START, MAIN_TID, cb_string(b, "outer"), dom, 0};
    cb_record(b, WLCAP_MARKER, &mk, sizeof mk);
    wlcap_marker open_mk = {T0 + 600, 2, WLCAP_MARK_START, MAIN_TID, cb_string(b, "never-closed"), 0, 0};
    cb_record(b, WLCAP_MARKER, &open_mk, sizeof open_mk);
    wlcap_marker inst = {T0 + 700, 3, WLCAP_MARK_INSTANT, MAIN_TID, cb_string(b, "mark"), 0, 0};
    cb_record(b, WLCAP_MARKER, &inst, sizeof inst);
    wlcap_marker mend = {T0 + 150000, 1, WLCAP_MARK_END, MAIN_TID, 0, 0, 0};
    cb_record(b, WLCAP_MARKER, &mend, sizeof mend);
    /* sync wait of 10 us */
    wlcap_sync y;
    memset(&y, 0, sizeof y);
    y.start = T0 + 160000;
    y.end = T0 + 170000;
    y.type = 3; /* stream */
    y.event_id = 0xffffffffu;
    cb_record(b, WLCAP_SYNC, &y, sizeof y);
    /* thread names: the OS name of the worker is replaced by the API name, never the reverse */
    wlcap_thread t1 = {WORKER_TID, cb_string(b, "python3"), WLCAP_THREAD_OS, 0};
    wlcap_thread t2 = {WORKER_TID, cb_string(b, "loader"), WLCAP_THREAD_API, 0};
    wlcap_thread t3 = {WORKER_TID, cb_string(b, "python3-late"), WLCAP_THREAD_OS, 0};
    cb_record(b, WLCAP_THREAD, &t1, sizeof t1);
    cb_record(b, WLCAP_THREAD, &t2, sizeof t2);
    cb_record(b, WLCAP_THREAD, &t3, sizeof t3);
    /* `--check-occupancy`: the driver's answers for two launches (96 threads, 32 registers, 4 KiB +
     * 1 KiB shared memory on an H100: 21 blocks per SM, limited by registers and warps) */
    wlcap_occ_check oc1 = {10, 96, 1024, 21, 32, 0, {0, 0}};
    wlcap_occ_check oc2 = {20, 96, 1024, 20, 32, 0, {0, 0}}; /* a wrong answer, to see it flagged */
    cb_record(b, WLCAP_OCC_CHECK, &oc1, sizeof oc1);
    cb_record(b, WLCAP_OCC_CHECK, &oc2, sizeof oc2);
    /* throughput annotations: launch 10 did 2 GFLOP and 1 MB; scope 1 (3 kernels, 24 us) 6 GFLOP, 24 MB */
    wlcap_annotation an_k = {2e9, 1e6, 0, WLCAP_ANNOTATE_KERNEL, 10, MAIN_TID, 0};
    wlcap_annotation an_s1 = {4e9, 16e6, 1, WLCAP_ANNOTATE_SCOPE, 0, MAIN_TID, 0};
    wlcap_annotation an_s2 = {2e9, 8e6, 1, WLCAP_ANNOTATE_SCOPE, 0, MAIN_TID, 0};
    cb_record(b, WLCAP_ANNOTATION, &an_k, sizeof an_k);
    cb_record(b, WLCAP_ANNOTATION, &an_s1, sizeof an_s1);
    cb_record(b, WLCAP_ANNOTATION, &an_s2, sizeof an_s2);
    /* `--stalls`: one reason of device 0 and samples of launch 10 (also mutated below) */
    wlcap_stall_reason sr = {0, 3, cb_string(b, "smsp__pcsamp_warps_issue_stalled_wait"), 14};
    cb_record(b, WLCAP_STALL_REASON, &sr, sizeof sr);
    wlcap_kernel_stall kst = {10, 0, 3, 0, 42};
    cb_record(b, WLCAP_KERNEL_STALL, &kst, sizeof kst);
    wlcap_dropped dr = {5, WLCAP_DROP_CUPTI, 0, 0, 0};
    cb_record(b, WLCAP_DROPPED, &dr, sizeof dr);
    /* PM sampling: a status line, two metrics and two windows of 100 us over the first launch */
    wlcap_pm_metric_def pst = {0, WLCAP_PM_STATUS, 0, cb_string(b, "PM sampling on GPU 0"), 0, WLCAP_PM_ON, 0};
    cb_record(b, WLCAP_PM_METRIC_DEF, &pst, sizeof pst);
    wlcap_pm_metric_def pd0 = {100000, 0, 0, cb_string(b, "dram__bytes_read.sum"), cb_string(b, "byte"), 0, 0};
    wlcap_pm_metric_def pd1 = {100000, 1, 0, cb_string(b, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"),
                               cb_string(b, "percent"), 0, 0};
    cb_record(b, WLCAP_PM_METRIC_DEF, &pd0, sizeof pd0);
    cb_record(b, WLCAP_PM_METRIC_DEF, &pd1, sizeof pd1);
    for (uint32_t i = 0; i < 2; i++) {
        wlcap_pm_sample ps = {T0 + i * 100000, T0 + (i + 1) * 100000, i, 0, 0, 2, 0, {4096.0 * (i + 1), 50.0}};
        cb_record(b, WLCAP_PM_SAMPLE, &ps, sizeof ps);
    }
    if (with_end) {
        wlcap_end e;
        memset(&e, 0, sizeof e);
        e.end_ns = T0 + 200000;
        e.reason = WLCAP_END_EXIT;
        cb_record(b, WLCAP_END, &e, sizeof e);
    }
}

static void test_full_roundtrip(void)
{
    char cap[600], out[600], err[512];
    capbuf b;
    build_capture(&b, 1);
    CHECK(cb_write(&b, path_in_dir("full.wlcap", cap, sizeof cap)) == 0);
    free(b.data);
    wl_import_stats st;
    CHECK(test_import_capture(cap, path_in_dir("full.wlsession", out, sizeof out), &st, err, sizeof err) == 0);
    CHECK_EQ_INT(st.kernels, 9);
    CHECK_EQ_INT(st.api_calls, 7);
    CHECK_EQ_INT(st.complete, 1);
    CHECK(access(out, R_OK) == 0);

    sqlite3 *db;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT threads FROM kernel WHERE correlation_id = 10"), 64 * 2 * 96);
    CHECK_EQ_INT(test_sql_int(db, "SELECT warps FROM kernel WHERE correlation_id = 10"), 128 * 3);
    CHECK_EQ_INT(test_sql_int(db, "SELECT duration_ns FROM kernel WHERE correlation_id = 10"), 8000);
    CHECK_EQ_INT(test_sql_int(db, "SELECT queue_delay_ns FROM kernel WHERE correlation_id = 10"), 4400);
    CHECK_EQ_INT(test_sql_int(db, "SELECT submit_delay_ns FROM kernel WHERE correlation_id = 10"), 600);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel WHERE api_id IS NULL AND has_timestamps = 1"), 0);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernels k JOIN scope s ON s.pid = k.pid AND s.scope_id = k.scope_id"
                       " WHERE s.name = 'batch-1'"), 3);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernels k JOIN scope s ON s.pid = k.pid AND s.scope_id = k.scope_id"
                       " WHERE s.name = 'worker-scope' AND k.tid = 4243"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM (SELECT api_id FROM kernel WHERE graph_id = 5 GROUP BY api_id"
                       " HAVING count(*) = 2)"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM api_call WHERE category = 'graph_launch'"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernels WHERE name = 'kernel(float*, int)' AND short_name = 'kernel'"), 5);
    CHECK_EQ_INT(test_sql_int(db, "SELECT round(bandwidth_gbps * 100) FROM memcpy"), 2621);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM memcpy WHERE kind = 'HtoD' AND src_kind = 'pinned' AND is_async = 1"
                       " AND api_id IS NOT NULL AND tid = 4242"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT duration_ns FROM nvtx_range WHERE name = 'outer' AND domain = 'my-domain'"), 149500);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM nvtx_range WHERE name = 'never-closed' AND end_ns IS NULL"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM nvtx_mark WHERE name = 'mark'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT duration_ns FROM sync WHERE type = 'stream'"), 10000);
    CHECK_EQ_INT(test_sql_int(db, "SELECT name = 'loader' AND name_source = 'api' FROM thread WHERE tid = 4243"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM thread WHERE tid = 4242"), 1); /* seen only in API calls */
    CHECK_EQ_INT(test_sql_int(db, "SELECT sum(count) FROM lost WHERE source = 'cupti_dropped'"), 5);
    CHECK_EQ_INT(test_sql_int(db, "SELECT sum(count) FROM lost WHERE source = 'kernel_no_timestamp'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM pm_metric WHERE pid = 4242"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT sum(value) FROM pm_sample WHERE metric_index = 0"), 3 * 4096);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM pm_config WHERE status = 'on' AND interval_ns = 100000"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT rank * 100 + local_rank * 10 + (ompi_rank IS NULL) FROM process"), 311);
    CHECK_EQ_INT(test_sql_int(db, "SELECT value = '1' FROM meta WHERE key = 'complete'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM occupancy_check o JOIN kernel k ON k.id = o.kernel_id"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT ks.samples FROM kernel_stall ks JOIN kernel k ON k.id = ks.kernel_id"
                       " WHERE k.correlation_id = 10"), 42);
    sqlite3_close(db);

    wl_session *s = wl_session_open(out, err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        wl_session_overview o;
        wl_session_get_overview(s, &o);
        CHECK_EQ_INT(o.kernels, 9);
        CHECK_EQ_INT(o.kernels_no_timestamp, 1);
        CHECK_EQ_INT(o.lost_total, 6);
        CHECK_EQ_INT(o.complete, 1);
        wl_kernel_summary *ks;
        int n = wl_session_kernel_summaries(s, &ks);
        CHECK_EQ_INT(n, 2);
        if (n == 2) {
            CHECK_EQ_STR(ks[0].short_name, "kernel");
            CHECK_EQ_INT(ks[0].calls, 5);
            CHECK_EQ_INT(ks[0].timed_calls, 4);
            CHECK_EQ_INT(ks[0].total_ns, 28000);
            CHECK_EQ_INT(ks[0].min_ns, 4000);
            CHECK_EQ_INT(ks[0].p50_ns, 8000);
            CHECK_EQ_INT(ks[0].p99_ns, 8000);
            CHECK_EQ_INT((long long)ks[0].mean_launch_ns, 4000);
        }
        free(ks);
        wl_session_close(s);
    }

    /* the CLI reads the same session */
    char cmd[2048];
    const char *bin = getenv("WARPLENS_BIN");
    if (bin) {
        snprintf(cmd, sizeof cmd, "'%s' stats '%s' > '%s/stats.txt'", bin, out, g_dir);
        CHECK_EQ_INT(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "grep -q 'batch-1' '%s/stats.txt' && grep -q 'cupti_dropped' '%s/stats.txt'", g_dir, g_dir);
        CHECK_EQ_INT(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "'%s' import -o '%s/cli.wlsession' '%s' && '%s' info '%s/cli.wlsession' | grep -q 'rank 3'",
                 bin, g_dir, cap, bin, g_dir);
        CHECK_EQ_INT(system(cmd), 0);
        /* one check agrees, the planted wrong one is flagged and makes the exit status 1 */
        snprintf(cmd, sizeof cmd, "'%s' occupancy-check '%s' > '%s/occ.txt'", bin, out, g_dir);
        int rc = system(cmd);
        CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
        snprintf(cmd, sizeof cmd, "grep -q '2 distinct launch configurations: 1 agree with the driver, 1 differ' '%s/occ.txt'"
                 " && grep -q '^DIFFER' '%s/occ.txt'", g_dir, g_dir);
        CHECK_EQ_INT(system(cmd), 0);
        /* rates are summed counts over summed GPU time: 2e9 / 8 us and 6e9 / 24 us = 250 TFLOP/s */
        snprintf(cmd, sizeof cmd, "'%s' throughput --csv '%s' > '%s/tp.txt'", bin, out, g_dir);
        CHECK_EQ_INT(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "grep -q '^kernel,\"kernel\",fp32,1,2000000000,1000000,8000,250.0000,125.000,' '%s/tp.txt'"
                 " && grep -q '^scope,\"batch-1\",fp32,1,6000000000,24000000,24000,250.0000,1000.000,' '%s/tp.txt'",
                 g_dir, g_dir);
        int tp = system(cmd);
        if (tp != 0) {
            snprintf(cmd, sizeof cmd, "cat '%s/tp.txt' >&2", g_dir);
            (void)!system(cmd);
        }
        CHECK_EQ_INT(tp, 0);
    }
}

static void test_truncated_capture(void)
{
    char cap[600], out[600], err[512];
    capbuf b;
    build_capture(&b, 0);
    size_t cut = b.len - 10; /* the last record is cut off, as when a process is killed mid-write */
    b.len = cut;
    CHECK(cb_write(&b, path_in_dir("cut.wlcap", cap, sizeof cap)) == 0);
    free(b.data);
    wl_import_stats st;
    CHECK(test_import_capture(cap, path_in_dir("cut.wlsession", out, sizeof out), &st, err, sizeof err) == 0);
    CHECK_EQ_INT(st.complete, 0);
    CHECK(strstr(st.incomplete_reason, "ends inside a record") != NULL);
    CHECK_EQ_INT(st.kernels, 9);
    sqlite3 *db;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT value = '0' FROM meta WHERE key = 'complete'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT complete FROM process"), 0);
    sqlite3_close(db);
}

static void expect_import_error(const char *name, const void *data, size_t len, const char *needle)
{
    char cap[600], out[600], err[512] = "";
    capbuf b = {0};
    cb_put(&b, data, len);
    CHECK(cb_write(&b, path_in_dir(name, cap, sizeof cap)) == 0);
    free(b.data);
    wl_import_stats st;
    snprintf(out, sizeof out, "%s/%s.wlsession", g_dir, name);
    CHECK(test_import_capture(cap, out, &st, err, sizeof err) != 0);
    if (!strstr(err, needle))
        fprintf(stderr, "  %s: error \"%s\" lacks \"%s\"\n", name, err, needle);
    CHECK(strstr(err, needle) != NULL);
    CHECK(access(out, F_OK) != 0); /* nothing left at the destination */
}

static void test_hostile_captures(void)
{
    expect_import_error("empty", "", 0, "empty");
    expect_import_error("text", "hello, this is not a capture file at all", 40, "bad magic at offset 0");
    capbuf b;
    cb_init(&b, 1, 1);
    ((wlcap_file_header *)(void *)b.data)->version = 99;
    expect_import_error("version", b.data, b.len, "version 99 is not supported");
    free(b.data);

    cb_init(&b, 1, 1);
    wlcap_record_header huge = {WLCAP_KERNEL, 0, 0x7fffffffu};
    cb_put(&b, &huge, sizeof huge);
    expect_import_error("huge", b.data, b.len, "offset 32 claims");
    free(b.data);

    cb_init(&b, 1, 1);
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    cb_record(&b, WLCAP_KERNEL, &k, 20); /* shorter than a kernel record */
    expect_import_error("short", b.data, b.len, "kernel record at offset 32 is 20 bytes");
    free(b.data);

    cb_init(&b, 1, 1);
    k.name_str = 77; /* never defined */
    cb_record(&b, WLCAP_KERNEL, &k, sizeof k);
    expect_import_error("undefined_string", b.data, b.len, "offset 32 refers to undefined string 77");
    free(b.data);

    cb_init(&b, 1, 1);
    wlcap_string sh = {5, 1000};
    cb_record(&b, WLCAP_STRING, &sh, sizeof sh);
    expect_import_error("string_len", b.data, b.len, "length 1000 exceeds its record");
    free(b.data);
}

/* Synchronisation waits come from the sync API calls when the capture has no CUPTI sync records. */
/* b written as <name>.wlcap (b's buffer freed), imported as <name>.wlsession, opened read-only. */
static sqlite3 *import_built(capbuf *b, const char *name)
{
    char cap[600], out[600], err[512], file[64];
    snprintf(file, sizeof file, "%.40s.wlcap", name);
    CHECK(cb_write(b, path_in_dir(file, cap, sizeof cap)) == 0);
    free(b->data);
    snprintf(file, sizeof file, "%.40s.wlsession", name);
    wl_import_stats stats;
    CHECK(test_import_capture(cap, path_in_dir(file, out, sizeof out), &stats, err, sizeof err) == 0);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    return db;
}

static void test_sync_from_api(void)
{
    capbuf b;
    cb_init(&b, 99, T0);
    uint32_t ctx = cb_string(&b, "cuCtxSynchronize"), st = cb_string(&b, "cuStreamSynchronize");
    uint32_t ev = cb_string(&b, "cuEventSynchronize"), we = cb_string(&b, "cuStreamWaitEvent");
    wlcap_api_name n[4] = {{WLCAP_API_DRIVER, 1, ctx, 0}, {WLCAP_API_DRIVER, 2, st, 0},
                           {WLCAP_API_DRIVER, 3, ev, 0}, {WLCAP_API_DRIVER, 4, we, 0}};
    for (int i = 0; i < 4; i++)
        cb_record(&b, WLCAP_API_NAME, &n[i], sizeof n[i]);
    for (uint32_t i = 1; i <= 4; i++)
        add_api(&b, i, 7, 100 + i, T0 + i * 1000, T0 + i * 1000 + 500 * i);
    add_api(&b, 2, 7, 200, T0 + 9000, T0 + 9100); /* a second stream sync */
    sqlite3 *db = import_built(&b, "sync");
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM sync"), 5);
    CHECK_EQ_INT(test_sql_int(db, "SELECT duration_ns FROM sync WHERE type = 'context'"), 500);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM sync WHERE type = 'stream'"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT duration_ns FROM sync WHERE type = 'event'"), 1500);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM sync WHERE type = 'stream_wait_event' AND api_id IS NOT NULL AND tid = 7"), 1);
    sqlite3_close(db);
}

/* API calls are written in runs of up to 256 calls of one thread (session_import_api.c): THREADS
 * threads calling in turn, CALLS calls each, a name defined in the middle. Every call is written
 * once, with the name it had when it came; each thread's calls keep their order in id order;
 * consecutive ids change thread only at the end of a run: at most max_runs stretches. */
static void test_api_runs(uint32_t THREADS, uint32_t CALLS, int64_t max_runs)
{
    capbuf b;
    cb_init(&b, 98, T0);
    wlcap_api_name n[2] = {{WLCAP_API_DRIVER, 1, cb_string(&b, "cuLaunchKernel"), 0},
                           {WLCAP_API_DRIVER, 2, cb_string(&b, "cuLaunchKernelEx"), 0}};
    cb_record(&b, WLCAP_API_NAME, &n[0], sizeof n[0]);
    uint32_t corr = 0;
    for (uint32_t c = 0; c < CALLS; c++)
        for (uint32_t t = 0; t < THREADS; t++) {
            corr++;
            if (corr == 1000) /* calls of cbid 2 before: cbid_2; after: its name */
                cb_record(&b, WLCAP_API_NAME, &n[1], sizeof n[1]);
            add_api(&b, corr % 97 == 0 ? 2 : 1, 1000 + t, corr, T0 + corr * 100, T0 + corr * 100 + 50);
        }
    sqlite3 *db = import_built(&b, "runs");
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM api_call"), THREADS * CALLS);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(DISTINCT correlation_id) FROM api_call"), THREADS * CALLS);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM api_call WHERE name = 'cbid_2'"), 999 / 97);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM api_call WHERE name = 'cuLaunchKernelEx'"),
                 (int64_t)(THREADS * CALLS / 97 - 999 / 97));
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM api_call WHERE name = 'cuLaunchKernelEx'"
                                  " AND correlation_id < 1000"), 0);
    /* each thread's calls in id order are in call order */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM (SELECT start_ns, lag(start_ns) OVER (PARTITION BY tid"
                                  " ORDER BY id) p FROM api_call) WHERE start_ns < p"), 0);
    /* runs: maximal stretches of consecutive ids on one thread, none longer than 256 */
    int64_t runs = test_sql_int(db, "SELECT count(*) FROM (SELECT tid, lag(tid) OVER (ORDER BY id) p FROM api_call)"
                                    " WHERE p IS NULL OR p != tid");
    int64_t longest = test_sql_int(db, "SELECT max(n) FROM (SELECT count(*) n FROM (SELECT tid, id - row_number()"
                                       " OVER (PARTITION BY tid ORDER BY id) g FROM api_call) GROUP BY tid, g)");
    printf("api runs, %u threads: %lld runs, the longest %lld calls\n", THREADS, (long long)runs, (long long)longest);
    CHECK(runs <= max_runs); /* (two runs of one thread written one after the other read as one) */
    sqlite3_close(db);
}

/* Random corruption of a valid capture never crashes the importer (ASan/UBSan builds run this). */
static void test_mutations(void)
{
    capbuf good;
    build_capture(&good, 1);
    unsigned seed = 12345;
    int imported = 0, rejected = 0;
    for (int iter = 0; iter < 300; iter++) {
        capbuf m = {0};
        cb_put(&m, good.data, good.len);
        int flips = 1 + (int)(rand_r(&seed) % 8);
        for (int f = 0; f < flips; f++)
            m.data[32 + rand_r(&seed) % (m.len - 32)] ^= (unsigned char)(1u << (rand_r(&seed) % 8));
        if (iter % 3 == 0)
            m.len = 32 + rand_r(&seed) % (m.len - 32);
        char cap[600], out[600], err[512];
        cb_write(&m, path_in_dir("mut.wlcap", cap, sizeof cap));
        free(m.data);
        wl_import_stats st;
        if (test_import_capture(cap, path_in_dir("mut.wlsession", out, sizeof out), &st, err, sizeof err) == 0)
            imported++;
        else
            rejected++;
    }
    free(good.data);
    CHECK(imported + rejected == 300);
    printf("mutations: %d imported, %d rejected with an error\n", imported, rejected);
}

int main(void)
{
    const char *base = getenv("WARPLENS_BUILD_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/test_store_roundtrip.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_full_roundtrip();
    test_truncated_capture();
    test_sync_from_api();
    test_api_runs(8, 600, 8 * 3 + 8); /* 3 runs a thread, and the name record's flush */
    test_api_runs(300, 600, 300 * 600 / 4); /* past the 256 runs held at once: shorter runs */
    test_hostile_captures();
    test_mutations();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (!test_failed_)
        (void)!system(cmd);
    return test_report("store_roundtrip");
}
