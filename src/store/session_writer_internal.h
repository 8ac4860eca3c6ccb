/* Shared by the files that build a session (session_writer.c: create, link, finish;
 * session_import.c and session_import_records.c: capture records -> rows). */
#ifndef WARPLENS_STORE_SESSION_WRITER_INTERNAL_H
#define WARPLENS_STORE_SESSION_WRITER_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "capfile/capfile.h"
#include "common/progress.h"
#include "store/id_map.h"
#include "store/session_writer.h"
#include "store/sql_util.h"

enum stmt_id {
    S_PROCESS, S_DEVICE, S_THREAD, S_KNAME_FIND, S_KNAME_ADD, S_API, S_KERNEL, S_MEMCPY, S_MEMSET,
    S_SYNC, S_NVTX_START, S_NVTX_END, S_NVTX_MARK, S_SCOPE_BEGIN, S_SCOPE_END, S_EXTCORR, S_LOST, S_STAT,
    S_OCC_CHECK, S_ANNOTATION, S_IK_KERNEL_SPAN, S_IK_GRAPH_KERNEL_SPAN, S_IK_BUFFER, S_IK_NAME, S_IK_EVENT, S_DEVICE_SAMPLE,
    S_CAPTURE_MODE, S_CAPTURE_START, S_CAPTURE_STOP, S_TIER, S_SCOPE_THREAD, S_COUNT
};

#define MAX_STRING_ID (1u << 24) /* string ids a capture may use */
#define WLCAP_METRIC_IDS 256      /* metric ids a capture may use */
#define WLCAP_PM_DEVICES 64       /* devices with PM samples in one capture */
#define WL_PM_IMPORT_METRICS 64   /* PM metric indices per device (the bits of pm_defined) */

extern const char *const WL_IMPORT_SQL[S_COUNT];

struct wl_session_writer {
    sqlite3 *db;
    char tmp_path[4096];
    char final_path[4096];
    sqlite3_stmt *st[S_COUNT];
    int64_t ik_buffer;       /* in-kernel buffer being written (inkernel_store.c), 0 = none */
    int ik_failed;
    wl_progress progress;    /* the import of a capture: bytes read of the file */
};

/* Per-capture-file state: interned strings and the rows that later records refer to. */
typedef struct import_ctx {
    wl_session_writer *w;
    uint32_t pid;
    char **strings;          /* by string id */
    uint32_t *string_len;
    int64_t *kname_row;      /* kernel_name row by string id (0 = not yet) */
    uint32_t nstrings;
    wl_id_map nvtx;            /* NVTX starts waiting for their end: marker id -> nvtx_range row */
    /* API names by (domain, cbid) */
    char *api_names[3][1024];
    wl_import_stats *stats;
    /* hardware metrics (session_import_metrics.c): statements prepared at the first metric record,
     * and the metric table's row of each capture metric id */
    sqlite3_stmt *metric_st[5];
    int64_t metric_row[WLCAP_METRIC_IDS];
    /* PM sampling (session_import_pm.c): statements prepared at the first PM record, and the
     * metric indices each device's definitions named (a sample may use only those) */
    sqlite3_stmt *pm_st[3];
    uint32_t pm_device[WLCAP_PM_DEVICES];
    uint64_t pm_defined[WLCAP_PM_DEVICES];
    int pm_ndevices;
    /* warp stall samples (session_import_stalls.c): statements, and the stall_reason row of each
     * (device, reason index) the capture defined, in an open-addressing table */
    sqlite3_stmt *stall_st[4];
    uint64_t *stall_keys;    /* (device << 32 | index) + 1; 0 = empty */
    int64_t *stall_rows;
    uint32_t stall_cap, stall_used;
    /* API calls held to be written in runs per thread (session_import_api.c) */
    struct wl_imp_api_runs *api_runs;
    /* capture ranges (--capture-range): whether the MODE record came, the open range's row */
    int capture_mode;
    int64_t capture_open;
    char *err;
    size_t err_size;
} import_ctx;

int wl_store_exec(wl_session_writer *w, const char *sql, char *err, size_t n);

/* binding helpers (session_import.c) */
/* The writer's prepared statement `id`, reset and unbound, ready for its next row. */
sqlite3_stmt *wl_writer_stmt(wl_session_writer *w, enum stmt_id id);
sqlite3_stmt *wl_imp_begin(import_ctx *c, enum stmt_id id);
int wl_imp_step(import_ctx *c, sqlite3_stmt *s);
void wl_imp_bind_u64(sqlite3_stmt *s, int i, uint64_t v);
void wl_imp_bind_ts(sqlite3_stmt *s, int i, uint64_t v);
const char *wl_imp_str(import_ctx *c, uint32_t id);
void wl_imp_bind_str(import_ctx *c, sqlite3_stmt *s, int i, uint32_t id);

/* record handlers (session_import_records.c) */
int wl_imp_dispatch(import_ctx *c, uint16_t type, const uint8_t *p, size_t offset, const char *path);
/* API call records (session_import_api.c): held and written in runs of one thread's calls, named
 * from c->api_names when written; flush writes the held ones (before anything reads api_call, and
 * before a name changes). 0, or -1 with c->err. */
typedef struct wl_imp_api_runs wl_imp_api_runs;
int wl_imp_api_call(import_ctx *c, const wlcap_api *a);
int wl_imp_api_flush(import_ctx *c);
void wl_imp_api_free(import_ctx *c);
/* metric records (session_import_metrics.c) */
int wl_imp_metric_def(import_ctx *c, const wlcap_metric_def *d, size_t offset);
int wl_imp_metric_range(import_ctx *c, const wlcap_metric_range *r, size_t offset);
int wl_imp_metric_owner(import_ctx *c, const wlcap_metric_owner *o, size_t offset);
void wl_imp_metric_free(import_ctx *c);
/* PM sampling records (session_import_pm.c) */
int wl_imp_pm_metric_def(import_ctx *c, const wlcap_pm_metric_def *d, size_t offset);
int wl_imp_pm_sample(import_ctx *c, const wlcap_pm_sample *r, size_t offset);
void wl_imp_pm_free(import_ctx *c);
/* warp stall records (session_import_stalls.c) */
int wl_imp_stall_reason(import_ctx *c, const wlcap_stall_reason *r, size_t offset);
/* session_import_attr.c: tiers and application thread ids of scopes (ATTR records). */
int wl_imp_attr(import_ctx *c, const wlcap_attr *a, size_t offset);
int wl_imp_kernel_stall(import_ctx *c, const wlcap_kernel_stall *k, size_t offset);
void wl_imp_stall_free(import_ctx *c);
void wl_imp_free_ctx(import_ctx *c);

#endif
