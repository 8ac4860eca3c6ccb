/* Session reader: the overview, per-process/device rows and occupancy checks (see session.h;
 * opening is session_open.c). */
#include "store/session_internal.h"
#include "store/session_scan.h"
#include "store/sql_util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



/* The overview's figures of the kernel and API-call tables by SQL: where the reads of
 * session_scan.h failed (a table SQLite cannot read whole). */
/* The kernel counts by SQL (wl_session_get_counts, and the overview where the read failed). */
static void kernel_counts(wl_session *s, wl_session_overview *o)
{
    o->kernels = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM kernel");
    o->kernels_no_timestamp = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM kernel WHERE has_timestamps = 0");
}

static void overview_sql(wl_session *s, wl_session_overview *o)
{
    kernel_counts(s, o);
    o->api_calls = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM api_call");
    o->first_ns = wl_sql_scalar_u64(s->db, "SELECT min(t) FROM (SELECT min(start_ns) t FROM kernel UNION ALL"
                                " SELECT min(start_ns) FROM api_call UNION ALL SELECT min(start_ns) FROM memcpy)");
    o->last_ns = wl_sql_scalar_u64(s->db, "SELECT max(t) FROM (SELECT max(end_ns) t FROM kernel UNION ALL"
                               " SELECT max(end_ns) FROM api_call UNION ALL SELECT max(end_ns) FROM memcpy)");
}

static void overview_scan(wl_session *s, wl_session_overview *o, const wl_kernel_overview *k, const wl_api_scan *a)
{
    o->kernels = k->kernels;
    o->kernels_no_timestamp = k->no_timestamp;
    o->api_calls = a->calls;
    uint64_t first = k->first_ns, last = k->last_ns;
    int has_first = k->has_first, has_last = k->has_last;
    wl_fold_min(&first, &has_first, a->has_first, a->first_ns);
    wl_fold_max(&last, &has_last, a->has_last, a->last_ns);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT min(start_ns), max(end_ns) FROM memcpy", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            wl_fold_min_col(&first, &has_first, st, 0);
            wl_fold_max_col(&last, &has_last, st, 1);
        }
        sqlite3_finalize(st);
    }
    o->first_ns = has_first ? first : 0;
    o->last_ns = has_last ? last : 0;
}

/* The small tables' counts, completeness, program and device (both overview forms). */
static void overview_small(wl_session *s, wl_session_overview *o)
{
    memset(o, 0, sizeof *o);
    o->processes = (int)wl_sql_scalar_u64(s->db, "SELECT count(*) FROM process");
    o->incomplete_processes = (int)wl_sql_scalar_u64(s->db, "SELECT count(*) FROM process WHERE complete = 0");
    o->devices = (int)wl_sql_scalar_u64(s->db, "SELECT count(*) FROM device");
    o->threads = (int)wl_sql_scalar_u64(s->db, "SELECT count(*) FROM thread");
    o->memcpys = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM memcpy");
    o->memsets = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM memset");
    o->syncs = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM sync");
    o->nvtx_ranges = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM nvtx_range");
    o->scopes = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM scope");
    o->lost_total = wl_sql_scalar_u64(s->db, "SELECT coalesce(sum(count), 0) FROM lost WHERE " WL_LOST_RECORDS_WHERE);
    char v[16];
    o->complete = wl_session_meta(s, "complete", v, sizeof v) == 0 && strcmp(v, "1") == 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT cmdline FROM process ORDER BY start_ns LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            wl_sql_text_col(st, 0, o->program, sizeof o->program);
        sqlite3_finalize(st);
    }
    if (sqlite3_prepare_v2(s->db, "SELECT name FROM device ORDER BY pid, device_id LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            wl_sql_text_col(st, 0, o->device_name, sizeof o->device_name);
        sqlite3_finalize(st);
    }
}

int wl_session_get_overview(wl_session *s, wl_session_overview *o)
{
    overview_small(s, o);
    /* kernels and API calls: one read of each table, kept for the summaries that follow */
    const wl_kernel_overview *k = NULL;
    const wl_api_scan *a = NULL;
    if (wl_scan_all(s) == 0 && wl_scan_kernels(s, &k) && (a = wl_scan_api(s)) != NULL)
        overview_scan(s, o, k, a);
    else
        overview_sql(s, o);
    uint64_t busy; /* (0 when the kernels cannot be read) */
    o->gpu_busy_ns = wl_scan_busy(s, &busy) == 0 ? busy : 0;
    return 0;
}

int wl_session_get_counts(wl_session *s, wl_session_overview *o)
{
    overview_small(s, o);
    /* the kernel figures from the kernels' read, kept on the handle: advise's kernel rules made it
     * already (or the report's, shared), where two count(*) queries would read the table again */
    const wl_kernel_overview *k = NULL;
    if (wl_scan_kernels(s, &k) && k) {
        o->kernels = k->kernels;
        o->kernels_no_timestamp = k->no_timestamp;
    } else {
        kernel_counts(s, o);
    }
    return 0;
}

int wl_session_each_capture_range(wl_session *s, void (*fn)(const wl_capture_range_row *, void *), void *arg)
{
    if (!wl_sql_has_table(s->db, "capture_range")) /* sessions from before capture ranges */
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT pid, start_ns, coalesce(end_ns, 0), coalesce(start_tid, 0), coalesce(end_tid, 0),"
                           " coalesce(ended_by, '') FROM capture_range ORDER BY pid, start_ns, id",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        wl_capture_range_row r;
        memset(&r, 0, sizeof r);
        r.pid = (uint32_t)sqlite3_column_int64(st, 0);
        r.start_ns = (uint64_t)sqlite3_column_int64(st, 1);
        r.end_ns = (uint64_t)sqlite3_column_int64(st, 2);
        r.start_tid = (uint32_t)sqlite3_column_int64(st, 3);
        r.end_tid = (uint32_t)sqlite3_column_int64(st, 4);
        wl_sql_text_col(st, 5, r.ended_by, sizeof r.ended_by);
        fn(&r, arg);
        n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? n : -1;
}

int wl_session_recorder_stat(wl_session *s, uint32_t pid, const char *name, uint64_t *value)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM recorder_stat WHERE pid = ? AND name = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return 0; /* a session from before the table */
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER;
    if (found)
        *value = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return found;
}

int wl_session_each_process(wl_session *s, void (*fn)(const wl_process_row *, void *), void *arg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT pid, ppid, hostname, cmdline, start_ns, end_ns, coalesce(rank, -1),"
                           " coalesce(local_rank, -1), coalesce(world_size, -1), complete, incomplete_reason"
                           " FROM process ORDER BY start_ns",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        wl_process_row r;
        memset(&r, 0, sizeof r);
        r.pid = (uint32_t)sqlite3_column_int64(st, 0);
        r.ppid = (uint32_t)sqlite3_column_int64(st, 1);
        wl_sql_text_col(st, 2, r.hostname, sizeof r.hostname);
        wl_sql_text_col(st, 3, r.cmdline, sizeof r.cmdline);
        r.start_ns = (uint64_t)sqlite3_column_int64(st, 4);
        r.end_ns = (uint64_t)sqlite3_column_int64(st, 5);
        r.rank = sqlite3_column_int(st, 6);
        r.local_rank = sqlite3_column_int(st, 7);
        r.world_size = sqlite3_column_int(st, 8);
        r.complete = sqlite3_column_int(st, 9);
        wl_sql_text_col(st, 10, r.incomplete_reason, sizeof r.incomplete_reason);
        fn(&r, arg);
        n++;
    }
    sqlite3_finalize(st);
    return n;
}

int wl_session_each_device(wl_session *s, void (*fn)(const wl_device_row *, void *), void *arg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT pid, device_id, name, pci_bus_id, cc_major, cc_minor, sm_count, warp_size,"
                           " max_threads_per_block, max_threads_per_sm, max_blocks_per_sm, regs_per_sm,"
                           " regs_per_block, smem_per_sm, smem_per_block, smem_per_block_optin,"
                           " reserved_smem_per_block, l2_bytes, core_clock_khz, mem_clock_khz,"
                           " mem_bus_width_bits, total_mem_bytes FROM device ORDER BY pid, device_id",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        wl_device_row r;
        memset(&r, 0, sizeof r);
        r.pid = (uint32_t)sqlite3_column_int64(st, 0);
        r.device_id = (uint32_t)sqlite3_column_int64(st, 1);
        wl_sql_text_col(st, 2, r.name, sizeof r.name);
        wl_sql_text_col(st, 3, r.pci_bus_id, sizeof r.pci_bus_id);
        int *f[] = {&r.cc_major, &r.cc_minor, &r.sm_count, &r.warp_size, &r.max_threads_per_block,
                    &r.max_threads_per_sm, &r.max_blocks_per_sm, &r.regs_per_sm, &r.regs_per_block,
                    &r.smem_per_sm, &r.smem_per_block, &r.smem_per_block_optin, &r.reserved_smem_per_block,
                    &r.l2_bytes, &r.core_clock_khz, &r.mem_clock_khz, &r.mem_bus_width_bits};
        for (int i = 0; i < (int)(sizeof f / sizeof f[0]); i++)
            *f[i] = sqlite3_column_int(st, 4 + i);
        r.total_mem_bytes = (uint64_t)sqlite3_column_int64(st, 21);
        fn(&r, arg);
        n++;
    }
    sqlite3_finalize(st);
    return n;
}

int wl_session_each_occ_check(wl_session *s, void (*fn)(const wl_occ_check_row *, void *), void *arg, char *err,
                              size_t err_size)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT coalesce(kernel_id, -1), pid, correlation_id, block_size, dynamic_smem,"
                           " driver_active_blocks, coalesce(function_registers, -1), status FROM occupancy_check"
                           " ORDER BY kernel_id",
                           -1, &st, NULL) != SQLITE_OK) {
        wl_store_set_err(err, err_size, "this session has no occupancy checks (it predates them)");
        return -1;
    }
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        wl_occ_check_row r;
        r.kernel_id = sqlite3_column_int64(st, 0);
        r.pid = (uint32_t)sqlite3_column_int64(st, 1);
        r.correlation_id = (uint32_t)sqlite3_column_int64(st, 2);
        r.block_size = (uint32_t)sqlite3_column_int64(st, 3);
        r.dynamic_smem = (uint32_t)sqlite3_column_int64(st, 4);
        r.driver_active_blocks = sqlite3_column_int(st, 5);
        r.function_registers = sqlite3_column_int(st, 6);
        r.status = (uint32_t)sqlite3_column_int64(st, 7);
        fn(&r, arg);
        n++;
    }
    sqlite3_finalize(st);
    if (n == 0)
        wl_store_set_err(err, err_size, "no occupancy checks in this session (record with `warplens run --check-occupancy`)");
    return n;
}
