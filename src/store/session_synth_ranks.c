/* One rank of a synthetic data-parallel job (see session_synth_ranks.h). True time starts at T0;
 * each step: a copy, `kernels_per_step` compute kernels back to back on stream 7 (their lengths
 * depend on the step and kernel, scaled by the rank's factor), then the all-reduce on stream 13
 * from the rank's arrival to the common end. */
#include "store/session_synth_ranks.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "store/row_pack.h"
#include "store/schema.h"
#include "store/session_identity.h"
#include "store/session_draft.h"

#define T0 INT64_C(1795343000000000000)
#define LAUNCH_NS 3000     /* a launch call's length; its kernel starts 1 us after it ends at the earliest */
#define TRANSFER_NS 30000  /* the all-reduce's transfer once every rank has arrived */
#define COPY_NS 8000

void wl_synth_rank_defaults(wl_synth_rank_options *o)
{
    memset(o, 0, sizeof *o);
    o->host = "node0";
    o->pid = 1000;
    o->world_size = 1;
    o->steps = 20;
    o->kernels_per_step = 8;
    o->straggler = -1;
}

static uint32_t mix(uint64_t i)
{
    i = (i ^ (i >> 31)) * UINT64_C(0x7fb5d329728ea185);
    i = (i ^ (i >> 27)) * UINT64_C(0x81dadef4bc2dd44d);
    return (uint32_t)(i ^ (i >> 33));
}

/* Length of compute kernel j of step s on a rank of factor 1. */
static int64_t kernel_ns(int s, int j) { return 10000 + (int64_t)(mix((uint64_t)s << 20 | (uint64_t)j) % 4000); }

/* A rank's compute time in step s (its kernels back to back). */
static int64_t compute_ns(const wl_synth_rank_options *o, int s, int r, int64_t base)
{
    double f = r == o->straggler ? 1.0 + o->slowdown : 1.0;
    return (int64_t)((double)base * f) + (int64_t)(mix((uint64_t)s * 7919 + (uint64_t)r) % 500);
}

typedef struct out {
    sqlite3 *db;
    sqlite3_stmt *api, *kernel, *copy, *nvtx;
    int64_t off, next_api, next_kernel, next_copy, next_nvtx;
    uint32_t pid;
    int failed;
} out;

static void step_stmt(out *w, sqlite3_stmt *s)
{
    if (sqlite3_step(s) != SQLITE_DONE)
        w->failed = 1;
    sqlite3_reset(s);
}

static int64_t api(out *w, const char *name, const char *category, int64_t start)
{
    int64_t id = ++w->next_api;
    sqlite3_bind_int64(w->api, 1, id);
    sqlite3_bind_int64(w->api, 2, w->pid);
    sqlite3_bind_text(w->api, 3, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(w->api, 4, category, -1, SQLITE_STATIC);
    sqlite3_bind_int64(w->api, 5, start + w->off);
    sqlite3_bind_int64(w->api, 6, start + LAUNCH_NS + w->off);
    step_stmt(w, w->api);
    return id;
}

static void kernel(out *w, int name_id, int stream, int64_t api_id, int64_t start, int64_t end)
{
    sqlite3_bind_int64(w->kernel, 1, ++w->next_kernel);
    sqlite3_bind_int64(w->kernel, 2, w->pid);
    sqlite3_bind_int64(w->kernel, 3, stream);
    sqlite3_bind_int64(w->kernel, 4, api_id);
    sqlite3_bind_int64(w->kernel, 5, name_id);
    sqlite3_bind_int64(w->kernel, 6, start + w->off);
    sqlite3_bind_int64(w->kernel, 7, end + w->off);
    step_stmt(w, w->kernel);
}

static int fail(out *w, char *err, size_t n, const char *what)
{
    snprintf(err, n, "%s: %s", what, sqlite3_errmsg(w->db));
    return -1;
}

static int fill(out *w, const wl_synth_rank_options *o, char *err, size_t n)
{
    static const char *const SQL[4] = {
        "INSERT INTO api_call (id, pid, tid, domain, cbid, name, category, correlation_id, start_ns, end_ns,"
        " duration_ns, return_value) VALUES (?1, ?2, ?2, 'runtime', 0, ?3, ?4, ?1, ?5, ?6, ?6 - ?5, 0)",
        "INSERT INTO kernel (id, pid, device_id, context_id, stream_id, correlation_id, name_id, grid_x, grid_y,"
        " grid_z, block_x, block_y, block_z, launch_type, start_ns, end_ns, completed_ns, has_timestamps, threads,"
        " blocks, warps, duration_ns, api_id, tid, config_id) VALUES (?1, ?2, 0, 1, ?3, ?4, ?5, 132, 1, 1, 256,"
        " 1, 1, 'regular', ?6, ?7, ?7, 1, 33792, 132, 1056, ?7 - ?6, ?4, ?2, wl_kernel_config_id(132, 1, 1, 256,"
        " 1, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL))",
        "INSERT INTO memcpy (id, pid, device_id, context_id, stream_id, correlation_id, kind, src_kind, dst_kind,"
        " bytes, is_async, start_ns, end_ns, duration_ns, bandwidth_gbps, api_id, tid) VALUES (?1, ?2, 0, 1, 7,"
        " ?3, 'HtoD', 'pinned', 'device', 200000, 1, ?4, ?5, ?5 - ?4, 200000.0 / (?5 - ?4), ?3, ?2)",
        "INSERT INTO nvtx_range (id, pid, tid, domain, name, start_ns, end_ns, duration_ns, end_tid)"
        " VALUES (?1, ?2, ?2, NULL, 'step', ?3, ?4, ?4 - ?3, ?2)",
    };
    sqlite3_stmt **st[4] = {&w->api, &w->kernel, &w->copy, &w->nvtx};
    if (sqlite3_exec(w->db, "BEGIN;"
                            "INSERT INTO kernel_name VALUES (1, '_Z7computePfi', 'compute(float*, int)', 'compute');"
                            "INSERT INTO kernel_name VALUES (2, '" WL_SYNTH_NCCL_KERNEL "', '" WL_SYNTH_NCCL_KERNEL
                            "', '" WL_SYNTH_NCCL_KERNEL "');", NULL, NULL, NULL) != SQLITE_OK)
        return fail(w, err, n, "synthetic rank");
    for (int i = 0; i < 4; i++)
        if (sqlite3_prepare_v2(w->db, SQL[i], -1, st[i], NULL) != SQLITE_OK)
            return fail(w, err, n, "prepare");
    int world = o->world_size < 1 ? 1 : o->world_size, k = o->kernels_per_step < 1 ? 1 : o->kernels_per_step;
    int64_t t = T0 + 100000, end = t;
    for (int s = 0; s < o->steps && !w->failed; s++) {
        int64_t base = 0;
        for (int j = 0; j < k; j++)
            base += kernel_ns(s, j);
        int64_t slowest = 0;
        for (int r = 0; r < world; r++) {
            int64_t c = compute_ns(o, s, r, base);
            slowest = c > slowest ? c : slowest;
        }
        int64_t mine = compute_ns(o, s, o->rank, base), step_start = t;
        /* the copy, then the kernels, stretched to the rank's compute time */
        int64_t cid = api(w, "cudaMemcpyAsync", "memcpy", t);
        sqlite3_bind_int64(w->copy, 1, ++w->next_copy);
        sqlite3_bind_int64(w->copy, 2, w->pid);
        sqlite3_bind_int64(w->copy, 3, cid);
        sqlite3_bind_int64(w->copy, 4, t + LAUNCH_NS + 1000 + w->off);
        sqlite3_bind_int64(w->copy, 5, t + LAUNCH_NS + 1000 + COPY_NS + w->off);
        step_stmt(w, w->copy);
        int64_t g = t + LAUNCH_NS + 1000 + COPY_NS, cpu = t + LAUNCH_NS;
        int64_t compute_start = g, done = 0;
        for (int j = 0; j < k; j++) {
            int64_t len = j == k - 1 ? mine - done : (int64_t)((double)kernel_ns(s, j) * (double)mine / (double)base);
            int64_t a0 = cpu, id = api(w, "cudaLaunchKernel", "launch", a0);
            int64_t ks = g > a0 + LAUNCH_NS + 1000 ? g : a0 + LAUNCH_NS + 1000;
            kernel(w, 1, 7, id, ks, ks + len);
            done += len;
            g = ks + len;
            cpu = a0 + LAUNCH_NS + 200;
        }
        /* every rank arrives at compute_start + its compute; all end together */
        int64_t arrive = g, common = compute_start + slowest + 2000 + TRANSFER_NS;
        int64_t a0 = cpu > arrive - LAUNCH_NS - 1000 ? arrive - LAUNCH_NS - 1000 : cpu;
        if (a0 < cpu)
            a0 = cpu;
        int64_t id = api(w, "cudaLaunchKernel", "launch", a0);
        int64_t ns = arrive > a0 + LAUNCH_NS + 1000 ? arrive : a0 + LAUNCH_NS + 1000;
        int64_t ne = common + (int64_t)(mix((uint64_t)s * 31 + (uint64_t)o->rank + 99) % 1000);
        if (ne <= ns)
            ne = ns + TRANSFER_NS;
        kernel(w, 2, 13, id, ns, ne);
        t = common + 11000; /* the next step starts at one true time on every rank */
        sqlite3_bind_int64(w->nvtx, 1, ++w->next_nvtx);
        sqlite3_bind_int64(w->nvtx, 2, w->pid);
        sqlite3_bind_int64(w->nvtx, 3, step_start + w->off);
        sqlite3_bind_int64(w->nvtx, 4, t - 5000 + w->off);
        step_stmt(w, w->nvtx);
        end = t;
    }
    if (w->failed)
        return fail(w, err, n, "insert");
    char *sql = sqlite3_mprintf(
        "INSERT INTO process (pid, ppid, hostname, cmdline, exe, start_ns, end_ns, rank, local_rank, world_size,"
        " complete) VALUES (%u, 1, %Q, 'train.py --synthetic', '/usr/bin/python3', %lld, %lld, %d, %d, %d, 1);"
        "INSERT INTO device VALUES (%u, 0, 'NVIDIA H100 80GB HBM3', '0000:00:06.0', 'synthetic', 9, 0, 132,"
        " 32, 1024, 2048, 32, 65536, 65536, 233472, 49152, 232448, 1024, 52428800, 1980000, 2619000, 5120,"
        " 85017493504, 3, 1, 1);"
        "INSERT INTO thread VALUES (%u, %u, 'main', 'os');"
        "INSERT OR REPLACE INTO meta VALUES ('complete', '1');"
        "INSERT OR REPLACE INTO meta VALUES ('command', 'train.py --synthetic');",
        w->pid, o->host, (long long)(T0 + w->off), (long long)(end + 100000 + w->off), o->rank, o->local_rank,
        world, w->pid, w->pid, w->pid);
    int rc = sql && sqlite3_exec(w->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    sqlite3_free(sql);
    if (rc || sqlite3_exec(w->db, WL_FLOW_LINK_SQL, NULL, NULL, NULL) != SQLITE_OK)
        return fail(w, err, n, "process");
    if (wl_identity_derive(w->db, err, n) || wl_pack_build(w->db, err, n) ||
        sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return fail(w, err, n, "identity");
    return 0;
}

int wl_synth_rank_session(const char *path, const wl_synth_rank_options *o, char *err, size_t err_size)
{
    wl_session_draft d;
    if (wl_session_draft_open(&d, path, err, err_size))
        return -1;
    out w;
    memset(&w, 0, sizeof w);
    w.db = d.db;
    w.off = o->clock_offset_ns;
    w.pid = o->pid;
    int rc = fill(&w, o, err, err_size);
    sqlite3_finalize(w.api);
    sqlite3_finalize(w.kernel);
    sqlite3_finalize(w.copy);
    sqlite3_finalize(w.nvtx);
    return wl_session_draft_close(&d, rc == 0, err, err_size);
}
