/* PM sampling records -> the pm_config, pm_metric and pm_sample tables. PM_METRIC_DEF names a
 * device's metric indices (or is a status line of the device); PM_SAMPLE holds up to 8 values of
 * one window. Hostile input: the number of devices, metric indices, chunk sizes, timestamps and
 * string references are checked, and a sample may only use indices its device's definitions
 * named; errors name the record's offset. */
#include <math.h>
#include <stdint.h>

#include "store/session_writer_internal.h"

enum { P_CONFIG, P_METRIC, P_VALUE };

static const char *const SQL[3] = {
    /* status lines: the last one says whether sampling ran; their texts are kept, one per line */
    [P_CONFIG] = "INSERT INTO pm_config (pid, device_id, interval_ns, status, detail) VALUES (?1,?2,?3,?4,?5)"
                 " ON CONFLICT(pid, device_id) DO UPDATE SET"
                 " interval_ns = coalesce(excluded.interval_ns, pm_config.interval_ns),"
                 " status = CASE WHEN excluded.detail IS NULL THEN pm_config.status ELSE excluded.status END,"
                 " detail = CASE WHEN excluded.detail IS NULL THEN pm_config.detail"
                 "   ELSE coalesce(pm_config.detail || char(10), '') || excluded.detail END",
    [P_METRIC] = "INSERT OR REPLACE INTO pm_metric (pid, device_id, metric_index, name, unit, metric_type)"
                 " VALUES (?,?,?,?,?,?)",
    /* a value repeated in a capture replaces the first (the key is the window and the metric) */
    [P_VALUE] = "INSERT OR REPLACE INTO pm_sample (pid, device_id, sample_index, start_ns, end_ns, metric_index, value)"
                " VALUES (?,?,?,?,?,?,?)",
};

static sqlite3_stmt *stmt(import_ctx *c, int id)
{
    if (!c->pm_st[id] && sqlite3_prepare_v2(c->w->db, SQL[id], -1, &c->pm_st[id], NULL) != SQLITE_OK) {
        wl_store_set_err(c->err, c->err_size, "SQLite: %s", sqlite3_errmsg(c->w->db));
        return NULL;
    }
    sqlite3_reset(c->pm_st[id]);
    sqlite3_clear_bindings(c->pm_st[id]);
    return c->pm_st[id];
}

/* The slot of a device in the per-capture table, -1 when it is new and `add` is not set (or full). */
static int device_slot(import_ctx *c, uint32_t device, int add)
{
    for (int i = 0; i < c->pm_ndevices; i++)
        if (c->pm_device[i] == device)
            return i;
    if (!add || c->pm_ndevices >= WLCAP_PM_DEVICES)
        return -1;
    c->pm_device[c->pm_ndevices] = device;
    c->pm_defined[c->pm_ndevices] = 0;
    return c->pm_ndevices++;
}

int wl_imp_pm_metric_def(import_ctx *c, const wlcap_pm_metric_def *d, size_t offset)
{
    if ((d->name_str && !wl_imp_str(c, d->name_str)) || (d->unit_str && !wl_imp_str(c, d->unit_str)))
        return wl_store_set_err(c->err, c->err_size, "pm_metric_def record at offset %zu refers to an undefined string",
                                offset);
    int slot = device_slot(c, d->device_id, 1);
    if (slot < 0)
        return wl_store_set_err(c->err, c->err_size, "pm_metric_def record at offset %zu: more than %d devices",
                                offset, WLCAP_PM_DEVICES);
    if (d->interval_ns > INT64_MAX)
        return wl_store_set_err(c->err, c->err_size, "pm_metric_def record at offset %zu: interval out of range",
                                offset);
    sqlite3_stmt *s = stmt(c, P_CONFIG);
    if (!s)
        return -1;
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, d->device_id);
    if (d->metric_index == WLCAP_PM_STATUS) {
        sqlite3_bind_text(s, 4, d->kind == WLCAP_PM_ON ? "on" : "off", -1, SQLITE_STATIC);
        if (d->name_str)
            wl_imp_bind_str(c, s, 5, d->name_str);
        else
            sqlite3_bind_text(s, 5, "", -1, SQLITE_STATIC);
        return wl_imp_step(c, s);
    }
    if (d->metric_index >= WL_PM_IMPORT_METRICS || !d->name_str)
        return wl_store_set_err(c->err, c->err_size,
                                "pm_metric_def record at offset %zu: metric index %u or its name is not valid"
                                " (indices below %d)", offset, d->metric_index, WL_PM_IMPORT_METRICS);
    if (d->interval_ns)
        wl_imp_bind_u64(s, 3, d->interval_ns);
    sqlite3_bind_text(s, 4, "on", -1, SQLITE_STATIC);
    if (wl_imp_step(c, s))
        return -1;
    if (!(s = stmt(c, P_METRIC)))
        return -1;
    static const char *const types[] = {"counter", "ratio", "throughput"};
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, d->device_id);
    wl_imp_bind_u64(s, 3, d->metric_index);
    wl_imp_bind_str(c, s, 4, d->name_str);
    wl_imp_bind_str(c, s, 5, d->unit_str);
    sqlite3_bind_text(s, 6, d->kind < 3 ? types[d->kind] : "other", -1, SQLITE_STATIC);
    if (wl_imp_step(c, s))
        return -1;
    c->pm_defined[slot] |= 1ull << d->metric_index;
    return 0;
}

int wl_imp_pm_sample(import_ctx *c, const wlcap_pm_sample *r, size_t offset)
{
    if (!r->count || r->count > WLCAP_PM_CHUNK || r->first_metric >= WL_PM_IMPORT_METRICS ||
        r->first_metric + r->count > WL_PM_IMPORT_METRICS)
        return wl_store_set_err(c->err, c->err_size,
                                "pm_sample record at offset %zu: metrics %u..+%u out of range (1 to %d per record,"
                                " indices below %d)", offset, r->first_metric, r->count, WLCAP_PM_CHUNK,
                                WL_PM_IMPORT_METRICS);
    if (r->start > INT64_MAX || r->end > INT64_MAX || r->sample_index > INT64_MAX)
        return wl_store_set_err(c->err, c->err_size, "pm_sample record at offset %zu: timestamps out of range", offset);
    int slot = device_slot(c, r->device_id, 0);
    for (uint32_t i = 0; i < r->count; i++) {
        uint32_t m = r->first_metric + i;
        if (slot < 0 || !(c->pm_defined[slot] & (1ull << m)))
            return wl_store_set_err(c->err, c->err_size,
                                    "pm_sample record at offset %zu uses metric index %u of GPU %u before its"
                                    " pm_metric_def", offset, m, r->device_id);
        sqlite3_stmt *s = stmt(c, P_VALUE);
        if (!s)
            return -1;
        wl_imp_bind_u64(s, 1, c->pid);
        wl_imp_bind_u64(s, 2, r->device_id);
        wl_imp_bind_u64(s, 3, r->sample_index);
        wl_imp_bind_u64(s, 4, r->start);
        wl_imp_bind_u64(s, 5, r->end >= r->start ? r->end : r->start); /* a reversed window: empty */
        wl_imp_bind_u64(s, 6, m);
        if (isfinite(r->values[i])) /* CUPTI's NaN (no value) is stored as NULL */
            sqlite3_bind_double(s, 7, r->values[i]);
        if (wl_imp_step(c, s))
            return -1;
    }
    return 0;
}

void wl_imp_pm_free(import_ctx *c)
{
    for (int i = 0; i < 3; i++) {
        sqlite3_finalize(c->pm_st[i]);
        c->pm_st[i] = NULL;
    }
}
