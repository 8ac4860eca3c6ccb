// GPU suite: hardware metrics of cuBLAS GEMMs against their analytical FLOP counts (issue 7, item 8).
// This program is the workload (--workload) and the checker (default): it runs itself under
// `warplens run --metrics`, each GEMM inside a warplens scope, and sums the metrics of the kernels
// each scope holds (cuBLAS may split a GEMM into several kernels):
//   ffma   FP32 SGEMM C = A B (TF32 off, the default math mode): exactly M*N*K FFMA in total
//   flops  2*FFMA + FADD + FMUL within 2% of 2*M*N*K (a split-K reduction adds FADDs, alpha FMULs)
// Two shapes, square and skinny, so a count that only matches one shape fails. DRAM bytes are shown
// against the compulsory traffic (A and B read, C written) for information: with 16 MiB matrices
// and a 50 MB L2 they depend on the kernel's tiling, so they are not checked here (the copy kernel
// in gpu_test_metrics is the DRAM check).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <string.h>
#include <unistd.h>

#include "gpu_check.h"
#include "warplens/warplens.h"
#include "gpu_ck.h"

#define CB(call)                                                                                   \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_);   \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

#define SASS(op) "smsp__sass_thread_inst_executed_op_" op "_pred_on.sum"
static const char METRICS[] = "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum," SASS("ffma") ","
                              SASS("fadd") "," SASS("fmul");

static const struct shape { int m, n, k; const char *scope; } SHAPES[] = {
    {2048, 2048, 2048, "sgemm-2048x2048x2048"},
    {4096, 1024, 512, "sgemm-4096x1024x512"},
};
enum { NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

static int workload(void)
{
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH)); // FP32 FFMA, no TF32 tensor cores
    size_t most = 0;
    for (int i = 0; i < NSHAPES; i++) {
        size_t e = (size_t)SHAPES[i].m * SHAPES[i].k + (size_t)SHAPES[i].k * SHAPES[i].n +
                   (size_t)SHAPES[i].m * SHAPES[i].n;
        most = e > most ? e : most;
    }
    float *buf;
    CK(cudaMalloc(&buf, most * sizeof(float)));
    CK(cudaMemset(buf, 0, most * sizeof(float)));
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < NSHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        float *a = buf, *b = a + (size_t)s->m * s->k, *c = b + (size_t)s->k * s->n;
        // warm-up outside the scope: cuBLAS' first call of a shape may load kernels or plan
        CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s->m, s->n, s->k, &one, a, s->m, b, s->k, &zero, c, s->m));
        CK(cudaDeviceSynchronize());
        warplens_scope_begin(s->scope);
        CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s->m, s->n, s->k, &one, a, s->m, b, s->k, &zero, c, s->m));
        CK(cudaDeviceSynchronize());
        warplens_scope_end();
    }
    CK(cudaFree(buf));
    CB(cublasDestroy(h));
    return 0;
}

// the sum of one metric over the kernels of a scope
static double scope_sum(sqlite3 *db, const char *scope, const char *metric)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT sum(km.value) FROM kernel_metric km JOIN kernels k ON k.id = km.kernel_id JOIN metric m ON"
             " m.id = km.metric_id JOIN scope s ON s.pid = k.pid AND s.scope_id = k.scope_id WHERE s.name = '%s'"
             " AND m.name = '%s'",
             scope, metric);
    return qd(db, sql);
}

static int checker(const char *warplens, const char *self)
{
    char dir[] = "/tmp/wl_gpu_gemm.XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char session[256], log[256], cmd[1024], opts[512], d[512];
    snprintf(session, sizeof session, "%s/gemm.wlsession", dir);
    snprintf(log, sizeof log, "%s/run.log", dir);
    snprintf(opts, sizeof opts, "--metrics '%s'", METRICS);
    int rc = run_self(warplens, opts, self, "--workload", session, log);
    snprintf(cmd, sizeof cmd, "cat '%s'", log);
    if (system(cmd) != 0)
        return 2;
    sqlite3 *db = judge_run("run", rc, session);
    if (!db)
        return 1;
    for (int i = 0; i < NSHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        char sql[512], what[128];
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM kernels k JOIN scope s ON s.pid = k.pid AND s.scope_id = k.scope_id"
                 " WHERE s.name = '%s'", s->scope);
        double kernels = qd(db, sql);
        snprintf(sql, sizeof sql,
                 "SELECT group_concat(short_name, ', ') FROM (SELECT DISTINCT k.short_name FROM kernels k JOIN scope s"
                 " ON s.pid = k.pid AND s.scope_id = k.scope_id WHERE s.name = '%s')", s->scope);
        sqlite3_stmt *st;
        const char *names = "?";
        char namebuf[512] = "?";
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
                snprintf(namebuf, sizeof namebuf, "%s", (const char *)sqlite3_column_text(st, 0));
            sqlite3_finalize(st);
        }
        names = namebuf;
        snprintf(d, sizeof d, "%.0f kernel(s): %.400s", kernels, names);
        snprintf(what, sizeof what, "%s: kernels in the scope", s->scope);
        verdict(what, kernels >= 1, d);
        double mnk = (double)s->m * s->n * s->k;
        double ffma = scope_sum(db, s->scope, SASS("ffma"));
        double fadd = scope_sum(db, s->scope, SASS("fadd"));
        double fmul = scope_sum(db, s->scope, SASS("fmul"));
        snprintf(what, sizeof what, "%s: FFMA = M*N*K", s->scope);
        within(what, ffma, mnk, -0.02, 0.02);
        snprintf(what, sizeof what, "%s: FP32 FLOP = 2*M*N*K", s->scope);
        within(what, ffma >= 0 && fadd >= 0 && fmul >= 0 ? 2 * ffma + fadd + fmul : -1, 2 * mnk, -0.02, 0.02);
        double rd = scope_sum(db, s->scope, "dram__bytes_read.sum");
        double wr = scope_sum(db, s->scope, "dram__bytes_write.sum");
        double ns = scope_sum(db, s->scope, "gpu__time_duration.sum");
        printf("INFO: %s: FADD %.0f, FMUL %.0f; DRAM read %.3g B (A+B %.3g B), written %.3g B (C %.3g B); GPU time"
               " %.1f us, %.1f TFLOP/s FP32\n",
               s->scope, fadd, fmul, rd, 4.0 * ((double)s->m * s->k + (double)s->k * s->n), wr,
               4.0 * s->m * s->n, ns / 1e3, ns > 0 ? 2 * mnk / ns / 1e3 : 0);
    }
    sqlite3_close(db);
    return gpu_test_done(dir, "gpu_test_metrics_gemm");
}

static int workloads(int argc, char **argv)
{
    return argc == 2 && !strcmp(argv[1], "--workload") ? workload() : 2;
}

int main(int argc, char **argv) { return gpu_test_main(argc, argv, workloads, checker); }
