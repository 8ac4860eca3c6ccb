/* warplens session reader: what a binding (the Python package's `warplens.open`, through ctypes)
 * needs from libwarplens to read a session the way the CLI does. The rows themselves are in the
 * documented schema (docs/schema.md) that any SQLite client reads; this API adds what only the C
 * side knows:
 *   - the open check: the file is a warplens session of a schema this build reads, its structure is
 *     sound (a clear one-line reason otherwise), opened read-only;
 *   - which rows the contract leaves out of every reader (a damaged session: docs/schema.md,
 *     "Damaged sessions"), so a binding shows the same rows as the CLI;
 *   - the columns the CLI derives on read for each kernel launch: theoretical occupancy and its
 *     limiter, waves, the share of the GPU the grid fills, the backend.
 *
 * Link with -lwarplens. Every struct is plain C with fixed-size fields (ABI version
 * WARPLENS_READER_ABI, checked by bindings through warplens_reader_abi()). Not thread-safe per
 * reader: use one reader per thread. */
#ifndef WARPLENS_READER_H
#define WARPLENS_READER_H

#include <stddef.h>
#include <stdint.h>

#include "warplens.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WARPLENS_READER_ABI 1

typedef struct warplens_reader warplens_reader;

/* One kernel launch's derived columns (the CLI's `warplens kernels --calls --json`). Fields that
 * cannot be computed (a device whose architecture has no table, a launch without timestamps) are
 * NaN for doubles, -1 for integers, "" for text. */
typedef struct warplens_kernel_derived {
    int64_t id;               /* kernel.id */
    int64_t launch_ns;        /* CPU time of the launch call; -1 without an API record */
    int64_t app_thread_id;    /* application thread of its scope; 0 when none */
    double occupancy_pct;     /* theoretical occupancy: active warps / max warps per SM x 100 */
    double waves;             /* grid blocks / (active blocks per SM x SMs) */
    double tail_pct;          /* how full the last wave is */
    double warp_fill_pct;     /* share of the GPU's warp slots the launch can fill */
    double sm_share_pct;      /* share of the GPU's block capacity its grid holds at once */
    int32_t active_blocks;    /* blocks per SM */
    int32_t active_warps;     /* warps per SM */
    int32_t active_sms;       /* SMs that receive a block */
    int32_t smem_optin_assumed; /* 1: recorded as the default limit, but only opt-in fits it */
    char limiter[64];         /* "registers", "shared_memory+warps", ... ("none") */
    char backend[32];         /* "cuBLAS", "PyTorch native", "user code", ... */
} warplens_kernel_derived;

/* WARPLENS_READER_ABI of this library. */
WARPLENS_API int warplens_reader_abi(void);
/* Size of warplens_kernel_derived in this library (bindings check their layout against it). */
WARPLENS_API size_t warplens_reader_kernel_size(void);

/* Opens a session read-only. NULL with a one-line reason in err (not a session, a newer schema,
 * damaged structure, truncated, missing...). */
WARPLENS_API warplens_reader *warplens_reader_open(const char *path, char *err, size_t err_size);
WARPLENS_API void warplens_reader_close(warplens_reader *r);

/* The schema version of the session. */
WARPLENS_API int warplens_reader_schema_version(const warplens_reader *r);

/* Rows of `table` every reader leaves out (the contract's census at open); -1 on a read error.
 * 0 for a sound table, an absent one or a view. */
WARPLENS_API int64_t warplens_reader_rows_left_out(warplens_reader *r, const char *table);
/* 1 with why in out ("pid is text ''") when row `rowid` of table is left out, else 0. */
WARPLENS_API int warplens_reader_row_fault(warplens_reader *r, const char *table, int64_t rowid, char *out,
                                           size_t out_size);

/* The derived columns of every kernel launch the CLI shows, by id: fills up to max rows and
 * returns how many, -1 on a read error (then warplens_reader_error says why). Call again for
 * the next rows; after the call that returns 0 (the end) the next call starts a new walk. */
WARPLENS_API int warplens_reader_kernels(warplens_reader *r, warplens_kernel_derived *rows, int max);
/* The last error of r ("" when none). */
WARPLENS_API const char *warplens_reader_error(const warplens_reader *r);

#ifdef __cplusplus
}
#endif

#endif
