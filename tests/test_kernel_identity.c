/* Kernel identity without a GPU:
 *  - backend rules (analysis/kernel_backend.c) on every kernel name of the tests/data H100
 *    sessions and on known names of each library;
 *  - PyTorch's emit_nvtx range text (store/torch_range.c): operator, shapes, seq and op_id in the
 *    formats PyTorch writes, and ordinary or damaged range names that are not operators;
 *  - the import (store/session_identity.c) on a crafted capture: launches inside nested
 *    operator ranges, a backward thread with its own ranges, a range closed on another thread,
 *    ranges starting and ending exactly at a launch, scopes with an application thread id (and a
 *    nested scope inheriting it), thread tiers and the process default; what the kernel cursor
 *    and `--by op`'s summaries read back; damaged attribute records refused with their offset;
 *  - `warplens import --upgrade` on a copy of a tests/data session. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/kernel_backend.h"
#include "capture_builder.h"
#include "session_test_util.h"
#include "store/session_identity.h"
#include "store/session_kernels.h"
#include "store/torch_range.h"
#include "test.h"

#define T0 1700000000000000000ull
#define PID 4242u
#define MAIN 4242u
#define BACKWARD 4250u
#define JAVA 4251u

static char g_dir[512];

/* ---- backends ------------------------------------------------------------------------------ */

static void test_backends(void)
{
    static const struct {
        const char *short_name, *want;
    } CASES[] = {
        /* every kernel of the tests/data sessions */
        {"at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel", "PyTorch native"},
        {"at::native::reduce_kernel", "PyTorch native"},
        {"at::native::vectorized_elementwise_kernel", "PyTorch native"},
        {"block_sum", "user code"},
        {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "cuBLASLt"},
        {"scale_bias", "user code"},
        {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_"
         "kernel__5x_cublas", "cuBLAS"},
        {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_"
         "split_k_kernel__5x_cublas", "cuBLAS"},
        {"tiled_matmul", "user code"},
        {"wl_pm_copy_kernel", "user code"},
        {"wl_test_cluster_ex", "user code"},
        /* known names of the other libraries */
        {"cudnn::detail::implicit_convolve_sgemm", "cuDNN"},
        {"sm86_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4",
         "cuDNN"},
        {"sm90_xmma_wgrad_implicit_gemm_indexed_wo_smem_f16f16_f16f32_f32", "cuDNN"},
        {"cublasLt::epilogue::impl::globalKernel", "cuBLASLt"},
        {"nvjet_hsh_128x256_64x4_2x1_v_bz_coopB_TNT", "cuBLASLt"},
        {"ampere_sgemm_128x64_nn", "cuBLAS"},
        {"volta_h884gemm_64x64_ldg8_nn", "cuBLAS"},
        {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", "cuBLAS"},
        {"gemv2T_kernel_val", "cuBLAS"},
        {"gemmSN_TN_kernel", "cuBLAS"},
        {"splitKreduce_kernel", "cuBLAS"},
        {"cutlass::Kernel2", "CUTLASS"},
        {"cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4", "CUTLASS"},
        {"fmha_cutlassF_f16_aligned_64x128_rf_sm80", "CUTLASS"},
        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "NCCL"},
        {"ncclKernel_AllGather_RING_LL_Sum_int8_t", "NCCL"},
        {"triton_poi_fused_add_mul_0", "Triton"},
        {"triton_red_fused__softmax_1", "Triton"},
        {"triton_tem_fused_mm_0", "Triton"},
        {"cub::CUB_200200_800_900_NS::DeviceRadixSortOnesweepKernel", "Thrust/CUB"},
        {"thrust::cuda_cub::core::_kernel_agent", "Thrust/CUB"},
        {"at_cuda_detail::cub::DeviceSegmentedRadixSortKernel", "Thrust/CUB"},
        {"pytorch_flash::flash_fwd_kernel", "PyTorch native"},
        {"c10::cuda::fill_kernel", "PyTorch native"},
        {"my_gemm_kernel", "user code"},
        {"saxpy", "user code"},
        {"", "user code"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const char *got = wl_kernel_backend(CASES[i].short_name, CASES[i].short_name, NULL);
        if (strcmp(got, CASES[i].want))
            fprintf(stderr, "backend of %s: %s, want %s\n", CASES[i].short_name, got, CASES[i].want);
        CHECK_EQ_STR(got, CASES[i].want);
    }
    /* the full name decides when the short one does not say (the cuBLAS tag is in the template) */
    CHECK_EQ_STR(wl_kernel_backend("gemm", "void gemm<cublasGemmParams>(float*)", NULL), "cuBLAS");
    CHECK_EQ_STR(wl_kernel_backend(NULL, NULL, "_Z20ncclDevKernel_Genericv"), "NCCL");
    CHECK_EQ_STR(wl_kernel_backend(NULL, NULL, NULL), "user code");
    /* every name of every tests/data session gets one of the documented backends */
    const char *data = getenv("WARPLENS_TEST_DATA");
    static const char *const KNOWN[] = {"cuBLAS", "cuBLASLt", "cuDNN", "CUTLASS", "NCCL", "Triton",
                                        "PyTorch native", "Thrust/CUB", "user code"};
    static const char *const FILES[] = {"capture-h100", "demo-h100", "killed-h100", "metrics-h100",
                                        "pm-sampling-h100", "stalls-torch-h100", "torch-h100", "torch-occ-h100"};
    for (size_t f = 0; data && f < sizeof FILES / sizeof FILES[0]; f++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s.wlsession", data, FILES[f]);
        sqlite3 *db;
        CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
        sqlite3_stmt *st;
        CHECK(sqlite3_prepare_v2(db, "SELECT short_name, demangled, mangled FROM kernel_name", -1, &st, NULL) == 0);
        int n = 0;
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *b = wl_kernel_backend((const char *)sqlite3_column_text(st, 0),
                                              (const char *)sqlite3_column_text(st, 1),
                                              (const char *)sqlite3_column_text(st, 2));
            int known = 0;
            for (size_t k = 0; k < sizeof KNOWN / sizeof KNOWN[0]; k++)
                known |= !strcmp(b, KNOWN[k]);
            CHECK(known);
            n++;
        }
        CHECK(n > 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
}

/* ---- PyTorch range text -------------------------------------------------------------------- */

static int parse(const char *text, wl_torch_range *r) { return wl_torch_range_parse(text, strlen(text), r); }

static void check_op(const char *text, const char *name, const char *shape, long long seq, long long op_id)
{
    wl_torch_range r;
    int ok = parse(text, &r);
    CHECK(ok);
    if (!ok) {
        fprintf(stderr, "  not parsed: %s\n", text);
        return;
    }
    char n[256], s[256];
    snprintf(n, sizeof n, "%.*s", (int)r.name_len, r.name);
    snprintf(s, sizeof s, "%.*s", (int)r.shape_len, r.shape ? r.shape : "");
    CHECK_EQ_STR(n, name);
    CHECK_EQ_STR(s, shape ? shape : "");
    CHECK(shape ? r.shape != NULL : r.shape == NULL);
    CHECK_EQ_INT(r.seq, seq);
    CHECK_EQ_INT(r.op_id, op_id);
}

static void test_torch_ranges(void)
{
    /* what getNvtxStr writes under emit_nvtx(record_shapes=True) */
    check_op("aten::addmm, seq = 12, op_id = 34, sizes = [[512], [128, 256], [256, 512], [], []], input_op_ids = "
             "[(33,0), (32,0)]", "aten::addmm", "[[512], [128, 256], [256, 512], [], []]", 12, 34);
    check_op("aten::relu, op_id = 7, sizes = [[16, 32]]", "aten::relu", "[[16, 32]]", -1, 7);
    check_op("AddmmBackward0, seq = 12, op_id = 99, sizes = [[128, 512]]", "AddmmBackward0", "[[128, 512]]", 12, 99);
    check_op("autograd::engine::evaluate_function: AddmmBackward0, seq = 12, op_id = 98",
             "autograd::engine::evaluate_function: AddmmBackward0", NULL, 12, 98);
    check_op("aten::empty, seq = 0, op_id = 3, sizes = [[], [], [], [], [], []]", "aten::empty",
             "[[], [], [], [], [], []]", 0, 3);
    check_op("aten::zeros, op_id = 5, sizes = [[-1], [0]]", "aten::zeros", "[[-1], [0]]", -1, 5);
    /* earlier releases: no op_id; backward functions marked "stashed seq" */
    check_op("aten::mm, seq = 3, sizes = [[2, 3], [3, 4]]", "aten::mm", "[[2, 3], [3, 4]]", 3, -1);
    check_op("MmBackward, stashed seq = 3", "MmBackward", NULL, 3, -1);
    /* a record_function label under emit_nvtx is an operator range too; its name may hold ", " */
    check_op("my block, op_id = 41, sizes = []", "my block", "[]", -1, 41);
    /* not operator ranges */
    static const char *const NOT[] = {"step 1", "forward", "", "loss, seq = abc", "x, sizes = [[1, 2]] trailing",
                                      "a, op_id = 12345678901234567890123", "aten::x, sizes = [[1, 2]",
                                      ", seq = 1", "aten::y, seq = 1, seq = 2", "aten::z, sizes = [[a]]",
                                      "aten::w, seq = 1,", "aten::v, op_id = "};
    for (size_t i = 0; i < sizeof NOT / sizeof NOT[0]; i++) {
        wl_torch_range r;
        int is_op = parse(NOT[i], &r);
        if (is_op)
            fprintf(stderr, "  parsed as an operator: \"%s\"\n", NOT[i]);
        CHECK(!is_op);
    }
    char deep[400] = "aten::deep, sizes = ";
    for (int i = 0; i < 70; i++)
        strcat(deep, "[");
    for (int i = 0; i < 70; i++)
        strcat(deep, "]");
    wl_torch_range r;
    CHECK(!parse(deep, &r));
    CHECK(!wl_torch_range_parse(NULL, 0, &r));
    /* bounded by len, not by a terminator */
    const char *t = "aten::abs, op_id = 2, sizes = [[4]]GARBAGE";
    CHECK(wl_torch_range_parse(t, strlen(t) - 7, &r) && r.shape_len == 5);
}

/* ---- identity at import -------------------------------------------------------------------- */

static uint32_t g_launch; /* string id of the launch API's name */

static void marker(capbuf *b, uint32_t kind, uint32_t id, uint32_t tid, uint64_t ts, const char *name)
{
    wlcap_marker m = {T0 + ts, id, kind, tid, name ? cb_string(b, name) : 0, 0, 0};
    cb_record(b, WLCAP_MARKER, &m, sizeof m);
}

static void range(capbuf *b, uint32_t id, uint32_t tid, uint64_t start, uint64_t end, uint32_t end_tid,
                  const char *name)
{
    marker(b, WLCAP_MARK_START, id, tid, start, name);
    marker(b, WLCAP_MARK_END, id, end_tid, end, NULL);
}

/* A launch call on tid at ts (1 us) and its kernel (correlation id corr). */
static void launch(capbuf *b, uint32_t tid, uint64_t ts, uint32_t corr, uint32_t name)
{
    wlcap_api a;
    memset(&a, 0, sizeof a);
    a.start = T0 + ts, a.end = T0 + ts + 1000, a.cbid = 307, a.tid = tid, a.correlation_id = corr;
    a.domain = WLCAP_API_DRIVER;
    cb_record(b, WLCAP_API, &a, sizeof a);
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.queued = T0 + ts + 100, k.submitted = T0 + ts + 200, k.start = T0 + ts + 5000, k.end = T0 + ts + 9000;
    k.correlation_id = corr;
    k.grid_x = k.grid_y = k.grid_z = k.block_y = k.block_z = 1;
    k.block_x = 128;
    k.name_str = name;
    cb_record(b, WLCAP_KERNEL, &k, sizeof k);
}

static void attr(capbuf *b, uint32_t kind, uint32_t tid, uint64_t ts, uint64_t scope, uint64_t value, const char *s)
{
    wlcap_attr a = {ts ? T0 + ts : 0, scope, value, kind, tid, s ? cb_string(b, s) : 0, 0};
    cb_record(b, WLCAP_ATTR, &a, sizeof a);
}

static void scope(capbuf *b, uint32_t kind, uint64_t id, uint64_t parent, uint32_t tid, uint64_t ts, const char *name)
{
    wlcap_scope s = {T0 + ts, id, parent, tid, kind, name ? cb_string(b, name) : 0, 0};
    cb_record(b, WLCAP_SCOPE, &s, sizeof s);
}

/* Times in ns after T0. The main thread runs step > aten::linear > aten::addmm; autograd's thread
 * runs AddmmBackward0 > aten::mm; a Java-style thread runs scope batch (app thread 777) > inner. */
static void build(capbuf *b)
{
    cb_init(b, PID, T0);
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = PID, p.start_ns = T0, p.record_mask = WL_RECORD_ALL;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    p.cmdline_str = cb_string(b, "python3 train.py");
    cb_record(b, WLCAP_PROCESS, &p, sizeof p);
    g_launch = cb_string(b, "cuLaunchKernel");
    wlcap_api_name an = {WLCAP_API_DRIVER, 307, g_launch, 0};
    cb_record(b, WLCAP_API_NAME, &an, sizeof an);
    uint32_t kn = cb_string(b, "_Z6kernelPf");
    attr(b, WLCAP_ATTR_TIER, 0, 0, 0, 0, "PRODUCTION");                  /* WARPLENS_TIER */
    range(b, 1, MAIN, 0, 100000, MAIN, "step");
    range(b, 2, MAIN, 10000, 40000, MAIN, "aten::linear, seq = 1, op_id = 1, sizes = [[8, 16], [32, 16], [32]]");
    range(b, 3, MAIN, 15000, 30000, MAIN, "aten::addmm, seq = 2, op_id = 2, sizes = [[32], [8, 16], [16, 32]]");
    launch(b, MAIN, 15000, 10, kn); /* at the start of addmm: inside it */
    launch(b, MAIN, 20000, 11, kn); /* inside addmm */
    launch(b, MAIN, 30000, 12, kn); /* addmm ended at 30000: linear */
    launch(b, MAIN, 35000, 13, kn); /* linear */
    range(b, 4, MAIN, 45000, 55000, BACKWARD, "handed-over"); /* closed on another thread: not the main thread's */
    attr(b, WLCAP_ATTR_TIER, MAIN, 46000, 0, 0, "CORRECTNESS");
    launch(b, MAIN, 50000, 14, kn); /* step only; tier CORRECTNESS */
    attr(b, WLCAP_ATTR_TIER, MAIN, 65000, 0, 0, NULL); /* cleared: back to the default */
    range(b, 5, BACKWARD, 60000, 80000, BACKWARD, "AddmmBackward0, seq = 2, op_id = 9, sizes = [[8, 32]]");
    range(b, 6, BACKWARD, 65000, 75000, BACKWARD, "aten::mm, op_id = 10, sizes = [[8, 32], [32, 16]]");
    launch(b, BACKWARD, 70000, 15, kn); /* backward thread: aten::mm */
    launch(b, MAIN, 70000, 16, kn);     /* main thread at the same time: step, tier PRODUCTION */
    launch(b, BACKWARD, 78000, 17, kn); /* mm closed: AddmmBackward0 */
    scope(b, WLCAP_SCOPE_BEGIN, 1, 0, JAVA, 10000, "batch");
    attr(b, WLCAP_ATTR_SCOPE_THREAD, JAVA, 10000, 1, 777, NULL);
    scope(b, WLCAP_SCOPE_BEGIN, 2, 1, JAVA, 20000, "inner");
    launch(b, JAVA, 25000, 18, kn); /* scope inner, app thread 777 (inherited) */
    scope(b, WLCAP_SCOPE_END, 2, 1, JAVA, 30000, NULL);
    launch(b, JAVA, 40000, 19, kn); /* scope batch */
    scope(b, WLCAP_SCOPE_END, 1, 0, JAVA, 90000, NULL);
    launch(b, JAVA, 95000, 20, kn); /* nothing open */
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = T0 + 200000, e.reason = WLCAP_END_EXIT;
    cb_record(b, WLCAP_END, &e, sizeof e);
}

static void kernel_identity(sqlite3 *db, int corr, const char *op, const char *shape, const char *tier, long long vt)
{
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM kernel k LEFT JOIN op o ON o.id = k.op_id LEFT JOIN scope s ON s.pid = k.pid"
             " AND s.scope_id = k.scope_id WHERE k.correlation_id = %d AND coalesce(o.name, '-') = '%s'"
             " AND coalesce(nullif(o.shape, ''), '-') = '%s' AND coalesce(k.tier, '-') = '%s'"
             " AND coalesce(s.app_thread_id, 0) = %lld",
             corr, op, shape, tier, vt);
    long long n = test_sql_int(db, sql);
    if (n != 1) {
        char q[300];
        snprintf(q, sizeof q, "SELECT o.name || ' | ' || o.shape || ' | ' || coalesce(k.tier, '-') FROM kernel k"
                              " LEFT JOIN op o ON o.id = k.op_id WHERE k.correlation_id = %d", corr);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            fprintf(stderr, "  kernel %d: %s\n", corr, sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    CHECK_EQ_INT(n, 1);
}

static void test_import(void)
{
    capbuf b;
    build(&b);
    char out[700], err[512];
    CHECK(test_capture_session(&b, g_dir, "identity", out, sizeof out, err, sizeof err) == 0);
    free(b.data);
    sqlite3 *db;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    kernel_identity(db, 10, "aten::addmm", "[[32], [8, 16], [16, 32]]", "PRODUCTION", 0);
    kernel_identity(db, 11, "aten::addmm", "[[32], [8, 16], [16, 32]]", "PRODUCTION", 0);
    kernel_identity(db, 12, "aten::linear", "[[8, 16], [32, 16], [32]]", "PRODUCTION", 0);
    kernel_identity(db, 13, "aten::linear", "[[8, 16], [32, 16], [32]]", "PRODUCTION", 0);
    kernel_identity(db, 14, "step", "-", "CORRECTNESS", 0);
    kernel_identity(db, 15, "aten::mm", "[[8, 32], [32, 16]]", "PRODUCTION", 0);
    kernel_identity(db, 16, "step", "-", "PRODUCTION", 0);
    kernel_identity(db, 17, "AddmmBackward0", "[[8, 32]]", "PRODUCTION", 0);
    kernel_identity(db, 18, "inner", "-", "PRODUCTION", 777);
    kernel_identity(db, 19, "batch", "-", "PRODUCTION", 777);
    kernel_identity(db, 20, "-", "-", "PRODUCTION", 0);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM op WHERE source = 'torch'"), 4);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM op WHERE source = 'nvtx'"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM op WHERE source = 'scope'"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM nvtx_range WHERE op_id IS NULL"), 0);
    sqlite3_close(db);

    /* the readers: kernel cursor and --by op summaries */
    wl_session *s = wl_session_open(out, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    CHECK(wl_session_has_identity(s));
    wl_kernel_cursor *c = wl_kernel_cursor_open(s, NULL, err, sizeof err);
    wl_kernel_row r;
    int seen = 0;
    while (c && wl_kernel_cursor_next(c, &r) == 1) {
        if (r.correlation_id == 15) {
            CHECK_EQ_STR(r.operation, "aten::mm");
            CHECK_EQ_STR(r.shape, "[[8, 32], [32, 16]]");
            CHECK_EQ_STR(r.op_source, "torch");
            CHECK_EQ_STR(r.tier, "PRODUCTION");
            seen++;
        } else if (r.correlation_id == 18) {
            CHECK_EQ_STR(r.operation, "inner");
            CHECK_EQ_STR(r.op_source, "scope");
            CHECK_EQ_INT(r.app_thread, 777);
            seen++;
        } else if (r.correlation_id == 20) {
            CHECK_EQ_STR(r.operation, "");
            seen++;
        }
    }
    wl_kernel_cursor_close(c);
    CHECK_EQ_INT(seen, 3);
    wl_op_summary *ops;
    int n = wl_session_op_summaries(s, &ops);
    CHECK_EQ_INT(n, 8);
    for (int i = 0; i < n; i++) {
        if (!strcmp(ops[i].name, "aten::addmm")) {
            CHECK_EQ_INT(ops[i].calls, 1);
            CHECK_EQ_INT(ops[i].cpu_ns, 15000);
            CHECK_EQ_INT(ops[i].kernels, 2);
            CHECK_EQ_INT(ops[i].gpu_ns, 8000);
            CHECK_EQ_STR(ops[i].source, "torch");
        } else if (!strcmp(ops[i].name, "step")) {
            CHECK_EQ_INT(ops[i].calls, 1);
            CHECK_EQ_INT(ops[i].kernels, 2);
        } else if (!strcmp(ops[i].name, "handed-over")) {
            CHECK_EQ_INT(ops[i].calls, 1);
            CHECK_EQ_INT(ops[i].kernels, 0);
        }
    }
    free(ops);
    wl_session_close(s);

    /* derived again from scratch: the same answers */
    CHECK(wl_session_upgrade(out, err, sizeof err) == 0);
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    kernel_identity(db, 15, "aten::mm", "[[8, 32], [32, 16]]", "PRODUCTION", 0);
    kernel_identity(db, 14, "step", "-", "CORRECTNESS", 0);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM op"), 8);
    sqlite3_close(db);
}

/* Damaged attribute records: refused with their offset, nothing half-written. */
static void test_bad_attr(void)
{
    capbuf b;
    cb_init(&b, PID, T0);
    wlcap_attr a = {T0, 0, 0, 99, MAIN, 0, 0};
    cb_record(&b, WLCAP_ATTR, &a, sizeof a);
    char out[700], err[512];
    CHECK(test_capture_session(&b, g_dir, "bad-attr", out, sizeof out, err, sizeof err) != 0);
    CHECK(strstr(err, "attribute record at offset 32: unknown kind 99") != NULL);
    free(b.data);
    cb_init(&b, PID, T0);
    wlcap_attr t = {T0, 0, 0, WLCAP_ATTR_TIER, MAIN, 12345, 0};
    cb_record(&b, WLCAP_ATTR, &t, sizeof t);
    CHECK(test_capture_session(&b, g_dir, "bad-tier", out, sizeof out, err, sizeof err) != 0);
    CHECK(strstr(err, "undefined string 12345") != NULL);
    free(b.data);
    CHECK(access(out, F_OK) != 0);
}

/* An older session gains identity in place; a file that is not a session is refused. */
static void test_upgrade(void)
{
    const char *data = getenv("WARPLENS_TEST_DATA");
    if (!data)
        return;
    char src[700], dst[700], err[512], cmd[1600];
    snprintf(src, sizeof src, "%s/demo-h100.wlsession", data);
    snprintf(dst, sizeof dst, "%s/demo-upgraded.wlsession", g_dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
    CHECK_EQ_INT(system(cmd), 0);
    wl_session *s = wl_session_open(dst, err, sizeof err);
    CHECK(s && !wl_session_has_identity(s));
    wl_session_close(s);
    CHECK(wl_session_upgrade(dst, err, sizeof err) == 0);
    s = wl_session_open(dst, err, sizeof err);
    CHECK(s && wl_session_has_identity(s));
    wl_session_close(s);
    sqlite3 *db;
    CHECK(sqlite3_open_v2(dst, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    /* the demo launches its batches inside NVTX "batch" ranges and its graph inside a scope */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel k JOIN op o ON o.id = k.op_id WHERE o.name = 'batch'"),
                 48);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM kernel WHERE op_id IS NULL"), 0);
    sqlite3_close(db);
    snprintf(dst, sizeof dst, "%s/not-a-session", g_dir);
    FILE *f = fopen(dst, "w");
    if (f) {
        fputs("hello", f);
        fclose(f);
    }
    CHECK(wl_session_upgrade(dst, err, sizeof err) != 0 && strstr(err, "not") != NULL);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/wl_identity_%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", g_dir);
    if (system(cmd) != 0)
        return 1;
    test_backends();
    test_torch_ranges();
    test_import();
    test_bad_attr();
    test_upgrade();
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0)
        return 1;
    return test_report("kernel_identity");
}
