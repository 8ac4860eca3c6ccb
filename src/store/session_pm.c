/* PM samples and the kernels of a physical GPU (see session_pm.h). A window's values are one row
 * per metric; the cursor folds consecutive rows of one sample into a wl_pm_sample_row. Both
 * cursors are plain prepared statements stepped side by side on the session's connection. */
#include "store/session_pm.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/pm_metric_spec.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

#define MAX_WINDOW_NS 2000000000ull /* windows are at most the recorder's longest interval (1 s) */

static int has_tables(wl_session *s)
{
    return wl_sql_has_table(s->db, "pm_sample") && wl_sql_has_table(s->db, "pm_metric") &&
           wl_sql_has_table(s->db, "pm_config");
}

int wl_session_has_pm_samples(wl_session *s)
{
    return has_tables(s) && wl_sql_scalar_u64(s->db, "SELECT EXISTS (SELECT 1 FROM pm_sample)") != 0;
}

int wl_session_pm_metrics(wl_session *s, wl_pm_metric_row **out)
{
    *out = NULL;
    if (!has_tables(s))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT m.pid, m.device_id, m.metric_index, m.name, m.unit, m.metric_type,"
                           " coalesce(c.interval_ns, 0) FROM pm_metric m LEFT JOIN pm_config c"
                           " ON c.pid = m.pid AND c.device_id = m.device_id"
                           " ORDER BY m.pid, m.device_id, m.metric_index",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    wl_pm_metric_row *v = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            wl_pm_metric_row *nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                rc = SQLITE_NOMEM;
                break;
            }
            v = nv;
        }
        wl_pm_metric_row *r = &v[n++];
        memset(r, 0, sizeof *r);
        r->pid = (uint32_t)sqlite3_column_int64(st, 0);
        r->device_id = (uint32_t)sqlite3_column_int64(st, 1);
        r->metric_index = (uint32_t)sqlite3_column_int64(st, 2);
        wl_sql_text_col(st, 3, r->name, sizeof r->name);
        wl_sql_text_col(st, 4, r->unit, sizeof r->unit);
        wl_sql_text_col(st, 5, r->metric_type, sizeof r->metric_type);
        r->interval_ns = (uint64_t)sqlite3_column_int64(st, 6);
        int type = !strcmp(r->metric_type, "counter") ? 0 : !strcmp(r->metric_type, "ratio") ? 1
                   : !strcmp(r->metric_type, "throughput")                                 ? 2
                                                                                            : -1;
        r->additive = wl_pm_metric_additive(r->name, type);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        return -1;
    }
    *out = v;
    return (int)n;
}

int wl_session_pm_configs(wl_session *s, wl_pm_config_row **out)
{
    *out = NULL;
    if (!has_tables(s))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT pid, device_id, coalesce(interval_ns, 0), status, detail FROM pm_config"
                           " ORDER BY pid, device_id",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    wl_pm_config_row *v = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            wl_pm_config_row *nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                rc = SQLITE_NOMEM;
                break;
            }
            v = nv;
        }
        wl_pm_config_row *r = &v[n++];
        r->pid = (uint32_t)sqlite3_column_int64(st, 0);
        r->device_id = (uint32_t)sqlite3_column_int64(st, 1);
        r->interval_ns = (uint64_t)sqlite3_column_int64(st, 2);
        wl_sql_text_col(st, 3, r->status, sizeof r->status);
        wl_sql_text_col(st, 4, r->detail, sizeof r->detail);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        return -1;
    }
    *out = v;
    return (int)n;
}

/* ---- windows ------------------------------------------------------------------------------------ */

struct wl_pm_cursor {
    sqlite3_stmt *st;
    int has_row;                        /* st holds the first row of the next window */
    int done;
};

wl_pm_cursor *wl_pm_cursor_open(wl_session *s, int64_t pid, uint32_t device, uint64_t from_ns, uint64_t to_ns)
{
    if (!has_tables(s))
        return NULL;
    wl_pm_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    const char *sql =
        pid < 0 ? "SELECT pid, device_id, sample_index, start_ns, end_ns, metric_index, value FROM pm_sample"
                  " ORDER BY pid, device_id, start_ns, sample_index"
                : "SELECT pid, device_id, sample_index, start_ns, end_ns, metric_index, value FROM pm_sample"
                  " WHERE pid = ?1 AND device_id = ?2 AND start_ns >= ?3 AND start_ns < ?4 AND end_ns > ?5"
                  " ORDER BY start_ns, sample_index";
    if (sqlite3_prepare_v2(s->db, sql, -1, &c->st, NULL) != SQLITE_OK) {
        free(c);
        return NULL;
    }
    if (pid >= 0) {
        uint64_t lo = from_ns > MAX_WINDOW_NS ? from_ns - MAX_WINDOW_NS : 0;
        sqlite3_bind_int64(c->st, 1, pid);
        sqlite3_bind_int64(c->st, 2, device);
        sqlite3_bind_int64(c->st, 3, (sqlite3_int64)lo);
        sqlite3_bind_int64(c->st, 4, (sqlite3_int64)(to_ns > INT64_MAX ? INT64_MAX : to_ns));
        sqlite3_bind_int64(c->st, 5, (sqlite3_int64)from_ns);
    }
    return c;
}

int wl_pm_cursor_next(wl_pm_cursor *c, wl_pm_sample_row *out)
{
    if (c->done)
        return 0;
    if (!c->has_row) {
        int rc = sqlite3_step(c->st);
        if (rc == SQLITE_DONE) {
            c->done = 1;
            return 0;
        }
        if (rc != SQLITE_ROW)
            return -1;
    }
    memset(out, 0, sizeof *out);
    out->pid = (uint32_t)sqlite3_column_int64(c->st, 0);
    out->device_id = (uint32_t)sqlite3_column_int64(c->st, 1);
    out->sample_index = (uint64_t)sqlite3_column_int64(c->st, 2);
    out->start_ns = (uint64_t)sqlite3_column_int64(c->st, 3);
    out->end_ns = (uint64_t)sqlite3_column_int64(c->st, 4);
    for (;;) {
        int64_t m = sqlite3_column_int64(c->st, 5);
        if (m >= 0 && m < WL_PM_SAMPLE_METRICS && sqlite3_column_type(c->st, 6) != SQLITE_NULL) {
            out->values[m] = sqlite3_column_double(c->st, 6);
            out->valid |= 1ull << m;
        }
        int rc = sqlite3_step(c->st);
        if (rc == SQLITE_DONE) {
            c->has_row = 0;
            c->done = 1;
            return 1;
        }
        if (rc != SQLITE_ROW)
            return -1;
        if ((uint32_t)sqlite3_column_int64(c->st, 0) != out->pid ||
            (uint32_t)sqlite3_column_int64(c->st, 1) != out->device_id ||
            (uint64_t)sqlite3_column_int64(c->st, 2) != out->sample_index) {
            c->has_row = 1;
            return 1;
        }
    }
}

void wl_pm_cursor_close(wl_pm_cursor *c)
{
    if (!c)
        return;
    sqlite3_finalize(c->st);
    free(c);
}

/* ---- kernels of a physical GPU ------------------------------------------------------------------ */

struct wl_gpu_kernel_cursor {
    sqlite3_stmt *st;
    char name[256];
};

wl_gpu_kernel_cursor *wl_gpu_kernels_open(wl_session *s, uint32_t pid, uint32_t device, uint64_t from_ns)
{
    wl_gpu_kernel_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    /* a kernel ending after from_ns started at most the longest kernel duration before it */
    uint64_t longest = wl_sql_scalar_u64(s->db, "SELECT coalesce(max(duration_ns), 0) FROM kernel");
    uint64_t lo = from_ns > longest ? from_ns - longest : 0;
    if (sqlite3_prepare_v2(
            s->db,
            "SELECT k.id, k.pid, k.device_id, k.start_ns, k.end_ns, n.short_name FROM kernel k"
            " JOIN kernel_name n ON n.id = k.name_id"
            " WHERE k.start_ns >= ?1 AND k.end_ns > ?2 AND k.has_timestamps AND (k.pid, k.device_id) IN"
            "  (SELECT ?3, ?4 UNION SELECT b.pid, b.device_id FROM device a JOIN device b"
            "   ON b.pci_bus_id = a.pci_bus_id WHERE a.pid = ?3 AND a.device_id = ?4 AND a.pci_bus_id != '')"
            " ORDER BY k.start_ns, k.id",
            -1, &c->st, NULL) != SQLITE_OK) {
        free(c);
        return NULL;
    }
    sqlite3_bind_int64(c->st, 1, (sqlite3_int64)lo);
    sqlite3_bind_int64(c->st, 2, (sqlite3_int64)from_ns);
    sqlite3_bind_int64(c->st, 3, pid);
    sqlite3_bind_int64(c->st, 4, device);
    return c;
}

int wl_gpu_kernels_next(wl_gpu_kernel_cursor *c, wl_window_kernel *out)
{
    int rc = sqlite3_step(c->st);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return -1;
    wl_sql_text_col(c->st, 5, c->name, sizeof c->name);
    out->id = sqlite3_column_int64(c->st, 0);
    out->pid = (uint32_t)sqlite3_column_int64(c->st, 1);
    out->device_id = (uint32_t)sqlite3_column_int64(c->st, 2);
    out->start_ns = (uint64_t)sqlite3_column_int64(c->st, 3);
    out->end_ns = (uint64_t)sqlite3_column_int64(c->st, 4);
    out->short_name = c->name;
    return 1;
}

void wl_gpu_kernels_close(wl_gpu_kernel_cursor *c)
{
    if (!c)
        return;
    sqlite3_finalize(c->st);
    free(c);
}

/* ---- statistics ----------------------------------------------------------------------------------- */

int wl_session_pm_metric_stats(wl_session *s, uint32_t pid, uint32_t device, uint32_t index, wl_pm_metric_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!has_tables(s))
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT count(value), min(value), max(value), avg(value), total(value) FROM pm_sample"
                           " WHERE pid = ? AND device_id = ? AND metric_index = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, device);
    sqlite3_bind_int64(st, 3, index);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        out->windows = (uint64_t)sqlite3_column_int64(st, 0);
        out->min = sqlite3_column_double(st, 1);
        out->max = sqlite3_column_double(st, 2);
        out->mean = sqlite3_column_double(st, 3);
        out->sum = sqlite3_column_double(st, 4);
        rc = 0;
    }
    sqlite3_finalize(st);
    if (rc != 0 || !out->windows)
        return rc;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT value FROM pm_sample WHERE pid = ? AND device_id = ? AND metric_index = ?"
                           " AND value IS NOT NULL ORDER BY value LIMIT 1 OFFSET ?",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, device);
    sqlite3_bind_int64(st, 3, index);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)((out->windows - 1) / 2));
    rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (rc == 0)
        out->median = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return rc;
}

int wl_session_pm_long_windows(wl_session *s, uint32_t pid, uint32_t device, uint64_t longer_than_ns,
                               wl_pm_long_windows *out)
{
    memset(out, 0, sizeof *out);
    if (!has_tables(s))
        return -1;
    sqlite3_stmt *st;
    /* one row per window and metric: the window's lowest metric index stands for it */
    if (sqlite3_prepare_v2(s->db,
                           "SELECT count(*), max(end_ns - start_ns) FROM pm_sample WHERE pid = ?1 AND device_id = ?2"
                           " AND end_ns - start_ns > ?3 AND metric_index = (SELECT min(metric_index) FROM pm_sample"
                           " WHERE pid = ?1 AND device_id = ?2)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, device);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)longer_than_ns);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        out->count = (uint64_t)sqlite3_column_int64(st, 0);
        out->longest_ns = (uint64_t)sqlite3_column_int64(st, 1);
        rc = 0;
    }
    sqlite3_finalize(st);
    if (rc != 0 || !out->count)
        return rc;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT start_ns FROM pm_sample WHERE pid = ? AND device_id = ? AND end_ns - start_ns = ?"
                           " LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, device);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)out->longest_ns);
    rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (rc == 0)
        out->longest_start_ns = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

uint64_t wl_session_pm_lost(wl_session *s)
{
    return wl_sql_scalar_u64(s->db, "SELECT coalesce(sum(count), 0) FROM lost WHERE source = 'pm_samples'");
}
