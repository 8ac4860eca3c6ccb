/* Device samples and the kernels of a sample window (see session_samples.h). The window query
 * stays on the kernel_by_start index: a kernel overlapping [start, end) started before end and at
 * most the longest kernel duration before start. */
#include "store/session_samples.h"

#include <sqlite3.h>
#include <string.h>

#include "store/session_internal.h"
#include "store/sql_util.h"

#define SAMPLE_COLS                                                                                         \
    "SELECT pid, device_id, ts_ns, window_start_ns, coalesce(gpu_util_pct, -1), coalesce(mem_util_pct, -1)," \
    " coalesce(sm_clock_mhz, -1), coalesce(mem_clock_mhz, -1), coalesce(power_mw, -1),"                      \
    " coalesce(temperature_c, -1), coalesce(memory_used_bytes, -1), coalesce(energy_mj, -1) FROM device_sample"

static int has_table(wl_session *s) { return wl_sql_has_table(s->db, "device_sample"); }

int wl_session_has_device_samples(wl_session *s)
{
    return has_table(s) && wl_sql_scalar_u64(s->db, "SELECT EXISTS (SELECT 1 FROM device_sample)") != 0;
}

static void read_row(sqlite3_stmt *st, wl_device_sample_row *r)
{
    r->pid = (uint32_t)sqlite3_column_int64(st, 0);
    r->device_id = (uint32_t)sqlite3_column_int64(st, 1);
    r->ts_ns = (uint64_t)sqlite3_column_int64(st, 2);
    r->window_start_ns = (uint64_t)sqlite3_column_int64(st, 3);
    int64_t *v[] = {&r->gpu_util_pct, &r->mem_util_pct, &r->sm_clock_mhz, &r->mem_clock_mhz,
                    &r->power_mw, &r->temperature_c, &r->memory_used_bytes, &r->energy_mj};
    for (int i = 0; i < 8; i++)
        *v[i] = sqlite3_column_int64(st, 4 + i);
}

/* Runs a prepared sample query; `stop_at_window` > 0 stops at the first window starting at or
 * after it (windows of one device are in time order). */
static int run_samples(sqlite3_stmt *st, uint64_t stop_at_window, int (*fn)(const wl_device_sample_row *, void *),
                       void *arg)
{
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        wl_device_sample_row r;
        read_row(st, &r);
        if (stop_at_window && r.window_start_ns >= stop_at_window)
            break;
        n++;
        if (fn(&r, arg))
            break;
    }
    int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_finalize(st);
    return bad ? -1 : n;
}

int wl_session_each_device_sample(wl_session *s, int (*fn)(const wl_device_sample_row *, void *), void *arg)
{
    if (!has_table(s))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, SAMPLE_COLS " ORDER BY pid, device_id, ts_ns", -1, &st, NULL) != SQLITE_OK)
        return -1;
    return run_samples(st, 0, fn, arg);
}

int wl_session_each_device_sample_by_time(wl_session *s, int (*fn)(const wl_device_sample_row *, void *), void *arg)
{
    if (!has_table(s))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, SAMPLE_COLS " ORDER BY device_id, ts_ns, pid", -1, &st, NULL) != SQLITE_OK)
        return -1;
    return run_samples(st, 0, fn, arg);
}

int wl_session_device_samples_between(wl_session *s, uint32_t pid, uint32_t device_id, uint64_t start_ns,
                                      uint64_t end_ns, int (*fn)(const wl_device_sample_row *, void *), void *arg)
{
    if (!has_table(s))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, SAMPLE_COLS " WHERE pid = ?1 AND device_id = ?2 AND ts_ns > ?3 ORDER BY ts_ns", -1,
                           &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, device_id);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)start_ns);
    return run_samples(st, end_ns ? end_ns : 1, fn, arg);
}

int wl_session_kernels_in_window(wl_session *s, uint32_t pid, uint32_t device_id, uint64_t start_ns,
                                 uint64_t end_ns, int (*fn)(const wl_window_kernel *, void *), void *arg)
{
    uint64_t longest = wl_sql_scalar_u64(s->db, "SELECT coalesce(max(duration_ns), 0) FROM kernel");
    uint64_t lo = start_ns > longest ? start_ns - longest : 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(
            s->db,
            "SELECT k.id, k.pid, k.device_id, k.start_ns, k.end_ns, n.short_name FROM kernel k"
            " JOIN kernel_name n ON n.id = k.name_id"
            " WHERE k.start_ns >= ?1 AND k.start_ns < ?2 AND k.end_ns > ?3 AND k.has_timestamps"
            " AND ((k.pid = ?4 AND k.device_id = ?5) OR EXISTS (SELECT 1 FROM device a JOIN device b"
            "   ON b.pci_bus_id = a.pci_bus_id WHERE a.pid = ?4 AND a.device_id = ?5 AND a.pci_bus_id != ''"
            "   AND b.pid = k.pid AND b.device_id = k.device_id))"
            " ORDER BY k.start_ns, k.id",
            -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)lo);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)end_ns);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)start_ns);
    sqlite3_bind_int64(st, 4, pid);
    sqlite3_bind_int64(st, 5, device_id);
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(st, 5);
        wl_window_kernel k = {sqlite3_column_int64(st, 0), (uint32_t)sqlite3_column_int64(st, 1),
                              (uint32_t)sqlite3_column_int64(st, 2), (uint64_t)sqlite3_column_int64(st, 3),
                              (uint64_t)sqlite3_column_int64(st, 4), name ? (const char *)name : ""};
        n++;
        if (fn(&k, arg))
            break;
    }
    int bad = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_finalize(st);
    return bad ? -1 : n;
}

int wl_session_kernel_interval(wl_session *s, int64_t kernel_id, uint32_t *pid, uint32_t *device_id,
                               uint64_t *start_ns, uint64_t *end_ns)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT pid, device_id, start_ns, end_ns FROM kernel WHERE id = ? AND has_timestamps",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, kernel_id);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *pid = (uint32_t)sqlite3_column_int64(st, 0);
        *device_id = (uint32_t)sqlite3_column_int64(st, 1);
        *start_ns = (uint64_t)sqlite3_column_int64(st, 2);
        *end_ns = (uint64_t)sqlite3_column_int64(st, 3);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}
