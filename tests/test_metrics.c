/* Hardware metrics without a GPU: preset and metric-name parsing with close names, the capture ->
 * session round trip of METRIC_DEF/METRIC_RANGE records, correlation of ranges with kernels by
 * identity when both arrive in different orders, aggregation from summed counters, old sessions
 * without metric tables, and `warplens kernels` showing metrics. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/metric_agg.h"
#include "capture_builder.h"
#include "session_test_util.h"
#include "capfile/metric_spec.h"
#include "store/session.h"
#include "store/session_metrics.h"
#include "store/session_writer.h"
#include "test.h"

static char g_dir[512];

#define T0 1700000000000000000ull
#define FFMA "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"

static int has(char names[][WL_METRIC_NAME_MAX], int n, const char *want)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], want))
            return 1;
    return 0;
}

static void test_parse(void)
{
    char names[WL_METRICS_MAX][WL_METRIC_NAME_MAX], err[512];
    int n = wl_metrics_expand("memory", names, WL_METRICS_MAX, err, sizeof err);
    /* time + 5 memory metrics + dram cycles + 2 L1 + 2 L2 denominators */
    CHECK_EQ_INT(n, 11);
    CHECK_EQ_STR(names[0], WL_METRIC_GPU_TIME);
    CHECK(has(names, n, "lts__t_sectors_lookup_miss.sum"));
    CHECK(has(names, n, "dram__cycles_elapsed.avg"));
    int d = wl_metrics_expand("default", names, WL_METRICS_MAX, err, sizeof err);
    CHECK_EQ_INT(d, 25); /* 25 metrics: 4 passes on GH100 (measured with the host API) */
    /* presets and names mixed, duplicates once */
    n = wl_metrics_expand("occupancy, dram__bytes_read.sum,occupancy", names, WL_METRICS_MAX, err, sizeof err);
    CHECK_EQ_INT(n, 5);
    CHECK(has(names, n, "sm__cycles_active.sum"));
    CHECK_EQ_INT(wl_metrics_expand("memroy", names, WL_METRICS_MAX, err, sizeof err), -1);
    CHECK(strstr(err, "did you mean memory") != NULL);
    CHECK_EQ_INT(wl_metrics_expand("l2_hit_pct", names, WL_METRICS_MAX, err, sizeof err), -1);
    CHECK(strstr(err, "lts__t_sector_hit_rate.pct") != NULL);
    CHECK_EQ_INT(wl_metrics_expand(" , ", names, WL_METRICS_MAX, err, sizeof err), -1);
    CHECK_EQ_INT(wl_metrics_expand("dram__bytes;x", names, WL_METRICS_MAX, err, sizeof err), -1);
    CHECK(strstr(err, "not a metric name") != NULL);

    /* close names as the recorder computes them over a chip's base metrics */
    const char *base[] = {"dram__bytes_read", "dram__bytes_write", "dram__cycles_elapsed", "lts__t_sectors",
                          "sm__warps_active", "gpu__time_duration"};
    size_t out[3];
    int nc = wl_close_names("dram__byte_read", base, 6, out, 3);
    CHECK(nc >= 2);
    CHECK_EQ_STR(base[out[0]], "dram__bytes_read");
    CHECK_EQ_INT(wl_close_names("zzzz", base, 6, out, 3), 0);
    CHECK_EQ_INT(wl_edit_distance("kitten", "sitting", 10), 3);
}

static void test_aggregation(void)
{
    const char *names[] = {WL_METRIC_GPU_TIME, "dram__bytes_read.sum", "dram__bytes_write.sum",
                           "lts__t_sector_hit_rate.pct", "lts__t_sectors_lookup_hit.sum",
                           "lts__t_sectors_lookup_miss.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
                           "sm__cycles_active.sum", "some__unknown.ratio"};
    wl_metric_acc a;
    wl_metric_acc_init(&a, names, 9);
    /* a short kernel with a high rate and a long one with a low rate */
    double k1[] = {1000, 1e6, 0, 100, 10, 0, 90, 1000, 10};
    double k2[] = {1e6, 1e8, 1e8, 0, 0, 990, 10, 9000, 20};
    wl_metric_acc_add(&a, k1);
    wl_metric_acc_add(&a, k2);
    wl_metric_summary s;
    wl_metric_acc_summary(&a, &s);
    double bw = (1e6 + 1e8 + 1e8) / (1000 + 1e6) * 1e9;
    CHECK(fabs(s.dram_bytes_per_s - bw) < 1e-6 * bw);
    double mean_of_ratios = (1e6 / 1000 + 2e8 / 1e6) / 2 * 1e9;
    CHECK(fabs(s.dram_bytes_per_s - mean_of_ratios) > 0.1 * bw); /* the two really differ here */
    CHECK(fabs(s.l2_hit_pct - 1.0) < 1e-9);                       /* 10 hits of 1000 sectors */
    CHECK(fabs(s.occupancy_pct - (90 * 1000 + 10 * 9000) / 10000.0) < 1e-9);
    CHECK(fabs(wl_metric_acc_value(&a, 8) - (10 * 1000 + 20 * 1e6) / (1000 + 1e6)) < 1e-9); /* by time */
    CHECK(fabs(s.gpu_time_ns - 1001000) < 1e-9);
    CHECK(isnan(s.fp32_flop));
    CHECK_EQ_INT((int)a.kernels, 2);
}

static void add_kernel(capbuf *b, uint32_t name, uint32_t corr, uint64_t start, uint64_t dur, uint32_t stream,
                       int grid)
{
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.start = start;
    k.end = start + dur;
    k.correlation_id = corr;
    k.stream_id = stream;
    k.grid_x = grid, k.grid_y = k.grid_z = 1;
    k.block_x = 256, k.block_y = k.block_z = 1;
    k.registers_per_thread = 32;
    k.name_str = name;
    k.carveout_requested = 0xff;
    cb_record(b, WLCAP_KERNEL, &k, sizeof k);
}

/* values: time, read, write, l2 pct, l2 hit, l2 miss, occ pct, sm cycles, ffma (9: two chunks) */
static void add_range(capbuf *b, uint64_t index, uint32_t corr, const double *v)
{
    for (uint32_t first = 0; first < 9; first += WLCAP_METRIC_CHUNK) {
        wlcap_metric_range r;
        memset(&r, 0, sizeof r);
        r.range_index = index;
        r.correlation_id = corr;
        r.first_metric = first;
        r.count = 9 - first < WLCAP_METRIC_CHUNK ? 9 - first : WLCAP_METRIC_CHUNK;
        memcpy(r.values, v + first, r.count * sizeof(double));
        cb_record(b, WLCAP_METRIC_RANGE, &r, sizeof r);
    }
}

static const char *const MNAMES[9] = {WL_METRIC_GPU_TIME, "dram__bytes_read.sum", "dram__bytes_write.sum",
                                      "lts__t_sector_hit_rate.pct", "lts__t_sectors_lookup_hit.sum",
                                      "lts__t_sectors_lookup_miss.sum",
                                      "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__cycles_active.sum",
                                      FFMA};

/* Three kernels of two sizes on three streams, a graph launch of two kernels, and one range whose
 * launch is unknown; ranges come before the kernels and in a different order. */
static void build(capbuf *b)
{
    cb_init(b, 4242, T0);
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = 4242;
    p.start_ns = T0;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    cb_record(b, WLCAP_PROCESS, &p, sizeof p);
    for (uint32_t i = 0; i < 9; i++) {
        wlcap_metric_def d = {i, cb_string(b, MNAMES[i]), cb_string(b, "byte"), 0, 0, 3, WLCAP_METRIC_REPLAY_KERNEL, 0};
        cb_record(b, WLCAP_METRIC_DEF, &d, sizeof d);
    }
    double big1[] = {2000000, 4e9, 4e9, 50, 500, 500, 80, 1e6, 0};
    double big2[] = {1000000, 1e9, 1e9, 90, 900, 100, 60, 3e6, 0};
    double small[] = {5000, 1e6, 0, 0, 0, 0, 25, 1e4, 1048576};
    double graph[] = {100, 1, 1, 0, 0, 0, 1, 1, 0};
    add_range(b, 0, 103, big2); /* ranges: call 103 first, then 101, then 102 */
    add_range(b, 1, 101, big1);
    add_range(b, 2, 102, small);
    add_range(b, 3, 200, graph);
    add_range(b, 4, 200, graph);
    add_range(b, 5, 0, graph);
    wlcap_dropped un = {1, WLCAP_DROP_METRICS, 0, 1, 0};
    cb_record(b, WLCAP_DROPPED, &un, sizeof un);
    uint32_t copy = cb_string(b, "copy_kernel"), fma = cb_string(b, "fma_kernel"), g = cb_string(b, "graph_kernel");
    add_kernel(b, fma, 102, T0 + 1000, 5000, 8, 1);
    add_kernel(b, copy, 101, T0 + 10000, 2000000, 7, 4096);
    add_kernel(b, copy, 103, T0 + 3000000, 1000000, 9, 2048);
    add_kernel(b, g, 200, T0 + 5000000, 100, 7, 1);
    add_kernel(b, g, 200, T0 + 5001000, 100, 7, 1);
    add_kernel(b, fma, 104, 0, 0, 8, 1); /* replayed: CUPTI gives it no timestamps */
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = T0 + 9000000;
    e.reason = WLCAP_END_EXIT;
    cb_record(b, WLCAP_END, &e, sizeof e);
}

static int run_contains(const char *cmd, const char *needle)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, p))
        if (strstr(line, needle))
            found = 1;
    pclose(p);
    if (!found)
        fprintf(stderr, "'%s' printed no line with '%s'\n", cmd, needle);
    return found;
}

static void test_roundtrip(void)
{
    capbuf b;
    build(&b);
    char out[700], err[512];
    int rc = test_capture_session(&b, g_dir, "m", out, sizeof out, err, sizeof err);
    free(b.data);
    if (rc != 0) {
        fprintf(stderr, "import: %s\n", err);
        CHECK(0);
        return;
    }
    sqlite3 *db;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM metric"), 9);
    CHECK_EQ_INT(test_sql_int(db, "SELECT num_passes FROM metric_config WHERE pid = 4242"), 3);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel_metric"), 6 * 9);
    /* identity: each range's values sit on the kernel with its correlation id, whatever the order */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel_metric km JOIN kernel k ON k.id = km.kernel_id"
                       " WHERE k.correlation_id != km.correlation_id"),
                 0);
    CHECK_EQ_INT(test_sql_int(db, "SELECT k.grid_x FROM kernel_metric km JOIN kernel k ON k.id = km.kernel_id JOIN metric m"
                       " ON m.id = km.metric_id WHERE m.name = 'dram__bytes_read.sum' AND km.value = 4e9"),
                 4096);
    CHECK_EQ_INT(test_sql_int(db, "SELECT k.stream_id FROM kernel_metric km JOIN kernel k ON k.id = km.kernel_id JOIN metric m"
                       " ON m.id = km.metric_id WHERE m.name = '" FFMA "' AND km.value = 1048576"),
                 8);
    /* a graph launch's two kernels share a correlation id: not guessed; the unknown one neither */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(DISTINCT range_index) FROM kernel_metric WHERE kernel_id IS NULL"), 3);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count FROM lost WHERE source = 'metric_unattributed'"), 1);
    /* kernel replay: a kernel without timestamps is CUPTI's rule, not a lost record */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM metric_config WHERE replay = 'kernel'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel WHERE has_timestamps = 0"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM lost WHERE source = 'kernel_no_timestamp'"), 0);
    sqlite3_close(db);

    wl_session *s = wl_session_open(out, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_metric_set m;
    CHECK(wl_session_metrics(s, WL_METRICS_BY_NAME, &m) == 0);
    CHECK_EQ_INT(m.n, 9);
    CHECK_EQ_INT(m.max_passes, 3);
    CHECK_EQ_INT(m.kernel_replay, 1);
    CHECK_EQ_INT((int)m.ranges, 6);
    CHECK_EQ_INT((int)m.unlinked, 3);
    CHECK_EQ_INT(m.ngroups, 2);
    /* the copy kernel's two calls: bandwidth from summed bytes over summed time */
    const wl_metric_acc *copy = NULL;
    for (int i = 0; i < m.ngroups; i++)
        if (m.accs[i].kernels == 2)
            copy = &m.accs[i];
    CHECK(copy != NULL);
    if (copy) {
        wl_metric_summary sm;
        wl_metric_acc_summary(copy, &sm);
        CHECK(fabs(sm.dram_bytes_per_s - 10e9 / 3e6 * 1e9) < 1); /* 10 GB in 3 ms */
        CHECK(fabs(sm.l2_hit_pct - 1400.0 / 2000.0 * 100) < 1e-9);
        CHECK(fabs(sm.occupancy_pct - (80 * 1e6 + 60 * 3e6) / 4e6) < 1e-9);
    }
    wl_metric_set_free(&m);
    wl_session_close(s);

    const char *bin = getenv("WARPLENS_BIN");
    if (bin) {
        char cmd[1600];
        snprintf(cmd, sizeof cmd, "'%s' kernels '%s'", bin, out);
        CHECK(run_contains(cmd, "Hardware metrics per kernel name"));
        CHECK(run_contains(cmd, "3333.3")); /* copy_kernel DRAM GB/s = 10 GB / 3 ms */
        CHECK(run_contains(cmd, "could not be tied to one kernel"));
        snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --json", bin, out);
        CHECK(run_contains(cmd, "\"dram_bytes_per_s\":3333333333333.33"));
        snprintf(cmd, sizeof cmd, "'%s' kernel '%s' copy_kernel", bin, out);
        CHECK(run_contains(cmd, "hardware metrics (3 replay passes"));
        CHECK(run_contains(cmd, "all 2"));
    }
}

static void test_hostile(void)
{
    capbuf b;
    double v[9] = {0};
    cb_init(&b, 1, T0);
    add_range(&b, 0, 1, v); /* values before their definitions */
    test_expect_import_error(&b, g_dir, "nodef", "before its metric_def");
    free(b.data);

    cb_init(&b, 1, T0);
    wlcap_metric_range r;
    memset(&r, 0, sizeof r);
    r.count = 9;
    cb_record(&b, WLCAP_METRIC_RANGE, &r, sizeof r);
    test_expect_import_error(&b, g_dir, "count", "offset 32");
    free(b.data);

    cb_init(&b, 1, T0);
    wlcap_metric_def d = {300, cb_string(&b, "x__y.sum"), 0, 0, 0, 1, 0, 0};
    cb_record(&b, WLCAP_METRIC_DEF, &d, sizeof d);
    test_expect_import_error(&b, g_dir, "id", "metric id 300");
    free(b.data);

    /* owner records: an unknown kind, a part past the call's parts */
    cb_init(&b, 1, T0);
    wlcap_metric_owner o = {0, 0, 7, WLCAP_OWNER_KIND_COUNT, WLCAP_MATCH_ORDER, 0, 1};
    cb_record(&b, WLCAP_METRIC_OWNER, &o, sizeof o);
    test_expect_import_error(&b, g_dir, "owner_kind", "metric_owner record at offset 32");
    free(b.data);
    cb_init(&b, 1, T0);
    o.kind = WLCAP_OWNER_MEMCPY;
    o.part = 2, o.parts = 2;
    cb_record(&b, WLCAP_METRIC_OWNER, &o, sizeof o);
    test_expect_import_error(&b, g_dir, "owner_part", "part 2 of 2");
    free(b.data);
}

/* Sessions recorded before metrics existed have no metric tables: no metrics, no error. */
static void test_old_session(void)
{
    char path[600];
    wl_session *s = test_open_data_session("demo-h100.wlsession", path, sizeof path);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_metric_set m;
    CHECK(wl_session_metrics(s, WL_METRICS_BY_NAME, &m) == 0);
    CHECK_EQ_INT(m.n, 0);
    wl_metric_set_free(&m);
    wl_session_close(s);
}

/* A real session: the demo under `--metrics default` on the H100 (4 passes, kernel replay; two
 * worker threads on two streams with a scope and NVTX range per batch, plus graph replays). */
static void test_h100_session(void)
{
    char path[600];
    wl_session *s = test_open_data_session("metrics-h100.wlsession", path, sizeof path);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_metric_set m;
    CHECK(wl_session_metrics(s, WL_METRICS_BY_NAME, &m) == 0);
    CHECK_EQ_INT(m.n, 25);
    CHECK_EQ_INT(m.max_passes, 4);
    CHECK_EQ_INT(m.kernel_replay, 1);
    CHECK_EQ_INT((int)m.ranges, 48); /* 2 threads x 8 batches x 3 kernels; graph launches unprofiled */
    CHECK_EQ_INT((int)m.unlinked, 0);
    CHECK_EQ_INT(m.ngroups, 3);
    int ffma = -1;
    for (int i = 0; i < m.n; i++)
        if (!strcmp(m.names[i], FFMA))
            ffma = i;
    CHECK(ffma >= 0);
    /* analytical FFMA counts per launch, exactly: tiled_matmul 512^3, scale_bias one per element of
     * 512^2, block_sum none; the three names' sums over 16 launches each */
    int seen = 0;
    for (int g = 0; g < m.ngroups && ffma >= 0; g++) {
        const wl_metric_acc *a = &m.accs[g];
        CHECK_EQ_INT((int)a->kernels, 16);
        double v = wl_metric_acc_value(a, ffma);
        seen |= (v == 16.0 * 512 * 512 * 512) << 0 | (v == 16.0 * 512 * 512) << 1 | (v == 0) << 2;
    }
    CHECK_EQ_INT(seen, 7);
    wl_metric_set_free(&m);
    wl_session_close(s);
    /* replayed kernels carry no timestamps: CUPTI's rule under kernel replay, not a lost record */
    sqlite3 *db;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel WHERE has_timestamps = 0"), 48);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM lost"), 0);
    /* each batch scope's three kernels have metrics (test_ranges_cli.sh checks the range views) */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM (SELECT k.scope_id, count(DISTINCT km.kernel_id) AS c FROM kernel_metric"
                       " km JOIN kernel k ON k.id = km.kernel_id GROUP BY k.scope_id) WHERE c = 3"),
                 16);
    sqlite3_close(db);
}

int main(void)
{
    const char *base = getenv("WARPLENS_BUILD_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/test_metrics.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_parse();
    test_aggregation();
    test_roundtrip();
    test_hostile();
    test_old_session();
    test_h100_session();
    if (!test_failed_) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", g_dir);
    }
    return test_report("test_metrics");
}
