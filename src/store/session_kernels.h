/* Reading kernel records one launch at a time: a streaming cursor over the kernel table (every
 * column, the kernel's names, its API call, host thread and scope), lookups by kernel id or name,
 * the device row a kernel ran on, and the per-name launch configurations. Memory stays constant
 * however many kernels a session holds. */
#ifndef WARPLENS_STORE_SESSION_KERNELS_H
#define WARPLENS_STORE_SESSION_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

/* One kernel launch. Integer columns that are NULL in the database read as 0 unless a comment
 * says otherwise; the strings point into the cursor and stay valid until its next step. */
typedef struct wl_kernel_row {
    int64_t id, name_id;
    uint32_t pid, device_id, context_id, stream_id, correlation_id;
    int grid[3], block[3], cluster[3];
    int cluster_scheduling_policy, max_potential_cluster_size, max_active_clusters;
    int registers_per_thread;
    int64_t static_smem, dynamic_smem, smem_executed;
    int smem_limit_config;            /* CUpti_FuncShmemLimitConfig: 0 default, 1 opt-in */
    int64_t local_mem_per_thread, local_mem_total;
    int cache_config_requested, cache_config_executed; /* CUfunc_cache */
    int carveout_requested;           /* percent; -1 when not recorded */
    int is_device_launched;
    int64_t graph_id, graph_node_id, grid_id; /* -1 when NULL */
    int has_timestamps;
    uint64_t queued_ns, submitted_ns, start_ns, end_ns, completed_ns;
    uint64_t threads, blocks, warps;
    int64_t duration_ns, queue_delay_ns, submit_delay_ns; /* -1 when unknown */
    int64_t api_id, tid, scope_id;    /* -1 when NULL */
    int64_t api_duration_ns;          /* the launch call's duration; -1 without an API record */
    uint64_t api_start_ns;            /* when the launch call started; 0 without an API record */
    const char *launch_type;          /* "regular", "cooperative", ... */
    const char *name;                 /* demangled */
    const char *short_name;
    const char *mangled;
    const char *api_name;             /* "" without an API record */
    const char *thread_name;          /* "" when the thread is not named */
    const char *scope_name;           /* "" outside a scope */
    /* identity (session_identity.h); "" / 0 when none or the session predates it */
    const char *operation, *shape;
    const char *op_source;            /* "torch", "nvtx", "scope" */
    const char *tier;
    int64_t app_thread;               /* application thread id attached to its scope */
} wl_kernel_row;

typedef struct wl_kernel_cursor wl_kernel_cursor;

typedef enum wl_kernel_order {
    WL_KERNEL_BY_ID = 0,
    WL_KERNEL_BY_START = 1,  /* timestamped kernels only, by start then end */
    WL_KERNEL_UNTIMED = 2,   /* kernels CUPTI gave no timestamps (kernel replay), by id */
} wl_kernel_order;

/* Which kernels a cursor walks: name_id and id < 0 mean any. */
typedef struct wl_kernel_filter {
    int64_t name_id;
    int64_t id;
    wl_kernel_order order;
} wl_kernel_filter;

/* Opens a cursor; NULL on error (err gets a sentence). */
wl_kernel_cursor *wl_kernel_cursor_open(wl_session *s, const wl_kernel_filter *f, char *err, size_t err_size);
/* 1 with *row filled, 0 at the end, -1 on error. */
int wl_kernel_cursor_next(wl_kernel_cursor *c, wl_kernel_row *row);
void wl_kernel_cursor_close(wl_kernel_cursor *c);

/* The device row of (pid, device_id); 0 when found, -1 otherwise. */
int wl_session_device(wl_session *s, uint32_t pid, uint32_t device_id, wl_device_row *out);

/* A kernel name matching `query`: exact demangled, short or mangled name first, then a
 * case-sensitive substring of the demangled name. Returns the number of distinct names that
 * match (ids of up to max_ids of them in ids[], best first); 0 when none, -1 on error. */
int wl_session_find_kernel_names(wl_session *s, const char *query, int64_t *ids, int max_ids);

/* The names of one kernel_name row, malloc'd (free each); 0 or -1 when absent. */
int wl_session_kernel_name(wl_session *s, int64_t name_id, char **demangled, char **short_name, char **mangled);

/* The call number (1-based, by start time, then id) of kernel `id` among its name's calls, and
 * the kernel id of the n-th call of a name: 0 / -1 when absent. */
int64_t wl_session_kernel_call_index(wl_session *s, int64_t id);
int64_t wl_session_kernel_nth_call(wl_session *s, int64_t name_id, int64_t n);

/* Kernels on the same device and another stream whose execution overlaps [start, end) of
 * kernel `id` (half-open intervals: touching is not overlapping); -1 on error. */
int64_t wl_session_kernel_overlaps(wl_session *s, int64_t id);

/* One distinct launch configuration of a kernel name, as far as occupancy cares. */
typedef struct wl_kernel_config {
    int64_t name_id;
    uint32_t pid, device_id;
    int grid[3], block[3], cluster[3];
    int registers_per_thread;
    int64_t static_smem, dynamic_smem;
    int smem_limit_config, carveout_requested, cache_config_requested;
    uint64_t calls;
    uint64_t total_ns;   /* GPU time of these calls */
} wl_kernel_config;
/* Calls fn for each configuration, grouped by name_id and, inside a name, most calls first.
 * Returns the number of rows or -1. */
int wl_session_each_kernel_config(wl_session *s, void (*fn)(const wl_kernel_config *, void *), void *arg);

/* Both of the above from one read of the kernel table (session_kernel_agg.c): the summaries of
 * wl_session_kernel_summaries, in its order, and the configurations in the order
 * wl_session_each_kernel_config gives them. Holds 8 bytes per timed kernel while it runs (the
 * exact percentiles), then one row per name and per configuration. 0 or -1; free with
 * wl_kernel_aggregate_free. */
typedef struct wl_kernel_aggregate {
    wl_kernel_summary *sums;
    int n_sums;
    wl_kernel_config *configs;
    size_t n_configs;
} wl_kernel_aggregate;
int wl_session_kernel_aggregate(wl_session *s, wl_kernel_aggregate *out);
void wl_kernel_aggregate_free(wl_kernel_aggregate *a);

#endif
