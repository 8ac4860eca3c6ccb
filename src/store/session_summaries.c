/* The summary tables behind `warplens stats` and the post-run summary (see session.h): per kernel
 * name with duration percentiles, per copy kind, per API call, NVTX range, scope and sync type. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_internal.h"
#include "store/session_kernels.h"
#include "store/session_scan.h"
#include "store/sql_util.h"


/* Appends one zeroed element to a malloc'd array; returns it or NULL. */
static void *grow(void **arr, int *count, int *cap, size_t elem)
{
    if (*count == *cap) {
        int ncap = *cap ? *cap * 2 : 64;
        void *p = realloc(*arr, (size_t)ncap * elem);
        if (!p)
            return NULL;
        *arr = p;
        *cap = ncap;
    }
    void *e = (char *)*arr + (size_t)(*count)++ * elem;
    memset(e, 0, elem);
    return e;
}

int wl_session_kernel_summaries(wl_session *s, wl_kernel_summary **out)
{
    wl_kernel_aggregate a;
    *out = NULL;
    if (wl_session_kernel_aggregate(s, &a))
        return -1;
    free(a.configs);
    *out = a.sums;
    return a.n_sums;
}

int wl_session_copy_summaries(wl_session *s, wl_copy_summary **out)
{
    *out = NULL;
    sqlite3_stmt *st;
    const char *sql =
        "SELECT kind, src_kind || '->' || dst_kind, count(*), sum(bytes), coalesce(sum(duration_ns), 0) FROM memcpy"
        " GROUP BY 1, 2 UNION ALL"
        " SELECT 'memset', memory_kind, count(*), sum(bytes), coalesce(sum(duration_ns), 0) FROM memset GROUP BY 2"
        " ORDER BY 5 DESC";
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    wl_copy_summary *rows = NULL;
    int n = 0, cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        wl_copy_summary *r = grow((void **)&rows, &n, &cap, sizeof *r);
        if (!r)
            break;
        wl_sql_text_col(st, 0, r->kind, sizeof r->kind);
        wl_sql_text_col(st, 1, r->memory, sizeof r->memory);
        r->count = (uint64_t)sqlite3_column_int64(st, 2);
        r->bytes = (uint64_t)sqlite3_column_int64(st, 3);
        r->total_ns = (uint64_t)sqlite3_column_int64(st, 4);
        r->gbps = r->total_ns ? (double)r->bytes / (double)r->total_ns : 0.0;
    }
    sqlite3_finalize(st);
    *out = rows;
    return n;
}

static int intervals(wl_session *s, const char *sql, wl_interval_summary **out)
{
    return wl_interval_rows(s->db, sql, out);
}

int wl_session_api_summaries(wl_session *s, wl_interval_summary **out)
{
    *out = NULL;
    const wl_api_scan *a = wl_scan_api(s); /* (the table read once, kept: session_scan.h) */
    if (!a)
        return -1;
    if (!(*out = malloc((size_t)(a->n_sums ? a->n_sums : 1) * sizeof **out)))
        return -1;
    memcpy(*out, a->sums, (size_t)a->n_sums * sizeof **out);
    return a->n_sums;
}

int wl_session_nvtx_summaries(wl_session *s, wl_interval_summary **out)
{
    return wl_scan_ranges(s, WL_SCAN_NVTX, out);
}

int wl_session_scope_summaries(wl_session *s, wl_interval_summary **out)
{
    return wl_scan_ranges(s, WL_SCAN_SCOPES, out);
}

int wl_session_sync_summaries(wl_session *s, wl_interval_summary **out)
{
    return intervals(s, "SELECT type, '', count(*), sum(duration_ns), min(duration_ns), max(duration_ns),"
                        " avg(duration_ns) FROM sync GROUP BY type ORDER BY 4 DESC", out);
}

int wl_session_timer_summaries(wl_session *s, wl_interval_summary **out)
{
    return intervals(s, "SELECT t.name, coalesce(c.name, t.category) || ' ' || t.kind"
                        " || CASE WHEN max(t.host_timed) = 1 THEN ' (host-timed)' ELSE '' END,"
                        " count(*), sum(t.duration_ns), min(t.duration_ns), max(t.duration_ns), avg(t.duration_ns)"
                        " FROM timer t LEFT JOIN timer_category c ON c.pid = t.pid AND c.id = t.category"
                        " WHERE t.status = 'done' GROUP BY t.name, t.category, t.kind ORDER BY min(t.start_ns)", out);
}

int wl_session_lost(wl_session *s, wl_lost_row **out)
{
    *out = NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT pid, source, coalesce(detail, ''), sum(count) FROM lost"
                                  " GROUP BY pid, source ORDER BY pid, source", -1, &st, NULL) != SQLITE_OK)
        return -1;
    wl_lost_row *rows = NULL;
    int n = 0, cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        wl_lost_row *r = grow((void **)&rows, &n, &cap, sizeof *r);
        if (!r)
            break;
        r->pid = (uint32_t)sqlite3_column_int64(st, 0);
        wl_sql_text_col(st, 1, r->source, sizeof r->source);
        wl_sql_text_col(st, 2, r->detail, sizeof r->detail);
        r->count = (uint64_t)sqlite3_column_int64(st, 3);
        r->unit = !strcmp(r->source, "buffer_refused") ? "requests"
                  : !strcmp(r->source, "pc_buffer_overflows") ? "times" : "records";
    }
    sqlite3_finalize(st);
    *out = rows;
    return n;
}

int wl_lost_counts_records(const char *source)
{
    return strcmp(source, "buffer_refused") != 0 && strcmp(source, "pc_buffer_overflows") != 0;
}

int wl_session_annotated_work(wl_session *s, wl_annotated_work **out)
{
    *out = NULL;
    sqlite3_stmt *st;
    const char *sql =
        "SELECT 'kernel', n.short_name, a.precision, k.pid, min(k.device_id), count(*), sum(a.flops), sum(a.bytes),"
        "  coalesce(sum(k.duration_ns), 0)"
        " FROM annotation a JOIN kernel k ON k.id = a.kernel_id JOIN kernel_name n ON n.id = k.name_id"
        " WHERE a.target = 'kernel' GROUP BY n.short_name, a.precision, k.pid"
        " UNION ALL "
        /* counts summed per scope first, so a scope's GPU time is counted once */
        "SELECT 'scope', s.name, x.precision, s.pid,"
        "  min((SELECT min(device_id) FROM kernel k WHERE k.pid = s.pid AND k.scope_id = s.scope_id)),"
        "  count(*), sum(x.flops), sum(x.bytes),"
        "  sum((SELECT coalesce(sum(duration_ns), 0) FROM kernel k WHERE k.pid = s.pid AND k.scope_id = s.scope_id))"
        " FROM (SELECT pid, scope_id, precision, sum(flops) flops, sum(bytes) bytes FROM annotation"
        "       WHERE target = 'scope' GROUP BY pid, scope_id, precision) x"
        " JOIN scope s ON s.pid = x.pid AND s.scope_id = x.scope_id"
        " GROUP BY s.name, x.precision, s.pid ORDER BY 1, 9 DESC";
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1; /* a session from before annotations */
    wl_annotated_work *rows = NULL;
    int n = 0, cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        wl_annotated_work *r = grow((void **)&rows, &n, &cap, sizeof *r);
        if (!r)
            break;
        wl_sql_text_col(st, 0, r->kind, sizeof r->kind);
        wl_sql_text_col(st, 1, r->name, sizeof r->name);
        wl_sql_text_col(st, 2, r->precision, sizeof r->precision);
        r->pid = (uint32_t)sqlite3_column_int64(st, 3);
        r->device_id = (uint32_t)sqlite3_column_int64(st, 4);
        r->instances = (uint64_t)sqlite3_column_int64(st, 5);
        r->flops = sqlite3_column_double(st, 6);
        r->bytes = sqlite3_column_double(st, 7);
        r->gpu_ns = (uint64_t)sqlite3_column_int64(st, 8);
    }
    sqlite3_finalize(st);
    *out = rows;
    return n;
}

/* The annotation table has no index on kernel_id, so one look-up is a pass over the table: as
 * cheap as anything for `warplens kernel`'s one kernel, quadratic for a walk over every kernel
 * (the JFR export of 100 k kernels with 10 k annotations: 47 s instead of 0.7). From the second
 * look-up on a handle, the annotations are copied once, in id order, into a TEMP table indexed by
 * kernel id (temporary storage: memory does not grow with them), and each look-up is a seek. The
 * first row by id wins either way. When the copy cannot be made, every look-up scans, as before. */
static sqlite3_stmt *annotation_lookup(wl_session *s)
{
    if (s->annotation_lookups++ != 1) /* the copy is tried once, at the second look-up */
        return s->annotation_by_kernel;
    if (sqlite3_exec(s->db,
                     "DROP TABLE IF EXISTS temp.wl_kernel_annotation;"
                     "CREATE TEMP TABLE wl_kernel_annotation (kernel_id INTEGER, flops REAL, bytes REAL, precision);"
                     "INSERT INTO temp.wl_kernel_annotation SELECT kernel_id, flops, bytes, precision FROM annotation"
                     " WHERE kernel_id IS NOT NULL ORDER BY id;"
                     "CREATE INDEX temp.wl_kernel_annotation_by_kernel ON wl_kernel_annotation (kernel_id);",
                     NULL, NULL, NULL) == SQLITE_OK)
        sqlite3_prepare_v2(s->db, "SELECT flops, bytes, precision FROM temp.wl_kernel_annotation WHERE kernel_id = ?"
                                  " ORDER BY rowid LIMIT 1", -1, &s->annotation_by_kernel, NULL);
    return s->annotation_by_kernel;
}

int wl_session_kernel_annotation(wl_session *s, int64_t kernel_id, double *flops, double *bytes, char *precision,
                                 size_t precision_size)
{
    sqlite3_stmt *st = annotation_lookup(s);
    int own = !st;
    if (own && sqlite3_prepare_v2(s->db, "SELECT flops, bytes, precision FROM annotation WHERE kernel_id = ? LIMIT 1",
                                  -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, kernel_id);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *flops = sqlite3_column_double(st, 0);
        *bytes = sqlite3_column_double(st, 1);
        wl_sql_text_col(st, 2, precision, precision_size);
        rc = 0;
    }
    if (own)
        sqlite3_finalize(st);
    else
        sqlite3_reset(st);
    return rc;
}

int wl_session_capture_ranges(wl_session *s, wl_capture_ranges *out)
{
    memset(out, 0, sizeof *out);
    if (!wl_sql_has_table(s->db, "capture_range"))
        return 0;
    out->processes = (int)wl_sql_scalar_u64(s->db, "SELECT count(*) FROM process WHERE capture_range IS NOT NULL");
    if (!out->processes)
        return 0;
    out->ranges = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM capture_range");
    out->open = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM capture_range WHERE ended_by IS NOT 'stop'");
    out->traced_ns = wl_sql_scalar_u64(s->db, "SELECT coalesce(sum(max(duration_ns, 0)), 0) FROM capture_range");
    out->run_ns = wl_sql_scalar_u64(s->db, "SELECT coalesce(sum(max(end_ns - start_ns, 0)), 0) FROM process"
                                           " WHERE capture_range IS NOT NULL AND end_ns IS NOT NULL");
    return 0;
}
