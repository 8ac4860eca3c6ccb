/* Warp stall reasons without a GPU: classification of CUPTI's reason names, profiles (shares add
 * up to 100 %, _not_issued counts attached to their reason, totals left out), the capture ->
 * session round trip of STALL_REASON/KERNEL_STALL records (per-device reason numbering, samples
 * of one launch split over records, records before their kernels, graph launches and unknown
 * launches left unlinked, the status of a device where sampling was off, lost counts), the
 * numbers `warplens kernels --stalls|--json|--csv` and `warplens kernel` print for that session,
 * hostile records, and old sessions without stall tables. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/stall_profile.h"
#include "capture_builder.h"
#include "session_test_util.h"
#include "store/session.h"
#include "store/session_stalls.h"
#include "store/session_writer.h"
#include "test.h"

#define T0 1700000000000000000ull
#define P "smsp__pcsamp_warps_issue_stalled_"

static char g_dir[512];

static void test_names(void)
{
    CHECK_EQ_INT(wl_stall_kind(P "long_scoreboard"), WL_STALL_REASON);
    CHECK_EQ_INT(wl_stall_kind(P "long_scoreboard_not_issued"), WL_STALL_NOT_ISSUED);
    CHECK_EQ_INT(wl_stall_kind("smsp__pcsamp_sample_count"), WL_STALL_TOTAL);
    CHECK_EQ_INT(wl_stall_kind("smsp__pcsamp_dropped_samples"), WL_STALL_TOTAL);
    CHECK_EQ_STR(wl_stall_short_name(P "math_pipe_throttle"), "math_pipe_throttle");
    CHECK_EQ_STR(wl_stall_short_name("smsp__pcsamp_sample_count"), "sample_count");
    CHECK_EQ_STR(wl_stall_short_name("stall_wait"), "stall_wait"); /* unknown prefix: as CUPTI says */
    CHECK_EQ_STR(wl_stall_short_name("smsp__"), "smsp__");        /* nothing after the prefix */
}

static void test_profile(void)
{
    const char *names[] = {P "wait",  "smsp__pcsamp_sample_count", P "long_scoreboard", P "wait_not_issued",
                           P "wait",  P "selected",                P "barrier",         P "barrier_not_issued"};
    const uint64_t samples[] = {30, 1000, 60, 20, 10, 0, 0, 0};
    wl_stall_profile p;
    CHECK(wl_stall_profile_build(names, samples, 8, &p) == 0);
    CHECK_EQ_INT((long long)p.samples, 100); /* the total counter is not a reason */
    CHECK_EQ_INT(p.n, 2);                    /* reasons with no samples are not listed */
    if (p.n == 2) {
        CHECK_EQ_STR(p.shares[0].name, P "long_scoreboard");
        CHECK(fabs(p.shares[0].pct - 60.0) < 1e-9);
        CHECK_EQ_STR(p.shares[1].name, P "wait"); /* two entries added up */
        CHECK_EQ_INT((long long)p.shares[1].samples, 40);
        CHECK_EQ_INT((long long)p.shares[1].not_issued, 20);
        CHECK_EQ_INT((long long)p.shares[0].not_issued, 0);
        CHECK(fabs(p.shares[0].pct + p.shares[1].pct - 100.0) < 1e-9);
    }
    wl_stall_profile_free(&p);
    wl_stall_profile e;
    CHECK(wl_stall_profile_build(names, samples, 0, &e) == 0);
    CHECK_EQ_INT(e.n, 0);
    CHECK_EQ_INT((long long)e.samples, 0);
    wl_stall_profile_free(&e);
}

/* ---- a synthetic capture ------------------------------------------------------------------- */

static void add_kernel(capbuf *b, uint32_t name, uint32_t corr, uint32_t device, uint64_t start, uint64_t dur)
{
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.start = start;
    k.end = start + dur;
    k.correlation_id = corr;
    k.device_id = device;
    k.stream_id = 7 + corr % 2; /* two streams */
    k.grid_x = 132, k.grid_y = k.grid_z = 1;
    k.block_x = 32, k.block_y = k.block_z = 1;
    k.registers_per_thread = 32;
    k.name_str = name;
    k.carveout_requested = 0xff;
    cb_record(b, WLCAP_KERNEL, &k, sizeof k);
}

static void add_reason(capbuf *b, uint32_t device, uint32_t index, const char *name)
{
    wlcap_stall_reason r = {device, index, cb_string(b, name), 14};
    cb_record(b, WLCAP_STALL_REASON, &r, sizeof r);
}

static void add_stall(capbuf *b, uint32_t corr, uint32_t device, uint32_t reason, uint64_t samples)
{
    wlcap_kernel_stall k = {corr, device, reason, 0, samples};
    cb_record(b, WLCAP_KERNEL_STALL, &k, sizeof k);
}

/* Device 0: three launches of chase_kernel (corr 101..103), a graph launch of two graph_kernel
 * (corr 300) and samples of a launch never recorded (corr 999). Device 1 numbers its reasons
 * differently: two launches of fma_kernel (201, 202). Device 2: sampling was off. */
static void build(capbuf *b)
{
    cb_init(b, 4242, T0);
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = 4242;
    p.start_ns = T0;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    cb_record(b, WLCAP_PROCESS, &p, sizeof p);
    add_reason(b, 0, 0, "smsp__pcsamp_sample_count");
    add_reason(b, 0, 1, P "long_scoreboard");
    add_reason(b, 0, 2, P "long_scoreboard_not_issued");
    add_reason(b, 0, 3, P "selected");
    add_reason(b, 0, 4, P "wait");
    add_reason(b, 0, 5, P "wait_not_issued");
    add_reason(b, 0, 6, P "math_pipe_throttle");
    add_reason(b, 1, 0, P "wait");
    add_reason(b, 1, 1, P "selected");
    add_reason(b, 1, 2, P "long_scoreboard");
    add_reason(b, 1, 3, P "wait_not_issued");
    wlcap_stall_reason off = {2, WLCAP_STALL_STATUS, cb_string(b, "enabling PC sampling failed (insufficient privileges)"),
                              14};
    cb_record(b, WLCAP_STALL_REASON, &off, sizeof off);

    /* chase: 1200 samples with a reason: long_scoreboard 900 (75 %), selected 150, wait 150 */
    add_stall(b, 101, 0, 1, 200);
    add_stall(b, 101, 0, 1, 100); /* the same launch and reason again: added */
    add_stall(b, 101, 0, 3, 50);
    add_stall(b, 101, 0, 4, 50);
    add_stall(b, 101, 0, 2, 250);
    add_stall(b, 101, 0, 0, 400);
    add_stall(b, 102, 0, 1, 300);
    add_stall(b, 102, 0, 3, 60);
    add_stall(b, 102, 0, 4, 40);
    add_stall(b, 103, 0, 1, 300);
    add_stall(b, 103, 0, 3, 40);
    add_stall(b, 103, 0, 4, 60);
    add_stall(b, 300, 0, 1, 10); /* graph launch: two kernels share the id */
    add_stall(b, 999, 0, 4, 5);  /* no kernel record */
    /* fma on device 1: wait 1500 (75 %), selected 500 */
    add_stall(b, 201, 1, 0, 700);
    add_stall(b, 201, 1, 1, 300);
    add_stall(b, 201, 1, 3, 600);
    add_stall(b, 202, 1, 0, 800);
    add_stall(b, 202, 1, 1, 200);
    wlcap_dropped d1 = {7, WLCAP_DROP_PCSAMPLING, 0, WLCAP_PCS_LOST_SAMPLES, 0};
    wlcap_dropped d2 = {2, WLCAP_DROP_PCSAMPLING, 0, WLCAP_PCS_LOST_RECORDS, 0};
    wlcap_dropped d3 = {1, WLCAP_DROP_PCSAMPLING, 0, WLCAP_PCS_LOST_OVERFLOWS, 0};
    cb_record(b, WLCAP_DROPPED, &d1, sizeof d1);
    cb_record(b, WLCAP_DROPPED, &d2, sizeof d2);
    cb_record(b, WLCAP_DROPPED, &d3, sizeof d3);

    uint32_t chase = cb_string(b, "chase_kernel"), fma = cb_string(b, "fma_kernel"), g = cb_string(b, "graph_kernel");
    add_kernel(b, chase, 101, 0, T0 + 1000, 5000000);
    add_kernel(b, fma, 201, 1, T0 + 1000, 3000000);
    add_kernel(b, chase, 102, 0, T0 + 6000000, 5000000);
    add_kernel(b, chase, 103, 0, T0 + 12000000, 5000000);
    add_kernel(b, fma, 202, 1, T0 + 6000000, 3000000);
    add_kernel(b, g, 300, 0, T0 + 20000000, 1000);
    add_kernel(b, g, 300, 0, T0 + 20002000, 1000);
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = T0 + 30000000;
    e.reason = WLCAP_END_EXIT;
    cb_record(b, WLCAP_END, &e, sizeof e);
}

/* Runs cmd; 1 when some line of its output contains every one of the needles (NULL-terminated). */
static int line_has(const char *cmd, const char *a, const char *b)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char line[2048];
    int found = 0;
    while (fgets(line, sizeof line, p))
        if (strstr(line, a) && (!b || strstr(line, b)))
            found = 1;
    pclose(p);
    if (!found)
        fprintf(stderr, "'%s' printed no line with '%s'%s%s\n", cmd, a, b ? " and " : "", b ? b : "");
    return found;
}

static const wl_stall_share *share(const wl_stall_profile *p, const char *short_name)
{
    for (int i = 0; p && i < p->n; i++)
        if (!strcmp(wl_stall_short_name(p->shares[i].name), short_name))
            return &p->shares[i];
    return NULL;
}

static void check_chase(const wl_stall_profile *p)
{
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_EQ_INT((long long)p->samples, 1200);
    CHECK_EQ_INT((long long)p->kernels, 3);
    CHECK_EQ_INT(p->n, 3);
    CHECK_EQ_STR(wl_stall_short_name(p->shares[0].name), "long_scoreboard");
    CHECK(fabs(p->shares[0].pct - 75.0) < 1e-9);
    CHECK_EQ_INT((long long)p->shares[0].not_issued, 250);
    CHECK_EQ_STR(wl_stall_short_name(p->shares[1].name), "selected"); /* ties: by name */
    CHECK(fabs(p->shares[1].pct - 12.5) < 1e-9);
    CHECK(fabs(p->shares[2].pct - 12.5) < 1e-9);
    CHECK(share(p, "math_pipe_throttle") == NULL); /* named, never sampled */
}

static void test_roundtrip(void)
{
    capbuf b;
    build(&b);
    char out[700], err[512];
    int rc = test_capture_session(&b, g_dir, "s", out, sizeof out, err, sizeof err);
    free(b.data);
    if (rc != 0) {
        fprintf(stderr, "import: %s\n", err);
        CHECK(0);
        return;
    }
    sqlite3 *db;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM stall_reason"), 7); /* one row per name, both devices */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM stall_config"), 3);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM stall_config WHERE period_log2 = 14"), 3);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM stall_config WHERE device_id = 2 AND status LIKE '%privileges%'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT samples FROM kernel_stall ks JOIN stall_reason r ON r.id = ks.reason_id"
                       " WHERE ks.correlation_id = 101 AND r.name = '" P "long_scoreboard'"),
                 300);
    /* device 1's index 0 is wait, device 0's is the sample count */
    CHECK_EQ_INT(test_sql_int(db, "SELECT sum(samples) FROM kernel_stall ks JOIN stall_reason r ON r.id = ks.reason_id"
                       " WHERE ks.device_id = 1 AND r.name = '" P "wait'"),
                 1500);
    /* every linked row sits on the kernel with its correlation id and device */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel_stall ks JOIN kernel k ON k.id = ks.kernel_id"
                       " WHERE k.correlation_id != ks.correlation_id OR k.device_id != ks.device_id"),
                 0);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(DISTINCT kernel_id) FROM kernel_stall"), 5);
    CHECK_EQ_INT(test_sql_int(db, "SELECT sum(samples) FROM kernel_stall WHERE kernel_id IS NULL"), 15);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count FROM lost WHERE source = 'pc_samples_dropped'"), 7);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count FROM lost WHERE source = 'stall_records'"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count FROM lost WHERE source = 'pc_buffer_overflows'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'kernel_stall_by_kernel'"), 1);
    long long chase_id = test_sql_int(db, "SELECT id FROM kernel_name WHERE mangled = 'chase_kernel'");
    long long fma_id = test_sql_int(db, "SELECT id FROM kernel_name WHERE mangled = 'fma_kernel'");
    long long k102 = test_sql_int(db, "SELECT id FROM kernel WHERE correlation_id = 102");
    sqlite3_close(db);

    wl_session *s = wl_session_open(out, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_stall_set m;
    CHECK(wl_session_stalls(s, WL_STALLS_BY_NAME, -1, &m) == 0);
    CHECK_EQ_INT(m.recorded, 1);
    CHECK_EQ_INT(m.ngroups, 2);
    CHECK_EQ_INT((long long)m.samples, 3200);
    CHECK_EQ_INT((long long)m.kernels, 5);
    CHECK_EQ_INT((long long)m.unlinked_samples, 15);
    CHECK_EQ_INT(m.period_min, 14);
    CHECK(strstr(m.status, "privileges") != NULL);
    check_chase(wl_stall_set_find(&m, chase_id));
    const wl_stall_profile *f = wl_stall_set_find(&m, fma_id);
    CHECK(f != NULL);
    if (f) {
        CHECK_EQ_INT((long long)f->samples, 2000);
        CHECK_EQ_STR(wl_stall_short_name(f->shares[0].name), "wait");
        CHECK(fabs(f->shares[0].pct - 75.0) < 1e-9);
        CHECK_EQ_INT((long long)f->shares[0].not_issued, 600);
    }
    wl_stall_set_free(&m);
    /* one name only, and one launch */
    CHECK(wl_session_stalls(s, WL_STALLS_BY_NAME, chase_id, &m) == 0);
    CHECK_EQ_INT(m.ngroups, 1);
    check_chase(wl_stall_set_find(&m, chase_id));
    wl_stall_set_free(&m);
    CHECK(wl_session_stalls(s, WL_STALLS_BY_KERNEL, k102, &m) == 0);
    const wl_stall_profile *one = wl_stall_set_find(&m, k102);
    CHECK(one != NULL);
    if (one) {
        CHECK_EQ_INT((long long)one->samples, 400);
        CHECK_EQ_INT((long long)one->kernels, 1);
        CHECK(fabs(share(one, "selected")->pct - 15.0) < 1e-9);
        CHECK(fabs(share(one, "wait")->pct - 10.0) < 1e-9);
    }
    wl_stall_set_free(&m);
    wl_session_close(s);

    const char *bin = getenv("WARPLENS_BIN");
    if (!bin)
        return;
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --stalls", bin, out);
    CHECK(line_has(cmd, "Warp stall reasons per kernel name", NULL));
    CHECK(line_has(cmd, "long_scoreboard 75.0%, selected 12.5%, wait 12.5%", NULL));
    CHECK(line_has(cmd, "     3       3       1200  chase_kernel", NULL));
    CHECK(line_has(cmd, "wait 75.0%, selected 25.0%", NULL));
    CHECK(line_has(cmd, "15 samples could not be tied to one kernel", NULL));
    CHECK(line_has(cmd, "sampling was off on some GPU", "privileges"));
    snprintf(cmd, sizeof cmd, "'%s' kernels '%s'", bin, out);
    CHECK(line_has(cmd, "Warp stall reasons were sampled", "--stalls"));
    snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --json", bin, out);
    CHECK(line_has(cmd, "\"name\":\"chase_kernel\"",
                   "\"stalls\":{\"launches_sampled\":3,\"samples\":1200,\"period_log2\":14,\"reasons\":[{\"reason\":"
                   "\"long_scoreboard\",\"cupti_name\":\"" P "long_scoreboard\",\"samples\":900,\"pct\":75.00,"
                   "\"not_issued\":250}"));
    snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --stalls --csv", bin, out);
    CHECK(line_has(cmd, "chase_kernel,chase_kernel,", ",3,1200,wait," P "wait,150,12.50,0"));
    snprintf(cmd, sizeof cmd, "'%s' kernel '%s' chase_kernel --call 2", bin, out);
    CHECK(line_has(cmd, "warp stall reasons (PC sampling, one warp sample per SM every 2^14 cycles", NULL));
    CHECK(line_has(cmd, "this call: 400 samples", NULL));
    CHECK(line_has(cmd, "selected", " 15.0 %"));
    CHECK(line_has(cmd, "all 3 sampled calls: 1200 samples", NULL));
    CHECK(line_has(cmd, "long_scoreboard", "75.0 %  (not issued: 20.8 %)"));
    snprintf(cmd, sizeof cmd, "'%s' kernel '%s' graph_kernel --call 1", bin, out);
    CHECK(line_has(cmd, "this call: no samples", NULL));
    snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --stalls --calls 2>&1", bin, out);
    CHECK(line_has(cmd, "--stalls is per kernel name", NULL));
}

static void test_hostile(void)
{
    capbuf b;
    cb_init(&b, 1, T0);
    add_stall(&b, 5, 0, 3, 10); /* samples before their reason */
    test_expect_import_error(&b, g_dir, "noreason", "offset 32 uses stall reason 3 of device 0 before its stall_reason");
    free(b.data);

    cb_init(&b, 1, T0);
    add_reason(&b, 0, 3, P "wait");
    add_stall(&b, 5, 1, 3, 10); /* another device's numbering */
    test_expect_import_error(&b, g_dir, "otherdevice", "stall reason 3 of device 1");
    free(b.data);

    cb_init(&b, 1, T0);
    wlcap_stall_reason r = {0, 5000, cb_string(&b, "x"), 14};
    size_t at = b.len;
    cb_record(&b, WLCAP_STALL_REASON, &r, sizeof r);
    char want[96];
    snprintf(want, sizeof want, "offset %zu: reason index 5000", at);
    test_expect_import_error(&b, g_dir, "index", want);
    free(b.data);

    cb_init(&b, 1, T0);
    wlcap_stall_reason noname = {0, 1, 77, 14};
    cb_record(&b, WLCAP_STALL_REASON, &noname, sizeof noname);
    test_expect_import_error(&b, g_dir, "noname", "offset 32 has no name");
    free(b.data);

    cb_init(&b, 1, T0);
    add_reason(&b, 0, 1, P "wait");
    at = b.len;
    add_stall(&b, 5, 0, 1, 1ull << 60);
    snprintf(want, sizeof want, "offset %zu: %llu samples", at, 1ull << 60);
    test_expect_import_error(&b, g_dir, "samples", want);
    free(b.data);

    cb_init(&b, 1, T0);
    wlcap_kernel_stall k = {1, 0, 0, 0, 1};
    cb_record(&b, WLCAP_KERNEL_STALL, &k, 12); /* shorter than its struct */
    test_expect_import_error(&b, g_dir, "short", "kernel_stall record at offset 32 is 12 bytes, expected at least 24");
    free(b.data);

    /* a record type reserved for another family (18) is skipped, not an error */
    cb_init(&b, 1, T0);
    uint8_t junk[40] = {0};
    cb_record(&b, 18, junk, sizeof junk);
    char out[700], err[512];
    CHECK(test_capture_session(&b, g_dir, "reserved", out, sizeof out, err, sizeof err) == 0);
    free(b.data);
}

/* Random corruption of the stall capture never crashes the importer (ASan/UBSan builds run this). */
static void test_mutations(void)
{
    capbuf good;
    build(&good);
    unsigned seed = 777;
    int imported = 0, rejected = 0;
    for (int iter = 0; iter < 200; iter++) {
        capbuf m = {0};
        cb_put(&m, good.data, good.len);
        int flips = 1 + (int)(rand_r(&seed) % 6);
        for (int f = 0; f < flips; f++)
            m.data[32 + rand_r(&seed) % (m.len - 32)] ^= (unsigned char)(1u << (rand_r(&seed) % 8));
        if (iter % 4 == 0)
            m.len = 32 + rand_r(&seed) % (m.len - 32);
        char cap[700], out[700], err[512];
        snprintf(cap, sizeof cap, "%s/mut.wlcap", g_dir);
        snprintf(out, sizeof out, "%s/mut.wlsession", g_dir);
        cb_write(&m, cap);
        free(m.data);
        if (test_import_capture(cap, out, NULL, err, sizeof err) == 0) {
            imported++;
            wl_session *s = wl_session_open(out, err, sizeof err); /* and the reader copes with it */
            wl_stall_set set;
            if (s && wl_session_stalls(s, WL_STALLS_BY_NAME, -1, &set) == 0)
                wl_stall_set_free(&set);
            if (s)
                wl_session_close(s);
        } else {
            rejected++;
        }
    }
    free(good.data);
    CHECK(imported > 0 && rejected > 0);
    printf("stall mutations: %d imported, %d rejected with an error\n", imported, rejected);
}

/* A real session: tests/gpu/torch_workload.py 3 under `warplens run --stalls` on the H100 (cuBLAS
 * GEMMs, PyTorch elementwise and reduce kernels, graph replays whose samples stay unlinked). */
static void test_h100_session(void)
{
    char path[600];
    wl_session *s = test_open_data_session("stalls-torch-h100.wlsession", path, sizeof path);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_stall_set m;
    CHECK(wl_session_stalls(s, WL_STALLS_BY_NAME, -1, &m) == 0);
    CHECK_EQ_INT(m.recorded, 1);
    CHECK_EQ_INT(m.period_min, 14);
    CHECK_EQ_INT(m.status[0], 0);
    CHECK(m.ngroups >= 5);
    CHECK(m.unlinked_samples > 0); /* the graph replays' */
    uint64_t total = 0;
    for (int g = 0; g < m.ngroups; g++) {
        const wl_stall_profile *p = &m.profiles[g];
        double pct = 0;
        uint64_t sum = 0;
        for (int i = 0; i < p->n; i++) {
            pct += p->shares[i].pct, sum += p->shares[i].samples;
            if (i)
                CHECK(p->shares[i].samples <= p->shares[i - 1].samples); /* most samples first */
        }
        CHECK_EQ_INT((long long)sum, (long long)p->samples);
        CHECK(p->n == 0 || (pct > 99.999 && pct < 100.001));
        total += p->samples;
    }
    CHECK_EQ_INT((long long)total, (long long)m.samples);
    wl_stall_set_free(&m);
    wl_session_close(s);
}

/* Sessions recorded before stall sampling have no stall tables: no data, no error. */
static void test_old_session(void)
{
    char path[600];
    wl_session *s = test_open_data_session("demo-h100.wlsession", path, sizeof path);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_stall_set m;
    CHECK(wl_session_stalls(s, WL_STALLS_BY_NAME, -1, &m) == 0);
    CHECK_EQ_INT(m.recorded, 0);
    CHECK_EQ_INT(m.ngroups, 0);
    wl_stall_set_free(&m);
    wl_session_close(s);
    const char *bin = getenv("WARPLENS_BIN");
    if (bin) {
        char cmd[1600];
        snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --stalls", bin, path);
        CHECK(line_has(cmd, "no warp-stall samples in this session", "warplens run --stalls"));
        snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --json", bin, path);
        FILE *p = popen(cmd, "r");
        char line[4096];
        int stalls = 0, lines = 0;
        while (p && fgets(line, sizeof line, p))
            lines++, stalls |= strstr(line, "\"stalls\"") != NULL;
        if (p)
            pclose(p);
        CHECK(lines > 1 && !stalls);
    }
}

int main(void)
{
    const char *base = getenv("WARPLENS_BUILD_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/test_stalls.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_names();
    test_profile();
    test_roundtrip();
    test_hostile();
    test_mutations();
    test_old_session();
    test_h100_session();
    if (!test_failed_) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", g_dir);
    }
    return test_report("test_stalls");
}
