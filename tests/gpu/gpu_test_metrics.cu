// GPU suite: hardware metrics per kernel (`warplens run --metrics`). This program is the workload
// (--workload) and the checker (default): it runs itself under `warplens run --metrics`, opens the
// session and compares measured metrics with analytical counts, one PASS/FAIL line each:
//   copy     a 1 GiB float copy: DRAM bytes read within 2% of 1 GiB (written: see below)
//   fma      an FFMA loop of known count: ffma instructions within 2% (exact in practice)
//   streams  FMA kernels of 4 sizes on 4 streams, interleaved: every kernel's ffma count matches its
//            own size (ranges correlated with kernels by identity, not by order)
//   many     a second run with a one-pass set (collected without replay): WL_METRICS_SMALL (default
//            100,000) tiny kernels, every one with metrics and timestamps; the i-th launch runs
//            i % 7 + 1 loop trips, so launches of one residue share one warp-instruction count and
//            the counts grow with the residue (a shifted range breaks both): no range limit, no
//            shifted ranges, and none of the range profiler's own kernels in the session
//   summary  `warplens kernels` shows the metric table; the run summary names the replay passes
// Writes: the copy's destination was memset before, so up to the L2 size (50 MB) of dirty lines
// may still sit in L2 at the kernel's end: DRAM bytes written is checked within -7%..+2%.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu_check.h"
#include "gpu_ck.h"

#define FFMA "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
static const char METRICS[] = "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum," FFMA
                              ",smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
                              "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,occupancy";
/* SASS counters (the FFMA count) need two passes with gpu time and cost ~130 ms per kernel under
 * kernel replay on the H100; hardware counters in one pass need no replay */
#define INST "smsp__inst_executed.sum"
static const char ONE_PASS[] = "gpu__time_duration.sum," INST ",sm__warps_active.avg.pct_of_peak_sustained_active";

enum { COPY_N = 1 << 28 };                        // floats: 1 GiB each way
enum { FMA_BLOCKS = 528, FMA_THREADS = 256, FMA_ITERS = 4096, CHAINS = 4 };
enum { STREAMS = 4, STREAM_ROUNDS = 8 };

__global__ void wl_metrics_copy(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n4)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

// CHAINS independent dependent chains of `iters` fmaf each: exactly CHAINS*iters FFMA per thread.
__global__ void wl_metrics_fma(float *out, int iters, float b, float c)
{
    float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
    for (int i = 0; i < iters; i++) {
        a0 = fmaf(a0, b, c);
        a1 = fmaf(a1, b, c);
        a2 = fmaf(a2, b, c);
        a3 = fmaf(a3, b, c);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3; // FADDs, not counted as FFMA
}

// k dependent fmaf per thread, one warp: 32*k FFMA.
__global__ void wl_metrics_tiny(float *out, int k, float b, float c)
{
    float a = threadIdx.x;
    for (int i = 0; i < k; i++)
        a = fmaf(a, b, c);
    out[threadIdx.x] = a;
}

static long small_count(void)
{
    const char *v = getenv("WL_METRICS_SMALL");
    long n = v && *v ? strtol(v, NULL, 10) : 100000;
    return n > 0 ? n : 100000;
}

static int workload(void)
{
    float *src, *dst, *out;
    CK(cudaMalloc(&src, (size_t)COPY_N * 4));
    CK(cudaMalloc(&dst, (size_t)COPY_N * 4));
    CK(cudaMalloc(&out, (size_t)FMA_BLOCKS * FMA_THREADS * 4 * 4));
    CK(cudaMemset(src, 1, (size_t)COPY_N * 4));
    CK(cudaMemset(dst, 0, (size_t)COPY_N * 4));
    CK(cudaDeviceSynchronize());
    wl_metrics_copy<<<132 * 8, 512>>>((const float4 *)src, (float4 *)dst, COPY_N / 4);
    wl_metrics_fma<<<FMA_BLOCKS, FMA_THREADS>>>(out, FMA_ITERS, 0.999f, 0.001f);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    cudaStream_t s[STREAMS];
    for (int i = 0; i < STREAMS; i++)
        CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    for (int r = 0; r < STREAM_ROUNDS; r++)
        for (int i = 0; i < STREAMS; i++) // size i: (i+1)*66 blocks, (i+1)*256 iterations
            wl_metrics_fma<<<(i + 1) * 66, 128, 0, s[i]>>>(out, (i + 1) * 256, 0.999f, 0.001f);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < STREAMS; i++)
        CK(cudaStreamDestroy(s[i]));
    CK(cudaFree(src));
    CK(cudaFree(dst));
    CK(cudaFree(out));
    return 0;
}

static int workload_many(void)
{
    float *out;
    CK(cudaMalloc(&out, 32 * 4));
    long n = small_count();
    for (long i = 0; i < n; i++)
        wl_metrics_tiny<<<1, 32>>>(out, (int)(i % 7) + 1, 0.999f, 0.001f);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaFree(out));
    return 0;
}

// ------------------------------------------------------------------------------------- checker
#define METRIC_OF(kernel_where, metric)                                                           \
    "SELECT km.value FROM kernel_metric km JOIN kernels k ON k.id = km.kernel_id JOIN metric m ON" \
    " m.id = km.metric_id WHERE m.name = '" metric "' AND " kernel_where " LIMIT 1"

static int run_capture(const char *warplens, const char *self, const char *metrics, const char *mode,
                       const char *session, const char *log)
{
    char opts[1024];
    snprintf(opts, sizeof opts, "--metrics '%s'", metrics);
    return run_self(warplens, opts, self, mode, session, log);
}

/* The no-range-limit check: a one-pass set is collected without replay, so 100,000 kernels take
 * minutes, not hours (bench/results/metrics-cost.md). */
static void many(const char *warplens, const char *self, const char *dir)
{
    char session[256], log[256], d[512];
    snprintf(session, sizeof session, "%s/many.wlsession", dir);
    snprintf(log, sizeof log, "%s/many.log", dir);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = run_capture(warplens, self, ONE_PASS, "--workload-many", session, log);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    snprintf(d, sizeof d, "exit status %d, %.1f s", rc, secs);
    verdict("many: run", rc == 0, d);
    sqlite3 *db;
    if (sqlite3_open_v2(session, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        verdict("many: session", 0, "cannot open the session");
        return;
    }
    double none = qd(db, "SELECT count(*) FROM metric_config WHERE replay = 'none'");
    verdict("many: no replay", none >= 1, "a one-pass set is collected as the kernels run");
    long n = small_count();
    double tiny = qd(db, "SELECT count(*) FROM kernels WHERE name LIKE '%wl_metrics_tiny%'");
    double with = qd(db, "SELECT count(*) FROM kernel_metric km JOIN kernels k ON k.id = km.kernel_id JOIN metric m"
                         " ON m.id = km.metric_id WHERE m.name = '" INST "' AND k.name LIKE '%wl_metrics_tiny%'");
    // launch i (stream order = launch order) ran i % 7 + 1 trips: per residue one count, rising
#define BY_RESIDUE                                                                                        \
    "SELECT t.i % 7 AS r, count(DISTINCT km.value) AS nv, min(km.value) AS v FROM (SELECT k.id, row_number()" \
    " OVER (ORDER BY k.start_ns) - 1 AS i FROM kernels k WHERE k.name LIKE '%wl_metrics_tiny%') t JOIN"      \
    " kernel_metric km ON km.kernel_id = t.id JOIN metric m ON m.id = km.metric_id WHERE m.name = '" INST    \
    "' GROUP BY r"
    double bad = qd(db, "SELECT count(*) FROM (" BY_RESIDUE ") WHERE nv != 1");
    double rising = qd(db, "SELECT count(*) FROM (" BY_RESIDUE ") a JOIN (" BY_RESIDUE ") b ON b.r = a.r + 1"
                           " WHERE b.v > a.v");
    if (rising != 6)
        bad += 1;
    double lost = qd(db, "SELECT coalesce(sum(count), 0) FROM lost WHERE source LIKE 'metric%'");
    snprintf(d, sizeof d, "%.0f of %ld launches recorded, %.0f with metrics, %.0f residues with mixed counts or"
             " out of order, %.0f lost", tiny, n, with, bad, lost);
    verdict("many kernels", tiny == n && with == n && bad == 0 && lost == 0, d);
    double untimed = qd(db, "SELECT count(*) FROM kernels WHERE has_timestamps = 0");
    double own = qd(db, "SELECT count(*) FROM kernels WHERE name LIKE '%WaitNs%' OR name LIKE '%tools_memcmp%'");
    snprintf(d, sizeof d, "%.0f kernels without timestamps, %.0f of the profiler's own kernels; %.0f us per kernel",
             untimed, own, secs * 1e6 / (double)n);
    verdict("many: timestamps, no profiler kernels", untimed == 0 && own == 0, d);
    sqlite3_close(db);
}

static int checker(const char *warplens, const char *self)
{
    char dir[] = "/tmp/wl_gpu_metrics.XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char session[256], log[256], cmd[1024];
    snprintf(session, sizeof session, "%s/m.wlsession", dir);
    snprintf(log, sizeof log, "%s/run.log", dir);
    int rc = run_capture(warplens, self, METRICS, "--workload", session, log);
    snprintf(cmd, sizeof cmd, "cat '%s'", log);
    if (system(cmd) != 0)
        return 2;
    sqlite3 *db = judge_run("run", rc, session);
    if (!db)
        return 1;
    char d[256];
    double passes = qd(db, "SELECT max(num_passes) FROM metric_config");
    snprintf(d, sizeof d, "%.0f replay passes; status %s", passes,
             qd(db, "SELECT count(*) FROM metric_config WHERE status IS NOT NULL") > 0 ? "not ok" : "ok");
    verdict("config", passes >= 1, d);

    double bytes = (double)COPY_N * 4;
    within("copy dram read", qd(db, METRIC_OF("k.name LIKE '%wl_metrics_copy%'", "dram__bytes_read.sum")), bytes,
           -0.02, 0.02);
    within("copy dram write", qd(db, METRIC_OF("k.name LIKE '%wl_metrics_copy%'", "dram__bytes_write.sum")), bytes,
           -0.07, 0.02);
    double ffma = (double)FMA_BLOCKS * FMA_THREADS * FMA_ITERS * CHAINS;
    within("fma ffma count", qd(db, METRIC_OF("k.name LIKE '%wl_metrics_fma%' AND k.grid_x = 528", FFMA)), ffma,
           -0.02, 0.02);

    // identity: every sized kernel carries its own count; a shifted range would carry a neighbour's
    double wrong = qd(db, "SELECT count(*) FROM kernel_metric km JOIN kernels k ON k.id = km.kernel_id JOIN metric m"
                          " ON m.id = km.metric_id WHERE m.name = '" FFMA "' AND k.name LIKE '%wl_metrics_fma%'"
                          " AND k.grid_x != 528 AND km.value != k.grid_x / 66 * 256 * 4.0 * k.grid_x * 128");
    double sized = qd(db, "SELECT count(*) FROM kernel_metric km JOIN kernels k ON k.id = km.kernel_id JOIN metric m"
                          " ON m.id = km.metric_id WHERE m.name = '" FFMA "' AND k.name LIKE '%wl_metrics_fma%'"
                          " AND k.grid_x != 528");
    snprintf(d, sizeof d, "%.0f of %d sized kernels on %d streams have metrics, %.0f carry another kernel's count",
             sized, STREAMS * STREAM_ROUNDS, STREAMS, wrong);
    verdict("streams identity", sized == STREAMS * STREAM_ROUNDS && wrong == 0, d);

    sqlite3_close(db);

    snprintf(cmd, sizeof cmd, "'%s' kernels '%s'", warplens, session);
    verdict("warplens kernels", output_has(cmd, "Hardware metrics per kernel name"), "metric table printed");
    snprintf(cmd, sizeof cmd, "grep -Eq 'replay pass|no replay' '%s'", log);
    verdict("run summary", system(cmd) == 0, "names the replay passes and the timing caveat");
    many(warplens, self, dir);
    return gpu_test_done(dir, "gpu_test_metrics");
}

static int workloads(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--workload"))
        return workload();
    return argc == 2 && !strcmp(argv[1], "--workload-many") ? workload_many() : 2;
}

int main(int argc, char **argv) { return gpu_test_main(argc, argv, workloads, checker); }
