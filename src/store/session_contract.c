/* The contract of a sound session (see session_contract.h). Ranges are what the importer writes
 * from real CUPTI records and what the readers' C types hold: ids and counts of 32-bit CUPTI
 * fields in [0, 2^32), launch dimensions within CUDA's limits (grid y/z and cluster dimensions
 * 65535, block x/y 1024, z 64), counts in [0, 2^48] so that sums stay far from 2^63, times in
 * [0, 2^62] (year 2116). Text columns are not typed: any value reads as text; only NULL where the
 * schema says NOT NULL is refused. Columns the readers never read are not listed. */
#include "store/session_contract.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store/kernel_config.h"

#define U32 0, 4294967295ll
#define I32 0, 2147483647ll
#define I64 0, INT64_MAX
#define ANY INT64_MIN, INT64_MAX
#define CNT 0, ((int64_t)1 << 48)
#define SPAN (-((int64_t)1 << 62)), ((int64_t)1 << 62)
#define BOOL 0, 1
#define BYTE 0, 255

/* Column rules: I integer, IN integer or NULL, IO integer or NULL in a column older sessions
 * lack, T/TN time, R/RN number (0: not negative, -1: any sign), S text that is not NULL. */
#define RULE(...) RULE_(__VA_ARGS__)
#define RULE_(n, k, null_ok, opt, lo, hi) {n, k, null_ok, opt, lo, hi}
#define I(n, ...) RULE(n, WL_COL_INT, 0, 0, __VA_ARGS__)
#define IN(n, ...) RULE(n, WL_COL_INT, 1, 0, __VA_ARGS__)
#define IO(n, ...) RULE(n, WL_COL_INT, 1, 1, __VA_ARGS__)
#define T(n) RULE(n, WL_COL_TIME, 0, 0, 0, 0)
#define TN(n) RULE(n, WL_COL_TIME, 1, 0, 0, 0)
#define R(n, sign) RULE(n, WL_COL_REAL, 0, 0, sign, 0)
#define RN(n, sign) RULE(n, WL_COL_REAL, 1, 0, sign, 0)
#define S(n) RULE(n, WL_COL_TEXT, 0, 0, 0, 0)
#define SO(n) RULE(n, WL_COL_TEXT, 1, 1, 0, 0) /* text or NULL in a column older sessions lack */

static int isnull(const wl_cell *c) { return c->type == 5; }

__attribute__((format(printf, 4, 5))) static int blame(char *why, size_t n, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return col;
}
#define LL(x) ((long long)(x))

/* start/end/duration of an interval whose end may be missing (NVTX ranges, scopes, capture
 * ranges): end not before start, duration = end - start, both NULL together */
static int open_interval(const wl_cell *c, int start, int end, int dur, char *why, size_t n)
{
    if (isnull(&c[end]))
        return isnull(&c[dur]) ? -1 : blame(why, n, dur, "is %lld without an end_ns", LL(c[dur].i));
    if (c[end].i < c[start].i)
        return blame(why, n, end, "is %lld, before start_ns %lld", LL(c[end].i), LL(c[start].i));
    if (isnull(&c[dur]) || c[dur].i != c[end].i - c[start].i)
        return blame(why, n, dur, "is %lld, not end_ns - start_ns (%lld)", LL(isnull(&c[dur]) ? 0 : c[dur].i),
                     LL(c[end].i - c[start].i));
    return -1;
}

/* API calls and waits: duration = end - start, 0 when the end precedes the start (as imported) */
static int host_interval(const wl_cell *c, int start, int end, int dur, char *why, size_t n)
{
    int64_t want = c[end].i >= c[start].i ? c[end].i - c[start].i : 0;
    return c[dur].i == want ? -1 : blame(why, n, dur, "is %lld, not end_ns - start_ns (%lld)", LL(c[dur].i), LL(want));
}

/* GPU work: duration is end - start when both are there and the end is not before the start,
 * else NULL (the readers leave such work out of the timeline) */
static int gpu_interval(const wl_cell *c, int start, int end, int dur, char *why, size_t n)
{
    int timed = !isnull(&c[start]) && !isnull(&c[end]) && c[end].i >= c[start].i;
    if (!timed)
        return isnull(&c[dur]) ? -1 : blame(why, n, dur, "is %lld without a start and end", LL(c[dur].i));
    if (isnull(&c[dur]) || c[dur].i != c[end].i - c[start].i)
        return blame(why, n, dur, "is %lld, not end_ns - start_ns (%lld)", LL(isnull(&c[dur]) ? 0 : c[dur].i),
                     LL(c[end].i - c[start].i));
    return -1;
}

static int ref(const wl_contract_env *env, wl_ref_kind k, int64_t a, int64_t b)
{
    return !env->has_ref || env->has_ref(env->ref_arg, k, a, b);
}

/* ---- the tables --------------------------------------------------------------------------- */

static const wl_col_rule META[] = {S("key"), S("value")};

enum { P_START = 2, P_END = 3 };
static const wl_col_rule PROCESS[] = {
    I("pid", U32), IN("ppid", U32), TN("start_ns"), TN("end_ns"), IN("rank", I32), IN("local_rank", I32),
    IN("world_size", I32), IN("ompi_rank", I32), IN("slurm_procid", I32), IN("buffer_size", I64),
    I("complete", BOOL), IN("capture_bytes", I64), IN("buffers_completed", I64), IN("peak_buffers_in_use", I64)};
static int process_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    if (!isnull(&c[P_START]) && !isnull(&c[P_END]) && c[P_END].i < c[P_START].i)
        return blame(why, n, P_END, "is %lld, before start_ns %lld", LL(c[P_END].i), LL(c[P_START].i));
    return -1;
}

static const wl_col_rule CAPTURE_RANGE[] = {I("pid", U32), T("start_ns"), TN("end_ns"), IN("duration_ns", I64),
                                            IN("start_tid", U32), IN("end_tid", U32)};
static int capture_range_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    return open_interval(c, 1, 2, 3, why, n);
}

static const wl_col_rule DEVICE[] = {
    I("pid", U32), I("device_id", U32), IN("cc_major", I32), IN("cc_minor", I32), IN("sm_count", I32),
    IN("warp_size", I32), IN("max_threads_per_block", I32), IN("max_threads_per_sm", I32),
    IN("max_blocks_per_sm", I32), IN("regs_per_sm", I32), IN("regs_per_block", I32), IN("smem_per_sm", I32),
    IN("smem_per_block", I32), IN("smem_per_block_optin", I32), IN("reserved_smem_per_block", I32),
    IN("l2_bytes", I32), IN("core_clock_khz", I32), IN("mem_clock_khz", I32), IN("mem_bus_width_bits", I32),
    IN("total_mem_bytes", I64), IN("async_engines", I32), IN("ecc_enabled", I32), IN("concurrent_kernels", I32)};

static const wl_col_rule THREAD[] = {I("pid", U32), I("tid", U32)};

static const wl_col_rule KERNEL_NAME[] = {S("mangled"), S("demangled"), S("short_name")};

enum { A_START = 7, A_END, A_DUR };
static const wl_col_rule API_CALL[] = {
    I("pid", U32), I("tid", U32), S("domain"), I("cbid", U32), S("name"), S("category"), I("correlation_id", U32),
    T("start_ns"), T("end_ns"), I("duration_ns", I64), I("return_value", ANY), IN("scope_id", I64),
    IO("flow_id", I64)};
static int api_call_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    return host_interval(c, A_START, A_END, A_DUR, why, n);
}

enum {
    K_NAME = 5, K_GX, K_GY, K_GZ, K_BX, K_BY, K_BZ,
    K_QUEUED = 32, K_SUBMITTED, K_START, K_END, K_COMPLETED, K_HAS_TS, K_THREADS, K_BLOCKS, K_WARPS, K_DUR,
    K_QDELAY, K_SDELAY, K_CONFIG_ID = 49
};
/* The columns of kernel_config.h's 16, in its order. */
static const int K_CONFIG[WL_KCFG_COLS] = {K_GX, K_GY, K_GZ, K_BX, K_BY, K_BZ, 12, 13, 14, 18, 19, 20, 22, 23, 25, 27};
static const wl_col_rule KERNEL[] = {
    I("pid", U32), I("device_id", U32), IN("context_id", U32), I("stream_id", U32), I("correlation_id", U32),
    I("name_id", ANY), IN("grid_x", I32), IN("grid_y", 0, 65535), IN("grid_z", 0, 65535), IN("block_x", 0, 1024),
    IN("block_y", 0, 1024), IN("block_z", 0, 64), IN("cluster_x", 0, 65535), IN("cluster_y", 0, 65535),
    IN("cluster_z", 0, 65535), IN("cluster_scheduling_policy", BYTE), IN("max_potential_cluster_size", I32),
    IN("max_active_clusters", I32), IN("registers_per_thread", 0, 65535), IN("static_smem", I32),
    IN("dynamic_smem", I32), IN("smem_executed", I32), IN("smem_limit_config", BYTE),
    IN("local_mem_per_thread", I32), IN("local_mem_total", I64), IN("cache_config_requested", BYTE),
    IN("cache_config_executed", BYTE), IN("carveout_requested", BYTE), IN("is_device_launched", BOOL),
    IN("graph_id", I64), IN("graph_node_id", ANY), IN("grid_id", ANY),
    TN("queued_ns"), TN("submitted_ns"), TN("start_ns"), TN("end_ns"), TN("completed_ns"), I("has_timestamps", BOOL),
    I("threads", I64), I("blocks", I64), I("warps", I64), IN("duration_ns", I64), IN("queue_delay_ns", I64),
    IN("submit_delay_ns", I64), IN("api_id", ANY), IN("tid", U32), IN("scope_id", I64), IO("op_id", I64),
    SO("tier"), IO("config_id", I64)};
static int kernel_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    if (!ref(env, WL_REF_KERNEL_NAME, c[K_NAME].i, 0))
        return blame(why, n, K_NAME, "is %lld, which names no kernel_name row", LL(c[K_NAME].i));
    if (c[K_HAS_TS].i) {
        if (isnull(&c[K_START]) || isnull(&c[K_END]))
            return blame(why, n, isnull(&c[K_START]) ? K_START : K_END, "is NULL while has_timestamps is 1");
        if (c[K_END].i < c[K_START].i)
            return blame(why, n, K_END, "is %lld, before start_ns %lld", LL(c[K_END].i), LL(c[K_START].i));
        if (isnull(&c[K_DUR]) || c[K_DUR].i != c[K_END].i - c[K_START].i)
            return blame(why, n, K_DUR, "is %lld, not end_ns - start_ns (%lld)",
                         LL(isnull(&c[K_DUR]) ? 0 : c[K_DUR].i), LL(c[K_END].i - c[K_START].i));
    } else if (!isnull(&c[K_DUR])) {
        return blame(why, n, K_DUR, "is %lld while has_timestamps is 0", LL(c[K_DUR].i));
    }
    if (!isnull(&c[K_QDELAY]) && (isnull(&c[K_QUEUED]) || isnull(&c[K_SUBMITTED]) ||
                                  c[K_QDELAY].i != c[K_SUBMITTED].i - c[K_QUEUED].i))
        return blame(why, n, K_QDELAY, "is %lld, not submitted_ns - queued_ns", LL(c[K_QDELAY].i));
    if (!isnull(&c[K_SDELAY]) && (isnull(&c[K_SUBMITTED]) || isnull(&c[K_START]) ||
                                  c[K_SDELAY].i != c[K_START].i - c[K_SUBMITTED].i))
        return blame(why, n, K_SDELAY, "is %lld, not start_ns - submitted_ns", LL(c[K_SDELAY].i));
    /* the derived sizes, as the importer computes them (NULL dimensions count as 0) */
    int64_t blocks = c[K_GX].i * c[K_GY].i * c[K_GZ].i, tpb = c[K_BX].i * c[K_BY].i * c[K_BZ].i, threads, warps;
    if (c[K_BLOCKS].i != blocks)
        return blame(why, n, K_BLOCKS, "is %lld, not grid_x * grid_y * grid_z (%lld)", LL(c[K_BLOCKS].i), LL(blocks));
    if (__builtin_mul_overflow(blocks, tpb, &threads) || c[K_THREADS].i != threads)
        return blame(why, n, K_THREADS, "is %lld, not blocks * block_x * block_y * block_z", LL(c[K_THREADS].i));
    if (__builtin_mul_overflow(blocks, (tpb + 31) / 32, &warps) || c[K_WARPS].i != warps)
        return blame(why, n, K_WARPS, "is %lld, not blocks * warps per block", LL(c[K_WARPS].i));
    if (!isnull(&c[K_CONFIG_ID])) { /* the readers take the 16 cells from the first row with this id */
        wl_kcfg k = {{0}, 0};
        for (int i = 0; i < WL_KCFG_COLS; i++) {
            if (isnull(&c[K_CONFIG[i]]))
                k.null_mask |= 1u << i;
            else
                k.v[i] = c[K_CONFIG[i]].i;
        }
        int64_t id = wl_kcfg_id(&k);
        if (c[K_CONFIG_ID].i != id)
            return blame(why, n, K_CONFIG_ID, "is %lld, not the id of the row's launch configuration (%lld)",
                         LL(c[K_CONFIG_ID].i), LL(id));
    }
    return -1;
}

enum { M_START = 14, M_END, M_DUR };
static const wl_col_rule MEMCPY[] = {
    I("pid", U32), IN("device_id", U32), IN("context_id", U32), IN("stream_id", U32), IN("correlation_id", U32),
    S("kind"), S("src_kind"), S("dst_kind"), I("bytes", I64), IN("is_async", BOOL), IN("src_device", U32),
    IN("dst_device", U32), IN("graph_id", I64), IN("graph_node_id", ANY), TN("start_ns"), TN("end_ns"),
    IN("duration_ns", I64), RN("bandwidth_gbps", 0), IN("api_id", ANY), IN("tid", U32), IN("scope_id", I64)};
static int memcpy_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    return gpu_interval(c, M_START, M_END, M_DUR, why, n);
}

enum { Z_START = 11, Z_END, Z_DUR };
static const wl_col_rule MEMSET[] = {
    I("pid", U32), IN("device_id", U32), IN("context_id", U32), IN("stream_id", U32), IN("correlation_id", U32),
    S("memory_kind"), I("bytes", I64), IN("value", ANY), IN("is_async", BOOL), IN("graph_id", I64),
    IN("graph_node_id", ANY), TN("start_ns"), TN("end_ns"), IN("duration_ns", I64), RN("bandwidth_gbps", 0),
    IN("api_id", ANY), IN("tid", U32), IN("scope_id", I64)};
static int memset_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    return gpu_interval(c, Z_START, Z_END, Z_DUR, why, n);
}

static const wl_col_rule SYNC[] = {I("pid", U32), S("type"), IN("context_id", U32), IN("stream_id", U32),
                                   IN("event_id", U32), IN("correlation_id", U32), T("start_ns"), T("end_ns"),
                                   I("duration_ns", I64), IN("api_id", ANY), IN("tid", U32)};
static int sync_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    return host_interval(c, 6, 7, 8, why, n);
}

static const wl_col_rule NVTX_RANGE[] = {I("pid", U32), IN("tid", U32), S("name"), T("start_ns"), TN("end_ns"),
                                         IN("duration_ns", ANY), IN("end_tid", U32), IO("op_id", I64),
                                         SO("domain")};
static int nvtx_range_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    return open_interval(c, 3, 4, 5, why, n);
}

static const wl_col_rule NVTX_MARK[] = {I("pid", U32), IN("tid", U32), S("name"), T("ts_ns")};

static const wl_col_rule SCOPE[] = {I("pid", U32), I("scope_id", I64), IN("parent_id", I64), I("tid", U32),
                                    S("name"), I("name_truncated", BOOL), T("start_ns"), TN("end_ns"),
                                    IN("duration_ns", ANY), IO("op_id", I64), IO("app_thread_id", U32)};
static int scope_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    return open_interval(c, 6, 7, 8, why, n);
}

static const wl_col_rule LOST[] = {I("pid", U32), S("source"), I("count", CNT)};

static const wl_col_rule OCCUPANCY_CHECK[] = {
    I("pid", U32), I("correlation_id", U32), IN("kernel_id", ANY), I("block_size", I32), I("dynamic_smem", I32),
    I("driver_active_blocks", I32), IN("function_registers", I32), I("status", I32)};

static const wl_col_rule ANNOTATION[] = {I("pid", U32), IN("tid", U32), S("target"), IN("correlation_id", U32),
                                         IN("scope_id", I64), IN("kernel_id", ANY), R("flops", 0), R("bytes", 0),
                                         S("precision")};

/* timer intervals may precede the recorder's start (host timers before CUDA): no window */
static const wl_col_rule TIMER[] = {I("pid", U32), I("idx", I64), S("kind"), I("category", I64), S("status"),
                                    I("host_timed", BOOL), I("start_ns", 0, WL_TIME_MAX),
                                    IN("duration_ns", 0, WL_TIME_MAX), IN("tid", U32), IN("stream", ANY), S("name")};

static const wl_col_rule TIMER_CATEGORY[] = {I("pid", U32), I("id", I64), S("name")};

static const wl_col_rule INKERNEL_BUFFER[] = {
    I("pid", U32), I("correlation_id", U32), IN("kernel_id", ANY), IN("device_id", U32),
    I("words", 0, (int64_t)1 << 40), IN("num_blocks", I32), IN("num_groups", I32), IN("slices", CNT),
    IN("instants", CNT), IN("unmatched", CNT), IN("after_finalize", CNT), IN("over_capacity", CNT),
    IN("crossed", CNT), IN("dropped_on_device", CNT), IN("invalid_on_device", CNT), S("placement"),
    IN("delta_ns", SPAN), IN("uncertainty_ns", SPAN), IN("clamp_ns", SPAN), IN("calibration_offset_ns", SPAN),
    IN("calibration_uncertainty_ns", SPAN)};

static const wl_col_rule INKERNEL_NAME[] = {I("buffer_id", ANY), S("kind"), I("id", U32), S("name")};
static int inkernel_ref_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    if (!ref(env, WL_REF_INKERNEL_BUFFER, c[0].i, 0))
        return blame(why, n, 0, "is %lld, which names no inkernel_buffer row", LL(c[0].i));
    return -1;
}

static const wl_col_rule INKERNEL_EVENT[] = {I("buffer_id", ANY), S("kind"), I("block", I32), I("grp", I32),
                                             I("event", U32), I("depth", I32), I("crossed", I32), T("start_ns"),
                                             IN("dur_ns", 0, WL_TIME_MAX)};

static const wl_col_rule METRIC[] = {S("name")};
static const wl_col_rule METRIC_CONFIG[] = {I("pid", U32), I("device_id", U32), IN("num_passes", I32)};
static const wl_col_rule KERNEL_METRIC[] = {I("pid", U32), I("device_id", U32), I("range_index", I64),
                                            I("correlation_id", U32), IN("kernel_id", ANY), I("metric_id", ANY),
                                            RN("value", -1)};
static int kernel_metric_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    if (!ref(env, WL_REF_METRIC, c[5].i, 0))
        return blame(why, n, 5, "is %lld, which names no metric row", LL(c[5].i));
    return -1;
}

static const wl_col_rule DEVICE_SAMPLE[] = {
    I("pid", U32), I("device_id", U32), T("ts_ns"), T("window_start_ns"), IN("gpu_util_pct", CNT),
    IN("mem_util_pct", CNT), IN("sm_clock_mhz", CNT), IN("mem_clock_mhz", CNT), IN("power_mw", CNT),
    IN("temperature_c", CNT), IN("memory_used_bytes", CNT), IN("energy_mj", CNT)};
static int device_sample_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    if (c[3].i > c[2].i)
        return blame(why, n, 3, "is %lld, after ts_ns %lld", LL(c[3].i), LL(c[2].i));
    return -1;
}

static const wl_col_rule PM_CONFIG[] = {I("pid", U32), I("device_id", U32), IN("interval_ns", 0, WL_TIME_MAX),
                                        S("status")};
static const wl_col_rule PM_METRIC[] = {I("pid", U32), I("device_id", U32), I("metric_index", 0, 63), S("name")};
static const wl_col_rule PM_SAMPLE[] = {I("pid", U32), I("device_id", U32), I("sample_index", I64), T("start_ns"),
                                        T("end_ns"), I("metric_index", 0, 63), RN("value", -1)};
static int pm_sample_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    if (c[4].i < c[3].i)
        return blame(why, n, 4, "is %lld, before start_ns %lld", LL(c[4].i), LL(c[3].i));
    if (!ref(env, WL_REF_PM_METRIC, WL_PM_DEVICE_KEY(c[0].i, c[1].i), c[5].i))
        return blame(why, n, 5, "is %lld, which names no pm_metric row of the device", LL(c[5].i));
    return -1;
}

static const wl_col_rule STALL_REASON[] = {S("name")};
static const wl_col_rule STALL_CONFIG[] = {I("pid", U32), I("device_id", U32), IN("period_log2", 0, 63)};
static const wl_col_rule KERNEL_STALL[] = {I("pid", U32), I("device_id", U32), I("correlation_id", U32),
                                           IN("kernel_id", ANY), I("reason_id", ANY), I("samples", CNT)};
static int kernel_stall_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    if (!ref(env, WL_REF_STALL_REASON, c[4].i, 0))
        return blame(why, n, 4, "is %lld, which names no stall_reason row", LL(c[4].i));
    return -1;
}

/* Kernel identity (session_identity.h) and the recorder's own figures; op ids that name no op
 * row read as no operation (the readers join). */
static const wl_col_rule OP[] = {I("id", I64), S("source"), S("name"), S("shape")};
/* (ts_ns 0: the process's default tier, WARPLENS_TIER, in effect from the start) */
static const wl_col_rule TIER_CHANGE[] = {I("pid", U32), I("tid", U32), I("ts_ns", 0, WL_TIME_MAX),
                                          RULE("tier", WL_COL_TEXT, 1, 0, 0, 0)};
static const wl_col_rule RECORDER_STAT[] = {I("pid", U32), S("name"), I("value", CNT)};

/* What each metric range measured (--metrics, issue 17): its place among its call's ranges */
enum { MR_PART = 6, MR_PARTS };
static const wl_col_rule METRIC_RANGE[] = {
    I("pid", U32), I("device_id", U32), I("range_index", I64), I("correlation_id", U32),
    RULE("kind", WL_COL_TEXT, 1, 0, 0, 0), RULE("matched", WL_COL_TEXT, 1, 0, 0, 0), I("part", I32), I("parts", I32),
    IN("kernel_id", ANY), IN("memcpy_id", ANY), IN("memset_id", ANY), IN("api_id", ANY)};
static int metric_range_rel(const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    (void)env;
    if (c[MR_PART].i >= c[MR_PARTS].i)
        return blame(why, n, MR_PART, "is %lld, not below parts (%lld)", LL(c[MR_PART].i), LL(c[MR_PARTS].i));
    return -1;
}

#define TABLE(name, req, rowid, cols, rel) {name, req, rowid, cols, (int)(sizeof cols / sizeof cols[0]), rel}
/* Referenced tables come before the tables that reference them (the guard loads their ids). */
const wl_table_rule WL_CONTRACT[] = {
    TABLE("meta", 1, 1, META, NULL),
    TABLE("process", 1, 1, PROCESS, process_rel),
    TABLE("capture_range", 0, 1, CAPTURE_RANGE, capture_range_rel),
    TABLE("device", 1, 1, DEVICE, NULL),
    TABLE("thread", 1, 1, THREAD, NULL),
    TABLE("kernel_name", 1, 1, KERNEL_NAME, NULL),
    TABLE("api_call", 1, 1, API_CALL, api_call_rel),
    TABLE("op", 0, 1, OP, NULL),
    TABLE("kernel", 1, 1, KERNEL, kernel_rel),
    TABLE("memcpy", 1, 1, MEMCPY, memcpy_rel),
    TABLE("memset", 1, 1, MEMSET, memset_rel),
    TABLE("sync", 1, 1, SYNC, sync_rel),
    TABLE("nvtx_range", 1, 1, NVTX_RANGE, nvtx_range_rel),
    TABLE("nvtx_mark", 1, 1, NVTX_MARK, NULL),
    TABLE("scope", 1, 1, SCOPE, scope_rel),
    TABLE("lost", 1, 1, LOST, NULL),
    TABLE("occupancy_check", 0, 1, OCCUPANCY_CHECK, NULL),
    TABLE("annotation", 0, 1, ANNOTATION, NULL),
    TABLE("timer", 0, 1, TIMER, NULL),
    TABLE("timer_category", 0, 1, TIMER_CATEGORY, NULL),
    TABLE("inkernel_buffer", 0, 1, INKERNEL_BUFFER, NULL),
    TABLE("inkernel_name", 0, 1, INKERNEL_NAME, inkernel_ref_rel),
    TABLE("inkernel_event", 0, 1, INKERNEL_EVENT, inkernel_ref_rel),
    TABLE("metric", 0, 1, METRIC, NULL),
    TABLE("metric_config", 0, 1, METRIC_CONFIG, NULL),
    TABLE("kernel_metric", 0, 1, KERNEL_METRIC, kernel_metric_rel),
    TABLE("metric_range", 0, 1, METRIC_RANGE, metric_range_rel),
    TABLE("device_sample", 0, 1, DEVICE_SAMPLE, device_sample_rel),
    TABLE("pm_config", 0, 1, PM_CONFIG, NULL),
    TABLE("pm_metric", 0, 1, PM_METRIC, NULL),
    TABLE("pm_sample", 0, 0, PM_SAMPLE, pm_sample_rel),
    TABLE("stall_reason", 0, 1, STALL_REASON, NULL),
    TABLE("stall_config", 0, 1, STALL_CONFIG, NULL),
    TABLE("kernel_stall", 0, 1, KERNEL_STALL, kernel_stall_rel),
    TABLE("tier_change", 0, 1, TIER_CHANGE, NULL),
    TABLE("recorder_stat", 0, 1, RECORDER_STAT, NULL),
};
const int WL_CONTRACT_TABLES = (int)(sizeof WL_CONTRACT / sizeof WL_CONTRACT[0]);

const wl_index_rule WL_INDEXES[] = {
    {"kernel_by_name", "kernel", "name_id"},
    {"kernel_by_start", "kernel", "start_ns"},
    {"kernel_by_corr", "kernel", "pid, correlation_id"},
    {"kernel_by_scope", "kernel", "pid, scope_id"},
    {"api_by_corr", "api_call", "pid, correlation_id"},
    {"api_by_thread", "api_call", "pid, tid, start_ns"},
    {"memcpy_by_start", "memcpy", "start_ns"},
    {"memcpy_by_corr", "memcpy", "pid, correlation_id"},
    {"memset_by_corr", "memset", "pid, correlation_id"},
    {"nvtx_by_start", "nvtx_range", "start_ns"},
    {"scope_by_thread", "scope", "pid, tid, start_ns"},
    {"inkernel_event_by_lane", "inkernel_event", "buffer_id, block, grp, start_ns"},
    {"kernel_metric_by_kernel", "kernel_metric", "kernel_id"},
    {"kernel_stall_by_kernel", "kernel_stall", "kernel_id"},
    {"device_sample_by_device", "device_sample", "pid, device_id, ts_ns"},
};
const int WL_INDEX_COUNT = (int)(sizeof WL_INDEXES / sizeof WL_INDEXES[0]);

const wl_table_rule *wl_contract_table(const char *name)
{
    for (int i = 0; i < WL_CONTRACT_TABLES; i++)
        if (!strcmp(WL_CONTRACT[i].name, name))
            return &WL_CONTRACT[i];
    return NULL;
}

void wl_cell_describe(const wl_cell *c, char *out, size_t n)
{
    if (c->type == 1) {
        snprintf(out, n, "%lld", (long long)c->i);
    } else if (c->type == 2) {
        snprintf(out, n, "the real %g", c->d);
    } else if (c->type == 4) {
        snprintf(out, n, "a blob of %d bytes", c->len);
    } else if (c->type == 3) {
        size_t o = 0;
        o += (size_t)snprintf(out, n, "text '");
        for (int i = 0; i < c->len && i < 40 && o + 6 < n; i++) {
            unsigned char ch = c->text[i];
            o += (size_t)snprintf(out + o, n - o, ch >= 32 && ch < 127 && ch != '\'' ? "%c" : "\\x%02x", ch);
        }
        if (o + 5 < n)
            snprintf(out + o, n - o, "%s'", c->len > 40 ? "..." : "");
    } else {
        snprintf(out, n, "NULL");
    }
}

static int cell_fault(const wl_col_rule *r, const wl_cell *c, const wl_contract_env *env, char *why, size_t n)
{
    char v[96];
    if (c->type == 5) {
        if (r->null_ok)
            return 0;
        snprintf(why, n, "is NULL (the schema says NOT NULL)");
        return 1;
    }
    if (r->kind == WL_COL_TEXT)
        return 0;
    if (r->kind == WL_COL_REAL) {
        if ((c->type == 1 || c->type == 2) && (c->type == 1 || isfinite(c->d))) {
            if (r->lo < 0 || (c->type == 1 ? c->i >= 0 : c->d >= 0))
                return 0;
            wl_cell_describe(c, v, sizeof v);
            snprintf(why, n, "is %s, below 0", v);
            return 1;
        }
        wl_cell_describe(c, v, sizeof v);
        snprintf(why, n, "is %s, not a number", v);
        return 1;
    }
    if (c->type != 1) {
        wl_cell_describe(c, v, sizeof v);
        snprintf(why, n, "is %s, not an integer", v);
        return 1;
    }
    int64_t lo = r->lo, hi = r->hi;
    if (r->kind == WL_COL_TIME) {
        lo = env->window_lo;
        hi = env->window_hi;
    }
    if (c->i < lo) {
        snprintf(why, n, r->kind == WL_COL_TIME ? "is %lld, before the session (from %lld)" : "is %lld, below %lld",
                 (long long)c->i, (long long)lo);
        return 1;
    }
    if (c->i > hi) {
        snprintf(why, n, r->kind == WL_COL_TIME ? "is %lld, after the session (until %lld)" : "is %lld, above %lld",
                 (long long)c->i, (long long)hi);
        return 1;
    }
    return 0;
}

int wl_contract_check(const wl_table_rule *t, const wl_cell *cells, uint64_t absent, const wl_contract_env *env,
                      char *why, size_t n)
{
    for (int i = 0; i < t->ncols; i++)
        if (!(absent >> i & 1) && cell_fault(&t->cols[i], &cells[i], env, why, n))
            return i;
    return t->relate ? t->relate(cells, env, why, n) : -1;
}
