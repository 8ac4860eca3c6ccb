// GPU suite: CUPTI PM sampling (`warplens run --pm-sampling`, default preset, 100 us windows) on CUDA
// device 0. This program is the workload (--workload) and the checker (default): it runs itself
// under `warplens run --pm-sampling --pm-interval 100`, opens the session and prints one PASS/FAIL
// line per check with the measured values, then "pm_sampling: N passed, M failed" (exit 1 on a
// failure). The workload, after 1 s for the sampler to set up:
//   copy   a grid-stride float4 copy of a 1 GiB buffer repeated R times (~50 ms; R calibrated,
//          written to a side file): R GiB read and R GiB written in DRAM
//   gap    ~50 ms with nothing on the GPU
//   fma    an FMA loop over all SMs (~50 ms, calibrated)
//   pair   two FMA kernels on two streams, each on half the SMs (~30 ms each): they must overlap
//   then cudaDeviceReset() (the recorder stops and decodes the device before its context goes).
// Checks (GPU 0):
//   setup      PM sampling ran (pm_config status on; the recorder's status lines are printed)
//   spacing    windows of ~100 us (median within 5%) covering the sampled span (within 2%); windows
//              longer than 150 us (the trigger late) are described in an INFO line
//   lost       nothing dropped or missing (lost table, gaps between consecutive windows)
//   dram       DRAM bytes read / written summed over the windows overlapping the copy kernel
//              within -3%/+3% (read) and -5%/+3% (written: dirty L2 lines may leave after the kernel)
//   sm         SM active (sm__cycles_active.avg.pct_of_peak_sustained_elapsed) >= 80 % on average in
//              the windows inside the copy and FMA kernels, <= 5 % (max <= 10 %) in the gap
//   align      the first/last window with SM active > 1 % starts/ends within one interval (+10 us)
//              of the kernel's CUPTI start/end: PM sample times and CUPTI activity times share one
//              clock. INFO lines estimate the remaining offset inside the edge windows.
//   overlap    the pair's CUPTI intervals overlap (PM sampling does not serialise kernels), their
//              common windows are attributed "shared (upper bound)", the copy's windows "exact"
//   views      `warplens samples --pm` and both exports carry the PM series
// INFO: the same workload without PM sampling: the FMA kernel's duration with and without.
// `gpu_test_pm_sampling --check SESSION REPS_FILE` re-checks a recorded session (no GPU needed).
#include <cuda_runtime.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu_ck.h"

#define SM_ACTIVE "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
#define INTERVAL_NS 100000.0
enum { COPY_N4 = 1 << 26 }; // float4 elements: 1 GiB
static const double COPY_BYTES = (double)COPY_N4 * 16.0;

static int passed, failed;
__attribute__((format(printf, 2, 3))) static void check(int ok, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("%s: %s\n", ok ? "PASS" : "FAIL", msg);
    ok ? passed++ : failed++;
}

// ---- the workload ------------------------------------------------------------------------------------

extern "C" __global__ void wl_pm_copy_kernel(const float4 *src, float4 *dst, size_t n4, int reps)
{
    // no __restrict__ and a value that changes with r: every repetition must load and store again
    for (int r = 0; r < reps; r++)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
            float4 v = src[i];
            v.x += (float)r;
            dst[i] = v;
        }
}

extern "C" __global__ void wl_pm_probe_kernel(const float4 *src, float4 *dst, size_t n4, int reps)
{
    for (int r = 0; r < reps; r++)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
            float4 v = src[i];
            v.y += (float)r;
            dst[i] = v;
        }
}

extern "C" __global__ void wl_pm_fma_kernel(float *out, int iters)
{
    float a = (float)threadIdx.x, b = a + 1.0f;
    for (int k = 0; k < iters; k++) {
        a = fmaf(a, 0.9999f, 1e-4f);
        b = fmaf(b, 0.9998f, 2e-4f);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
}

extern "C" __global__ void wl_pm_pair_kernel(float *out, int iters)
{
    float a = (float)threadIdx.x;
    for (int k = 0; k < iters; k++)
        a = fmaf(a, 0.9999f, 1e-4f);
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

static float time_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

static int workload(const char *expect_path)
{
    CK(cudaFree(0)); // the context: the recorder's sampler thread now sets PM sampling up
    usleep(1000000);
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float4 *src, *dst;
    float *out;
    CK(cudaMalloc(&src, (size_t)COPY_N4 * sizeof(float4)));
    CK(cudaMalloc(&dst, (size_t)COPY_N4 * sizeof(float4)));
    CK(cudaMalloc(&out, (size_t)sms * 8 * 256 * sizeof(float)));
    CK(cudaMemset(src, 0, (size_t)COPY_N4 * sizeof(float4)));
    CK(cudaMemset(dst, 0, (size_t)COPY_N4 * sizeof(float4)));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    // calibration (its own kernel names): R copies and the FMA iterations for ~50 ms, the pair for ~30 ms
    CK(cudaEventRecord(e0));
    wl_pm_probe_kernel<<<sms * 4, 256>>>(src, dst, COPY_N4, 4);
    CK(cudaEventRecord(e1));
    double per_copy = time_ms(e0, e1) / 4.0;
    int reps = (int)ceil(50.0 / (per_copy > 0.01 ? per_copy : 0.01));
    reps = reps < 4 ? 4 : reps > 4000 ? 4000 : reps;
    const int probe_iters = 20000;
    CK(cudaEventRecord(e0));
    wl_pm_fma_kernel<<<sms * 8, 256>>>(out, probe_iters);
    CK(cudaEventRecord(e1));
    double fma_ms = time_ms(e0, e1);
    int fma_iters = (int)(probe_iters * 50.0 / (fma_ms > 0.001 ? fma_ms : 0.001));
    CK(cudaEventRecord(e0));
    wl_pm_pair_kernel<<<sms / 2, 256>>>(out, probe_iters);
    CK(cudaEventRecord(e1));
    double pair_ms = time_ms(e0, e1);
    int pair_iters = (int)(probe_iters * 30.0 / (pair_ms > 0.001 ? pair_ms : 0.001));
    CK(cudaDeviceSynchronize());
    usleep(200000);

    wl_pm_copy_kernel<<<sms * 4, 256>>>(src, dst, COPY_N4, reps);
    CK(cudaDeviceSynchronize());
    usleep(50000); // the gap
    wl_pm_fma_kernel<<<sms * 8, 256>>>(out, fma_iters);
    CK(cudaDeviceSynchronize());
    usleep(50000);
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    wl_pm_pair_kernel<<<sms / 2, 256, 0, s1>>>(out, pair_iters);
    wl_pm_pair_kernel<<<sms / 2, 256, 0, s2>>>(out + (size_t)(sms / 2) * 256, pair_iters);
    CK(cudaDeviceSynchronize());
    usleep(100000);
    FILE *f = fopen(expect_path, "w");
    if (f) {
        fprintf(f, "%d\n", reps);
        fclose(f);
    }
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    CK(cudaFree(src));
    CK(cudaFree(dst));
    CK(cudaFree(out));
    CK(cudaDeviceReset()); // the device's last context goes: the recorder decodes the rest first
    return 0;
}

// ---- the checker -------------------------------------------------------------------------------------

static int run_under(const char *warplens, const char *self, const char *session, const char *expect, int pm)
{
    unlink(session);
    pid_t pid = fork();
    if (pid == 0) {
        if (pm)
            execl(warplens, warplens, "run", "--pm-sampling", "--pm-interval", "100", "-o", session, "--", self,
                  "--workload", expect, (char *)NULL);
        else
            execl(warplens, warplens, "run", "-q", "-o", session, "--", self, "--workload", expect, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static sqlite3 *g_db;

__attribute__((format(printf, 1, 2))) static double scalar(const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    sqlite3_stmt *st;
    double v = NAN;
    if (sqlite3_prepare_v2(g_db, sql, -1, &st, NULL) != SQLITE_OK) {
        printf("SQL error: %s (%s)\n", sqlite3_errmsg(g_db), sql);
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

typedef struct kern {
    double start, end; // ns, session clock
    int found;
} kern;

static kern kernel(const char *name, int nth)
{
    kern k = {0, 0, 0};
    k.start = scalar("SELECT start_ns FROM kernels WHERE short_name = '%s' ORDER BY start_ns LIMIT 1 OFFSET %d", name, nth);
    k.end = scalar("SELECT end_ns FROM kernels WHERE short_name = '%s' ORDER BY start_ns LIMIT 1 OFFSET %d", name, nth);
    k.found = !isnan(k.start) && !isnan(k.end);
    return k;
}

/* metric index of a name on device 0 of the PM-sampled process, -1 when absent */
static int metric(const char *name)
{
    double v = scalar("SELECT metric_index FROM pm_metric WHERE device_id = 0 AND name = '%s'", name);
    return isnan(v) ? -1 : (int)v;
}

#define WIN_SQL "FROM pm_sample WHERE device_id = 0 AND metric_index = %d"

/* the SM-active edges of a kernel: first window starting and last window ending with any SM activity
 * (> 1 %; a memory-bound kernel's blocks finish unevenly, so its last ~300 us run below 50 %)
 * around it, and the estimated edge inside the first/last window overlapping the kernel */
static void check_alignment(const char *what, kern k, int sm)
{
    double margin = 2e6; // look 2 ms around the kernel
    double rise = scalar("SELECT min(start_ns) " WIN_SQL " AND value > 1 AND end_ns > %.0f AND start_ns < %.0f", sm,
                         k.start - margin, k.end);
    double fall = scalar("SELECT max(end_ns) " WIN_SQL " AND value > 1 AND start_ns < %.0f AND end_ns > %.0f", sm,
                         k.end + margin, k.start);
    double tol = INTERVAL_NS + 10000;
    check(!isnan(rise) && fabs(rise - k.start) <= tol,
          "%s: first window with SM active > 1 %% starts %+.1f us from the kernel's CUPTI start (want within %.0f us)",
          what, (rise - k.start) / 1e3, tol / 1e3);
    check(!isnan(fall) && fabs(fall - k.end) <= tol,
          "%s: last window with SM active > 1 %% ends %+.1f us from the kernel's CUPTI end (want within %.0f us)", what,
          (fall - k.end) / 1e3, tol / 1e3);
    // the edges inside their windows: the first/last window with any SM activity around the kernel is
    // active for about value % of its length, at its end/start
    double r0 = scalar("SELECT start_ns " WIN_SQL " AND value > 1 AND end_ns > %.0f AND start_ns < %.0f ORDER BY start_ns"
                       " LIMIT 1", sm, k.start - margin, k.end);
    double r1 = scalar("SELECT end_ns " WIN_SQL " AND value > 1 AND end_ns > %.0f AND start_ns < %.0f ORDER BY start_ns"
                       " LIMIT 1", sm, k.start - margin, k.end);
    double rp = scalar("SELECT value " WIN_SQL " AND value > 1 AND end_ns > %.0f AND start_ns < %.0f ORDER BY start_ns"
                       " LIMIT 1", sm, k.start - margin, k.end);
    double f0 = scalar("SELECT start_ns " WIN_SQL " AND value > 1 AND start_ns < %.0f AND end_ns > %.0f ORDER BY start_ns"
                       " DESC LIMIT 1", sm, k.end + margin, k.start);
    double f1 = scalar("SELECT end_ns " WIN_SQL " AND value > 1 AND start_ns < %.0f AND end_ns > %.0f ORDER BY start_ns"
                       " DESC LIMIT 1", sm, k.end + margin, k.start);
    double fp = scalar("SELECT value " WIN_SQL " AND value > 1 AND start_ns < %.0f AND end_ns > %.0f ORDER BY start_ns"
                       " DESC LIMIT 1", sm, k.end + margin, k.start);
    if (!isnan(rp) && !isnan(fp))
        printf("INFO: %s: the SM-active edges (%.1f %% and %.1f %% of their windows) put the kernel's start %+.1f us and"
               " its end %+.1f us from CUPTI's (a constant offset here is a clock offset between PM samples and"
               " activity records; the launch ramp makes the start a little late)\n",
               what, rp, fp, (r1 - rp / 100.0 * (r1 - r0) - k.start) / 1e3, (f0 + fp / 100.0 * (f1 - f0) - k.end) / 1e3);
}

static int count_lines(const char *cmd, const char *a, const char *b)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, p))
        n += strstr(line, a) != NULL && (!b || strstr(line, b) != NULL);
    pclose(p);
    return n;
}

static void check_session(const char *warplens, const char *session, const char *expect)
{
    if (sqlite3_open_v2(session, &g_db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        check(0, "session %s opens", session);
        return;
    }
    // setup: the recorder's own status lines say what it did (or why it could not)
    sqlite3_stmt *st;
    int on = 0;
    if (sqlite3_prepare_v2(g_db, "SELECT pid, device_id, status, interval_ns, detail FROM pm_config", -1, &st, NULL) ==
        SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            printf("INFO: pm_config pid %lld device %lld: status %s, interval %lld ns; recorder said:\n%s\n",
                   sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_text(st, 2),
                   sqlite3_column_int64(st, 3), sqlite3_column_text(st, 4) ? (const char *)sqlite3_column_text(st, 4) : "");
            on |= sqlite3_column_int64(st, 1) == 0 && !strcmp((const char *)sqlite3_column_text(st, 2), "on");
        }
        sqlite3_finalize(st);
    }
    check(on, "PM sampling ran on GPU 0 (pm_config status 'on'; if not, the line above says why)");
    int sm = metric(SM_ACTIVE), dr = metric("dram__bytes_read.sum"), dw = metric("dram__bytes_write.sum");
    check(sm >= 0 && dr >= 0 && dw >= 0, "the default preset's SM active, DRAM read and DRAM write metrics are defined"
          " (indices %d, %d, %d)", sm, dr, dw);
    if (!on || sm < 0 || dr < 0 || dw < 0) {
        sqlite3_close(g_db);
        return;
    }
    printf("INFO: %.0f metrics per window: ", scalar("SELECT count(*) FROM pm_metric WHERE device_id = 0"));
    if (sqlite3_prepare_v2(g_db, "SELECT name FROM pm_metric WHERE device_id = 0 ORDER BY metric_index", -1, &st, NULL) ==
        SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW)
            printf("%s ", sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    printf("\n");

    // spacing and count
    double n = scalar("SELECT count(*) " WIN_SQL, sm);
    double first = scalar("SELECT min(start_ns) " WIN_SQL, sm), last = scalar("SELECT max(end_ns) " WIN_SQL, sm);
    double median = scalar("SELECT end_ns - start_ns " WIN_SQL " ORDER BY end_ns - start_ns LIMIT 1 OFFSET %.0f", sm,
                           floor((n - 1) / 2));
    double covered = scalar("SELECT sum(end_ns - start_ns) " WIN_SQL, sm);
    check(fabs(median - INTERVAL_NS) <= 0.05 * INTERVAL_NS, "median window %.2f us (want 100 us +- 5 %%)", median / 1e3);
    // every moment of the sampled span lies in one window (with no hole below: nothing went missing)
    check(covered >= 0.98 * (last - first) && covered <= 1.02 * (last - first),
          "the %.0f windows cover %.1f of the %.1f ms sampled (want within 2 %%)", n, covered / 1e6,
          (last - first) / 1e6);
    // windows longer than the interval: where the GPU time trigger did not fire on time
    double longer = scalar("SELECT count(*) " WIN_SQL " AND end_ns - start_ns > %.0f", sm, 1.5 * INTERVAL_NS);
    if (longer > 0)
        printf("INFO: %.0f windows longer than 150 us (longest %.1f us, covering %.1f ms in all; the first starts at"
               " %.1f ms, the last ends at %.1f ms of the %.1f ms sampled; the copy kernel starts at %.1f ms)\n",
               longer,
               scalar("SELECT max(end_ns - start_ns) " WIN_SQL, sm) / 1e3,
               scalar("SELECT sum(end_ns - start_ns) " WIN_SQL " AND end_ns - start_ns > %.0f", sm,
                      1.5 * INTERVAL_NS) / 1e6,
               (scalar("SELECT min(start_ns) " WIN_SQL " AND end_ns - start_ns > %.0f", sm, 1.5 * INTERVAL_NS) - first) /
                   1e6,
               (scalar("SELECT max(end_ns) " WIN_SQL " AND end_ns - start_ns > %.0f", sm, 1.5 * INTERVAL_NS) - first) /
                   1e6,
               (last - first) / 1e6,
               (scalar("SELECT start_ns FROM kernel k JOIN kernel_name n ON n.id = k.name_id WHERE n.demangled LIKE"
                       " '%%wl_pm_copy_kernel%%' ORDER BY start_ns LIMIT 1") - first) / 1e6);
    double holes = scalar("SELECT count(*) FROM (SELECT start_ns - lag(end_ns) OVER (ORDER BY start_ns) AS gap " WIN_SQL
                          ") WHERE gap > %.0f",
                          sm, INTERVAL_NS / 2);
    double reset_pause = scalar("SELECT max(gap) FROM (SELECT start_ns - lag(end_ns) OVER (ORDER BY start_ns) AS gap "
                                WIN_SQL ")", sm);
    check(holes == 0, "no hole of more than 50 us between consecutive windows (%.0f found, largest %.1f us)", holes,
          reset_pause / 1e3);
    double lost = scalar("SELECT coalesce(sum(count), 0) FROM lost WHERE source = 'pm_samples'");
    check(lost == 0, "no PM window lost (lost table: %.0f)", lost);

    // the kernels
    kern copy = kernel("wl_pm_copy_kernel", 0), fma = kernel("wl_pm_fma_kernel", 1); // FMA 0: the calibration
    kern p1 = kernel("wl_pm_pair_kernel", 1), p2 = kernel("wl_pm_pair_kernel", 2); // 0: the calibration
    check(copy.found && fma.found && p1.found && p2.found, "the workload's kernels are in the session with timestamps");
    if (!copy.found || !fma.found || !p1.found || !p2.found) {
        sqlite3_close(g_db);
        return;
    }
    printf("INFO: copy %.2f ms, gap %.2f ms, fma %.2f ms, pair %.2f / %.2f ms; first window %.2f ms before the copy\n",
           (copy.end - copy.start) / 1e6, (fma.start - copy.end) / 1e6, (fma.end - fma.start) / 1e6,
           (p1.end - p1.start) / 1e6, (p2.end - p2.start) / 1e6, (copy.start - first) / 1e6);
    check(first < copy.start, "sampling had started before the copy kernel (first window %.1f ms before it)",
          (copy.start - first) / 1e6);

    // DRAM bytes of the copy
    int reps = 0;
    FILE *f = fopen(expect, "r");
    if (!f || fscanf(f, "%d", &reps) != 1)
        reps = 0;
    if (f)
        fclose(f);
    double want = reps * COPY_BYTES;
    double rd = scalar("SELECT sum(value) " WIN_SQL " AND end_ns > %.0f AND start_ns < %.0f", dr, copy.start, copy.end);
    double wr = scalar("SELECT sum(value) " WIN_SQL " AND end_ns > %.0f AND start_ns < %.0f", dw, copy.start, copy.end);
    check(want > 0 && fabs(rd / want - 1) <= 0.03,
          "DRAM bytes read over the copy's windows %.4g vs %d x 1 GiB = %.4g copied (%+.2f %%; want within 3 %%)", rd,
          reps, want, (rd / want - 1) * 100);
    check(want > 0 && wr / want - 1 <= 0.03 && wr / want - 1 >= -0.05,
          "DRAM bytes written over the copy's windows %.4g vs %.4g (%+.2f %%; want -5 %%..+3 %%)", wr, want,
          (wr / want - 1) * 100);

    // SM activity inside the kernels and in the gap
    double in_copy = scalar("SELECT avg(value) " WIN_SQL " AND start_ns >= %.0f AND end_ns <= %.0f", sm, copy.start, copy.end);
    double in_fma = scalar("SELECT avg(value) " WIN_SQL " AND start_ns >= %.0f AND end_ns <= %.0f", sm, fma.start, fma.end);
    double gap_avg = scalar("SELECT avg(value) " WIN_SQL " AND start_ns >= %.0f AND end_ns <= %.0f", sm,
                            copy.end + INTERVAL_NS, fma.start - INTERVAL_NS);
    double gap_max = scalar("SELECT max(value) " WIN_SQL " AND start_ns >= %.0f AND end_ns <= %.0f", sm,
                            copy.end + INTERVAL_NS, fma.start - INTERVAL_NS);
    double gap_n = scalar("SELECT count(*) " WIN_SQL " AND start_ns >= %.0f AND end_ns <= %.0f", sm,
                          copy.end + INTERVAL_NS, fma.start - INTERVAL_NS);
    check(in_copy >= 80, "SM active inside the copy kernel: %.1f %% on average (want >= 80)", in_copy);
    check(in_fma >= 80, "SM active inside the FMA kernel: %.1f %% on average (want >= 80)", in_fma);
    check(gap_n >= 10 && gap_avg <= 5 && gap_max <= 10,
          "SM active in the idle gap: %.2f %% on average, max %.2f %% over %.0f windows (want <= 5 / <= 10)", gap_avg,
          gap_max, gap_n);

    // alignment with CUPTI's kernel intervals
    check_alignment("copy", copy, sm);
    check_alignment("fma", fma, sm);

    // concurrency and attribution
    double ov = fmin(p1.end, p2.end) - fmax(p1.start, p2.start);
    double shorter = fmin(p1.end - p1.start, p2.end - p2.start);
    check(ov > 0.5 * shorter, "the two kernels on two streams overlap by %.2f ms of %.2f ms (not serialised)", ov / 1e6,
          shorter / 1e6);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' samples '%s' --pm --windows --csv | grep ',dram__bytes_read.sum,'", warplens, session);
    int shared = count_lines(cmd, ",shared_upper_bound,2,", "\"wl_pm_pair_kernel\"");
    int exact_copy = count_lines(cmd, ",exact,1,", "\"wl_pm_copy_kernel\"");
    double copy_windows = scalar("SELECT count(*) " WIN_SQL " AND start_ns >= %.0f AND end_ns <= %.0f", sm, copy.start, copy.end);
    check(shared >= 0.5 * ov / INTERVAL_NS, "warplens samples --windows: %d windows shared by the two kernels (upper"
          " bound); their overlap spans %.0f", shared, ov / INTERVAL_NS);
    check(exact_copy >= copy_windows, "warplens samples --windows: %d windows attributed exactly to the copy (it fills"
          " %.0f alone)", exact_copy, copy_windows);
    snprintf(cmd, sizeof cmd, "'%s' samples '%s' --pm --csv | grep ',dram__bytes_read.sum,'", warplens, session);
    int copy_exact = count_lines(cmd, "\"wl_pm_copy_kernel\"", ",exact,dram__bytes_read.sum,");
    int fma_exact = count_lines(cmd, "\"wl_pm_fma_kernel\"", ",exact,dram__bytes_read.sum,");
    int pair_shared = count_lines(cmd, "\"wl_pm_pair_kernel\"", ",shared_upper_bound,dram__bytes_read.sum,");
    check(copy_exact == 1 && fma_exact >= 1 && pair_shared >= 2,
          "warplens samples per kernel: copy exact (%d row), FMA exact (%d), the concurrent pair shared upper bound (%d)",
          copy_exact, fma_exact, pair_shared);

    // the views
    snprintf(cmd, sizeof cmd, "'%s' samples '%s' --pm --limit 6", warplens, session);
    printf("INFO: %s\n", cmd);
    fflush(stdout);
    if (system(cmd) != 0)
        check(0, "warplens samples --pm runs");
    snprintf(cmd, sizeof cmd, "'%s' export '%s' -o /tmp/wl_pm.json --quiet && grep -o '\"name\":\"PM SM active\"' /tmp/wl_pm.json",
             warplens, session);
    int json_points = count_lines(cmd, "PM SM active", NULL);
    check(json_points >= n, "Chrome JSON export: %d 'PM SM active' counter values (%.0f windows)", json_points, n);
    snprintf(cmd, sizeof cmd, "'%s' export '%s' -o /tmp/wl_pm.pftrace --quiet && grep -q 'PM DRAM read' /tmp/wl_pm.pftrace"
             " && echo has-track", warplens, session);
    check(count_lines(cmd, "has-track", NULL) == 1, "Perfetto export has the PM DRAM read track");
    sqlite3_close(g_db);
}

static double fma_ms(const char *session)
{
    if (sqlite3_open_v2(session, &g_db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return NAN;
    double v = scalar("SELECT duration_ns / 1e6 FROM kernels WHERE short_name = 'wl_pm_fma_kernel' ORDER BY start_ns"
                      " LIMIT 1 OFFSET 1");
    sqlite3_close(g_db);
    return v;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--workload"))
        return workload(argv[2]);
    if (argc > 3 && !strcmp(argv[1], "--check")) { // checks a session already recorded: --check SESSION REPS_FILE
        const char *w = getenv("WARPLENS_BIN");
        check_session(w ? w : "warplens", argv[2], argv[3]);
        printf("pm_sampling: %d passed, %d failed\n", passed, failed);
        return failed ? 1 : 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("INFO: CUDA device 0: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    const char *warplens = getenv("WARPLENS_BIN");
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!warplens || len <= 0) {
        printf("FAIL: WARPLENS_BIN is not set (the path of the warplens binary): nothing was checked\n");
        printf("pm_sampling: 0 passed, 1 failed\n");
        return 1;
    }
    self[len] = 0;
    const char *on = "/tmp/wl_pm.wlsession", *off = "/tmp/wl_pm_off.wlsession";
    const char *expect_on = "/tmp/wl_pm_expect.txt", *expect_off = "/tmp/wl_pm_expect_off.txt";
    printf("INFO: running %s --workload under `warplens run --pm-sampling --pm-interval 100` (the recorder's lines"
           " follow)\n", self);
    fflush(stdout);
    int rc = run_under(warplens, self, on, expect_on, 1);
    check(rc == 0, "workload under warplens run --pm-sampling exits 0 (%d)", rc);
    check_session(warplens, on, expect_on);
    rc = run_under(warplens, self, off, expect_off, 0);
    check(rc == 0, "workload without PM sampling exits 0 (%d)", rc);
    double a = fma_ms(on), b = fma_ms(off);
    printf("INFO: FMA kernel %.3f ms with PM sampling, %.3f ms without (%+.2f %%; PM sampling is said to lock the"
           " clocks)\n", a, b, b > 0 ? (a - b) / b * 100 : 0);
    printf("pm_sampling: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
