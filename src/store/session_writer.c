/* Capture files -> session database (see session_writer.h). One transaction for the whole
 * session; prepared statements per table; links between records are derived with set-based SQL
 * once all files are in. */
#include "store/session_writer.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/demangle.h"
#include "capfile/capfile_reader.h"
#include "common/atomic_file.h"
#include "store/cupti_enums.h"
#include "store/schema.h"

#define MAX_STRING_ID (1u << 24)

enum stmt_id {
    S_PROCESS, S_DEVICE, S_THREAD, S_KNAME_FIND, S_KNAME_ADD, S_API, S_KERNEL, S_MEMCPY, S_MEMSET,
    S_SYNC, S_NVTX_START, S_NVTX_END, S_NVTX_MARK, S_SCOPE_BEGIN, S_SCOPE_END, S_EXTCORR, S_LOST,
    S_OCC_CHECK, S_ANNOTATION, S_COUNT
};

static const char *const STMT_SQL[S_COUNT] = {
    [S_PROCESS] = "INSERT OR REPLACE INTO process (pid, ppid, hostname, cmdline, exe, start_ns, end_ns, rank,"
                  " local_rank, world_size, ompi_rank, slurm_procid, cupti_version, record_mask, buffer_size,"
                  " complete, incomplete_reason, capture_file, capture_bytes, buffers_completed,"
                  " peak_buffers_in_use) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_DEVICE] = "INSERT OR REPLACE INTO device VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_THREAD] = "INSERT INTO thread (pid, tid, name, name_source) VALUES (?,?,?,?) ON CONFLICT(pid, tid) DO"
                 " UPDATE SET name = excluded.name, name_source = excluded.name_source"
                 " WHERE thread.name_source != 'api' OR excluded.name_source = 'api'",
    [S_KNAME_FIND] = "SELECT id FROM kernel_name WHERE mangled = ?",
    [S_KNAME_ADD] = "INSERT INTO kernel_name (mangled, demangled, short_name) VALUES (?,?,?)",
    [S_API] = "INSERT INTO api_call (pid, tid, domain, cbid, name, category, correlation_id, start_ns, end_ns,"
              " duration_ns, return_value) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    [S_KERNEL] = "INSERT INTO kernel (pid, device_id, context_id, stream_id, correlation_id, name_id, grid_x,"
                 " grid_y, grid_z, block_x, block_y, block_z, cluster_x, cluster_y, cluster_z,"
                 " cluster_scheduling_policy, max_potential_cluster_size, max_active_clusters,"
                 " registers_per_thread, static_smem, dynamic_smem, smem_executed, smem_limit_config,"
                 " local_mem_per_thread, local_mem_total, cache_config_requested, cache_config_executed,"
                 " carveout_requested, launch_type, is_device_launched, graph_id, graph_node_id, grid_id,"
                 " queued_ns, submitted_ns, start_ns, end_ns, completed_ns, has_timestamps, threads, blocks,"
                 " warps, duration_ns, queue_delay_ns, submit_delay_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,"
                 "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_MEMCPY] = "INSERT INTO memcpy (pid, device_id, context_id, stream_id, correlation_id, kind, src_kind,"
                 " dst_kind, bytes, is_async, src_device, dst_device, graph_id, graph_node_id, start_ns, end_ns,"
                 " duration_ns, bandwidth_gbps) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_MEMSET] = "INSERT INTO memset (pid, device_id, context_id, stream_id, correlation_id, memory_kind, bytes,"
                 " value, is_async, graph_id, graph_node_id, start_ns, end_ns, duration_ns, bandwidth_gbps)"
                 " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_SYNC] = "INSERT INTO sync (pid, type, context_id, stream_id, event_id, correlation_id, start_ns, end_ns,"
               " duration_ns) VALUES (?,?,?,?,?,?,?,?,?)",
    [S_NVTX_START] = "INSERT INTO nvtx_range (pid, tid, domain, name, start_ns) VALUES (?,?,?,?,?)",
    [S_NVTX_END] = "UPDATE nvtx_range SET end_ns = ?1, duration_ns = ?1 - start_ns, end_tid = ?2 WHERE id = ?3",
    [S_NVTX_MARK] = "INSERT INTO nvtx_mark (pid, tid, domain, name, ts_ns) VALUES (?,?,?,?,?)",
    [S_SCOPE_BEGIN] = "INSERT OR REPLACE INTO scope (pid, scope_id, parent_id, tid, name, name_truncated,"
                      " start_ns) VALUES (?,?,?,?,?,?,?)",
    [S_SCOPE_END] = "UPDATE scope SET end_ns = ?1, duration_ns = ?1 - start_ns WHERE pid = ?2 AND scope_id = ?3",
    [S_EXTCORR] = "INSERT INTO temp.extcorr (pid, correlation_id, external_id, kind) VALUES (?,?,?,?)",
    [S_LOST] = "INSERT INTO lost (pid, source, count, detail) VALUES (?,?,?,?)",
    [S_ANNOTATION] = "INSERT INTO annotation (pid, tid, target, correlation_id, scope_id, flops, bytes, precision)"
                     " VALUES (?,?,?,?,?,?,?,?)",
    [S_OCC_CHECK] = "INSERT INTO occupancy_check (pid, correlation_id, block_size, dynamic_smem,"
                    " driver_active_blocks, function_registers, status) VALUES (?,?,?,?,?,?,?)",
};

struct wl_session_writer {
    sqlite3 *db;
    char tmp_path[4096];
    char final_path[4096];
    sqlite3_stmt *st[S_COUNT];
};

/* Per-capture-file state: interned strings and the rows that later records refer to. */
typedef struct import_ctx {
    wl_session_writer *w;
    uint32_t pid;
    char **strings;          /* by string id */
    uint32_t *string_len;
    int64_t *kname_row;      /* kernel_name row by string id (0 = not yet) */
    uint32_t nstrings;
    /* NVTX starts waiting for their end: marker id -> nvtx_range row */
    uint64_t *nvtx_keys;
    int64_t *nvtx_rows;
    uint32_t nvtx_cap, nvtx_used;
    /* API names by (domain, cbid) */
    char *api_names[3][1024];
    wl_import_stats *stats;
    char *err;
    size_t err_size;
} import_ctx;

static int set_err(char *err, size_t n, const char *fmt, ...)
{
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int exec(wl_session_writer *w, const char *sql, char *err, size_t n)
{
    char *msg = NULL;
    if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        set_err(err, n, "SQLite: %s", msg ? msg : sqlite3_errmsg(w->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

wl_session_writer *wl_session_writer_create(const char *path, char *err, size_t err_size)
{
    wl_session_writer *w = calloc(1, sizeof *w);
    if (!w) {
        set_err(err, err_size, "out of memory");
        return NULL;
    }
    if (strlen(path) >= sizeof w->final_path || wl_tmp_path_for(path, w->tmp_path, sizeof w->tmp_path)) {
        set_err(err, err_size, "output path too long: %s", path);
        free(w);
        return NULL;
    }
    strcpy(w->final_path, path);
    unlink(w->tmp_path);
    if (sqlite3_open_v2(w->tmp_path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        set_err(err, err_size, "cannot create %s: %s", w->tmp_path, w->db ? sqlite3_errmsg(w->db) : "?");
        wl_session_writer_abort(w);
        return NULL;
    }
    /* The file is private until renamed, so no journal is needed: a failure discards it. */
    if (exec(w, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;"
                " PRAGMA cache_size=-65536; BEGIN;", err, err_size) ||
        exec(w, WL_SCHEMA_SQL, err, err_size) ||
        exec(w, "CREATE TEMP TABLE extcorr (pid INTEGER, correlation_id INTEGER, external_id INTEGER,"
                " kind INTEGER);", err, err_size)) {
        wl_session_writer_abort(w);
        return NULL;
    }
    for (int i = 0; i < S_COUNT; i++) {
        if (sqlite3_prepare_v3(w->db, STMT_SQL[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i], NULL) != SQLITE_OK) {
            set_err(err, err_size, "SQLite prepare failed: %s", sqlite3_errmsg(w->db));
            wl_session_writer_abort(w);
            return NULL;
        }
    }
    char v[16];
    snprintf(v, sizeof v, "%d", WL_SCHEMA_VERSION);
    if (wl_session_writer_meta(w, "format", WL_SESSION_FORMAT) || wl_session_writer_meta(w, "schema_version", v) ||
        wl_session_writer_meta(w, "clock", "CLOCK_REALTIME ns") ||
        wl_session_writer_meta(w, "created_by", "warplens 0.1.0")) {
        set_err(err, err_size, "cannot write session metadata: %s", sqlite3_errmsg(w->db));
        wl_session_writer_abort(w);
        return NULL;
    }
    return w;
}

int wl_session_writer_meta(wl_session_writer *w, const char *key, const char *value)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, value ? value : "", -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
    return rc;
}

void wl_session_writer_abort(wl_session_writer *w)
{
    if (!w)
        return;
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(w->st[i]);
    if (w->db)
        sqlite3_close(w->db);
    if (w->tmp_path[0])
        unlink(w->tmp_path);
    free(w);
}

/* ---- binding helpers ------------------------------------------------------------------------ */

static sqlite3_stmt *begin(import_ctx *c, enum stmt_id id)
{
    sqlite3_stmt *s = c->w->st[id];
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return s;
}

static int step(import_ctx *c, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return set_err(c->err, c->err_size, "SQLite: %s", sqlite3_errmsg(c->w->db));
    return 0;
}

static void bind_u64(sqlite3_stmt *s, int i, uint64_t v) { sqlite3_bind_int64(s, i, (sqlite3_int64)v); }
/* 0 means "not recorded" for CUPTI timestamps: store NULL */
static void bind_ts(sqlite3_stmt *s, int i, uint64_t v)
{
    if (v)
        sqlite3_bind_int64(s, i, (sqlite3_int64)v);
    else
        sqlite3_bind_null(s, i);
}

static const char *str(import_ctx *c, uint32_t id)
{
    return (id && id < c->nstrings) ? c->strings[id] : NULL;
}

static void bind_str(import_ctx *c, sqlite3_stmt *s, int i, uint32_t id)
{
    const char *v = str(c, id);
    if (v)
        sqlite3_bind_text(s, i, v, (int)c->string_len[id], SQLITE_STATIC);
    else
        sqlite3_bind_null(s, i);
}

static int check_string_ref(import_ctx *c, uint32_t id, size_t offset)
{
    if (id && (id >= c->nstrings || !c->strings[id]))
        return set_err(c->err, c->err_size, "record at offset %zu refers to undefined string %u", offset, id);
    return 0;
}

/* ---- records -------------------------------------------------------------------------------- */

static int on_string(import_ctx *c, const uint8_t *p, size_t offset)
{
    wlcap_string h;
    memcpy(&h, p, sizeof h);
    if (h.id >= MAX_STRING_ID)
        return set_err(c->err, c->err_size, "string record at offset %zu has id %u (limit %u)", offset, h.id,
                       MAX_STRING_ID);
    if (h.id >= c->nstrings) {
        uint32_t n = c->nstrings ? c->nstrings : 1024;
        while (n <= h.id)
            n *= 2;
        char **s = realloc(c->strings, n * sizeof *s);
        if (s)
            c->strings = s;
        uint32_t *l = realloc(c->string_len, n * sizeof *l);
        if (l)
            c->string_len = l;
        int64_t *k = realloc(c->kname_row, n * sizeof *k);
        if (k)
            c->kname_row = k;
        if (!s || !l || !k)
            return set_err(c->err, c->err_size, "out of memory reading strings");
        memset(c->strings + c->nstrings, 0, (n - c->nstrings) * sizeof *s);
        memset(c->string_len + c->nstrings, 0, (n - c->nstrings) * sizeof *l);
        memset(c->kname_row + c->nstrings, 0, (n - c->nstrings) * sizeof *k);
        c->nstrings = n;
    }
    char *t = malloc((size_t)h.len + 1);
    if (!t)
        return set_err(c->err, c->err_size, "out of memory reading strings");
    memcpy(t, p + sizeof h, h.len);
    t[h.len] = 0;
    free(c->strings[h.id]);
    c->strings[h.id] = t;
    c->string_len[h.id] = (uint32_t)strlen(t); /* an embedded NUL ends the text */
    c->kname_row[h.id] = 0;
    return 0;
}

static void mask_text(uint32_t mask, char *out, size_t n)
{
    static const char *const names[] = {"kernels", "memcpy", "api", "nvtx", "sync"};
    out[0] = 0;
    for (int i = 0; i < 5; i++)
        if (mask & (1u << i))
            snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? "," : "", names[i]);
}

static int on_process(import_ctx *c, const wlcap_process *p)
{
    c->pid = p->pid;
    char mask[64];
    mask_text(p->record_mask, mask, sizeof mask);
    sqlite3_stmt *s = begin(c, S_PROCESS);
    bind_u64(s, 1, p->pid);
    bind_u64(s, 2, p->ppid);
    bind_str(c, s, 3, p->hostname_str);
    bind_str(c, s, 4, p->cmdline_str);
    bind_str(c, s, 5, p->exe_str);
    bind_u64(s, 6, p->start_ns);
    sqlite3_bind_null(s, 7);
    int32_t ranks[5] = {p->rank, p->local_rank, p->world_size, p->ompi_rank, p->slurm_procid};
    for (int i = 0; i < 5; i++) {
        if (ranks[i] >= 0)
            sqlite3_bind_int(s, 8 + i, ranks[i]);
    }
    bind_u64(s, 13, p->cupti_version);
    sqlite3_bind_text(s, 14, mask, -1, SQLITE_TRANSIENT);
    bind_u64(s, 15, p->buffer_size);
    sqlite3_bind_int(s, 16, 0); /* complete once END is seen */
    sqlite3_bind_text(s, 17, "capture ended before the recorder finished", -1, SQLITE_STATIC);
    return step(c, s);
}

static int on_device(import_ctx *c, const wlcap_device *d)
{
    sqlite3_stmt *s = begin(c, S_DEVICE);
    char uuid[40];
    for (int i = 0; i < 16; i++)
        snprintf(uuid + 2 * i, 3, "%02x", d->uuid[i]);
    bind_u64(s, 1, c->pid);
    bind_u64(s, 2, d->device_id);
    bind_str(c, s, 3, d->name_str);
    bind_str(c, s, 4, d->pci_str);
    sqlite3_bind_text(s, 5, uuid, -1, SQLITE_TRANSIENT);
    const int32_t v[] = {d->cc_major, d->cc_minor, d->sm_count, d->warp_size, d->max_threads_per_block,
                         d->max_threads_per_sm, d->max_blocks_per_sm, d->regs_per_sm, d->regs_per_block,
                         d->smem_per_sm, d->smem_per_block, d->smem_per_block_optin,
                         d->reserved_smem_per_block, d->l2_bytes, d->core_clock_khz, d->mem_clock_khz,
                         d->mem_bus_width_bits};
    for (int i = 0; i < (int)(sizeof v / sizeof v[0]); i++)
        sqlite3_bind_int(s, 6 + i, v[i]);
    bind_u64(s, 23, d->total_mem_bytes);
    sqlite3_bind_int(s, 24, d->async_engines);
    sqlite3_bind_int(s, 25, d->ecc_enabled);
    sqlite3_bind_int(s, 26, d->concurrent_kernels);
    return step(c, s);
}

static int on_thread(import_ctx *c, const wlcap_thread *t)
{
    sqlite3_stmt *s = begin(c, S_THREAD);
    bind_u64(s, 1, c->pid);
    bind_u64(s, 2, t->tid);
    bind_str(c, s, 3, t->name_str);
    sqlite3_bind_text(s, 4, t->source == WLCAP_THREAD_API ? "api" : "os", -1, SQLITE_STATIC);
    c->stats->threads++;
    return step(c, s);
}

static int64_t kernel_name_row(import_ctx *c, uint32_t id)
{
    if (id && id < c->nstrings && c->kname_row[id])
        return c->kname_row[id];
    const char *mangled = str(c, id);
    if (!mangled)
        mangled = "(unnamed kernel)";
    sqlite3_stmt *f = begin(c, S_KNAME_FIND);
    sqlite3_bind_text(f, 1, mangled, -1, SQLITE_STATIC);
    int64_t row = 0;
    if (sqlite3_step(f) == SQLITE_ROW)
        row = sqlite3_column_int64(f, 0);
    sqlite3_reset(f);
    if (!row) {
        char demangled[4096], shortn[1024];
        wl_demangle(mangled, demangled, sizeof demangled);
        wl_short_kernel_name(demangled, shortn, sizeof shortn);
        sqlite3_stmt *a = begin(c, S_KNAME_ADD);
        sqlite3_bind_text(a, 1, mangled, -1, SQLITE_STATIC);
        sqlite3_bind_text(a, 2, demangled, -1, SQLITE_STATIC);
        sqlite3_bind_text(a, 3, shortn, -1, SQLITE_STATIC);
        if (step(c, a))
            return -1;
        row = sqlite3_last_insert_rowid(c->w->db);
    }
    if (id && id < c->nstrings)
        c->kname_row[id] = row;
    return row;
}

static int on_kernel(import_ctx *c, const wlcap_kernel *k)
{
    int64_t name = kernel_name_row(c, k->name_str);
    if (name < 0)
        return -1;
    sqlite3_stmt *s = begin(c, S_KERNEL);
    int i = 1;
    bind_u64(s, i++, c->pid);
    bind_u64(s, i++, k->device_id);
    bind_u64(s, i++, k->context_id);
    bind_u64(s, i++, k->stream_id);
    bind_u64(s, i++, k->correlation_id);
    sqlite3_bind_int64(s, i++, name);
    const int64_t dims[] = {k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z,
                            k->cluster_x, k->cluster_y, k->cluster_z, k->cluster_sched_policy,
                            k->max_potential_cluster_size, k->max_active_clusters, k->registers_per_thread,
                            k->static_smem, k->dynamic_smem, k->smem_executed, k->smem_limit_config,
                            k->local_mem_per_thread, (int64_t)k->local_mem_total, k->cache_config_requested,
                            k->cache_config_executed};
    for (size_t j = 0; j < sizeof dims / sizeof dims[0]; j++)
        sqlite3_bind_int64(s, i++, dims[j]);
    if (k->carveout_requested != 0xff)
        sqlite3_bind_int(s, i, k->carveout_requested);
    i++;
    sqlite3_bind_text(s, i++, wl_launch_type_name(k->launch_type), -1, SQLITE_STATIC);
    sqlite3_bind_int(s, i++, k->is_device_launched);
    if (k->graph_id) {
        bind_u64(s, i, k->graph_id);
        bind_u64(s, i + 1, k->graph_node_id);
    }
    i += 2;
    sqlite3_bind_int64(s, i++, k->grid_id);
    bind_ts(s, i++, k->queued);
    bind_ts(s, i++, k->submitted);
    bind_ts(s, i++, k->start);
    bind_ts(s, i++, k->end);
    bind_ts(s, i++, k->completed);
    int has_ts = k->start && k->end && k->end >= k->start;
    sqlite3_bind_int(s, i++, has_ts);
    /* Derived: sizes from the launch configuration; delays from the latency timestamps. */
    int64_t blocks = (int64_t)k->grid_x * k->grid_y * k->grid_z;
    int64_t threads_per_block = (int64_t)k->block_x * k->block_y * k->block_z;
    int64_t warps_per_block = (threads_per_block + 31) / 32;
    sqlite3_bind_int64(s, i++, blocks * threads_per_block);
    sqlite3_bind_int64(s, i++, blocks);
    sqlite3_bind_int64(s, i++, blocks * warps_per_block);
    if (has_ts)
        bind_u64(s, i, k->end - k->start);
    i++;
    if (k->queued && k->submitted >= k->queued)
        bind_u64(s, i, k->submitted - k->queued);
    i++;
    if (k->submitted && k->start >= k->submitted)
        bind_u64(s, i, k->start - k->submitted);
    c->stats->kernels++;
    return step(c, s);
}

static double bandwidth_gbps(uint64_t bytes, uint64_t start, uint64_t end)
{
    return end > start ? (double)bytes / (double)(end - start) : 0.0; /* bytes/ns = GB/s */
}

static int on_memcpy(import_ctx *c, const wlcap_memcpy *m)
{
    sqlite3_stmt *s = begin(c, S_MEMCPY);
    bind_u64(s, 1, c->pid);
    bind_u64(s, 2, m->device_id);
    bind_u64(s, 3, m->context_id);
    bind_u64(s, 4, m->stream_id);
    bind_u64(s, 5, m->correlation_id);
    sqlite3_bind_text(s, 6, wl_copy_kind_name(m->copy_kind, m->is_peer), -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 7, wl_memory_kind_name(m->src_kind), -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 8, wl_memory_kind_name(m->dst_kind), -1, SQLITE_STATIC);
    bind_u64(s, 9, m->bytes);
    sqlite3_bind_int(s, 10, (m->flags & 1) ? 1 : 0); /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC */
    bind_u64(s, 11, m->src_device);
    bind_u64(s, 12, m->dst_device);
    if (m->graph_id) {
        bind_u64(s, 13, m->graph_id);
        bind_u64(s, 14, m->graph_node_id);
    }
    bind_ts(s, 15, m->start);
    bind_ts(s, 16, m->end);
    if (m->start && m->end >= m->start) {
        bind_u64(s, 17, m->end - m->start);
        sqlite3_bind_double(s, 18, bandwidth_gbps(m->bytes, m->start, m->end));
    }
    c->stats->memcpys++;
    return step(c, s);
}

static int on_memset(import_ctx *c, const wlcap_memset *m)
{
    sqlite3_stmt *s = begin(c, S_MEMSET);
    bind_u64(s, 1, c->pid);
    bind_u64(s, 2, m->device_id);
    bind_u64(s, 3, m->context_id);
    bind_u64(s, 4, m->stream_id);
    bind_u64(s, 5, m->correlation_id);
    sqlite3_bind_text(s, 6, wl_memory_kind_name(m->memory_kind), -1, SQLITE_STATIC);
    bind_u64(s, 7, m->bytes);
    bind_u64(s, 8, m->value);
    sqlite3_bind_int(s, 9, (m->flags & 1) ? 1 : 0); /* CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC */
    if (m->graph_id) {
        bind_u64(s, 10, m->graph_id);
        bind_u64(s, 11, m->graph_node_id);
    }
    bind_ts(s, 12, m->start);
    bind_ts(s, 13, m->end);
    if (m->start && m->end >= m->start) {
        bind_u64(s, 14, m->end - m->start);
        sqlite3_bind_double(s, 15, bandwidth_gbps(m->bytes, m->start, m->end));
    }
    c->stats->memsets++;
    return step(c, s);
}

static int on_api_name(import_ctx *c, const wlcap_api_name *a)
{
    if (a->domain > 2 || a->cbid >= 1024 || !str(c, a->name_str))
        return 0; /* names we cannot place are shown as cbid numbers */
    free(c->api_names[a->domain][a->cbid]);
    c->api_names[a->domain][a->cbid] = strdup(str(c, a->name_str));
    return 0;
}

static int on_api(import_ctx *c, const wlcap_api *a)
{
    char fallback[32];
    const char *name = (a->domain <= 2 && a->cbid < 1024) ? c->api_names[a->domain][a->cbid] : NULL;
    if (!name) {
        snprintf(fallback, sizeof fallback, "cbid_%u", a->cbid);
        name = fallback;
    }
    sqlite3_stmt *s = begin(c, S_API);
    bind_u64(s, 1, c->pid);
    bind_u64(s, 2, a->tid);
    sqlite3_bind_text(s, 3, a->domain == WLCAP_API_RUNTIME ? "runtime" : "driver", -1, SQLITE_STATIC);
    bind_u64(s, 4, a->cbid);
    sqlite3_bind_text(s, 5, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 6, wl_api_category(name), -1, SQLITE_STATIC);
    bind_u64(s, 7, a->correlation_id);
    bind_u64(s, 8, a->start);
    bind_u64(s, 9, a->end);
    bind_u64(s, 10, a->end >= a->start ? a->end - a->start : 0);
    bind_u64(s, 11, a->return_value);
    c->stats->api_calls++;
    return step(c, s);
}

static int on_sync(import_ctx *c, const wlcap_sync *y)
{
    sqlite3_stmt *s = begin(c, S_SYNC);
    bind_u64(s, 1, c->pid);
    sqlite3_bind_text(s, 2, wl_sync_type_name(y->type), -1, SQLITE_STATIC);
    bind_u64(s, 3, y->context_id);
    if (y->stream_id != 0xffffffffu)
        bind_u64(s, 4, y->stream_id);
    if (y->event_id != 0xffffffffu)
        bind_u64(s, 5, y->event_id);
    bind_u64(s, 6, y->correlation_id);
    bind_u64(s, 7, y->start);
    bind_u64(s, 8, y->end);
    bind_u64(s, 9, y->end >= y->start ? y->end - y->start : 0);
    c->stats->syncs++;
    return step(c, s);
}

/* NVTX: a START row is inserted at once and completed when its END arrives (matched by id). */
static int nvtx_map_put(import_ctx *c, uint64_t key, int64_t row)
{
    if (c->nvtx_used * 2 >= c->nvtx_cap) {
        uint32_t ncap = c->nvtx_cap ? c->nvtx_cap * 2 : 1024;
        uint64_t *keys = calloc(ncap, sizeof *keys);
        int64_t *rows = calloc(ncap, sizeof *rows);
        if (!keys || !rows) {
            free(keys);
            free(rows);
            return set_err(c->err, c->err_size, "out of memory pairing NVTX ranges");
        }
        for (uint32_t i = 0; i < c->nvtx_cap; i++) {
            if (!c->nvtx_rows[i])
                continue;
            uint32_t j = (uint32_t)(c->nvtx_keys[i] * 0x9E3779B97F4A7C15ull >> 32) & (ncap - 1);
            while (rows[j])
                j = (j + 1) & (ncap - 1);
            keys[j] = c->nvtx_keys[i];
            rows[j] = c->nvtx_rows[i];
        }
        free(c->nvtx_keys);
        free(c->nvtx_rows);
        c->nvtx_keys = keys;
        c->nvtx_rows = rows;
        c->nvtx_cap = ncap;
    }
    uint32_t j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & (c->nvtx_cap - 1);
    while (c->nvtx_rows[j] && c->nvtx_keys[j] != key)
        j = (j + 1) & (c->nvtx_cap - 1);
    if (!c->nvtx_rows[j])
        c->nvtx_used++;
    c->nvtx_keys[j] = key;
    c->nvtx_rows[j] = row;
    return 0;
}

/* Returns the row and removes the key (tombstone-free: re-inserts the rest of the cluster). */
static int64_t nvtx_map_take(import_ctx *c, uint64_t key)
{
    if (!c->nvtx_cap)
        return 0;
    uint32_t mask = c->nvtx_cap - 1, j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & mask;
    while (c->nvtx_rows[j] && c->nvtx_keys[j] != key)
        j = (j + 1) & mask;
    int64_t row = c->nvtx_rows[j];
    if (!row)
        return 0;
    c->nvtx_rows[j] = 0;
    c->nvtx_used--;
    for (uint32_t k = (j + 1) & mask; c->nvtx_rows[k]; k = (k + 1) & mask) {
        uint64_t kk = c->nvtx_keys[k];
        int64_t rr = c->nvtx_rows[k];
        c->nvtx_rows[k] = 0;
        c->nvtx_used--;
        nvtx_map_put(c, kk, rr);
    }
    return row;
}

static int on_marker(import_ctx *c, const wlcap_marker *m)
{
    const char *domain = str(c, m->domain_str);
    if (m->kind == WLCAP_MARK_INSTANT) {
        sqlite3_stmt *s = begin(c, S_NVTX_MARK);
        bind_u64(s, 1, c->pid);
        bind_u64(s, 2, m->tid);
        if (domain)
            sqlite3_bind_text(s, 3, domain, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, str(c, m->name_str) ? str(c, m->name_str) : "", -1, SQLITE_STATIC);
        bind_u64(s, 5, m->timestamp);
        c->stats->nvtx_marks++;
        return step(c, s);
    }
    if (m->kind == WLCAP_MARK_START) {
        sqlite3_stmt *s = begin(c, S_NVTX_START);
        bind_u64(s, 1, c->pid);
        bind_u64(s, 2, m->tid);
        if (domain)
            sqlite3_bind_text(s, 3, domain, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, str(c, m->name_str) ? str(c, m->name_str) : "", -1, SQLITE_STATIC);
        bind_u64(s, 5, m->timestamp);
        if (step(c, s))
            return -1;
        c->stats->nvtx_ranges++;
        return nvtx_map_put(c, m->id, sqlite3_last_insert_rowid(c->w->db));
    }
    if (m->kind == WLCAP_MARK_END) {
        int64_t row = nvtx_map_take(c, m->id);
        if (!row)
            return 0; /* an end whose start was not recorded (e.g. before the recorder started) */
        sqlite3_stmt *s = begin(c, S_NVTX_END);
        bind_u64(s, 1, m->timestamp);
        bind_u64(s, 2, m->tid);
        sqlite3_bind_int64(s, 3, row);
        return step(c, s);
    }
    return 0;
}

static int on_scope(import_ctx *c, const wlcap_scope *sc)
{
    if (sc->kind == WLCAP_SCOPE_BEGIN) {
        sqlite3_stmt *s = begin(c, S_SCOPE_BEGIN);
        bind_u64(s, 1, c->pid);
        bind_u64(s, 2, sc->scope_id);
        if (sc->parent_id)
            bind_u64(s, 3, sc->parent_id);
        bind_u64(s, 4, sc->tid);
        sqlite3_bind_text(s, 5, str(c, sc->name_str) ? str(c, sc->name_str) : "", -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 6, sc->truncated ? 1 : 0);
        bind_u64(s, 7, sc->timestamp);
        c->stats->scopes++;
        return step(c, s);
    }
    sqlite3_stmt *s = begin(c, S_SCOPE_END);
    bind_u64(s, 1, sc->timestamp);
    bind_u64(s, 2, c->pid);
    bind_u64(s, 3, sc->scope_id);
    return step(c, s);
}

static int on_extcorr(import_ctx *c, const wlcap_extcorr *e)
{
    sqlite3_stmt *s = begin(c, S_EXTCORR);
    bind_u64(s, 1, c->pid);
    bind_u64(s, 2, e->correlation_id);
    bind_u64(s, 3, e->external_id);
    bind_u64(s, 4, e->kind);
    return step(c, s);
}

static int add_lost(import_ctx *c, const char *source, uint64_t count, const char *detail)
{
    sqlite3_stmt *s = begin(c, S_LOST);
    bind_u64(s, 1, c->pid);
    sqlite3_bind_text(s, 2, source, -1, SQLITE_STATIC);
    bind_u64(s, 3, count);
    if (detail)
        sqlite3_bind_text(s, 4, detail, -1, SQLITE_TRANSIENT);
    c->stats->lost += count;
    return step(c, s);
}

static int on_dropped(import_ctx *c, const wlcap_dropped *d)
{
    switch (d->source) {
    case WLCAP_DROP_CUPTI: return add_lost(c, "cupti_dropped", d->count, "CUPTI activity records dropped");
    case WLCAP_DROP_BUFFER:
        return add_lost(c, "buffer_refused", d->count, "buffer requests refused at the pool limit (raise --buffer-size or --max-buffers)");
    case WLCAP_DROP_EVENTS: return add_lost(c, "scope_events", d->count, "scope/thread events lost: event ring full");
    case WLCAP_DROP_API: return add_lost(c, "api_calls", d->count, "API call records lost: API ring full");
    default: return add_lost(c, "other", d->count, NULL);
    }
}

static int on_occ_check(import_ctx *c, const wlcap_occ_check *o)
{
    sqlite3_stmt *s = begin(c, S_OCC_CHECK);
    bind_u64(s, 1, c->pid);
    bind_u64(s, 2, o->correlation_id);
    bind_u64(s, 3, o->block_size);
    bind_u64(s, 4, o->dynamic_smem);
    sqlite3_bind_int(s, 5, o->driver_active_blocks);
    if (o->function_registers >= 0)
        sqlite3_bind_int(s, 6, o->function_registers);
    bind_u64(s, 7, o->status);
    return step(c, s);
}

static int on_annotation(import_ctx *c, const wlcap_annotation *a)
{
    static const char *const precision[] = {"fp32", "fp64", "fp16_tensor", "bf16_tensor"};
    if (a->target != WLCAP_ANNOTATE_KERNEL && a->target != WLCAP_ANNOTATE_SCOPE)
        return 0;
    sqlite3_stmt *s = begin(c, S_ANNOTATION);
    bind_u64(s, 1, c->pid);
    bind_u64(s, 2, a->tid);
    int kernel = a->target == WLCAP_ANNOTATE_KERNEL;
    sqlite3_bind_text(s, 3, kernel ? "kernel" : "scope", -1, SQLITE_STATIC);
    if (kernel)
        bind_u64(s, 4, a->correlation_id);
    else
        bind_u64(s, 5, a->scope_id);
    /* NaN or negative counts from a program are stored as unknown (0) */
    sqlite3_bind_double(s, 6, a->flops > 0 ? a->flops : 0);
    sqlite3_bind_double(s, 7, a->bytes > 0 ? a->bytes : 0);
    sqlite3_bind_text(s, 8, precision[a->precision < 4 ? a->precision : 0], -1, SQLITE_STATIC);
    return step(c, s);
}

static int on_end(import_ctx *c, const wlcap_end *e, const char *path)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->w->db,
                           "UPDATE process SET complete = 1, incomplete_reason = NULL, end_ns = ?, capture_file = ?,"
                           " capture_bytes = ?, buffers_completed = ?, peak_buffers_in_use = ? WHERE pid = ?",
                           -1, &s, NULL) != SQLITE_OK)
        return set_err(c->err, c->err_size, "SQLite: %s", sqlite3_errmsg(c->w->db));
    bind_u64(s, 1, e->end_ns);
    sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
    bind_u64(s, 3, e->bytes_written);
    bind_u64(s, 4, e->buffers_completed);
    bind_u64(s, 5, e->peak_buffers_in_use);
    bind_u64(s, 6, c->pid);
    int rc = step(c, s);
    sqlite3_finalize(s);
    c->stats->complete = 1;
    return rc;
}

static int dispatch(import_ctx *c, uint16_t type, const uint8_t *p, size_t offset, const char *path)
{
    /* Fixed payloads are copied out so the mapped file needs no alignment. */
    union {
        wlcap_process process;
        wlcap_device device;
        wlcap_kernel kernel;
        wlcap_memcpy memcpy_;
        wlcap_memset memset_;
        wlcap_api api;
        wlcap_sync sync;
        wlcap_marker marker;
        wlcap_extcorr extcorr;
        wlcap_scope scope;
        wlcap_thread thread;
        wlcap_dropped dropped;
        wlcap_end end;
        wlcap_api_name api_name;
        wlcap_occ_check occ_check;
        wlcap_annotation annotation;
    } u;
    if (type == WLCAP_STRING)
        return on_string(c, p, offset);
    memcpy(&u, p, wlcap_payload_size(type));
    switch (type) {
    case WLCAP_PROCESS:
        if (check_string_ref(c, u.process.hostname_str, offset) || check_string_ref(c, u.process.cmdline_str, offset) ||
            check_string_ref(c, u.process.exe_str, offset))
            return -1;
        return on_process(c, &u.process);
    case WLCAP_DEVICE:
        if (check_string_ref(c, u.device.name_str, offset) || check_string_ref(c, u.device.pci_str, offset))
            return -1;
        return on_device(c, &u.device);
    case WLCAP_KERNEL:
        return check_string_ref(c, u.kernel.name_str, offset) ? -1 : on_kernel(c, &u.kernel);
    case WLCAP_MEMCPY: return on_memcpy(c, &u.memcpy_);
    case WLCAP_MEMSET: return on_memset(c, &u.memset_);
    case WLCAP_API: return on_api(c, &u.api);
    case WLCAP_API_NAME: return check_string_ref(c, u.api_name.name_str, offset) ? -1 : on_api_name(c, &u.api_name);
    case WLCAP_SYNC: return on_sync(c, &u.sync);
    case WLCAP_MARKER:
        if (check_string_ref(c, u.marker.name_str, offset) || check_string_ref(c, u.marker.domain_str, offset))
            return -1;
        return on_marker(c, &u.marker);
    case WLCAP_EXTCORR: return on_extcorr(c, &u.extcorr);
    case WLCAP_SCOPE: return check_string_ref(c, u.scope.name_str, offset) ? -1 : on_scope(c, &u.scope);
    case WLCAP_THREAD: return check_string_ref(c, u.thread.name_str, offset) ? -1 : on_thread(c, &u.thread);
    case WLCAP_DROPPED: return on_dropped(c, &u.dropped);
    case WLCAP_END: return on_end(c, &u.end, path);
    case WLCAP_OCC_CHECK: return on_occ_check(c, &u.occ_check);
    case WLCAP_ANNOTATION: return on_annotation(c, &u.annotation);
    default: return 0;
    }
}

static void free_ctx(import_ctx *c)
{
    for (uint32_t i = 0; i < c->nstrings; i++)
        free(c->strings[i]);
    free(c->strings);
    free(c->string_len);
    free(c->kname_row);
    free(c->nvtx_keys);
    free(c->nvtx_rows);
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < 1024; i++)
            free(c->api_names[d][i]);
}

int wl_session_writer_import(wl_session_writer *w, const char *capture_path, wl_import_stats *stats,
                             char *err, size_t err_size)
{
    wl_import_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    wlcap_reader r;
    if (wlcap_reader_open_file(&r, capture_path) != 0)
        return set_err(err, err_size, "%s", r.error);
    import_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        wlcap_reader_close(&r);
        return set_err(err, err_size, "out of memory");
    }
    c->w = w;
    c->pid = (uint32_t)r.header.pid;
    c->stats = stats;
    c->err = err;
    c->err_size = err_size;
    int rc = 0;
    uint16_t type;
    const uint8_t *payload;
    uint32_t size;
    for (;;) {
        size_t at = r.pos;
        int n = wlcap_reader_next(&r, &type, &payload, &size);
        if (n < 0) {
            rc = set_err(err, err_size, "%s: %s", capture_path, r.error);
            break;
        }
        if (n == 0)
            break;
        if (dispatch(c, type, payload, at, capture_path) != 0) {
            rc = -1;
            break;
        }
    }
    stats->unknown_records = r.unknown_records;
    if (rc == 0) {
        /* a capture cut off before its PROCESS record still gets a process row */
        char sql[256];
        snprintf(sql, sizeof sql,
                 "INSERT OR IGNORE INTO process (pid, start_ns, complete, incomplete_reason) VALUES (%u, %" PRIu64
                 ", 0, 'capture ended before the recorder finished')",
                 c->pid, r.header.start_ns);
        rc = exec(w, sql, err, err_size);
        if (!stats->complete)
            snprintf(stats->incomplete_reason, sizeof stats->incomplete_reason, "%s",
                     r.truncated_tail ? "the capture file ends inside a record (process killed while writing)"
                                      : "no END record: the process ended without the recorder's exit handler");
        if (rc == 0 && !stats->complete) {
            sqlite3_stmt *s;
            if (sqlite3_prepare_v2(w->db, "UPDATE process SET incomplete_reason = ?, capture_file = ? WHERE pid = ?",
                                   -1, &s, NULL) == SQLITE_OK) {
                sqlite3_bind_text(s, 1, stats->incomplete_reason, -1, SQLITE_STATIC);
                sqlite3_bind_text(s, 2, capture_path, -1, SQLITE_STATIC);
                sqlite3_bind_int64(s, 3, c->pid);
                sqlite3_step(s);
                sqlite3_finalize(s);
            }
        }
    }
    free_ctx(c);
    free(c);
    wlcap_reader_close(&r);
    return rc;
}

/* (kind 3 = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, the kind warplens scopes push.)
 * Links computed once all captures are in: each GPU record gets the API call that caused it (same
 * process and correlation id), that call's thread, and the user scope that was open (CUPTI
 * external correlation first; time containment on the launching thread otherwise). */
static const char *const LINK_SQL =
    "CREATE INDEX temp.extcorr_by_corr ON extcorr(pid, correlation_id);\n"
    "CREATE INDEX scope_by_thread ON scope(pid, tid, start_ns);\n"
    "UPDATE api_call SET scope_id = e.external_id FROM temp.extcorr e\n"
    "  WHERE e.pid = api_call.pid AND e.correlation_id = api_call.correlation_id AND e.kind = 3;\n"
    "UPDATE api_call SET scope_id = (SELECT s.scope_id FROM scope s WHERE s.pid = api_call.pid\n"
    "  AND s.tid = api_call.tid AND s.start_ns <= api_call.start_ns\n"
    "  AND (s.end_ns IS NULL OR s.end_ns >= api_call.end_ns) ORDER BY s.start_ns DESC LIMIT 1)\n"
    "  WHERE scope_id IS NULL AND EXISTS (SELECT 1 FROM scope s2 WHERE s2.pid = api_call.pid);\n"
    "UPDATE kernel SET api_id = a.id, tid = a.tid, scope_id = a.scope_id FROM api_call a\n"
    "  WHERE a.pid = kernel.pid AND a.correlation_id = kernel.correlation_id;\n"
    "UPDATE kernel SET scope_id = e.external_id FROM temp.extcorr e\n"
    "  WHERE kernel.scope_id IS NULL AND e.pid = kernel.pid AND e.correlation_id = kernel.correlation_id AND e.kind = 3;\n"
    "UPDATE memcpy SET api_id = a.id, tid = a.tid, scope_id = a.scope_id FROM api_call a\n"
    "  WHERE a.pid = memcpy.pid AND a.correlation_id = memcpy.correlation_id;\n"
    "UPDATE memset SET api_id = a.id, tid = a.tid, scope_id = a.scope_id FROM api_call a\n"
    "  WHERE a.pid = memset.pid AND a.correlation_id = memset.correlation_id;\n"
    "UPDATE annotation SET kernel_id = k.id FROM kernel k WHERE annotation.target = 'kernel'\n"
    "  AND k.pid = annotation.pid AND k.correlation_id = annotation.correlation_id;\n"
    "UPDATE occupancy_check SET kernel_id = k.id FROM kernel k\n"
    "  WHERE k.pid = occupancy_check.pid AND k.correlation_id = occupancy_check.correlation_id;\n"
    "UPDATE sync SET api_id = a.id, tid = a.tid FROM api_call a\n"
    "  WHERE a.pid = sync.pid AND a.correlation_id = sync.correlation_id;\n"
    "INSERT INTO lost (pid, source, count, detail) SELECT pid, 'kernel_no_timestamp', count(*),\n"
    "  'kernel records without start/end (CUPTI device buffers ran out)' FROM kernel\n"
    "  WHERE has_timestamps = 0 GROUP BY pid;\n"
    "INSERT OR IGNORE INTO thread (pid, tid, name, name_source)\n"
    "  SELECT DISTINCT pid, tid, NULL, 'none' FROM api_call;\n";

int wl_session_writer_finish(wl_session_writer *w, char *err, size_t err_size)
{
    char complete[8];
    sqlite3_stmt *s;
    int all_complete = 0;
    if (sqlite3_prepare_v2(w->db, "SELECT count(*) > 0 AND min(complete) = 1 FROM process", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW)
            all_complete = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_stmt *m;
    int meta_complete = 1;
    if (sqlite3_prepare_v2(w->db, "SELECT value FROM meta WHERE key = 'complete'", -1, &m, NULL) == SQLITE_OK) {
        if (sqlite3_step(m) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(m, 0), "0") == 0)
            meta_complete = 0;
        sqlite3_finalize(m);
    }
    snprintf(complete, sizeof complete, "%d", all_complete && meta_complete);
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(w->st[i]);
        w->st[i] = NULL;
    }
    if (exec(w, LINK_SQL, err, err_size) || wl_session_writer_meta(w, "complete", complete) ||
        exec(w, "DROP TABLE temp.extcorr; COMMIT; PRAGMA optimize;", err, err_size)) {
        wl_session_writer_abort(w);
        return -1;
    }
    if (sqlite3_close(w->db) != SQLITE_OK) {
        set_err(err, err_size, "closing the session failed: %s", sqlite3_errmsg(w->db));
        w->db = NULL;
        wl_session_writer_abort(w);
        return -1;
    }
    w->db = NULL;
    if (wl_commit_tmp_path(w->tmp_path, w->final_path) != 0) {
        set_err(err, err_size, "cannot move the session into place at %s", w->final_path);
        w->tmp_path[0] = 0;
        wl_session_writer_abort(w);
        return -1;
    }
    free(w);
    return 0;
}
