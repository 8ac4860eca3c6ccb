// GPU suite: the capture core end to end. This program is both the workload (run under
// `warplens run` with --workload) and the checker (default): it profiles itself, opens the
// session and demands that every launch, copy, range, scope and thread it made is there exactly
// once with the right fields, that launches link to their API calls (graph replays to their graph
// launch), and that nothing was lost. A second run is killed by SIGKILL mid-way: the session must
// still be readable, marked incomplete, and hold what was flushed before the kill.
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_workload_capture.cuh"
#include "warplens/warplens.h"
#include "gpu_check.h"
#include "gpu_ck.h"

enum { FILL_N = 50, WORKERS = 4, SAXPY_PER_WORKER = 25, GRAPH_NODES = 3, GRAPH_REPLAYS = 20 };
enum { MiB = 1 << 20 };

// ------------------------------------------------------------------------------------ workload
struct worker_arg {
    int id;
    float *x, *y;
};

static void *worker_main(void *p)
{
    worker_arg *w = (worker_arg *)p;
    char name[32];
    snprintf(name, sizeof name, "worker-%d", w->id);
    warplens_thread_name(name);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    warplens_scope_begin(name);
    for (int i = 0; i < SAXPY_PER_WORKER; i++)
        wl_test_saxpy<<<256, 256, 1024, s>>>(w->x, w->y, 0.5f, 256 * 256);
    CK(cudaGetLastError());
    warplens_scope_end();
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));
    return NULL;
}

static int workload(int killed)
{
    warplens_thread_name("main-launcher");
    nvtxRangePushA("nvtx-outer");
    float *d_a, *d_b, *h_pinned;
    CK(cudaMalloc(&d_a, 8 * MiB));
    CK(cudaMalloc(&d_b, 8 * MiB));
    CK(cudaMallocHost(&h_pinned, 4 * MiB));
    char *h_page = (char *)malloc(MiB);
    memset(h_page, 1, MiB);
    cudaStream_t sA;
    CK(cudaStreamCreateWithFlags(&sA, cudaStreamNonBlocking));

    warplens_scope_begin("scope-A");
    warplens_annotate_scope(1e6, 2e6, WARPLENS_FP32);
    for (int i = 0; i < (killed ? 20 : FILL_N); i++) {
        warplens_annotate_next_launch(64 * 2 * 128, 64 * 2 * 128 * 4.0, WARPLENS_FP32);
        wl_test_fill<<<dim3(64, 2), 128, 0, sA>>>(d_a, 1.0f);
    }
    CK(cudaGetLastError());
    warplens_scope_end();
    if (killed) {
        CK(cudaDeviceSynchronize());
        usleep(800 * 1000); // CUPTI flushes every 200 ms, the writer every 100 ms
        raise(SIGKILL);
    }

    nvtxRangeId_t se = nvtxRangeStartA("nvtx-startend");
    for (int i = 0; i < 3; i++)
        CK(cudaMemcpy(d_a, h_page, MiB, cudaMemcpyHostToDevice));
    for (int i = 0; i < 2; i++)
        CK(cudaMemcpyAsync(d_b, h_pinned, 4 * MiB, cudaMemcpyHostToDevice, sA));
    for (int i = 0; i < 2; i++)
        CK(cudaMemcpyAsync(h_pinned, d_b, 2 * MiB, cudaMemcpyDeviceToHost, sA));
    CK(cudaMemcpy(d_b, d_a, 8 * MiB, cudaMemcpyDeviceToDevice));
    for (int i = 0; i < 2; i++)
        CK(cudaMemsetAsync(d_a, 0, 3 * MiB, sA));
    nvtxRangeEnd(se);
    nvtxMarkA("nvtx-mark");

    nvtxDomainHandle_t dom = nvtxDomainCreateA("wl-test-domain");
    nvtxEventAttributes_t attr = {};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "domain-range";
    nvtxDomainRangePushEx(dom, &attr);

    pthread_t t[WORKERS];
    worker_arg wa[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        wa[i] = worker_arg{i, d_a, d_b};
        pthread_create(&t[i], NULL, worker_main, &wa[i]);
    }
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    nvtxDomainRangePop(dom);

    // cooperative launch: one block per SM
    int sms = 0, *d_counter;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&d_counter, sizeof(int)));
    void *coop_args[] = {&d_counter};
    CK(cudaLaunchCooperativeKernel((void *)wl_test_coop, dim3(sms), dim3(128), coop_args, 0, sA));

    // clusters: compile-time dims and cudaLaunchKernelEx (cuLaunchKernelEx underneath)
    wl_test_cluster<<<8, 64, 0, sA>>>(d_a);
    CK(cudaGetLastError());
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(8);
    cfg.blockDim = dim3(64);
    cfg.stream = sA;
    cudaLaunchAttribute la[1];
    la[0].id = cudaLaunchAttributeClusterDimension;
    la[0].val.clusterDim.x = 2, la[0].val.clusterDim.y = 1, la[0].val.clusterDim.z = 1;
    cfg.attrs = la;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, wl_test_cluster_ex, d_a));

    // a graph replayed many times
    cudaStream_t sG;
    CK(cudaStreamCreateWithFlags(&sG, cudaStreamNonBlocking));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(sG, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < GRAPH_NODES; k++)
        wl_test_graph_node<<<32, 128, 0, sG>>>(d_b, 1.0f + k);
    CK(cudaStreamEndCapture(sG, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < GRAPH_REPLAYS; r++)
        CK(cudaGraphLaunch(ge, sG));

    cudaEvent_t ev;
    CK(cudaEventCreate(&ev));
    CK(cudaEventRecord(ev, sG));
    CK(cudaEventSynchronize(ev));
    CK(cudaStreamSynchronize(sA));
    CK(cudaDeviceSynchronize());
    nvtxRangePop();

    // A forked child that never touches CUDA must not disturb the parent's recording.
    pid_t child = fork();
    if (child == 0)
        exit(0); // runs atexit handlers in the child: the recorder must stay silent
    int st;
    waitpid(child, &st, 0);

    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaDeviceReset()); // records must be flushed before the context goes away
    free(h_page);
    return 0;
}

// ------------------------------------------------------------------------------------ checker
static void expect(int ok, const char *what, long long got, long long want)
{
    char d[96];
    snprintf(d, sizeof d, "got %lld, want %lld", got, want);
    verdict(what, ok, d);
}

static long long q(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -999999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        printf("SQL error: %s\n  in: %s\n", sqlite3_errmsg(db), sql);
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void eq(sqlite3 *db, const char *what, const char *sql, long long want)
{
    long long got = q(db, sql);
    expect(got == want, what, got, want);
}

static int run_under_warplens(const char *warplens, const char *out, const char *self, const char *mode)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(warplens, warplens, "run", "-q", "-o", out, "--", self, mode, (char *)NULL);
        _exit(126);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* "name: what" holds when none of name's kernels (k, joined as `join` says) matches `bad` */
static void no_kernel_where(sqlite3 *db, const char *name, const char *what, const char *join, const char *bad)
{
    char sql[1024], label[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM kernels k %s WHERE k.short_name = '%s' AND (%s)", join, name, bad);
    snprintf(label, sizeof label, "%s: %s", name, what);
    eq(db, label, sql, 0);
}

static void check_kernel(sqlite3 *db, const void *fn, const char *name, long long count, dim3 grid, dim3 block,
                         int dyn)
{
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, fn));
    char sql[1024], what[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM kernels WHERE short_name = '%s'", name);
    snprintf(what, sizeof what, "%s: %lld kernels recorded", name, count);
    eq(db, what, sql, count);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM kernels WHERE short_name = '%s' AND NOT (grid_x = %u AND grid_y = %u AND grid_z = %u"
             " AND block_x = %u AND block_y = %u AND block_z = %u AND dynamic_smem = %d AND static_smem = %zu"
             " AND registers_per_thread = %d AND local_mem_per_thread = %zu AND threads = %lld)",
             name, grid.x, grid.y, grid.z, block.x, block.y, block.z, dyn, fa.sharedSizeBytes,
             fa.numRegs < 16 ? 16 : fa.numRegs, fa.localSizeBytes,
             (long long)grid.x * grid.y * grid.z * block.x * block.y * block.z);
    /* CUPTI reports at least 16 registers per thread on sm_90 (the allocation minimum) where
     * cudaFuncGetAttributes gives the compiled count. */
    snprintf(what, sizeof what, "%s: grid, block, smem, registers (compiled %d), threads as launched", name,
             fa.numRegs);
    if (q(db, sql) != 0) {
        char diag[512];
        snprintf(diag, sizeof diag,
                 "SELECT grid_x, grid_y, grid_z, block_x, block_y, block_z, dynamic_smem, static_smem,"
                 " registers_per_thread, local_mem_per_thread, threads FROM kernels WHERE short_name = '%s' LIMIT 1",
                 name);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, diag, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
            printf("  recorded:");
            for (int c = 0; c < 11; c++)
                printf(" %lld", (long long)sqlite3_column_int64(st, c));
            printf("\n  expected: %u %u %u %u %u %u %d %zu %d %zu\n", grid.x, grid.y, grid.z, block.x, block.y,
                   block.z, dyn, fa.sharedSizeBytes, fa.numRegs, fa.localSizeBytes);
            sqlite3_finalize(st);
        }
    }
    eq(db, what, sql, 0);
    /* CUPTI gives graph-node kernels no submitted timestamp: only their timing is required. */
    no_kernel_where(db, name, "timed, and queued <= submitted <= start < end outside graphs", "",
                    "k.has_timestamps = 0 OR k.duration_ns <= 0 OR (k.graph_id IS NULL AND (k.queue_delay_ns IS NULL"
                    " OR k.submit_delay_ns IS NULL OR k.queued_ns > k.submitted_ns OR k.submitted_ns > k.start_ns))");
    no_kernel_where(db, name, "every kernel linked to the API call that launched it",
                    "LEFT JOIN api_call a ON a.id = k.api_id", "a.id IS NULL OR a.start_ns > k.start_ns OR a.tid != k.tid");
    /* CUPTI's queued time is taken by the driver inside the launch call: the recorder's call times
     * (host_clock.c: TSC ticks mapped to CUPTI's clock) must bracket it */
    no_kernel_where(db, name, "CUPTI's queued time inside its launch call's recorded start..end",
                    "JOIN api_call a ON a.id = k.api_id",
                    "k.graph_id IS NULL AND NOT (k.queued_ns BETWEEN a.start_ns AND a.end_ns)");
}

static int checker(const char *warplens, const char *self)
{
    const char *out = "/tmp/wl_gpu_capture.wlsession";
    int rc = run_under_warplens(warplens, out, self, "--workload");
    expect(rc == 0, "workload under warplens exits 0", rc, 0);
    sqlite3 *db;
    if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        printf("FAIL cannot open %s\n", out);
        return 1;
    }
    CK(cudaSetDevice(0));
    check_kernel(db, (const void *)wl_test_fill, "wl_test_fill", FILL_N, dim3(64, 2), dim3(128), 0);
    check_kernel(db, (const void *)wl_test_saxpy, "wl_test_saxpy", WORKERS * SAXPY_PER_WORKER, dim3(256), dim3(256),
                 1024);
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    check_kernel(db, (const void *)wl_test_coop, "wl_test_coop", 1, dim3(sms), dim3(128), 0);
    check_kernel(db, (const void *)wl_test_cluster, "wl_test_cluster", 1, dim3(8), dim3(64), 0);
    check_kernel(db, (const void *)wl_test_cluster_ex, "wl_test_cluster_ex", 1, dim3(8), dim3(64), 0);
    check_kernel(db, (const void *)wl_test_graph_node, "wl_test_graph_node", GRAPH_NODES * GRAPH_REPLAYS, dim3(32),
                 dim3(128), 0);

    eq(db, "one launch call per non-graph kernel",
       "SELECT count(DISTINCT api_id) - count(*) FROM kernels WHERE graph_id IS NULL", 0);
    eq(db, "cooperative launch recorded as such", "SELECT count(*) FROM kernels WHERE launch_type = 'cooperative'", 1);
    eq(db, "cluster dims recorded (2x1x1) for both cluster launches",
       "SELECT count(*) FROM kernels WHERE cluster_x = 2 AND cluster_y = 1 AND cluster_z = 1", 2);
    eq(db, "cudaLaunchKernelEx kernel linked to its launch call",
       "SELECT count(*) FROM kernels k JOIN api_call a ON a.id = k.api_id WHERE k.short_name = 'wl_test_cluster_ex'"
       " AND (a.name LIKE 'cudaLaunchKernelEx%' OR a.name LIKE 'cuLaunchKernelEx%')", 1);
    eq(db, "graph kernels carry graph id and node id",
       "SELECT count(*) FROM kernels WHERE short_name = 'wl_test_graph_node' AND graph_id IS NOT NULL AND graph_node_id IS NOT NULL",
       GRAPH_NODES * GRAPH_REPLAYS);
    eq(db, "each graph replay's kernels belong to its own cuGraphLaunch",
       "SELECT count(*) FROM (SELECT k.api_id FROM kernels k JOIN api_call a ON a.id = k.api_id"
       " WHERE k.short_name = 'wl_test_graph_node' AND a.category = 'graph_launch' GROUP BY k.api_id HAVING count(*) = 3)",
       GRAPH_REPLAYS);

    eq(db, "scope-A tags all its kernels",
       "SELECT count(*) FROM kernels k JOIN scope s ON s.pid = k.pid AND s.scope_id = k.scope_id"
       " WHERE k.short_name = 'wl_test_fill' AND s.name = 'scope-A'", FILL_N);
    eq(db, "worker scopes tag their kernels and match the launching thread's name",
       "SELECT count(*) FROM kernels k JOIN scope s ON s.pid = k.pid AND s.scope_id = k.scope_id"
       " JOIN thread t ON t.pid = k.pid AND t.tid = k.tid WHERE k.short_name = 'wl_test_saxpy'"
       " AND s.name = t.name AND s.name LIKE 'worker-%'", WORKERS * SAXPY_PER_WORKER);
    eq(db, "every annotated launch's counts attached to its kernel",
       "SELECT count(*) FROM annotation a JOIN kernels k ON k.id = a.kernel_id WHERE k.short_name = 'wl_test_fill'"
       " AND a.flops = 16384 AND a.bytes = 65536", FILL_N);
    eq(db, "scope annotation recorded",
       "SELECT count(*) FROM annotation a JOIN scope s ON s.pid = a.pid AND s.scope_id = a.scope_id"
       " WHERE s.name = 'scope-A' AND a.flops = 1e6", 1);
    eq(db, "thread names from the API", "SELECT count(*) FROM thread WHERE name_source = 'api' AND"
       " (name = 'main-launcher' OR name LIKE 'worker-%')", 1 + WORKERS);
    eq(db, "saxpy launched from 4 threads on 4 streams",
       "SELECT count(DISTINCT tid) * 10 + count(DISTINCT stream_id) FROM kernels WHERE short_name = 'wl_test_saxpy'",
       WORKERS * 10 + WORKERS);

    eq(db, "3 pageable HtoD copies of 1 MiB",
       "SELECT count(*) FROM memcpy WHERE kind = 'HtoD' AND src_kind = 'pageable' AND dst_kind = 'device' AND bytes = 1048576", 3);
    eq(db, "2 pinned HtoD copies of 4 MiB",
       "SELECT count(*) FROM memcpy WHERE kind = 'HtoD' AND src_kind = 'pinned' AND bytes = 4194304 AND is_async = 1", 2);
    eq(db, "2 DtoH copies of 2 MiB into pinned memory",
       "SELECT count(*) FROM memcpy WHERE kind = 'DtoH' AND dst_kind = 'pinned' AND bytes = 2097152", 2);
    eq(db, "1 DtoD copy of 8 MiB", "SELECT count(*) FROM memcpy WHERE kind = 'DtoD' AND bytes = 8388608", 1);
    eq(db, "2 memsets of 3 MiB", "SELECT count(*) FROM memset WHERE bytes = 3145728", 2);
    eq(db, "every copy and set linked to its API call and has a bandwidth",
       "SELECT (SELECT count(*) FROM memcpy WHERE api_id IS NULL OR bandwidth_gbps <= 0)"
       " + (SELECT count(*) FROM memset WHERE api_id IS NULL)", 0);

    eq(db, "NVTX push/pop range", "SELECT count(*) FROM nvtx_range WHERE name = 'nvtx-outer' AND end_ns > start_ns", 1);
    eq(db, "NVTX start/end range", "SELECT count(*) FROM nvtx_range WHERE name = 'nvtx-startend' AND end_ns > start_ns", 1);
    eq(db, "NVTX range in a named domain",
       "SELECT count(*) FROM nvtx_range WHERE name = 'domain-range' AND domain = 'wl-test-domain' AND end_ns > start_ns", 1);
    eq(db, "NVTX mark", "SELECT count(*) FROM nvtx_mark WHERE name = 'nvtx-mark'", 1);

    eq(db, "event, stream and context synchronisation recorded",
       "SELECT (SELECT count(*) > 0 FROM sync WHERE type = 'event') + (SELECT count(*) > 0 FROM sync WHERE type = 'stream')"
       " + (SELECT count(*) > 0 FROM sync WHERE type = 'context')", 3);
    eq(db, "device limits recorded",
       "SELECT count(*) FROM device WHERE sm_count > 0 AND smem_per_block_optin > 0 AND reserved_smem_per_block > 0"
       " AND regs_per_sm > 0 AND max_blocks_per_sm > 0", 1);
    eq(db, "nothing lost", "SELECT coalesce(sum(count), 0) FROM lost", 0);
    eq(db, "one process (the forked child made no CUDA calls), complete",
       "SELECT count(*) * 10 + sum(complete) FROM process", 11);
    eq(db, "session marked complete", "SELECT value = '1' FROM meta WHERE key = 'complete'", 1);
    sqlite3_close(db);

    // Killed by a signal: a valid, incomplete session with what was flushed.
    const char *out2 = "/tmp/wl_gpu_killed.wlsession";
    rc = run_under_warplens(warplens, out2, self, "--workload-killed");
    expect(rc == 128 + SIGKILL, "killed workload's status passed through (137)", rc, 128 + SIGKILL);
    if (sqlite3_open_v2(out2, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        eq(db, "killed run: session marked incomplete", "SELECT value FROM meta WHERE key = 'complete'", 0);
        eq(db, "killed run: process marked incomplete", "SELECT complete FROM process", 0);
        eq(db, "killed run: kernels flushed before the kill are there",
           "SELECT count(*) FROM kernels WHERE short_name = 'wl_test_fill' AND has_timestamps = 1", 20);
        sqlite3_close(db);
    } else {
        expect(0, "killed run: session readable", 0, 1);
    }
    printf("capture: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail != 0;
}

// "--workload" runs the workload, "--workload-killed" the one that is killed part-way
static int workloads(int argc, char **argv)
{
    (void)argc;
    return workload(!strcmp(argv[1], "--workload-killed"));
}

int main(int argc, char **argv) { return gpu_test_main(argc, argv, workloads, checker); }
