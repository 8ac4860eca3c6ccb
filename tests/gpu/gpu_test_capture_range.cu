// GPU suite: `warplens run --capture-range profiler-api`, tracing only between cudaProfilerStart
// and cudaProfilerStop. The workload (this program with --workload) interleaves launches, copies
// and memsets outside and inside spans:
//   - outside: CYCLES x OUTSIDE launches of wl_cr_outside and one 1 MiB copy per cycle;
//   - inside:  CYCLES spans of INSIDE launches of wl_cr_inside, one 1 MiB copy and one memset each,
//              opened and closed CYCLES times (the switch is exercised, not only set once);
//   - a last span that is never stopped: THREAD_LAUNCHES of wl_cr_thread from a second thread on
//     its own stream plus TAIL launches of wl_cr_inside; the process's end closes it.
// Checks: exactly the inside launches, copies and memsets are recorded, none of the outside ones;
// every recorded kernel is linked to its launch call; every recorded API call lies inside a span;
// CYCLES + 1 spans, the last closed by the exit; nothing lost; the summary says so. A second run
// (--workload-nostart) never calls cudaProfilerStart: nothing is traced and the summary says why.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"
#include "gpu_ck.h"

enum { CYCLES = 200, OUTSIDE = 10, INSIDE = 10, THREAD_LAUNCHES = 25, TAIL = 7, COPY_BYTES = 1 << 20 };

extern "C" __global__ void wl_cr_outside(int *p) { p[threadIdx.x] += 1; }
extern "C" __global__ void wl_cr_inside(int *p) { p[threadIdx.x] += 2; }
extern "C" __global__ void wl_cr_thread(int *p) { p[threadIdx.x] += 3; }

static int *g_dev;

static void *second_thread(void *arg)
{
    (void)arg;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    for (int i = 0; i < THREAD_LAUNCHES; i++)
        wl_cr_thread<<<1, 32, 0, s>>>(g_dev + 64);
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));
    return NULL;
}

static int workload(int start_ranges)
{
    void *host, *buf;
    CK(cudaMalloc(&g_dev, 4096));
    CK(cudaMalloc(&buf, COPY_BYTES));
    CK(cudaMallocHost(&host, COPY_BYTES));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    for (int c = 0; c < CYCLES; c++) {
        for (int i = 0; i < OUTSIDE; i++)
            wl_cr_outside<<<1, 32, 0, s>>>(g_dev);
        CK(cudaMemcpyAsync(buf, host, COPY_BYTES, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s));
        if (start_ranges)
            CK(cudaProfilerStart());
        for (int i = 0; i < INSIDE; i++)
            wl_cr_inside<<<1, 32, 0, s>>>(g_dev);
        CK(cudaMemcpyAsync(host, buf, COPY_BYTES, cudaMemcpyDeviceToHost, s));
        CK(cudaMemsetAsync(buf, 0, COPY_BYTES, s));
        CK(cudaStreamSynchronize(s));
        if (start_ranges)
            CK(cudaProfilerStop());
    }
    if (start_ranges)
        CK(cudaProfilerStart()); // never stopped: the exit closes this span
    pthread_t t;
    if (pthread_create(&t, NULL, second_thread, NULL) != 0)
        return 3;
    for (int i = 0; i < TAIL; i++)
        wl_cr_inside<<<1, 32, 0, s>>>(g_dev);
    CK(cudaStreamSynchronize(s));
    pthread_join(t, NULL);
    CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(host));
    CK(cudaFree(buf));
    CK(cudaFree(g_dev));
    return 0;
}

static void check_ranged(sqlite3 *db, const char *log)
{
    char d[512], cmd[4096];
    double inside = qd(db, "SELECT count(*) FROM kernels WHERE name = 'wl_cr_inside'");
    double thread = qd(db, "SELECT count(*) FROM kernels WHERE name = 'wl_cr_thread'");
    double outside = qd(db, "SELECT count(*) FROM kernels WHERE name = 'wl_cr_outside'");
    snprintf(d, sizeof d, "wl_cr_inside %.0f of %d, wl_cr_thread %.0f of %d, wl_cr_outside %.0f (0 expected of %d"
             " launched outside)", inside, CYCLES * INSIDE + TAIL, thread, THREAD_LAUNCHES, outside, CYCLES * OUTSIDE);
    verdict("kernels inside the spans, none outside",
            inside == CYCLES * INSIDE + TAIL && thread == THREAD_LAUNCHES && outside == 0, d);
    double h2d = qd(db, "SELECT count(*) FROM memcpy WHERE kind = 'HtoD' AND bytes = 1048576");
    double d2h = qd(db, "SELECT count(*) FROM memcpy WHERE kind = 'DtoH' AND bytes = 1048576");
    double sets = qd(db, "SELECT count(*) FROM memset WHERE bytes = 1048576");
    snprintf(d, sizeof d, "D2H copies %.0f of %d, memsets %.0f of %d, H2D copies (outside) %.0f", d2h, CYCLES, sets,
             CYCLES, h2d);
    verdict("copies and memsets inside the spans only", d2h == CYCLES && sets == CYCLES && h2d == 0, d);
    double unlinked = qd(db, "SELECT count(*) FROM kernel WHERE api_id IS NULL");
    snprintf(d, sizeof d, "%.0f recorded kernels without their launch call", unlinked);
    verdict("every kernel linked to its launch", unlinked == 0, d);
    double stray = qd(db, "SELECT count(*) FROM api_call a WHERE NOT EXISTS (SELECT 1 FROM capture_range r"
                          " WHERE r.pid = a.pid AND a.start_ns >= r.start_ns AND a.end_ns <= r.end_ns)");
    double calls = qd(db, "SELECT count(*) FROM api_call");
    snprintf(d, sizeof d, "%.0f of %.0f API calls outside every span", stray, calls);
    verdict("API calls inside the spans", calls > 0 && stray == 0, d);
    double ranges = qd(db, "SELECT count(*) FROM capture_range");
    double stopped = qd(db, "SELECT count(*) FROM capture_range WHERE ended_by = 'stop'");
    double exited = qd(db, "SELECT count(*) FROM capture_range WHERE ended_by = 'exit'");
    double mode = qd(db, "SELECT count(*) FROM process WHERE capture_range = 'profiler-api'");
    snprintf(d, sizeof d, "%.0f spans (%.0f stopped, %.0f closed by the exit), mode set on %.0f process(es)", ranges,
             stopped, exited, mode);
    verdict("spans", ranges == CYCLES + 1 && stopped == CYCLES && exited == 1 && mode == 1, d);
    double late = qd(db, "SELECT count(*) FROM kernel k JOIN api_call a ON a.id = k.api_id WHERE NOT EXISTS"
                         " (SELECT 1 FROM capture_range r WHERE r.pid = k.pid AND a.start_ns >= r.start_ns"
                         " AND a.end_ns <= r.end_ns)");
    snprintf(d, sizeof d, "%.0f kernels launched outside their span", late);
    verdict("launch times inside the spans", late == 0, d);
    double lost = qd(db, "SELECT coalesce(sum(count), 0) FROM lost");
    snprintf(d, sizeof d, "%.0f records lost", lost);
    verdict("nothing lost", lost == 0, d);
    snprintf(cmd, sizeof cmd, "grep -q 'capture   only between cudaProfilerStart and cudaProfilerStop: %d ranges' '%s'",
             CYCLES + 1, log);
    verdict("run summary", system(cmd) == 0, "the summary names the spans");
}

static int checker(const char *warplens, const char *self)
{
    char dir[] = "/tmp/wl_gpu_capture_range.XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char session[256], log[256], d[512], cmd[8192];
    snprintf(session, sizeof session, "%s/ranged.wlsession", dir);
    snprintf(log, sizeof log, "%s/ranged.log", dir);
    int rc = run_self(warplens, "--capture-range profiler-api", self, "--workload", session, log);
    snprintf(cmd, sizeof cmd, "cat '%s'", log);
    if (system(cmd) != 0)
        return 2;
    sqlite3 *db = judge_run("run with --capture-range", rc, session);
    if (!db)
        return gpu_test_done(dir, "gpu_test_capture_range");
    check_ranged(db, log);
    sqlite3_close(db);

    snprintf(session, sizeof session, "%s/nostart.wlsession", dir);
    snprintf(log, sizeof log, "%s/nostart.log", dir);
    rc = run_self(warplens, "--capture-range profiler-api", self, "--workload-nostart", session, log);
    snprintf(d, sizeof d, "exit status %d", rc);
    verdict("run without cudaProfilerStart", rc == 0, d);
    if (sqlite3_open_v2(session, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        double k = qd(db, "SELECT count(*) FROM kernel"), a = qd(db, "SELECT count(*) FROM api_call");
        double m = qd(db, "SELECT count(*) FROM memcpy");
        snprintf(d, sizeof d, "%.0f kernels, %.0f copies, %.0f API calls recorded", k, m, a);
        verdict("nothing traced without a span", k == 0 && a == 0 && m == 0, d);
        sqlite3_close(db);
    } else {
        verdict("session without spans", 0, "cannot open it");
    }
    snprintf(cmd, sizeof cmd, "grep -q 'never called cudaProfilerStart: nothing was traced' '%s'", log);
    verdict("run summary without spans", system(cmd) == 0, "the summary says why nothing was traced");
    return gpu_test_done(dir, "gpu_test_capture_range");
}

static int workloads(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--workload"))
        return workload(1);
    if (argc == 2 && !strcmp(argv[1], "--workload-nostart"))
        return workload(0);
    return 2;
}

int main(int argc, char **argv) { return gpu_test_main(argc, argv, workloads, checker); }
