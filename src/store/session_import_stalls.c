/* Warp-stall records (`warplens run --stalls`) -> the stall_reason, stall_config and kernel_stall
 * tables. STALL_REASON names a device's reason index (stall_reason holds one row per name, shared
 * by every process and device) or says why PC sampling was off there; KERNEL_STALL adds samples
 * to (process, device, correlation id, reason). Hostile input: indices, string references and
 * counts are checked, errors name the record's offset. Kernels are linked at finish
 * (session_writer.c). */
#include <stdlib.h>

#include "store/session_writer_internal.h"

enum { K_FIND, K_ADD, K_CONFIG, K_SAMPLES };

static const char *const SQL[4] = {
    [K_FIND] = "SELECT id FROM stall_reason WHERE name = ?",
    [K_ADD] = "INSERT INTO stall_reason (name) VALUES (?)",
    /* a status (sampling off) wins over the period-only row a reason record leaves */
    [K_CONFIG] = "INSERT INTO stall_config (pid, device_id, period_log2, status) VALUES (?,?,?,?)"
                 " ON CONFLICT(pid, device_id) DO UPDATE SET period_log2 = coalesce(excluded.period_log2,"
                 " period_log2), status = coalesce(excluded.status, status)",
    [K_SAMPLES] = "INSERT INTO kernel_stall (pid, device_id, correlation_id, reason_id, samples) VALUES (?,?,?,?,?)"
                  " ON CONFLICT(pid, device_id, correlation_id, reason_id) DO UPDATE SET samples = samples +"
                  " excluded.samples",
};

#define MAX_REASON_KEYS 65536u /* (device, index) pairs one capture may define */
#define MAX_SAMPLES (1ull << 53) /* per record; sums stay exact integers */

static sqlite3_stmt *stmt(import_ctx *c, int id)
{
    if (!c->stall_st[id] && sqlite3_prepare_v2(c->w->db, SQL[id], -1, &c->stall_st[id], NULL) != SQLITE_OK) {
        wl_store_set_err(c->err, c->err_size, "SQLite: %s", sqlite3_errmsg(c->w->db));
        return NULL;
    }
    sqlite3_reset(c->stall_st[id]);
    sqlite3_clear_bindings(c->stall_st[id]);
    return c->stall_st[id];
}

static uint32_t slot(const import_ctx *c, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 32) & (c->stall_cap - 1);
    while (c->stall_keys[i] && c->stall_keys[i] != key)
        i = (i + 1) & (c->stall_cap - 1);
    return i;
}

/* The stall_reason row of (device, index), 0 when the capture has not named it. */
static int64_t reason_row(const import_ctx *c, uint32_t device, uint32_t index)
{
    if (!c->stall_cap)
        return 0;
    uint32_t i = slot(c, ((uint64_t)device << 32 | index) + 1);
    return c->stall_keys[i] ? c->stall_rows[i] : 0;
}

static int put_row(import_ctx *c, uint32_t device, uint32_t index, int64_t row, size_t offset)
{
    uint64_t key = ((uint64_t)device << 32 | index) + 1;
    if (c->stall_cap && c->stall_keys[slot(c, key)]) {
        c->stall_rows[slot(c, key)] = row; /* renamed: later samples use the new name */
        return 0;
    }
    if (c->stall_used >= MAX_REASON_KEYS)
        return wl_store_set_err(c->err, c->err_size,
                                "stall_reason record at offset %zu: more than %u stall reasons in one capture", offset,
                                MAX_REASON_KEYS);
    if (2 * (c->stall_used + 1) > c->stall_cap) { /* grow: at most half full */
        uint32_t cap = c->stall_cap ? c->stall_cap * 2 : 256;
        uint64_t *keys = calloc(cap, sizeof *keys);
        int64_t *rows = calloc(cap, sizeof *rows);
        if (!keys || !rows) {
            free(keys), free(rows);
            return wl_store_set_err(c->err, c->err_size, "out of memory reading stall reasons");
        }
        uint64_t *old_keys = c->stall_keys;
        int64_t *old_rows = c->stall_rows;
        uint32_t old_cap = c->stall_cap;
        c->stall_keys = keys, c->stall_rows = rows, c->stall_cap = cap;
        for (uint32_t i = 0; i < old_cap; i++)
            if (old_keys[i]) {
                uint32_t j = slot(c, old_keys[i]);
                keys[j] = old_keys[i], rows[j] = old_rows[i];
            }
        free(old_keys), free(old_rows);
    }
    uint32_t i = slot(c, key);
    c->stall_keys[i] = key;
    c->stall_rows[i] = row;
    c->stall_used++;
    return 0;
}

static int config(import_ctx *c, const wlcap_stall_reason *r)
{
    sqlite3_stmt *s = stmt(c, K_CONFIG);
    if (!s)
        return -1;
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, r->device_id);
    if (r->period_log2 >= WL_PC_PERIOD_MIN && r->period_log2 <= WL_PC_PERIOD_MAX)
        wl_imp_bind_u64(s, 3, r->period_log2);
    if (r->reason_index == WLCAP_STALL_STATUS)
        wl_imp_bind_str(c, s, 4, r->name_str);
    return wl_imp_step(c, s);
}

int wl_imp_stall_reason(import_ctx *c, const wlcap_stall_reason *r, size_t offset)
{
    if (!wl_imp_str(c, r->name_str))
        return wl_store_set_err(c->err, c->err_size, "stall_reason record at offset %zu has no name (string %u)",
                                offset, r->name_str);
    if (r->reason_index != WLCAP_STALL_STATUS && r->reason_index >= WLCAP_STALL_INDEX_MAX)
        return wl_store_set_err(c->err, c->err_size, "stall_reason record at offset %zu: reason index %u (indices are"
                                " below %u)", offset, r->reason_index, WLCAP_STALL_INDEX_MAX);
    if (config(c, r))
        return -1;
    if (r->reason_index == WLCAP_STALL_STATUS)
        return 0;
    sqlite3_stmt *s = stmt(c, K_FIND);
    if (!s)
        return -1;
    wl_imp_bind_str(c, s, 1, r->name_str);
    int64_t row = 0;
    if (sqlite3_step(s) == SQLITE_ROW)
        row = sqlite3_column_int64(s, 0);
    if (!row) {
        if (!(s = stmt(c, K_ADD)))
            return -1;
        wl_imp_bind_str(c, s, 1, r->name_str);
        if (wl_imp_step(c, s))
            return -1;
        row = sqlite3_last_insert_rowid(c->w->db);
    }
    return put_row(c, r->device_id, r->reason_index, row, offset);
}

int wl_imp_kernel_stall(import_ctx *c, const wlcap_kernel_stall *k, size_t offset)
{
    int64_t row = k->reason_index < WLCAP_STALL_INDEX_MAX ? reason_row(c, k->device_id, k->reason_index) : 0;
    if (!row)
        return wl_store_set_err(c->err, c->err_size,
                                "kernel_stall record at offset %zu uses stall reason %u of device %u before its"
                                " stall_reason record", offset, k->reason_index, k->device_id);
    if (k->samples > MAX_SAMPLES)
        return wl_store_set_err(c->err, c->err_size, "kernel_stall record at offset %zu: %llu samples is not plausible",
                                offset, (unsigned long long)k->samples);
    sqlite3_stmt *s = stmt(c, K_SAMPLES);
    if (!s)
        return -1;
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, k->device_id);
    wl_imp_bind_u64(s, 3, k->correlation_id);
    sqlite3_bind_int64(s, 4, row);
    wl_imp_bind_u64(s, 5, k->samples);
    return wl_imp_step(c, s);
}

void wl_imp_stall_free(import_ctx *c)
{
    for (int i = 0; i < 4; i++) {
        sqlite3_finalize(c->stall_st[i]);
        c->stall_st[i] = NULL;
    }
    free(c->stall_keys);
    free(c->stall_rows);
    c->stall_keys = NULL;
    c->stall_rows = NULL;
    c->stall_cap = c->stall_used = 0;
}
