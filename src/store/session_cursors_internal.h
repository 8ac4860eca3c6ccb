/* Pieces shared by the cursor files (session_cursors.c: facts and helpers; session_cursors_host.c:
 * the host cursor; session_cursors_gpu.c: the GPU cursor). Internal to the store. */
#ifndef WARPLENS_STORE_SESSION_CURSORS_INTERNAL_H
#define WARPLENS_STORE_SESSION_CURSORS_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

/* The GPU cursor's kernel columns (session_cursors_gpu.c; the export pack, row_pack.h, holds the
 * same values): 0 start, 1 end, 2 id, 3 pid, 4 device, 5 stream, 6 correlation id, 7 flow, 8 graph
 * id, 9 scope id (-1 none), 10 launching thread (-1 none), 11 name id, 12-14 grid, 15-17 block,
 * 18 cluster size, 19 registers, 20 static and 21 dynamic shared memory, 22 shared memory limit,
 * 23 carveout (-1 unset), 24 queue delay (-1 unknown), 25 local memory, 26 submit delay (-1
 * unknown); then the kernel's identity (session_identity.h): 27 op id (-1 none), 28 tier. */
#define WL_CUR_KERNEL_COLUMNS(flow, ident)                                                              \
    "k.start_ns, k.end_ns, k.id, k.pid, k.device_id, k.stream_id, k.correlation_id, " flow ","          \
    " coalesce(k.graph_id, -1), coalesce(k.scope_id, -1), coalesce(k.tid, -1), k.name_id,"              \
    " k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,"                                   \
    " max(1, coalesce(k.cluster_x, 1) * coalesce(k.cluster_y, 1) * coalesce(k.cluster_z, 1)),"          \
    " k.registers_per_thread, k.static_smem, k.dynamic_smem, k.smem_limit_config,"                      \
    " coalesce(k.carveout_requested, -1), coalesce(k.queue_delay_ns, -1), k.local_mem_per_thread,"      \
    " coalesce(k.submit_delay_ns, -1)" ident
#define WL_CUR_IDENT ", coalesce(k.op_id, -1), k.tier"
#define WL_CUR_NO_IDENT ", -1, NULL"
/* 1 when the session carries kernel identity as the GPU cursor reads it. */
int wl_cur_has_ident(sqlite3 *db);

/* The host cursor's API call columns (session_cursors_host.c; the export pack holds the same):
 * 0 pid, 1 tid, 2 start, 3 end (not before the start), 4 id, 5 name, 6 category, 7 open end (0),
 * 8 correlation id, 9 return value, 10 scope id (-1 none), 11 flow id (0 none, NULL several). */
#define WL_CUR_API_COLUMNS(pid, tid)                                                                    \
    pid ", " tid ", start_ns, max(end_ns, start_ns), id, name, category, 0, correlation_id, return_value,"  \
    " coalesce(scope_id, -1), flow_id"
/* One thread's calls (?1 pid, ?2 tid) in its order; past WL_CUR_MAX_THREAD_SOURCES threads, all
 * calls sorted at once in start order (start, the longer first, pid, tid, id). */
#define WL_CUR_API_THREAD_SQL                                                                           \
    "SELECT " WL_CUR_API_COLUMNS("?1", "?2") " FROM api_call WHERE pid = ?1 AND tid = ?2 ORDER BY start_ns, id"
#define WL_CUR_API_ALL_SQL "SELECT " WL_CUR_API_COLUMNS("pid", "tid") " FROM api_call ORDER BY "
/* Start order of host intervals (columns 3 start, 4 end, 1 pid, 2 tid, 5 id). */
#define WL_CUR_BY_START "3, 4 DESC, 1, 2, 5"
#define WL_CUR_MAX_THREAD_SOURCES 256

/* The host cursor's sources from the export pack (session_cursors_pack.c, row_pack.h): kind's rows
 * in the order and columns of its statement here (WL_PACK_API: WL_CUR_API_COLUMNS in start order;
 * WL_PACK_NVTX and WL_PACK_SCOPE: the host cursor's NVTX and scope statements by start, ranges
 * never closed ending at open_end). NULL when that kind is not packed or cannot be read. Memory:
 * the reader's, and a run of equal starts (WL_PACK_MAX_GROUP rows at most). */
typedef struct wl_cur_pack wl_cur_pack;
struct wl_pack_row;
wl_cur_pack *wl_cur_pack_open(sqlite3 *db, int kind, int64_t open_end);
/* 1 with *row (valid until the next call), 0 at the end, -1 damaged (wl_cur_pack_error). */
int wl_cur_pack_next(wl_cur_pack *p, const struct wl_pack_row **row);
const char *wl_cur_pack_error(const wl_cur_pack *p);
void wl_cur_pack_close(wl_cur_pack *p);

/* An ordered statement and its ready row. */
typedef struct wl_cur_source {
    sqlite3_stmt *st;
    int state;      /* 0: must step, 1: row ready, 2: done */
    int nkeys;      /* leading columns that order the rows */
    int64_t key[4]; /* their values for the ready row (read once: every column call locks) */
} wl_cur_source;
/* Makes a row ready; returns 1 ready, 0 done, -1 error. */
int wl_cur_peek(wl_cur_source *src);

/* The threads with API calls, one at a time (an index seek or two each): WL_CUR_THREADS_SQL
 * prepared, then wl_cur_next_api_thread steps it to the (pid, tid) after *pid, *tid (the first
 * when *started is 0): 1 with the pair, 0 after the last, -1 on an error (also for pairs that are
 * not integers in strictly rising order, so a damaged index cannot make the walk loop). */
extern const char *const WL_CUR_THREADS_SQL;
int wl_cur_next_api_thread(sqlite3_stmt *t, int *started, int64_t *pid, int64_t *tid);

/* Scope and kernel names repeat across millions of rows: a direct-mapped cache in front of a
 * primary-key look-up is cheaper than joining the tables in every row. */
#define CACHE_SLOTS 1024
typedef struct wl_cur_name_slot {
    int used;
    int64_t a, b;
    char *s1, *s2;
    size_t n1, n2;        /* their strlen, measured once */
    int64_t i2;           /* s2 read as a decimal integer (strtoll; 0 without one) */
} wl_cur_name_slot;

typedef struct wl_cur_name_cache {
    sqlite3_stmt *lookup; /* ?1, ?2 -> text column(s) 0 [and 1] */
    sqlite3_stmt *run;    /* wl_cur_cache_open_runs: ?1, ?2 -> b, then the same columns */
    wl_cur_name_slot slot[CACHE_SLOTS];
} wl_cur_name_cache;
int wl_cur_cache_open(wl_cur_name_cache *c, sqlite3 *db, const char *sql);
/* The same, where the rows of one a are read in runs of consecutive b (run_sql: ?1 = a, rows with
 * b >= ?2 in b order, a few dozen) and the lookups walk b upwards: scope names, which launches and
 * calls ask for in the order scopes were opened. One statement fills a run of slots instead of one
 * statement a slot (at 62,500 scopes a million kernels, the look-ups were 6 % of an export's CPU). */
int wl_cur_cache_open_runs(wl_cur_name_cache *c, sqlite3 *db, const char *sql, const char *run_sql);
void wl_cur_cache_close(wl_cur_name_cache *c);
/* The cached slot for (a, b), looked up on a miss; NULL on failure. */
const wl_cur_name_slot *wl_cur_cache_get(wl_cur_name_cache *c, int64_t a, int64_t b);
#define SCOPE_NAME_SQL "SELECT name FROM scope WHERE pid = ?1 AND scope_id = ?2"
#define SCOPE_RUN_SQL "SELECT scope_id, name FROM scope WHERE pid = ?1 AND scope_id >= ?2 ORDER BY scope_id LIMIT 64"

void wl_cur_text_col(sqlite3_stmt *st, int col, char *out, size_t n);
void wl_cur_copy_str(char *out, size_t n, const char *s);
/* The same for a string whose strlen is len. */
void wl_cur_copy_len(char *out, size_t n, const char *s, size_t len);
int wl_cur_set_err(char *err, size_t n, const char *what, sqlite3 *db);
/* A cursor's own read-only connection with the session's guard installed; NULL with err when
 * the file cannot be opened again. */
sqlite3 *wl_cur_db(wl_session *s, char *err, size_t err_size);
/* The same for a read of whole tables in their own order (folds): pages are read once, in order,
 * so SQLite's default 2 MiB page cache is kept rather than the cursors' larger one. */
sqlite3 *wl_cur_db_scan(wl_session *s);
/* A cursor whose bulk comes from the export pack: its blocks are read once, and would only fill
 * the page cache (24 MiB a cursor, kept to the end); the small tables left need SQLite's default. */
void wl_cur_db_packed(sqlite3 *db);

#endif
