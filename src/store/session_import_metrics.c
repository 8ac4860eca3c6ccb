/* Hardware-metric records -> the metric, metric_config, kernel_metric and metric_range tables.
 * METRIC_DEF names a capture's metric ids (the metric table is shared by all processes, one row per
 * name); METRIC_RANGE holds up to 8 values of one range; METRIC_OWNER says what the range measured.
 * Hostile input: ids, counts, kinds and string references are checked, errors name the record's
 * offset. Kernels, copies and sets are linked at finish. */
#include <inttypes.h>
#include <math.h>

#include "store/session_writer_internal.h"

enum { M_FIND, M_ADD, M_CONFIG, M_VALUE, M_OWNER, M_STMTS };

static const char *const SQL[M_STMTS] = {
    [M_FIND] = "SELECT id FROM metric WHERE name = ?",
    [M_ADD] = "INSERT INTO metric (name, unit, metric_type) VALUES (?,?,?)",
    /* a status line after the definitions (metrics went off mid-run) keeps passes and replay */
    [M_CONFIG] = "INSERT INTO metric_config (pid, device_id, num_passes, status, replay) VALUES (?,?,?,?,?) ON CONFLICT"
                 " (pid, device_id) DO UPDATE SET num_passes = coalesce(excluded.num_passes, num_passes), status ="
                 " coalesce(excluded.status, status), replay = coalesce(excluded.replay, replay)",
    [M_VALUE] = "INSERT INTO kernel_metric (pid, device_id, range_index, correlation_id, metric_id, value)"
                " VALUES (?,?,?,?,?,?)",
    [M_OWNER] = "INSERT OR REPLACE INTO metric_range (pid, device_id, range_index, correlation_id, kind, matched, part,"
                " parts) VALUES (?,?,?,?,?,?,?,?)",
};

static sqlite3_stmt *stmt(import_ctx *c, int id)
{
    if (!c->metric_st[id] && sqlite3_prepare_v2(c->w->db, SQL[id], -1, &c->metric_st[id], NULL) != SQLITE_OK) {
        wl_store_set_err(c->err, c->err_size, "SQLite: %s", sqlite3_errmsg(c->w->db));
        return NULL;
    }
    sqlite3_reset(c->metric_st[id]);
    sqlite3_clear_bindings(c->metric_st[id]);
    return c->metric_st[id];
}

static int bad_string(import_ctx *c, uint32_t id)
{
    return id && !wl_imp_str(c, id);
}

int wl_imp_metric_def(import_ctx *c, const wlcap_metric_def *d, size_t offset)
{
    if (bad_string(c, d->name_str) || bad_string(c, d->unit_str))
        return wl_store_set_err(c->err, c->err_size, "metric_def record at offset %zu refers to an undefined string",
                                offset);
    sqlite3_stmt *s = stmt(c, M_CONFIG);
    if (!s)
        return -1;
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, d->device_id);
    if (d->metric_id == UINT32_MAX) { /* the configuration's status: metrics are off on this device */
        wl_imp_bind_str(c, s, 4, d->name_str);
        return wl_imp_step(c, s);
    }
    wl_imp_bind_u64(s, 3, d->num_passes);
    if (d->replay == WLCAP_METRIC_REPLAY_KERNEL || d->replay == WLCAP_METRIC_REPLAY_NONE)
        sqlite3_bind_text(s, 5, d->replay == WLCAP_METRIC_REPLAY_KERNEL ? "kernel" : "none", -1, SQLITE_STATIC);
    if (wl_imp_step(c, s))
        return -1;
    if (d->metric_id >= WLCAP_METRIC_IDS || !wl_imp_str(c, d->name_str))
        return wl_store_set_err(c->err, c->err_size, "metric_def record at offset %zu: metric id %u or its name is"
                                " not valid (ids below %u)", offset, d->metric_id, WLCAP_METRIC_IDS);
    if (!(s = stmt(c, M_FIND)))
        return -1;
    wl_imp_bind_str(c, s, 1, d->name_str);
    int64_t row = 0;
    if (sqlite3_step(s) == SQLITE_ROW)
        row = sqlite3_column_int64(s, 0);
    if (!row) {
        static const char *const types[] = {"counter", "ratio", "throughput"};
        if (!(s = stmt(c, M_ADD)))
            return -1;
        wl_imp_bind_str(c, s, 1, d->name_str);
        wl_imp_bind_str(c, s, 2, d->unit_str);
        sqlite3_bind_text(s, 3, d->metric_type < 3 ? types[d->metric_type] : "other", -1, SQLITE_STATIC);
        if (wl_imp_step(c, s))
            return -1;
        row = sqlite3_last_insert_rowid(c->w->db);
    }
    c->metric_row[d->metric_id] = row;
    return 0;
}

int wl_imp_metric_range(import_ctx *c, const wlcap_metric_range *r, size_t offset)
{
    if (r->count > WLCAP_METRIC_CHUNK || r->first_metric >= WLCAP_METRIC_IDS ||
        r->first_metric + r->count > WLCAP_METRIC_IDS)
        return wl_store_set_err(c->err, c->err_size,
                                "metric_range record at offset %zu: metrics %u..+%u out of range (at most %u per record)",
                                offset, r->first_metric, r->count, WLCAP_METRIC_CHUNK);
    for (uint32_t i = 0; i < r->count; i++) {
        int64_t metric = c->metric_row[r->first_metric + i];
        if (!metric)
            return wl_store_set_err(c->err, c->err_size,
                                    "metric_range record at offset %zu uses metric id %u before its metric_def", offset,
                                    r->first_metric + i);
        sqlite3_stmt *s = stmt(c, M_VALUE);
        if (!s)
            return -1;
        wl_imp_bind_u64(s, 1, c->pid);
        wl_imp_bind_u64(s, 2, r->device_id);
        wl_imp_bind_u64(s, 3, r->range_index);
        wl_imp_bind_u64(s, 4, r->correlation_id);
        sqlite3_bind_int64(s, 5, metric);
        if (isfinite(r->values[i])) /* CUPTI's NaN (metric not applicable) is stored as NULL */
            sqlite3_bind_double(s, 6, r->values[i]);
        if (wl_imp_step(c, s))
            return -1;
    }
    return 0;
}

/* What a range measured (its kernel_id, memcpy_id, ... are linked at finish, session_writer.c). */
int wl_imp_metric_owner(import_ctx *c, const wlcap_metric_owner *o, size_t offset)
{
    static const char *const kinds[WLCAP_OWNER_KIND_COUNT] = {
        [WLCAP_OWNER_UNKNOWN] = NULL,           [WLCAP_OWNER_KERNEL] = "kernel",
        [WLCAP_OWNER_MEMCPY] = "memcpy",        [WLCAP_OWNER_MEMSET] = "memset",
        [WLCAP_OWNER_GRAPH_NODE] = "graph_node", [WLCAP_OWNER_GRAPH_LAUNCH] = "graph_launch",
        [WLCAP_OWNER_INTERNAL] = "internal"};
    static const char *const matches[WLCAP_MATCH_COUNT] = {NULL, "order", "isolated", "signature"};
    if (o->kind >= WLCAP_OWNER_KIND_COUNT || o->match >= WLCAP_MATCH_COUNT || !o->parts || o->part >= o->parts)
        return wl_store_set_err(c->err, c->err_size,
                                "metric_owner record at offset %zu: kind %u, match %u or part %u of %u not valid",
                                offset, o->kind, o->match, o->part, o->parts);
    sqlite3_stmt *s = stmt(c, M_OWNER);
    if (!s)
        return -1;
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, o->device_id);
    wl_imp_bind_u64(s, 3, o->range_index);
    wl_imp_bind_u64(s, 4, o->correlation_id);
    if (kinds[o->kind])
        sqlite3_bind_text(s, 5, kinds[o->kind], -1, SQLITE_STATIC);
    if (matches[o->match])
        sqlite3_bind_text(s, 6, matches[o->match], -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 7, o->part);
    wl_imp_bind_u64(s, 8, o->parts);
    return wl_imp_step(c, s);
}

void wl_imp_metric_free(import_ctx *c)
{
    for (int i = 0; i < M_STMTS; i++) {
        sqlite3_finalize(c->metric_st[i]);
        c->metric_st[i] = NULL;
    }
}
