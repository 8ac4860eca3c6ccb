/* GPU work with its launching call, and the host calls that wait for the GPU (session_work.h). */
#include "store/session_work.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "store/session_internal.h"
#include "store/sql_util.h"

/* Three ordered statements (kernels, copies, sets) merged by start. Column layout shared:
 * 0 id, 1 pid, 2 device, 3 stream, 4 start, 5 end, 6 api_id, 7 api start, 8 api end, 9 tid,
 * 10 graph, then kind-specific columns. */
static const char *const WORK_SQL[3] = {
    "SELECT k.id, k.pid, k.device_id, k.stream_id, k.start_ns, k.end_ns, k.api_id, a.start_ns, a.end_ns,"
    " coalesce(k.tid, a.tid), k.graph_id, k.name_id, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y,"
    " k.block_z, k.cluster_x, k.cluster_y, k.cluster_z, k.registers_per_thread, k.static_smem, k.dynamic_smem,"
    " k.smem_limit_config, k.carveout_requested, k.cache_config_requested, k.submitted_ns"
    " FROM kernel k LEFT JOIN api_call a ON a.id = k.api_id WHERE k.has_timestamps AND k.end_ns >= k.start_ns"
    " ORDER BY k.start_ns",
    "SELECT c.id, c.pid, c.device_id, c.stream_id, c.start_ns, c.end_ns, c.api_id, a.start_ns, a.end_ns,"
    " coalesce(c.tid, a.tid), c.graph_id, c.bytes, c.kind, c.src_kind, c.dst_kind, c.is_async"
    " FROM memcpy c LEFT JOIN api_call a ON a.id = c.api_id WHERE c.end_ns >= c.start_ns ORDER BY c.start_ns",
    "SELECT m.id, m.pid, m.device_id, m.stream_id, m.start_ns, m.end_ns, m.api_id, a.start_ns, a.end_ns,"
    " coalesce(m.tid, a.tid), m.graph_id, m.bytes"
    " FROM memset m LEFT JOIN api_call a ON a.id = m.api_id WHERE m.end_ns >= m.start_ns ORDER BY m.start_ns",
};

static int64_t col_or(sqlite3_stmt *q, int col, int64_t none)
{
    return sqlite3_column_type(q, col) == SQLITE_NULL ? none : sqlite3_column_int64(q, col);
}

static wl_copy_dir copy_dir(const char *kind)
{
    if (!strcmp(kind, "HtoD"))
        return WL_COPY_HTOD;
    if (!strcmp(kind, "DtoH"))
        return WL_COPY_DTOH;
    if (!strcmp(kind, "DtoD"))
        return WL_COPY_DTOD;
    return WL_COPY_OTHER;
}

static void read_row(sqlite3_stmt *q, wl_work_kind kind, wl_work_row *w)
{
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->id = sqlite3_column_int64(q, 0);
    w->pid = (uint32_t)sqlite3_column_int64(q, 1);
    w->device_id = (uint32_t)col_or(q, 2, 0);
    w->stream_id = col_or(q, 3, -1);
    w->start_ns = (uint64_t)sqlite3_column_int64(q, 4);
    w->end_ns = (uint64_t)sqlite3_column_int64(q, 5);
    w->api_id = col_or(q, 6, -1);
    w->api_start_ns = col_or(q, 7, -1);
    w->api_end_ns = col_or(q, 8, -1);
    w->tid = col_or(q, 9, -1);
    w->graph_id = col_or(q, 10, -1);
    w->submitted_ns = -1;
    if (kind == WL_WORK_KERNEL) {
        wl_kernel_config *c = &w->cfg;
        c->name_id = sqlite3_column_int64(q, 11);
        c->pid = w->pid;
        c->device_id = w->device_id;
        for (int i = 0; i < 3; i++) {
            c->grid[i] = (int)col_or(q, 12 + i, 1);
            c->block[i] = (int)col_or(q, 15 + i, 1);
            c->cluster[i] = (int)col_or(q, 18 + i, 0);
        }
        c->registers_per_thread = (int)col_or(q, 21, 0);
        c->static_smem = col_or(q, 22, 0);
        c->dynamic_smem = col_or(q, 23, 0);
        c->smem_limit_config = (int)col_or(q, 24, 0);
        c->carveout_requested = (int)col_or(q, 25, -1);
        c->cache_config_requested = (int)col_or(q, 26, 0);
        int64_t sub = col_or(q, 27, 0);
        w->submitted_ns = sub > 0 ? sub : -1;
        c->calls = 1;
        c->total_ns = w->end_ns - w->start_ns;
    } else {
        int64_t b = col_or(q, 11, 0);
        w->bytes = b > 0 ? (uint64_t)b : 0;
    }
    if (kind == WL_WORK_COPY) {
        char k[16], src[24], dst[24];
        wl_sql_text_col(q, 12, k, sizeof k);
        wl_sql_text_col(q, 13, src, sizeof src);
        wl_sql_text_col(q, 14, dst, sizeof dst);
        w->dir = copy_dir(k);
        w->host_pageable = !strcmp(src, "pageable") || !strcmp(dst, "pageable");
        w->is_async = (int)col_or(q, 15, 0) != 0;
    }
}

typedef struct work_visit {
    int (*fn)(const wl_work_row *, void *);
    void *arg;
} work_visit;

static int work_row(int which, sqlite3_stmt *q, void *arg)
{
    const work_visit *v = arg;
    wl_work_row w;
    read_row(q, (wl_work_kind)(which + 1), &w);
    return v->fn(&w, v->arg);
}

long wl_session_each_work(wl_session *s, int (*fn)(const wl_work_row *, void *), void *arg)
{
    sqlite3_stmt *st[3] = {NULL, NULL, NULL};
    long rc = -1;
    int prepared = 1;
    for (int i = 0; i < 3; i++)
        prepared &= sqlite3_prepare_v2(s->db, WORK_SQL[i], -1, &st[i], NULL) == SQLITE_OK;
    work_visit v = {fn, arg};
    if (prepared) /* merged by start: column 4 */
        rc = wl_sql_merge_ordered(st, 3, 4, work_row, &v);
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(st[i]);
    return rc;
}

long wl_session_each_blocking_call(wl_session *s, int (*fn)(const wl_blocking_call *, void *), void *arg)
{
    sqlite3_stmt *q = NULL;
    /* cudaMemcpy / cuMemcpyHtoD_v2 wait for the copy; their *Async forms do not (a pageable
     * async copy may still block while staging: that is the pageable-copy rule's business). */
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, pid, tid, start_ns, end_ns, name, category <> 'sync' FROM api_call"
                           " WHERE (category = 'sync' OR (category IN ('memcpy', 'memset') AND name NOT LIKE"
                           " '%Async%')) AND end_ns >= start_ns ORDER BY start_ns",
                           -1, &q, NULL) != SQLITE_OK)
        return -1;
    long n = 0;
    int r;
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
        wl_blocking_call b;
        memset(&b, 0, sizeof b);
        b.id = sqlite3_column_int64(q, 0);
        b.pid = (uint32_t)sqlite3_column_int64(q, 1);
        b.tid = (uint32_t)sqlite3_column_int64(q, 2);
        b.start_ns = (uint64_t)sqlite3_column_int64(q, 3);
        b.end_ns = (uint64_t)sqlite3_column_int64(q, 4);
        wl_sql_text_col(q, 5, b.name, sizeof b.name);
        b.implicit = sqlite3_column_int(q, 6);
        n++;
        if (fn(&b, arg))
            break;
    }
    sqlite3_finalize(q);
    return r == SQLITE_ROW || r == SQLITE_DONE ? n : -1;
}
