// GPU suite: warp stall reasons per kernel from PC sampling (`warplens run --stalls`). This program
// is the workload (--workload) and the checker (default): it runs itself under
// `warplens run --stalls`, opens the session and checks, printing one PASS/FAIL line each and the
// top stall reasons of every kernel launch so the output explains itself:
//   chase  a pointer chase through a 512 MiB buffer, one warp per SM: every step waits for a DRAM
//          load, so the dominant reason must be long_scoreboard
//   fma    a dependent FMA chain, one warp per SM: each FMA waits for the previous one's fixed
//          latency, so the dominant reason must be wait
// Each kernel runs 3 times on each of two streams. The run sets WARPLENS_PC_DEBUG, so the recorder's
// last line says what CUPTI did (GetData calls, records at launch exits and in the configuration
// buffer, how CUPTI hands out function names): compare it with docs/recorder.md. Also checked: sampling ran (no status line,
// the period asked for), every launch has samples tied to it, none lost, no sample left without a
// kernel, the kernels kept their timestamps, and the CLI views show the reasons.
// The expected names below are CUPTI's for Hopper as far as known; every name the GPU reports is
// printed, so a renamed reason shows up as a FAIL next to the names to use instead.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_check.h"
extern "C" { /* the store is C without C++ guards */
#include "store/session.h"
#include "store/session_stalls.h"
}

#include "gpu_ck.h"

enum { CHASE_LOG2 = 27 };                         // 2^27 uint32: 512 MiB, ten times the H100's L2
enum { CHASE_STEPS = 4000, FMA_ITERS = 1 << 20 }; // a few ms each on the H100
enum { BLOCKS = 132, ROUNDS = 3, STREAMS = 2 };
static const int PERIOD = 13;                     // --pc-period: not the default, to test the option

static const char *const CHASE_EXPECT[] = {"long_scoreboard"};
static const char *const FMA_EXPECT[] = {"wait"};

// next[i] = (a*i + c) mod 2^k with c odd and a % 4 == 1: one cycle through every element, with
// successive addresses far apart (no cache or prefetch help).
__global__ void wl_stall_init(unsigned *next, unsigned n)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        next[i] = (1664525u * i + 1013904223u) & (n - 1);
}

__global__ void wl_stall_chase(const unsigned *next, unsigned mask, int steps, unsigned *out)
{
    unsigned i = ((blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u) & mask;
    for (int s = 0; s < steps; s++)
        i = next[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}

__global__ void wl_stall_fma(float *out, int iters, float b, float c)
{
    float a = threadIdx.x;
#pragma unroll 16
    for (int i = 0; i < iters; i++)
        a = fmaf(a, b, c);
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

static int workload(void)
{
    unsigned n = 1u << CHASE_LOG2, *next, *out;
    float *fout;
    CK(cudaMalloc(&next, (size_t)n * sizeof *next));
    CK(cudaMalloc(&out, BLOCKS * 32 * sizeof *out));
    CK(cudaMalloc(&fout, BLOCKS * 32 * sizeof *fout));
    wl_stall_init<<<BLOCKS * 8, 256>>>(next, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    cudaStream_t s[STREAMS];
    for (int i = 0; i < STREAMS; i++)
        CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < STREAMS; i++) {
            wl_stall_chase<<<BLOCKS, 32, 0, s[i]>>>(next, n - 1, CHASE_STEPS, out);
            wl_stall_fma<<<BLOCKS, 32, 0, s[(i + 1) % STREAMS]>>>(fout, FMA_ITERS, 0.999f, 0.001f);
        }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < STREAMS; i++)
        CK(cudaStreamDestroy(s[i]));
    CK(cudaFree(next));
    CK(cudaFree(out));
    CK(cudaFree(fout));
    return 0;
}

// ------------------------------------------------------------------------------------- checker
static void print_rows(sqlite3 *db, const char *title, const char *sql)
{
    sqlite3_stmt *st;
    printf("%s\n", title);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        printf("  (%s)\n", sqlite3_errmsg(db));
        return;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        printf(" ");
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const unsigned char *t = sqlite3_column_text(st, c);
            printf(" %s", t ? (const char *)t : "NULL");
        }
        printf("\n");
    }
    sqlite3_finalize(st);
}

static const char *top_text(const wl_stall_profile *p, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; p && i < p->n && i < 5; i++) {
        size_t used = strlen(b);
        snprintf(b + used, n - used, "%s%s %.1f%%", i ? ", " : "", wl_stall_short_name(p->shares[i].name),
                 p->shares[i].pct);
    }
    return b;
}

static int expected(const char *reason, const char *const *want, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(reason, want[i]))
            return 1;
    return 0;
}

// Every launch of `kernel`: samples, dominant reason in `want`. Prints each launch's top reasons.
static void check_kernel(sqlite3 *db, wl_session *s, const char *kernel, const char *const *want, int nwant)
{
    char sql[512], d[512], top[512];
    snprintf(sql, sizeof sql,
             "SELECT k.id, k.stream_id, k.duration_ns FROM kernels k WHERE k.name LIKE '%%%s%%' ORDER BY k.start_ns",
             kernel);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        verdict(kernel, 0, sqlite3_errmsg(db));
        return;
    }
    int launches = 0, sampled = 0, dominant_ok = 0;
    uint64_t min_samples = UINT64_MAX;
    printf("%s launches (top stall reasons, %% of the launch's samples):\n", kernel);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        launches++;
        wl_stall_set m;
        if (wl_session_stalls(s, WL_STALLS_BY_KERNEL, id, &m) != 0) {
            printf("  kernel %lld: cannot read its samples\n", (long long)id);
            continue;
        }
        const wl_stall_profile *p = wl_stall_set_find(&m, id);
        uint64_t n = p ? p->samples : 0;
        printf("  kernel %lld, stream %d, %.3f ms: %llu samples: %s\n", (long long)id, sqlite3_column_int(st, 1),
               sqlite3_column_double(st, 2) / 1e6, (unsigned long long)n, n ? top_text(p, top, sizeof top) : "-");
        if (n) {
            sampled++;
            if (n < min_samples)
                min_samples = n;
            if (expected(wl_stall_short_name(p->shares[0].name), want, nwant))
                dominant_ok++;
        }
        wl_stall_set_free(&m);
    }
    sqlite3_finalize(st);
    char name[128];
    snprintf(name, sizeof name, "%s samples", kernel);
    snprintf(d, sizeof d, "%d of %d launches (%d expected) have samples tied to them, the fewest %llu", sampled,
             launches, ROUNDS * STREAMS, sampled ? (unsigned long long)min_samples : 0ull);
    verdict(name, launches == ROUNDS * STREAMS && sampled == launches && min_samples >= 100, d);
    snprintf(name, sizeof name, "%s dominant reason", kernel);
    snprintf(d, sizeof d, "%d of %d launches have %s%s as their top reason", dominant_ok, launches, want[0],
             nwant > 1 ? " (or an alternative listed in the test)" : "");
    verdict(name, launches > 0 && dominant_ok == launches, d);
}

static int checker(const char *warplens, const char *self)
{
    char dir[] = "/tmp/wl_gpu_stalls.XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char session[256], log[256], cmd[8192], d[512];
    snprintf(session, sizeof session, "%s/s.wlsession", dir);
    snprintf(log, sizeof log, "%s/run.log", dir);
    /* WARPLENS_PC_DEBUG: the recorder's line about what CUPTI did, printed with the run's output */
    snprintf(cmd, sizeof cmd,
             "WARPLENS_PC_DEBUG=1 '%s' run -o '%s' --stalls --pc-period %d -- '%s' --workload > '%s' 2>&1", warplens,
             session, PERIOD, self, log);
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    printf("--- warplens run output ---\n");
    fflush(stdout);
    snprintf(cmd, sizeof cmd, "cat '%s'", log);
    if (system(cmd) != 0)
        return 2;
    printf("---------------------------\n");
    snprintf(d, sizeof d, "exit status %d", rc);
    verdict("run", rc == 0, d);
    sqlite3 *db;
    char err[512];
    wl_session *s = wl_session_open(session, err, sizeof err);
    if (!s || sqlite3_open_v2(session, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        verdict("session", 0, s ? "cannot open the session with SQLite" : err);
        return 1;
    }
    print_rows(db, "stall_config (pid, device, period_log2, status):",
               "SELECT pid, device_id, period_log2, status FROM stall_config");
    print_rows(db, "stall reasons CUPTI named on this GPU (stall_reason id, name):",
               "SELECT id, name FROM stall_reason ORDER BY id");
    double off = qd(db, "SELECT count(*) FROM stall_config WHERE status IS NOT NULL");
    double period = qd(db, "SELECT min(period_log2) FROM stall_config");
    snprintf(d, sizeof d, "%.0f device(s) configured, %.0f with sampling off, period 2^%.0f (asked 2^%d)",
             qd(db, "SELECT count(*) FROM stall_config"), off, period, PERIOD);
    verdict("sampling on", off == 0 && period == PERIOD && qd(db, "SELECT count(*) FROM stall_reason") > 0, d);

    check_kernel(db, s, "wl_stall_chase", CHASE_EXPECT, sizeof CHASE_EXPECT / sizeof *CHASE_EXPECT);
    check_kernel(db, s, "wl_stall_fma", FMA_EXPECT, sizeof FMA_EXPECT / sizeof *FMA_EXPECT);

    print_rows(db, "lost (source, count, detail):", "SELECT source, count, detail FROM lost");
    double lost = qd(db, "SELECT coalesce(sum(count), 0) FROM lost WHERE source IN ('pc_samples_dropped',"
                         " 'stall_records', 'pc_buffer_overflows')");
    double unlinked = qd(db, "SELECT coalesce(sum(samples), 0) FROM kernel_stall WHERE kernel_id IS NULL");
    double total = qd(db, "SELECT coalesce(sum(samples), 0) FROM kernel_stall");
    snprintf(d, sizeof d, "%.0f samples in all, %.0f lost or dropped, %.0f not tied to a kernel", total, lost,
             unlinked);
    verdict("nothing dropped", total > 0 && lost == 0 && unlinked == 0, d);

    double untimed = qd(db, "SELECT count(*) FROM kernels WHERE name LIKE '%wl_stall_%' AND has_timestamps = 0");
    double overlaps = qd(db, "SELECT count(*) FROM kernels a JOIN kernels b ON a.id < b.id AND a.stream_id !="
                             " b.stream_id AND a.start_ns < b.end_ns AND b.start_ns < a.end_ns"
                             " WHERE a.name LIKE '%wl_stall_%' AND b.name LIKE '%wl_stall_%'");
    snprintf(d, sizeof d, "%.0f test kernels without timestamps; %.0f overlapping pairs across streams (0 expected"
             " in serialised mode; informational)", untimed, overlaps);
    verdict("kernel records", untimed == 0, d);

    snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --stalls", warplens, session);
    printf("--- %s ---\n", cmd);
    fflush(stdout);
    if (system(cmd) != 0)
        printf("(failed)\n");
    verdict("warplens kernels --stalls", output_has(cmd, "Warp stall reasons per kernel name") &&
                                             output_has(cmd, "long_scoreboard"),
            "table with the chase kernel's long_scoreboard share");
    snprintf(cmd, sizeof cmd, "'%s' kernel '%s' wl_stall_fma", warplens, session);
    verdict("warplens kernel", output_has(cmd, "warp stall reasons (PC sampling") && output_has(cmd, "this call:"),
            "the panel shows the launch's reasons");
    snprintf(cmd, sizeof cmd, "'%s' kernels '%s' --json", warplens, session);
    verdict("warplens kernels --json", output_has(cmd, "\"stalls\":{\"launches_sampled\":"), "stalls object present");
    snprintf(cmd, sizeof cmd, "grep -q 'Warp stalls: ' '%s' && grep -q 'warp stall sampling on GPU' '%s'", log, log);
    verdict("run summary", system(cmd) == 0, "the recorder's set-up line and the summary's stall note");
    wl_session_close(s);
    sqlite3_close(db);
    return gpu_test_done(dir, "gpu_test_stalls");
}

static int workloads(int argc, char **argv)
{
    return argc == 2 && !strcmp(argv[1], "--workload") ? workload() : 2;
}

int main(int argc, char **argv) { return gpu_test_main(argc, argv, workloads, checker); }
