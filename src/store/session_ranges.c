/* Reading user ranges and kernel launches (see session_ranges.h). Ranges come ordered by name so
 * that consecutive equal names form one group without a hash table. */
#include "store/session_ranges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_cursors.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

/* Columns: 0 id, 1 parent, 2 pid, 3 tid, 4 end tid, 5 start, 6 end (NULL open), 7 domain, 8 name. */
static const char *const NVTX_RANGES_SQL =
    "SELECT id, -1, pid, coalesce(tid, 0), coalesce(end_tid, 0), start_ns, end_ns, coalesce(domain, ''), name"
    " FROM nvtx_range ORDER BY 8, 9, start_ns";
static const char *const SCOPE_RANGES_SQL =
    "SELECT scope_id, coalesce(parent_id, -1), pid, tid, CASE WHEN end_ns IS NULL THEN 0 ELSE tid END, start_ns,"
    " end_ns, '', name FROM scope ORDER BY 9, start_ns";

static int add_name(wl_user_ranges *r, size_t *cap, uint8_t kind, const char *domain, const char *name)
{
    if (r->n_names == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        wl_range_name *p = realloc(r->names, nc * sizeof *p);
        if (!p)
            return -1;
        r->names = p;
        *cap = nc;
    }
    wl_range_name *n = &r->names[r->n_names];
    n->kind = kind;
    n->domain = strdup(domain);
    n->name = strdup(name);
    if (!n->domain || !n->name) {
        free(n->domain);
        free(n->name);
        return -1;
    }
    r->n_names++;
    return 0;
}

static int read_kind(sqlite3 *db, const char *sql, uint8_t kind, uint64_t session_end, wl_user_ranges *r,
                     size_t *cap, size_t *name_cap)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    size_t first_name = r->n_names;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        const char *domain = (const char *)sqlite3_column_text(st, 7), *name = (const char *)sqlite3_column_text(st, 8);
        domain = domain ? domain : "";
        name = name ? name : "";
        if (r->n_names == first_name || strcmp(r->names[r->n_names - 1].name, name) ||
            strcmp(r->names[r->n_names - 1].domain, domain))
            rc = add_name(r, name_cap, kind, domain, name);
        if (rc == 0 && r->n == *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            wl_user_range *p = realloc(r->ranges, nc * sizeof *p);
            if (p)
                r->ranges = p, *cap = nc;
            else
                rc = -1;
        }
        if (rc)
            break;
        wl_user_range *u = &r->ranges[r->n++];
        memset(u, 0, sizeof *u);
        u->id = sqlite3_column_int64(st, 0);
        u->parent_id = sqlite3_column_int64(st, 1);
        u->pid = (uint32_t)sqlite3_column_int64(st, 2);
        u->tid = (uint32_t)sqlite3_column_int64(st, 3);
        u->end_tid = (uint32_t)sqlite3_column_int64(st, 4);
        u->start_ns = (uint64_t)sqlite3_column_int64(st, 5);
        u->open = sqlite3_column_type(st, 6) == SQLITE_NULL;
        /* an open range lasts until the session ends, as in the timeline */
        u->end_ns = u->open ? session_end : (uint64_t)sqlite3_column_int64(st, 6);
        if (u->end_ns < u->start_ns)
            u->end_ns = u->start_ns;
        u->name_idx = (uint32_t)(r->n_names - 1);
        u->kind = kind;
    }
    sqlite3_finalize(st);
    return rc;
}

int wl_session_user_ranges(wl_session *s, wl_user_ranges *out)
{
    memset(out, 0, sizeof *out);
    wl_session_span span;
    wl_session_get_bounds(s, &span);
    size_t cap = 0, name_cap = 0;
    if (read_kind(s->db, NVTX_RANGES_SQL, WL_RANGE_NVTX, span.end_ns, out, &cap, &name_cap) ||
        read_kind(s->db, SCOPE_RANGES_SQL, WL_RANGE_SCOPE, span.end_ns, out, &cap, &name_cap)) {
        wl_user_ranges_free(out);
        return -1;
    }
    return 0;
}

void wl_user_ranges_free(wl_user_ranges *r)
{
    for (size_t i = 0; i < r->n_names; i++) {
        free(r->names[i].domain);
        free(r->names[i].name);
    }
    free(r->names);
    free(r->ranges);
    memset(r, 0, sizeof *r);
}

long wl_session_kernel_launches(wl_session *s, int only_measured, wl_kernel_launch **out)
{
    *out = NULL;
    /* the launch call's start and thread; kernel_metric has an index on kernel_id */
    static const char *const ALL =
        "SELECT k.id, coalesce(k.scope_id, -1), coalesce(k.api_id, -1), coalesce(a.start_ns, 0),"
        " CASE WHEN k.has_timestamps THEN coalesce(k.duration_ns, 0) ELSE 0 END, k.pid, coalesce(k.tid, 0),"
        " k.has_timestamps FROM kernel k LEFT JOIN api_call a ON a.id = k.api_id";
    char sql[768];
    snprintf(sql, sizeof sql, "%s%s ORDER BY k.id", ALL,
             only_measured ? " WHERE k.id IN (SELECT kernel_id FROM kernel_metric)" : "");
    if (only_measured && !wl_sql_has_table(s->db, "kernel_metric"))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t n = 0, cap = 0;
    wl_kernel_launch *v = NULL;
    long rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            wl_kernel_launch *p = realloc(v, nc * sizeof *p);
            if (!p) {
                rc = -1;
                break;
            }
            v = p;
            cap = nc;
        }
        wl_kernel_launch *k = &v[n++];
        k->kernel_id = sqlite3_column_int64(st, 0);
        k->scope_id = sqlite3_column_int64(st, 1);
        k->api_id = sqlite3_column_int64(st, 2);
        k->launch_ns = (uint64_t)sqlite3_column_int64(st, 3);
        int64_t d = sqlite3_column_int64(st, 4);
        k->gpu_ns = d > 0 ? (uint64_t)d : 0;
        k->pid = (uint32_t)sqlite3_column_int64(st, 5);
        k->tid = (uint32_t)sqlite3_column_int64(st, 6);
        k->has_timestamps = sqlite3_column_int(st, 7) != 0;
    }
    sqlite3_finalize(st);
    if (rc) {
        free(v);
        return -1;
    }
    *out = v;
    return (long)n;
}
