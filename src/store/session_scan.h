/* One read of each large table per open session (internal to the store). The overview, the kernel
 * summaries and configurations and the API-call summaries of `stats`, the report and advise all
 * come from the kernel and API-call tables; each of those tables is read once per session handle,
 * folded into small per-name tables, and the result kept on the handle until it closes. A large
 * kernel table is read in two halves on two connections; when the overview needs both tables,
 * the API-call table and the kernels' times for the busy time are read on a third connection
 * meanwhile, so the reads keep two cores busy.
 * Memory while a read runs: 8 bytes per timed kernel (exact percentiles), what gpu_busy.h holds,
 * one entry per distinct kernel name, launch configuration and API name; kept: the per-name rows. */
#ifndef WARPLENS_STORE_SESSION_SCAN_H
#define WARPLENS_STORE_SESSION_SCAN_H

#include <sqlite3.h>
#include <stdint.h>

#include "store/session.h"
#include "store/session_kernels.h"

struct wl_session_scan; /* kept on the handle (session_internal.h) */

/* The overview's figures of the kernel table, as SQL's count, min and max read them. */
typedef struct wl_kernel_overview {
    uint64_t kernels, no_timestamp;
    uint64_t first_ns, last_ns; /* min(start_ns), max(end_ns) over the rows that have them */
    int has_first, has_last;
} wl_kernel_overview;

/* The API-call table: per-name summaries, most time first, and the overview's figures. */
typedef struct wl_api_scan {
    wl_interval_summary *sums;
    int n_sums;
    uint64_t calls;
    uint64_t first_ns, last_ns;
    int has_first, has_last;
} wl_api_scan;

/* A running minimum or maximum: v becomes x when x is had and v is not yet, or x is beyond v. */
static inline void wl_fold_min(uint64_t *v, int *has, int x_has, uint64_t x)
{
    if (x_has && (!*has || x < *v))
        *v = x, *has = 1;
}
static inline void wl_fold_max(uint64_t *v, int *has, int x_has, uint64_t x)
{
    if (x_has && (!*has || x > *v))
        *v = x, *has = 1;
}
/* The same with a column's value, NULL not had. */
static inline void wl_fold_min_col(uint64_t *v, int *has, sqlite3_stmt *st, int col)
{
    wl_fold_min(v, has, sqlite3_column_type(st, col) != SQLITE_NULL, (uint64_t)sqlite3_column_int64(st, col));
}
static inline void wl_fold_max_col(uint64_t *v, int *has, sqlite3_stmt *st, int col)
{
    wl_fold_max(v, has, sqlite3_column_type(st, col) != SQLITE_NULL, (uint64_t)sqlite3_column_int64(st, col));
}

/* The same with a value passed to a fold (sql_util.h's wl_sql_fold), NULL not had. */
static inline void wl_fold_min_val(uint64_t *v, int *has, sqlite3_value *x)
{
    wl_fold_min(v, has, sqlite3_value_type(x) != SQLITE_NULL, (uint64_t)sqlite3_value_int64(x));
}
static inline void wl_fold_max_val(uint64_t *v, int *has, sqlite3_value *x)
{
    wl_fold_max(v, has, sqlite3_value_type(x) != SQLITE_NULL, (uint64_t)sqlite3_value_int64(x));
}

/* The kernel table read once (session_kernel_agg.c), in two halves of its rowids on two
 * connections when it is large; with ov, the overview's figures too; with busy_ok, the GPU busy
 * time too (*busy_ok 1 with *busy_ns, or 0 when it could not be had from this read: the kernels too
 * far from start order, too many idle gaps to keep). 0 or -1. */
int wl_kernel_pass(wl_session *s, wl_kernel_aggregate *out, wl_kernel_overview *ov, uint64_t *busy_ns, int *busy_ok);
int wl_kernel_aggregate_copy(const wl_kernel_aggregate *from, wl_kernel_aggregate *to);

/* The kept results (read now when not kept yet); NULL on a read error. ov (may be NULL): the
 * overview's figures of the kernel read. Safe from two threads on two handles sharing a scan. */
const wl_kernel_aggregate *wl_scan_kernels(wl_session *s, const wl_kernel_overview **ov);
const wl_api_scan *wl_scan_api(wl_session *s);
/* GPU busy time (gpu_busy.h) from a read of the kernels' times, in table order where it is close
 * enough to start order, else in start order: 0 with *ns, or -1 on a read error. */
int wl_scan_busy(wl_session *s, uint64_t *ns);
/* The rows of an interval summary query (name, group, count, total, min, max, mean) into *out
 * (malloc'd); their number, or -1 when the query fails. */
int wl_interval_rows(sqlite3 *db, const char *sql, wl_interval_summary **out);
/* The NVTX range and scope summaries (sorting GROUP BYs over two tables that grow with the run),
 * kept like the reads above: a copy into *out, their number, or -1. */
enum { WL_SCAN_NVTX, WL_SCAN_SCOPES, WL_SCAN_RANGE_KINDS };
int wl_scan_ranges(wl_session *s, int kind, wl_interval_summary **out);
/* Both tables read, in parallel, when neither is kept yet; the busy time too, where the kernels' read
 * can fold it (else wl_scan_busy reads it on its own). 0 or -1. */
int wl_scan_all(wl_session *s);
void wl_scan_free(struct wl_session_scan *sc);

#endif
