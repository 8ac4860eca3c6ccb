/* A kernel launch's configuration as one integer (internal to the store). Of a kernel row's
 * columns, 16 say how it was launched and repeat across the launches of a program (grid, block
 * and cluster shape, registers, shared and local memory, cache and carveout requests); a session
 * has a few hundred distinct ones against millions of launches. kernel.config_id is a 63-bit
 * hash of those 16 cells, written with the row (the importer, the synthetic sessions and merge
 * call the SQL function wl_kernel_config_id) and checked against them by the contract, like
 * threads against grid and block. Readers that walk every kernel read config_id in place of the
 * 16 columns and take the columns from a cache filled on first sight (about half the CPU of the
 * GPU reader's column reads, bench/results/export.txt). Sessions without the column, and rows
 * whose config_id is NULL, are read as before. */
#ifndef WARPLENS_STORE_KERNEL_CONFIG_H
#define WARPLENS_STORE_KERNEL_CONFIG_H

#include <sqlite3.h>
#include <stdint.h>

#define WL_KCFG_COLS 16
/* The 16 columns in hash order (the SQL function's arguments, the cache's look-up). */
#define WL_KCFG_SQL_COLS(t)                                                                             \
    t "grid_x, " t "grid_y, " t "grid_z, " t "block_x, " t "block_y, " t "block_z, " t "cluster_x, "    \
    t "cluster_y, " t "cluster_z, " t "registers_per_thread, " t "static_smem, " t "dynamic_smem, "     \
    t "smem_limit_config, " t "local_mem_per_thread, " t "cache_config_requested, " t "carveout_requested"
enum { WL_KCFG_GRID = 0, WL_KCFG_BLOCK = 3, WL_KCFG_CLUSTER = 6, WL_KCFG_REGS = 9, WL_KCFG_SSMEM, WL_KCFG_DSMEM,
       WL_KCFG_SMEM_LIMIT, WL_KCFG_LOCAL, WL_KCFG_CACHE_REQ, WL_KCFG_CARVEOUT };

/* The cells as SQLite reads them: v (0 where NULL) and which are NULL. */
typedef struct wl_kcfg {
    int64_t v[WL_KCFG_COLS];
    uint32_t null_mask; /* bit i: cell i is NULL */
} wl_kcfg;

/* The configuration's id: a non-negative 63-bit hash of the cells (NULL distinct from 0). */
int64_t wl_kcfg_id(const wl_kcfg *k);
/* wl_kernel_config_id(16 cells) on db: the id, or NULL when a cell is neither an integer nor NULL. */
int wl_kcfg_register(sqlite3 *db);

/* Adds kernel.config_id to a session older than it and fills it (`warplens import --upgrade`,
 * inside the caller's transaction). 0, or -1 with db's error. */
int wl_kcfg_derive(sqlite3 *db);

/* Configurations by id, read on first sight from the row of the kernel that shows them. Bounded:
 * at most WL_KCFG_CACHE_MAX entries (a session with more distinct ones starts the cache over). */
#define WL_KCFG_CACHE_MAX 16384
typedef struct wl_kcfg_slot wl_kcfg_slot;
typedef struct wl_kcfg_cache {
    sqlite3_stmt *row;   /* the 16 cells of kernel ?1 */
    wl_kcfg_slot *slots;
    uint32_t cap, n;     /* slots (a power of two), entries */
    wl_kcfg uncached;    /* a row read for itself alone */
} wl_kcfg_cache;

/* 0, or -1 with db's error. */
int wl_kcfg_cache_open(wl_kcfg_cache *c, sqlite3 *db);
void wl_kcfg_cache_close(wl_kcfg_cache *c);
/* The configuration of kernel `kernel_id`, whose config_id cell is `id` (has_id 0: NULL). A row
 * whose cells do not hash to its id (a file changed without its census) is read for itself and
 * not kept. NULL when the row cannot be read. The pointer holds until the next call. */
const wl_kcfg *wl_kcfg_get(wl_kcfg_cache *c, int64_t id, int has_id, int64_t kernel_id);

#endif
