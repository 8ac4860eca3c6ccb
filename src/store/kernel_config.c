/* Kernel configurations as one integer, and the readers' cache of them (see kernel_config.h). */
#include "store/kernel_config.h"

#include <stdlib.h>
#include <string.h>

#include "common/mix64.h"
#include "store/sql_util.h"

struct wl_kcfg_slot {
    int64_t id; /* -1: empty (ids are non-negative) */
    wl_kcfg cfg;
};

/* One multiply and shift per cell, a full avalanche at the end (the finaliser of SplitMix64):
 * ids must differ for the few thousand configurations of a session, cheaply, at import (one
 * call per launch). Not a defence against a file crafted to collide; the contract holds each
 * row to its own id, and a collision only shows one configuration's cells for another's. */
int64_t wl_kcfg_id(const wl_kcfg *k)
{
    uint64_t h = 0x6a09e667f3bcc909ull ^ k->null_mask;
    for (int i = 0; i < WL_KCFG_COLS; i++)
        h = wl_mix64_step(h, (uint64_t)k->v[i]);
    return (int64_t)(wl_mix64_finish(h) >> 1);
}

static void id_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    wl_kcfg k = {{0}, 0};
    if (argc != WL_KCFG_COLS)
        return;
    for (int i = 0; i < WL_KCFG_COLS; i++) {
        int t = sqlite3_value_type(argv[i]);
        if (t == SQLITE_NULL)
            k.null_mask |= 1u << i;
        else if (t == SQLITE_INTEGER)
            k.v[i] = sqlite3_value_int64(argv[i]);
        else
            return; /* NULL: the contract refuses the cell anyway */
    }
    sqlite3_result_int64(ctx, wl_kcfg_id(&k));
}

int wl_kcfg_register(sqlite3 *db)
{
    return sqlite3_create_function_v2(db, "wl_kernel_config_id", WL_KCFG_COLS,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL, id_fn, NULL, NULL,
                                      NULL) == SQLITE_OK ? 0 : -1;
}

int wl_kcfg_derive(sqlite3 *db)
{
    if (wl_kcfg_register(db) ||
        (!wl_sql_has_column(db, "kernel", "config_id") &&
         sqlite3_exec(db, "ALTER TABLE kernel ADD COLUMN config_id INTEGER", NULL, NULL, NULL) != SQLITE_OK))
        return -1;
    return sqlite3_exec(db, "UPDATE kernel SET config_id = wl_kernel_config_id(" WL_KCFG_SQL_COLS("") ")", NULL, NULL,
                        NULL) == SQLITE_OK ? 0 : -1;
}

int wl_kcfg_cache_open(wl_kcfg_cache *c, sqlite3 *db)
{
    memset(c, 0, sizeof *c);
    /* `kernel` may be the guard's view of the sound rows: looked up by id, not rowid */
    return sqlite3_prepare_v3(db, "SELECT " WL_KCFG_SQL_COLS("") " FROM kernel WHERE id = ?1", -1,
                              SQLITE_PREPARE_PERSISTENT, &c->row, NULL) == SQLITE_OK ? 0 : -1;
}

void wl_kcfg_cache_close(wl_kcfg_cache *c)
{
    sqlite3_finalize(c->row);
    free(c->slots);
    memset(c, 0, sizeof *c);
}

static uint32_t slot_of(const wl_kcfg_cache *c, int64_t id)
{
    uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & (c->cap - 1);
}

/* Room for one more entry: the table doubled below the bound, emptied at it. 0 or -1. */
static int make_room(wl_kcfg_cache *c)
{
    if (c->slots && (c->n + 1) * 2 <= c->cap)
        return 0;
    uint32_t cap = c->cap ? c->cap * 2 : 64;
    if (cap > 2 * WL_KCFG_CACHE_MAX) { /* at the bound: start over (the next ids are read again) */
        for (uint32_t i = 0; i < c->cap; i++)
            c->slots[i].id = -1;
        c->n = 0;
        return 0;
    }
    wl_kcfg_slot *s = malloc(cap * sizeof *s);
    if (!s)
        return -1;
    for (uint32_t i = 0; i < cap; i++)
        s[i].id = -1;
    wl_kcfg_slot *old = c->slots;
    uint32_t old_cap = c->cap;
    c->slots = s, c->cap = cap;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].id >= 0) {
            uint32_t j = slot_of(c, old[i].id);
            while (s[j].id >= 0)
                j = (j + 1) & (cap - 1);
            s[j] = old[i];
        }
    free(old);
    return 0;
}

/* Reads kernel_id's cells into *k; 1 when they are all integers or NULL, 0 when not, -1 on error. */
static int read_row(wl_kcfg_cache *c, int64_t kernel_id, wl_kcfg *k)
{
    sqlite3_reset(c->row);
    sqlite3_bind_int64(c->row, 1, kernel_id);
    if (sqlite3_step(c->row) != SQLITE_ROW)
        return -1;
    int plain = 1;
    k->null_mask = 0;
    for (int i = 0; i < WL_KCFG_COLS; i++) {
        int t = sqlite3_column_type(c->row, i);
        k->v[i] = sqlite3_column_int64(c->row, i);
        if (t == SQLITE_NULL)
            k->null_mask |= 1u << i;
        else if (t != SQLITE_INTEGER)
            plain = 0;
    }
    sqlite3_reset(c->row);
    return plain;
}

const wl_kcfg *wl_kcfg_get(wl_kcfg_cache *c, int64_t id, int has_id, int64_t kernel_id)
{
    if (has_id && id >= 0 && c->slots)
        for (uint32_t j = slot_of(c, id); c->slots[j].id >= 0; j = (j + 1) & (c->cap - 1))
            if (c->slots[j].id == id)
                return &c->slots[j].cfg;
    int plain = read_row(c, kernel_id, &c->uncached);
    if (plain < 0)
        return NULL;
    if (!plain || !has_id || id < 0 || wl_kcfg_id(&c->uncached) != id || make_room(c))
        return &c->uncached;
    uint32_t j = slot_of(c, id);
    while (c->slots[j].id >= 0)
        j = (j + 1) & (c->cap - 1);
    c->slots[j].id = id;
    c->slots[j].cfg = c->uncached;
    c->n++;
    return &c->slots[j].cfg;
}
