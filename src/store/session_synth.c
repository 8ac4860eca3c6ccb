/* Synthetic session generator (see session_synth.h). The empty session comes from the session
 * writer (real schema, indexes and meta); rows are then inserted here in one transaction, under a
 * temporary name that is renamed into place at the end. */
#include "store/session_synth.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/row_pack.h"
#include "store/schema.h"
#include "store/session_identity.h"
#include "store/session_draft.h"
#include "store/session_writer.h"

#define PID 4242
#define T0 UINT64_C(1795343000000000000)
#define MAX_THREADS 64
#define MAX_STREAMS 64

void wl_synth_defaults(wl_synth_options *o)
{
    memset(o, 0, sizeof *o);
    o->kernels = 1000;
    o->threads = 2;
    o->streams = 3;
    o->copy_every = 50;
    o->memset_every = 200;
    o->nvtx_every = 16;
    o->edge_cases = 1;
}

typedef struct kcfg {
    const char *mangled, *demangled, *short_name;
    int grid[3], block[3], regs, static_smem, dynamic_smem;
} kcfg;

static const kcfg KERNELS[] = {
    {"_Z4gemmPKfS0_Pfi", "void gemm<float, 128, 128>(float const*, float const*, float*, int)", "gemm",
     {264, 1, 1}, {256, 1, 1}, 128, 0, 65536},
    {"_Z15elementwise_addPfPKfi", "elementwise_add(float*, float const*, int)", "elementwise_add",
     {4096, 1, 1}, {256, 1, 1}, 16, 0, 0},
    {"_Z10reduce_sumPKfPfi", "reduce_sum(float const*, float*, int)", "reduce_sum", {132, 1, 1},
     {1024, 1, 1}, 32, 4096, 0},
    {"_Z7softmaxPKfPfii", "softmax(float const*, float*, int, int)", "softmax", {1024, 1, 1}, {128, 1, 1},
     40, 2048, 0},
    {"_Z5smallPi", "small(int*)", "small", {1, 1, 1}, {32, 1, 1}, 8, 0, 0},
};
#define N_KCFG ((int)(sizeof KERNELS / sizeof KERNELS[0]))

enum { S_API, S_KERNEL, S_MEMCPY, S_MEMSET, S_NVTX, S_SCOPE, S_COUNT };
static const char *const SQL[S_COUNT] = {
    "INSERT INTO api_call (id, pid, tid, domain, cbid, name, category, correlation_id, start_ns, end_ns,"
    " duration_ns, return_value, scope_id) VALUES (?1, " "4242" ", ?2, 'runtime', 0, ?3, ?4, ?8, ?5, ?6, ?6 - ?5, 0, ?7)",
    "INSERT INTO kernel (id, pid, device_id, context_id, stream_id, correlation_id, name_id, grid_x, grid_y,"
    " grid_z, block_x, block_y, block_z, cluster_x, cluster_y, cluster_z, registers_per_thread, static_smem,"
    " dynamic_smem, smem_limit_config, launch_type, is_device_launched, graph_id, queued_ns, submitted_ns,"
    " start_ns, end_ns, completed_ns, has_timestamps, threads, blocks, warps, duration_ns, queue_delay_ns,"
    " submit_delay_ns, api_id, tid, scope_id, config_id) VALUES (?1, 4242, 0, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
    " ?10, 0, 0, 0, ?11, ?12, ?13, ?14, 'regular', 0, ?15, ?16 - 4000, ?16 - 500, ?16, ?17, ?17, 1, ?18, ?19,"
    " ?20, ?17 - ?16, 3500, 500, ?21, ?22, ?23, wl_kernel_config_id(?5, ?6, ?7, ?8, ?9, ?10, 0, 0, 0, ?11, ?12,"
    " ?13, ?14, NULL, NULL, NULL))",
    "INSERT INTO memcpy (id, pid, device_id, context_id, stream_id, correlation_id, kind, src_kind, dst_kind,"
    " bytes, is_async, src_device, dst_device, start_ns, end_ns, duration_ns, bandwidth_gbps, api_id, tid,"
    " scope_id) VALUES (?1, 4242, 0, 1, ?2, ?3, ?4, ?5, ?6, ?7, 1, 0, 0, ?8, ?9, ?9 - ?8,"
    " CAST(?7 AS REAL) / max(1, ?9 - ?8), ?10, ?11, ?12)",
    "INSERT INTO memset (id, pid, device_id, context_id, stream_id, correlation_id, memory_kind, bytes, value,"
    " is_async, start_ns, end_ns, duration_ns, bandwidth_gbps, api_id, tid, scope_id) VALUES (?1, 4242, 0, 1,"
    " ?2, ?3, 'device', ?4, 0, 1, ?5, ?6, ?6 - ?5, CAST(?4 AS REAL) / max(1, ?6 - ?5), ?7, ?8, ?9)",
    "INSERT INTO nvtx_range (id, pid, tid, domain, name, start_ns, end_ns, duration_ns, end_tid)"
    " VALUES (?1, 4242, ?2, NULL, ?3, ?4, ?5, ?5 - ?4, ?2)",
    "INSERT INTO scope (pid, scope_id, parent_id, tid, name, name_truncated, start_ns, end_ns, duration_ns)"
    " VALUES (4242, ?1, NULL, ?2, ?3, 0, ?4, ?5, ?5 - ?4)",
};

typedef struct synth {
    sqlite3 *db;
    sqlite3_stmt *st[S_COUNT];
    int64_t next_api, next_corr, next_kernel, next_memcpy, next_memset, next_nvtx, next_scope;
    /* API ids in runs of one thread's calls, as the importer writes them (session_import_api.c) */
    int64_t run_next[MAX_THREADS], run_left[MAX_THREADS];
    wl_synth_counts *c;
    int failed;
} synth;

static void run(synth *y, sqlite3_stmt *s)
{
    if (sqlite3_step(s) != SQLITE_DONE)
        y->failed = 1;
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

static void bind_i(sqlite3_stmt *s, int i, int64_t v) { sqlite3_bind_int64(s, i, v); }
static void bind_opt(sqlite3_stmt *s, int i, int64_t v)
{
    if (v >= 0)
        sqlite3_bind_int64(s, i, v);
}

/* An API call: its row id and its correlation id (CUPTI's, in call order); id -1: none. */
typedef struct call {
    int64_t id, corr;
} call;
static const call NO_CALL = {-1, -1};

static call api(synth *y, uint32_t tid, const char *name, const char *category, uint64_t start, uint64_t end,
                int64_t scope)
{
    sqlite3_stmt *s = y->st[S_API];
    int th = (int)(tid - PID) % MAX_THREADS;
    if (!y->run_left[th]) { /* the thread's next run of WL_API_RUN ids */
        y->run_next[th] = y->next_api + 1;
        y->run_left[th] = WL_API_RUN;
        y->next_api += WL_API_RUN;
    }
    int64_t id = y->run_next[th]++;
    y->run_left[th]--;
    bind_i(s, 1, id);
    bind_i(s, 2, tid);
    sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, category, -1, SQLITE_STATIC);
    bind_i(s, 5, (int64_t)start);
    bind_i(s, 6, (int64_t)end);
    bind_opt(s, 7, scope);
    call c = {id, ++y->next_corr};
    bind_i(s, 8, c.corr);
    run(y, s);
    y->c->api_calls++;
    return c;
}

/* a.id < 0: work without an API call (its correlation id matches none). */
static void kernel(synth *y, int cfg, int64_t stream, uint64_t start, uint64_t end, call a, uint64_t api_start,
                   uint32_t tid, int64_t scope, int64_t graph)
{
    const kcfg *k = &KERNELS[cfg];
    sqlite3_stmt *s = y->st[S_KERNEL];
    int64_t id = ++y->next_kernel;
    int64_t blocks = (int64_t)k->grid[0] * k->grid[1] * k->grid[2];
    int64_t tpb = (int64_t)k->block[0] * k->block[1] * k->block[2];
    bind_i(s, 1, id);
    bind_i(s, 2, stream);
    bind_i(s, 3, a.id >= 0 ? a.corr : 1000000000 + id);
    bind_i(s, 4, cfg + 1);
    for (int i = 0; i < 3; i++) {
        bind_i(s, 5 + i, k->grid[i]);
        bind_i(s, 8 + i, k->block[i]);
    }
    bind_i(s, 11, k->regs);
    bind_i(s, 12, k->static_smem);
    bind_i(s, 13, k->dynamic_smem);
    bind_i(s, 14, k->dynamic_smem > 48 * 1024 ? 1 : 0);
    bind_opt(s, 15, graph);
    bind_i(s, 16, (int64_t)start);
    bind_i(s, 17, (int64_t)end);
    bind_i(s, 18, blocks * tpb);
    bind_i(s, 19, blocks);
    bind_i(s, 20, blocks * ((tpb + 31) / 32));
    bind_opt(s, 21, a.id);
    if (a.id >= 0)
        bind_i(s, 22, tid);
    bind_opt(s, 23, scope);
    run(y, s);
    y->c->kernels++;
    if (a.id >= 0 && start >= api_start)
        y->c->flows++;
}

static void copy(synth *y, int64_t stream, uint64_t start, uint64_t bytes, call a, uint64_t api_start, uint32_t tid,
                 int64_t scope)
{
    sqlite3_stmt *s = y->st[S_MEMCPY];
    int64_t id = ++y->next_memcpy;
    uint64_t end = start + bytes / 25; /* 25 GB/s */
    bind_i(s, 1, id);
    bind_i(s, 2, stream);
    bind_i(s, 3, a.id >= 0 ? a.corr : 2000000000 + id);
    sqlite3_bind_text(s, 4, id % 2 ? "HtoD" : "DtoH", -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, id % 2 ? "pinned" : "device", -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, id % 2 ? "device" : "pinned", -1, SQLITE_STATIC);
    bind_i(s, 7, (int64_t)bytes);
    bind_i(s, 8, (int64_t)start);
    bind_i(s, 9, (int64_t)end);
    bind_opt(s, 10, a.id);
    if (a.id >= 0)
        bind_i(s, 11, tid);
    bind_opt(s, 12, scope);
    run(y, s);
    y->c->memcpys++;
    if (a.id >= 0 && start >= api_start)
        y->c->flows++;
}

static void mset(synth *y, int64_t stream, uint64_t start, uint64_t bytes, call a, uint32_t tid, int64_t scope)
{
    sqlite3_stmt *s = y->st[S_MEMSET];
    int64_t id = ++y->next_memset;
    bind_i(s, 1, id);
    bind_i(s, 2, stream);
    bind_i(s, 3, a.corr);
    bind_i(s, 4, (int64_t)bytes);
    bind_i(s, 5, (int64_t)start);
    bind_i(s, 6, (int64_t)(start + bytes / 500));
    bind_i(s, 7, a.id);
    bind_i(s, 8, tid);
    bind_opt(s, 9, scope);
    run(y, s);
    y->c->memsets++;
    y->c->flows++;
}

static void range(synth *y, int which, uint32_t tid, const char *name, uint64_t start, int64_t end, int64_t id)
{
    sqlite3_stmt *s = y->st[which];
    bind_i(s, 1, id);
    bind_i(s, 2, tid);
    sqlite3_bind_text(s, 3, name, -1, SQLITE_TRANSIENT);
    bind_i(s, 4, (int64_t)start);
    bind_opt(s, 5, end);
    run(y, s);
    if (which == S_NVTX)
        y->c->nvtx_ranges++;
    else
        y->c->scopes++;
}

static uint32_t mix(uint64_t i)
{
    i = (i ^ (i >> 31)) * UINT64_C(0x7fb5d329728ea185);
    i = (i ^ (i >> 27)) * UINT64_C(0x81dadef4bc2dd44d);
    return (uint32_t)(i ^ (i >> 33));
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The regular workload; returns the latest time used. */
static uint64_t workload(synth *y, const wl_synth_options *o)
{
    int nt = o->threads < 1 ? 1 : o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
    int ns = o->streams < 1 ? 1 : o->streams > MAX_STREAMS ? MAX_STREAMS : o->streams;
    uint64_t t[MAX_THREADS], sf[MAX_STREAMS], range_start[MAX_THREADS] = {0}, launches[MAX_THREADS] = {0};
    int64_t scope_id[MAX_THREADS];
    for (int i = 0; i < nt; i++) {
        t[i] = T0 + 1000000 + (uint64_t)i * 700;
        scope_id[i] = -1;
    }
    for (int i = 0; i < ns; i++)
        sf[i] = T0;
    char name[64];
    for (uint64_t i = 0; i < o->kernels && !y->failed; i++) {
        int th = (int)(i % (uint64_t)nt), stn = (int)((i / (uint64_t)nt) % (uint64_t)ns);
        uint32_t tid = (uint32_t)(PID + th);
        int64_t stream = 7 + stn;
        uint32_t h = mix(i);
        if (o->nvtx_every > 0 && launches[th] % (uint64_t)o->nvtx_every == 0) {
            if (launches[th]) { /* close the previous range (scope nested 100 ns inside) */
                snprintf(name, sizeof name, "step-%d", th);
                range(y, S_SCOPE, tid, name, range_start[th] + 100, (int64_t)t[th] + 100, scope_id[th]);
                range(y, S_NVTX, tid, "iteration", range_start[th], (int64_t)t[th] + 200, ++y->next_nvtx);
                t[th] += 300;
            }
            range_start[th] = t[th];
            scope_id[th] = ++y->next_scope;
            t[th] += 150;
        }
        launches[th]++;
        uint64_t a0 = t[th], a1 = a0 + 2000 + h % 1000;
        call id = api(y, tid, "cudaLaunchKernel", "launch", a0, a1, scope_id[th]);
        uint64_t ks = max_u64(sf[stn], a0 + 4000), ke = ks + 800 + h % 5000;
        kernel(y, (int)(h >> 8) % N_KCFG, stream, ks, ke, id, a0, tid, scope_id[th], -1);
        sf[stn] = ke + 200;
        t[th] = a1 + 500 + h % 1500;
        if (o->copy_every > 0 && i % (uint64_t)o->copy_every == 0) {
            uint64_t c0 = t[th];
            call cid = api(y, tid, "cudaMemcpyAsync", "memcpy", c0, c0 + 3000, scope_id[th]);
            uint64_t cs = max_u64(sf[stn], c0 + 2000), bytes = 65536u << (h % 5);
            copy(y, stream, cs, bytes, cid, c0, tid, scope_id[th]);
            sf[stn] = cs + bytes / 25 + 200;
            t[th] = c0 + 3500;
        }
        if (o->memset_every > 0 && i % (uint64_t)o->memset_every == 0) {
            uint64_t m0 = t[th];
            call mid = api(y, tid, "cudaMemsetAsync", "memset", m0, m0 + 1500, scope_id[th]);
            uint64_t ms = max_u64(sf[stn], m0 + 2000);
            mset(y, stream, ms, 1 << 20, mid, tid, scope_id[th]);
            sf[stn] = ms + (1 << 20) / 500 + 200;
            t[th] = m0 + 2000;
        }
        if (o->progress && (i & 0xffff) == 0)
            o->progress(i, o->kernels, o->progress_arg);
    }
    uint64_t end = T0 + 1000000;
    for (int th = 0; th < nt; th++) {
        if (o->nvtx_every > 0 && launches[th]) {
            snprintf(name, sizeof name, "step-%d", th);
            range(y, S_SCOPE, (uint32_t)(PID + th), name, range_start[th] + 100, (int64_t)t[th] + 100,
                  scope_id[th]);
            range(y, S_NVTX, (uint32_t)(PID + th), "iteration", range_start[th], (int64_t)t[th] + 200,
                  ++y->next_nvtx);
        }
        end = max_u64(end, t[th] + 1000);
    }
    for (int i = 0; i < ns; i++)
        end = max_u64(end, sf[i]);
    return end;
}

/* Shapes the exporters must handle (see session_synth.h), on the main thread after `t`. */
static uint64_t edge_cases(synth *y, uint64_t t)
{
    uint32_t tid = PID;
    /* a graph launch: one API call, three kernels sharing its correlation id */
    call g = api(y, tid, "cudaGraphLaunch", "graph_launch", t, t + 5000, -1);
    for (int i = 0; i < 3; i++)
        kernel(y, i, 7, t + 6000 + (uint64_t)i * 3000, t + 8500 + (uint64_t)i * 3000, g, t, tid, -1, 77);
    /* an NVTX range and an API call overlapping partially on one thread */
    range(y, S_NVTX, tid, "overlapping-range", t + 20000, (int64_t)(t + 25000), ++y->next_nvtx);
    api(y, tid, "cudaStreamSynchronize", "sync", t + 24000, t + 30000, -1);
    /* two kernels overlapping on one stream, without API calls */
    kernel(y, 1, 8, t + 50000, t + 60000, NO_CALL, 0, tid, -1, -1);
    kernel(y, 3, 8, t + 55000, t + 65000, NO_CALL, 0, tid, -1, -1);
    /* a copy without an API call, and one whose API call starts after it (clock skew: no flow) */
    copy(y, 9, t + 70000, 1 << 20, NO_CALL, 0, tid, -1);
    call late = api(y, tid, "cudaMemcpyAsync", "memcpy", t + 90000, t + 91000, -1);
    copy(y, 9, t + 85000, 4096, late, t + 90000, tid, -1);
    /* an NVTX range never ended */
    range(y, S_NVTX, tid, "never-ended", t + 100000, -1, ++y->next_nvtx);
    return t + 200000;
}

static int fail(sqlite3 *db, char *err, size_t n, const char *what)
{
    snprintf(err, n, "%s: %s", what, db ? sqlite3_errmsg(db) : "?");
    return -1;
}

static int fill(synth *y, const wl_synth_options *o, char *err, size_t n)
{
    sqlite3 *db = y->db;
    if (sqlite3_exec(db, "PRAGMA cache_size=-131072; BEGIN;",
                     NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, err, n, "synthetic session");
    for (int i = 0; i < S_COUNT; i++)
        if (sqlite3_prepare_v2(db, SQL[i], -1, &y->st[i], NULL) != SQLITE_OK)
            return fail(db, err, n, "prepare");
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "INSERT INTO kernel_name (id, mangled, demangled, short_name) VALUES (?,?,?,?)", -1,
                           &s, NULL) != SQLITE_OK)
        return fail(db, err, n, "prepare");
    for (int i = 0; i < N_KCFG; i++) {
        bind_i(s, 1, i + 1);
        sqlite3_bind_text(s, 2, KERNELS[i].mangled, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, KERNELS[i].demangled, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, KERNELS[i].short_name, -1, SQLITE_STATIC);
        run(y, s);
    }
    sqlite3_finalize(s);
    uint64_t end = workload(y, o);
    if (o->edge_cases)
        end = edge_cases(y, end);
    char sql[2048];
    int nt = o->threads < 1 ? 1 : o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
    for (int i = 0; i < nt; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO thread VALUES (4242, %d, '%s%.0d', 'api')", PID + i,
                 i ? "worker-" : "main", i);
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            return fail(db, err, n, "thread");
    }
    snprintf(sql, sizeof sql,
             "INSERT INTO process (pid, ppid, hostname, cmdline, exe, start_ns, end_ns, complete) VALUES"
             " (4242, 1, 'synthetic', 'synthetic-workload --kernels %llu', '/bin/synthetic', %llu, %llu, 1);"
             "INSERT INTO device VALUES (4242, 0, 'NVIDIA H100 80GB HBM3', '0000:00:06.0', 'synthetic', 9, 0, 132,"
             " 32, 1024, 2048, 32, 65536, 65536, 233472, 49152, 232448, 1024, 52428800, 1980000, 2619000, 5120,"
             " 85017493504, 3, 1, 1);"
             "INSERT OR REPLACE INTO meta VALUES ('complete', '1');"
             "INSERT OR REPLACE INTO meta VALUES ('command', 'synthetic-workload');"
             "INSERT INTO sync (pid, type, stream_id, correlation_id, start_ns, end_ns, duration_ns)"
             " SELECT 4242, 'stream', 7, correlation_id, start_ns, end_ns, duration_ns FROM api_call"
             " WHERE category = 'sync';",
             (unsigned long long)o->kernels, (unsigned long long)T0, (unsigned long long)end + 1000000);
    if (y->failed)
        return fail(db, err, n, "insert");
    if (sqlite3_exec(db, WL_FLOW_LINK_SQL, NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, err, n, "flow links");
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, err, n, "process");
    /* kernel identity, as the importer derives it (the NVTX ranges and scopes name operations) */
    if (wl_identity_derive(db, err, n) || wl_pack_build(db, err, n) ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, err, n, "identity");
    return 0;
}

int wl_synth_session(const char *path, const wl_synth_options *o, wl_synth_counts *counts, char *err,
                     size_t err_size)
{
    wl_synth_counts local;
    if (!counts)
        counts = &local;
    memset(counts, 0, sizeof *counts);
    wl_session_draft d;
    if (wl_session_draft_open(&d, path, err, err_size))
        return -1;
    synth y;
    memset(&y, 0, sizeof y);
    y.c = counts;
    y.db = d.db;
    int rc = fill(&y, o, err, err_size);
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(y.st[i]);
    return wl_session_draft_close(&d, rc == 0, err, err_size);
}
