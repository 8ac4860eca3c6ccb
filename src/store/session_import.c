/* Capture records -> session rows: the prepared statements, binding helpers, and the import of
 * one capture file (record handlers in session_import_records.c). Input is hostile: every string
 * reference and size is checked, errors name the record's offset. */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile_reader.h"
#include "store/session_writer_internal.h"

const char *const WL_IMPORT_SQL[S_COUNT] = {
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
                 " warps, duration_ns, queue_delay_ns, submit_delay_ns, config_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,"
                 "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, wl_kernel_config_id(?7, ?8, ?9,"
                 " ?10, ?11, ?12, ?13, ?14, ?15, ?19, ?20, ?21, ?23, ?24, ?26, ?28))", /* kernel_config.h */
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
    [S_CAPTURE_MODE] = "UPDATE process SET capture_range = 'profiler-api' WHERE pid = ?",
    [S_CAPTURE_START] = "INSERT INTO capture_range (pid, start_ns, start_tid) VALUES (?,?,?)",
    [S_CAPTURE_STOP] = "UPDATE capture_range SET end_ns = ?1, duration_ns = ?1 - start_ns, end_tid = ?2,"
                       " ended_by = 'stop' WHERE id = ?3",
    [S_LOST] = "INSERT INTO lost (pid, source, count, detail) VALUES (?,?,?,?)",
    [S_STAT] = "INSERT OR REPLACE INTO recorder_stat (pid, name, value) VALUES (?,?,?)",
    [S_ANNOTATION] = "INSERT INTO annotation (pid, tid, target, correlation_id, scope_id, flops, bytes, precision)"
                     " VALUES (?,?,?,?,?,?,?,?)",
    [S_OCC_CHECK] = "INSERT INTO occupancy_check (pid, correlation_id, block_size, dynamic_smem,"
                    " driver_active_blocks, function_registers, status) VALUES (?,?,?,?,?,?,?)",
    [S_IK_KERNEL_SPAN] = "SELECT id, start_ns, end_ns FROM kernel WHERE pid = ? AND correlation_id = ?"
                         " ORDER BY start_ns LIMIT 1",
    [S_IK_GRAPH_KERNEL_SPAN] = "SELECT id, start_ns, end_ns FROM kernel WHERE pid = ? AND correlation_id = ?"
                               " AND graph_node_id = ? ORDER BY start_ns LIMIT 1",
    [S_IK_BUFFER] = "INSERT INTO inkernel_buffer (pid, correlation_id, kernel_id, device_id, words, num_blocks,"
                    " num_groups, slices, instants, unmatched, after_finalize, over_capacity, crossed,"
                    " dropped_on_device, invalid_on_device, placement, delta_ns, uncertainty_ns, clamp_ns,"
                    " calibration_offset_ns, calibration_uncertainty_ns, error)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_IK_NAME] = "INSERT OR REPLACE INTO inkernel_name (buffer_id, kind, id, name) VALUES (?,?,?,?)",
    [S_IK_EVENT] = "INSERT INTO inkernel_event (buffer_id, kind, block, grp, event, depth, crossed, start_ns, dur_ns)"
                   " VALUES (?,?,?,?,?,?,?,?,?)",
    [S_TIER] = "INSERT INTO tier_change (pid, tid, ts_ns, tier) VALUES (?,?,?,?)",
    [S_SCOPE_THREAD] = "UPDATE scope SET app_thread_id = ?1 WHERE pid = ?2 AND scope_id = ?3",
    [S_DEVICE_SAMPLE] = "INSERT INTO device_sample (pid, device_id, ts_ns, window_start_ns, gpu_util_pct,"
                        " mem_util_pct, sm_clock_mhz, mem_clock_mhz, power_mw, temperature_c, memory_used_bytes,"
                        " energy_mj) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
};

/* ---- binding helpers ------------------------------------------------------------------------ */

sqlite3_stmt *wl_writer_stmt(wl_session_writer *w, enum stmt_id id)
{
    sqlite3_stmt *s = w->st[id];
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return s;
}

sqlite3_stmt *wl_imp_begin(import_ctx *c, enum stmt_id id) { return wl_writer_stmt(c->w, id); }

int wl_imp_step(import_ctx *c, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return wl_store_set_err(c->err, c->err_size, "SQLite: %s", sqlite3_errmsg(c->w->db));
    return 0;
}

void wl_imp_bind_u64(sqlite3_stmt *s, int i, uint64_t v) { sqlite3_bind_int64(s, i, (sqlite3_int64)v); }
/* 0 means "not recorded" for CUPTI timestamps: store NULL */
void wl_imp_bind_ts(sqlite3_stmt *s, int i, uint64_t v)
{
    if (v)
        sqlite3_bind_int64(s, i, (sqlite3_int64)v);
    else
        sqlite3_bind_null(s, i);
}

const char *wl_imp_str(import_ctx *c, uint32_t id)
{
    return (id && id < c->nstrings) ? c->strings[id] : NULL;
}

void wl_imp_bind_str(import_ctx *c, sqlite3_stmt *s, int i, uint32_t id)
{
    const char *v = wl_imp_str(c, id);
    if (v)
        sqlite3_bind_text(s, i, v, (int)c->string_len[id], SQLITE_STATIC);
    else
        sqlite3_bind_null(s, i);
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
        return wl_store_set_err(err, err_size, "%s", r.error);
    import_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        wlcap_reader_close(&r);
        return wl_store_set_err(err, err_size, "out of memory");
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
    for (uint64_t records = 0;; records++) {
        size_t at = r.pos;
        if ((records & 0xffff) == 0)
            wl_progress_note(&w->progress, at, r.size);
        int n = wlcap_reader_next(&r, &type, &payload, &size);
        if (n < 0) {
            rc = wl_store_set_err(err, err_size, "%s: %s", capture_path, r.error);
            break;
        }
        if (n == 0)
            break;
        if (wl_imp_dispatch(c, type, payload, at, capture_path) != 0) {
            rc = -1;
            break;
        }
    }
    wl_progress_note(&w->progress, r.pos, r.size);
    stats->unknown_records = r.unknown_records;
    if (rc == 0)
        rc = wl_imp_api_flush(c);
    if (rc == 0) {
        /* a capture cut off before its PROCESS record still gets a process row */
        char sql[256];
        snprintf(sql, sizeof sql,
                 "INSERT OR IGNORE INTO process (pid, start_ns, complete, incomplete_reason) VALUES (%u, %" PRIu64
                 ", 0, 'capture ended before the recorder finished')",
                 c->pid, r.header.start_ns);
        rc = wl_store_exec(w, sql, err, err_size);
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
    wl_imp_free_ctx(c);
    free(c);
    wlcap_reader_close(&r);
    return rc;
}
