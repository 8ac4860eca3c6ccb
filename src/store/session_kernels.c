/* Kernel records one launch at a time (see session_kernels.h): the cursor, lookups by id and
 * name, call numbering, overlap counts for one kernel and the per-name launch configurations. */
#include "store/session_kernels.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_identity.h"
#include "store/session_internal.h"

struct wl_kernel_cursor {
    sqlite3_stmt *st;
};

/* Column list of the cursor; the reader below depends on this order. */
static const char CURSOR_SQL[] =
    "SELECT k.id, k.name_id, k.pid, k.device_id, k.context_id, k.stream_id, k.correlation_id,"
    " k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, k.cluster_x, k.cluster_y, k.cluster_z,"
    " k.cluster_scheduling_policy, k.max_potential_cluster_size, k.max_active_clusters,"
    " k.registers_per_thread, k.static_smem, k.dynamic_smem, k.smem_executed, k.smem_limit_config,"
    " k.local_mem_per_thread, k.local_mem_total, k.cache_config_requested, k.cache_config_executed,"
    " k.carveout_requested, k.launch_type, k.is_device_launched, k.graph_id, k.graph_node_id, k.grid_id,"
    " k.queued_ns, k.submitted_ns, k.start_ns, k.end_ns, k.completed_ns, k.has_timestamps,"
    " k.threads, k.blocks, k.warps, k.duration_ns, k.queue_delay_ns, k.submit_delay_ns,"
    " k.api_id, k.tid, k.scope_id,"
    " n.demangled, n.short_name, n.mangled, a.duration_ns, a.name, t.name, sc.name, a.start_ns%s"
    " FROM kernel k JOIN kernel_name n ON n.id = k.name_id"
    " LEFT JOIN api_call a ON a.id = k.api_id"
    " LEFT JOIN thread t ON t.pid = k.pid AND t.tid = k.tid"
    " LEFT JOIN scope sc ON sc.pid = k.pid AND sc.scope_id = k.scope_id%s";
/* Kernel identity (session_identity.h) where the session carries it: columns 57-61. */
static const char IDENT_COLS[] = ", o.name, o.shape, o.source, k.tier, sc.app_thread_id";
static const char NO_IDENT_COLS[] = ", NULL, NULL, NULL, NULL, NULL";
static const char IDENT_JOIN[] = " LEFT JOIN op o ON o.id = k.op_id";

static int64_t col_i64(sqlite3_stmt *st, int c, int64_t if_null)
{
    return sqlite3_column_type(st, c) == SQLITE_NULL ? if_null : sqlite3_column_int64(st, c);
}

static const char *col_text(sqlite3_stmt *st, int c)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    return t ? (const char *)t : "";
}

wl_kernel_cursor *wl_kernel_cursor_open(wl_session *s, const wl_kernel_filter *f, char *err, size_t err_size)
{
    char sql[sizeof CURSOR_SQL + sizeof IDENT_COLS + sizeof IDENT_JOIN + 256];
    wl_kernel_filter all = {-1, -1, WL_KERNEL_BY_ID};
    if (!f)
        f = &all;
    int ident = wl_session_has_identity(s);
    int n = snprintf(sql, sizeof sql, CURSOR_SQL, ident ? IDENT_COLS : NO_IDENT_COLS, ident ? IDENT_JOIN : "");
    n += snprintf(sql + n, sizeof sql - (size_t)n, " WHERE 1");
    if (f->name_id >= 0)
        n += snprintf(sql + n, sizeof sql - (size_t)n, " AND k.name_id = %lld", (long long)f->name_id);
    if (f->id >= 0)
        n += snprintf(sql + n, sizeof sql - (size_t)n, " AND k.id = %lld", (long long)f->id);
    if (f->order == WL_KERNEL_BY_START)
        snprintf(sql + n, sizeof sql - (size_t)n, " AND k.has_timestamps ORDER BY k.start_ns, k.end_ns, k.id");
    else if (f->order == WL_KERNEL_UNTIMED)
        snprintf(sql + n, sizeof sql - (size_t)n, " AND NOT k.has_timestamps ORDER BY k.id");
    else
        snprintf(sql + n, sizeof sql - (size_t)n, " ORDER BY k.id");
    wl_kernel_cursor *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    if (sqlite3_prepare_v2(s->db, sql, -1, &c->st, NULL) != SQLITE_OK) {
        if (err && err_size)
            snprintf(err, err_size, "cannot read kernels: %s", sqlite3_errmsg(s->db));
        free(c);
        return NULL;
    }
    return c;
}

int wl_kernel_cursor_next(wl_kernel_cursor *c, wl_kernel_row *r)
{
    int rc = sqlite3_step(c->st);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return -1;
    sqlite3_stmt *st = c->st;
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->name_id = sqlite3_column_int64(st, 1);
    r->pid = (uint32_t)sqlite3_column_int64(st, 2);
    r->device_id = (uint32_t)sqlite3_column_int64(st, 3);
    r->context_id = (uint32_t)sqlite3_column_int64(st, 4);
    r->stream_id = (uint32_t)sqlite3_column_int64(st, 5);
    r->correlation_id = (uint32_t)sqlite3_column_int64(st, 6);
    for (int i = 0; i < 3; i++) {
        r->grid[i] = sqlite3_column_int(st, 7 + i);
        r->block[i] = sqlite3_column_int(st, 10 + i);
        r->cluster[i] = sqlite3_column_int(st, 13 + i);
    }
    r->cluster_scheduling_policy = sqlite3_column_int(st, 16);
    r->max_potential_cluster_size = sqlite3_column_int(st, 17);
    r->max_active_clusters = sqlite3_column_int(st, 18);
    r->registers_per_thread = sqlite3_column_int(st, 19);
    r->static_smem = sqlite3_column_int64(st, 20);
    r->dynamic_smem = sqlite3_column_int64(st, 21);
    r->smem_executed = sqlite3_column_int64(st, 22);
    r->smem_limit_config = sqlite3_column_int(st, 23);
    r->local_mem_per_thread = sqlite3_column_int64(st, 24);
    r->local_mem_total = sqlite3_column_int64(st, 25);
    r->cache_config_requested = sqlite3_column_int(st, 26);
    r->cache_config_executed = sqlite3_column_int(st, 27);
    r->carveout_requested = (int)col_i64(st, 28, -1);
    r->launch_type = col_text(st, 29);
    r->is_device_launched = sqlite3_column_int(st, 30);
    r->graph_id = col_i64(st, 31, -1);
    r->graph_node_id = col_i64(st, 32, -1);
    r->grid_id = col_i64(st, 33, -1);
    r->queued_ns = (uint64_t)sqlite3_column_int64(st, 34);
    r->submitted_ns = (uint64_t)sqlite3_column_int64(st, 35);
    r->start_ns = (uint64_t)sqlite3_column_int64(st, 36);
    r->end_ns = (uint64_t)sqlite3_column_int64(st, 37);
    r->completed_ns = (uint64_t)sqlite3_column_int64(st, 38);
    r->has_timestamps = sqlite3_column_int(st, 39);
    r->threads = (uint64_t)sqlite3_column_int64(st, 40);
    r->blocks = (uint64_t)sqlite3_column_int64(st, 41);
    r->warps = (uint64_t)sqlite3_column_int64(st, 42);
    r->duration_ns = col_i64(st, 43, -1);
    r->queue_delay_ns = col_i64(st, 44, -1);
    r->submit_delay_ns = col_i64(st, 45, -1);
    r->api_id = col_i64(st, 46, -1);
    r->tid = col_i64(st, 47, -1);
    r->scope_id = col_i64(st, 48, -1);
    r->name = col_text(st, 49);
    r->short_name = col_text(st, 50);
    r->mangled = col_text(st, 51);
    r->api_duration_ns = col_i64(st, 52, -1);
    r->api_name = col_text(st, 53);
    r->thread_name = col_text(st, 54);
    r->scope_name = col_text(st, 55);
    r->api_start_ns = (uint64_t)sqlite3_column_int64(st, 56);
    r->operation = col_text(st, 57);
    r->shape = col_text(st, 58);
    r->op_source = col_text(st, 59);
    r->tier = col_text(st, 60);
    r->app_thread = col_i64(st, 61, 0);
    return 1;
}

void wl_kernel_cursor_close(wl_kernel_cursor *c)
{
    if (!c)
        return;
    sqlite3_finalize(c->st);
    free(c);
}

typedef struct device_want {
    uint32_t pid, device_id;
    wl_device_row *out;
    int found;
} device_want;

static void pick_device(const wl_device_row *d, void *arg)
{
    device_want *w = arg;
    if (!w->found && d->pid == w->pid && d->device_id == w->device_id) {
        *w->out = *d;
        w->found = 1;
    }
}

int wl_session_device(wl_session *s, uint32_t pid, uint32_t device_id, wl_device_row *out)
{
    /* Devices are few (one row per GPU per process): reuse the reader's row decoding. */
    device_want w = {pid, device_id, out, 0};
    if (wl_session_each_device(s, pick_device, &w) < 0)
        return -1;
    return w.found ? 0 : -1;
}

static int64_t scalar(wl_session *s, const char *sql, int64_t a, int64_t b, int64_t if_none)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    int64_t v = if_none;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Appends name_id to ids unless present; returns the new count. */
static int add_id(int64_t *ids, int n, int max, int64_t id, int *total)
{
    for (int i = 0; i < n && i < max; i++)
        if (ids[i] == id)
            return n;
    if (n < max)
        ids[n] = id;
    (*total)++;
    return n + 1;
}

int wl_session_find_kernel_names(wl_session *s, const char *query, int64_t *ids, int max_ids)
{
    static const char *const sql[] = {
        "SELECT id FROM kernel_name WHERE demangled = ?1 OR mangled = ?1 ORDER BY id",
        "SELECT id FROM kernel_name WHERE short_name = ?1 ORDER BY id",
        "SELECT id FROM kernel_name WHERE instr(demangled, ?1) > 0 ORDER BY id",
    };
    /* The first step that matches anything decides: an exact name beats a substring. */
    for (int step = 0; step < 3; step++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db, sql[step], -1, &st, NULL) != SQLITE_OK)
            return -1;
        sqlite3_bind_text(st, 1, query, -1, SQLITE_STATIC);
        int n = 0, total = 0;
        while (sqlite3_step(st) == SQLITE_ROW)
            n = add_id(ids, n, max_ids, sqlite3_column_int64(st, 0), &total);
        sqlite3_finalize(st);
        if (total)
            return total;
    }
    return 0;
}

static char *dup_col(sqlite3_stmt *st, int c)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    return strdup(t ? (const char *)t : "");
}

int wl_session_kernel_name(wl_session *s, int64_t name_id, char **demangled, char **short_name, char **mangled)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT demangled, short_name, mangled FROM kernel_name WHERE id = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, name_id);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        if (demangled)
            *demangled = dup_col(st, 0);
        if (short_name)
            *short_name = dup_col(st, 1);
        if (mangled)
            *mangled = dup_col(st, 2);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Calls of a name are numbered by start time; untimed kernels (no timestamps) sort by id after
 * the timed ones so every call has a number. */
#define CALL_ORDER "(CASE WHEN has_timestamps THEN start_ns ELSE 9223372036854775807 END)"

int64_t wl_session_kernel_call_index(wl_session *s, int64_t id)
{
#define OKEY "(CASE WHEN o.has_timestamps THEN o.start_ns ELSE 9223372036854775807 END)"
#define KKEY "(CASE WHEN k.has_timestamps THEN k.start_ns ELSE 9223372036854775807 END)"
    return scalar(s,
                  "SELECT (SELECT count(*) FROM kernel o WHERE o.name_id = k.name_id AND (" OKEY " < " KKEY
                  " OR (" OKEY " = " KKEY " AND o.id < k.id))) + 1 FROM kernel k WHERE k.id = ?1 AND ?2 = ?2",
                  id, 0, 0);
#undef OKEY
#undef KKEY
}

int64_t wl_session_kernel_nth_call(wl_session *s, int64_t name_id, int64_t n)
{
    if (n < 1)
        return -1;
    return scalar(s, "SELECT id FROM kernel WHERE name_id = ?1 ORDER BY " CALL_ORDER ", id LIMIT 1 OFFSET ?2 - 1",
                  name_id, n, -1);
}

int64_t wl_session_kernel_overlaps(wl_session *s, int64_t id)
{
    return scalar(s,
                  "SELECT count(*) FROM kernel o, kernel k WHERE k.id = ?1 AND k.has_timestamps AND o.has_timestamps"
                  " AND o.pid = k.pid AND o.device_id = k.device_id AND o.stream_id != k.stream_id"
                  " AND o.start_ns < k.end_ns AND o.end_ns > k.start_ns AND ?2 = ?2",
                  id, 0, -1);
}

int wl_session_each_kernel_config(wl_session *s, void (*fn)(const wl_kernel_config *, void *), void *arg)
{
    wl_kernel_aggregate a;
    if (wl_session_kernel_aggregate(s, &a))
        return -1;
    for (size_t i = 0; i < a.n_configs; i++)
        fn(&a.configs[i], arg);
    int n = (int)a.n_configs;
    wl_kernel_aggregate_free(&a);
    return n;
}
