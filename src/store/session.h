/* Reading a session database: the one interface the CLI, analysis and exporters use (no SQL
 * outside src/store/). Opening checks that the file is a warplens session of a schema this build
 * understands and says clearly what is wrong otherwise. */
#ifndef WARPLENS_STORE_SESSION_H
#define WARPLENS_STORE_SESSION_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_session wl_session;

/* Sets SQLite up for the readers (its error log, through which failures met mid-read are
 * reported): before the process's first use of SQLite. wl_session_open and the session writer
 * call it; a program that uses SQLite before either should call it first. */
void wl_store_init(void);

/* Returns NULL with a one-line reason in err, with the remedy where there is one ("... is not a
 * warplens session", "schema version 3 is newer than this warplens reads (1); upgrade warplens",
 * "... is truncated", "... is locked by a process writing to it", "... is damaged: table kernel
 * has no column duration_ns", ...). */
wl_session *wl_session_open(const char *path, char *err, size_t err_size);
/* WL_OPEN_DAMAGED: open a session whose structure is damaged (missing tables, columns or
 * indexes) anyway, for `warplens info --check` to list what is wrong. */
#define WL_OPEN_DAMAGED 1
/* WL_OPEN_RECHECK: check every row now, even when the file is known sound from an earlier open
 * (a per-user cache, src/store/check_cache.h). */
#define WL_OPEN_RECHECK 2
/* WL_OPEN_NO_CENSUS: no row check at open: reads see every row as it is, damaged ones included.
 * Only for a caller that checks the file by a full open before it trusts anything it read (merge
 * checks each input on a thread of its own while it copies, and writes nothing if one fails). */
#define WL_OPEN_NO_CENSUS 4
/* WL_OPEN_ONE_THREAD: the row check runs on the calling thread alone (no helper threads), for a
 * caller that keeps the other cores busy itself. */
#define WL_OPEN_ONE_THREAD 8
wl_session *wl_session_open_flags(const char *path, int flags, char *err, size_t err_size);
void wl_session_close(wl_session *s);
const char *wl_session_path(const wl_session *s);

/* Damaged sessions (docs/schema.md, "Damaged sessions"): every reader leaves out the rows that
 * break the session's contract (src/store/session_contract.c: a value of the wrong type, NULL
 * where the schema says NOT NULL, out of range, an end before its start, a derived column that
 * disagrees, an id that names no row). */
typedef struct wl_damage_count {
    char table[32];
    uint64_t rows;           /* rows of the table left out */
    int nexamples;
    char example[8][200];    /* "row 12: pid is text ''" */
} wl_damage_count;
/* Counts them, table by table (reads every table): the number of tables with some (entries
 * filled up to max, each with up to `examples` rows described), or -1 on a read error. */
int wl_session_damage(wl_session *s, int examples, wl_damage_count *out, int max);
/* What the reads so far left out, one line ("api_call row 1: pid is text ''"); 1 when anything
 * was, else 0 with out "". */
int wl_session_damage_note(wl_session *s, char *out, size_t out_size);
/* 1 with why in out when the session's export pack does not match its rows (the exports then
 * read the rows, slower; `warplens import --upgrade` writes it again), else 0. */
int wl_session_pack_note(wl_session *s, char *out, size_t out_size);
/* The export pack (`warplens info`): state 1 read by the exports, 0 none, -1 there but not read
 * (it does not match the rows); what it holds (-1: not packed) and its size. */
typedef struct wl_session_pack {
    int state;
    uint64_t kernels, bytes;
    int64_t api_calls, nvtx_ranges, scopes;
} wl_session_pack;
int wl_session_pack_info(wl_session *s, wl_session_pack *out);
/* Why row `rowid` of table (its id, for tables with one) was left out: 1 with "<column> <what is
 * wrong>" in out; 0 when it was not (it is sound, or there is no such row). */
int wl_session_row_fault(wl_session *s, const char *table, int64_t rowid, char *out, size_t out_size);
/* The structural problems the open found (only with WL_OPEN_DAMAGED: else the open failed on
 * the first): the i-th into out and 0, -1 past the last. */
int wl_session_problem(wl_session *s, int i, char *out, size_t out_size);
/* A failure SQLite reported while reading (a malformed page found mid-read, an I/O error): 1 with
 * it in out, else 0. What was read before it is incomplete. */
int wl_session_read_failure(wl_session *s, char *out, size_t out_size);
int wl_session_schema_version(const wl_session *s);
/* Value of a meta key into out ("" when absent); returns 0 if present. */
int wl_session_meta(wl_session *s, const char *key, char *out, size_t out_size);

typedef struct wl_session_overview {
    int processes, incomplete_processes, devices, threads;
    uint64_t kernels, kernels_no_timestamp, memcpys, memsets, api_calls, syncs, nvtx_ranges, scopes;
    uint64_t lost_total;
    uint64_t first_ns, last_ns;        /* span of all timestamped GPU and API records */
    uint64_t gpu_busy_ns;              /* union of kernel/memcpy/memset intervals, per device summed */
    int complete;                      /* meta.complete */
    char program[512];                 /* command line of the first process */
    char device_name[128];             /* first device */
} wl_session_overview;
int wl_session_get_overview(wl_session *s, wl_session_overview *o);
/* The overview without what needs the kernel and API-call tables read whole: api_calls, first_ns,
 * last_ns and gpu_busy_ns are 0 (kernels and kernels_no_timestamp are counted). */
int wl_session_get_counts(wl_session *s, wl_session_overview *o);
/* Lets `to`, a second handle of from's file used by another thread, share from's reads of the
 * kernel and API-call tables (the overview and summaries): each is made once, by whichever handle
 * needs it first. 0, or -1 (to already has reads of its own). Both handles close as usual. */
int wl_session_share_scan(wl_session *from, wl_session *to);
/* Threads the handle's whole-table reads may use at once (default 2: the kernel table in two
 * halves beside the API calls). 1 when another thread reads beside them (the report's advise),
 * so the two do not share the cores three or four ways. */
void wl_session_set_read_threads(wl_session *s, int n);

/* `warplens run --capture-range profiler-api`: tracing only between cudaProfilerStart and
 * cudaProfilerStop. processes = 0 when no process was recorded that way (or the session predates it). */
typedef struct wl_capture_ranges {
    int processes;       /* processes recorded with a capture range */
    uint64_t ranges;     /* spans between a start and its stop (or the process's end) */
    uint64_t open;       /* spans the process's end closed (no cudaProfilerStop) */
    uint64_t traced_ns;  /* the spans' summed length */
    uint64_t run_ns;     /* those processes' summed run time */
} wl_capture_ranges;
int wl_session_capture_ranges(wl_session *s, wl_capture_ranges *out);
/* One span: end_ns 0 when the session has no end for it (the process was killed before its end
 * was written); ended_by "stop", "exit" or "". */
typedef struct wl_capture_range_row {
    uint32_t pid, start_tid, end_tid;
    uint64_t start_ns, end_ns;
    char ended_by[16];
} wl_capture_range_row;
/* Every span, by process then start; the count, or -1 on a query error. */
int wl_session_each_capture_range(wl_session *s, void (*fn)(const wl_capture_range_row *, void *), void *arg);

typedef struct wl_process_row {
    uint32_t pid, ppid;
    char hostname[128], cmdline[1024];
    uint64_t start_ns, end_ns;
    int rank, local_rank, world_size; /* -1 when unset */
    int complete;
    char incomplete_reason[160];
} wl_process_row;
/* Calls fn for each process; returns the number of rows or -1. */
int wl_session_each_process(wl_session *s, void (*fn)(const wl_process_row *, void *), void *arg);
/* One of a process's recorder figures (recorder_stat: buffers, queues, memory; docs/schema.md):
 * 1 with *value set, 0 when the session has none by that name (older recorders wrote none). */
int wl_session_recorder_stat(wl_session *s, uint32_t pid, const char *name, uint64_t *value);

typedef struct wl_device_row {
    uint32_t pid, device_id;
    char name[128], pci_bus_id[32];
    int cc_major, cc_minor, sm_count, warp_size, max_threads_per_block, max_threads_per_sm,
        max_blocks_per_sm, regs_per_sm, regs_per_block, smem_per_sm, smem_per_block,
        smem_per_block_optin, reserved_smem_per_block, l2_bytes, core_clock_khz, mem_clock_khz,
        mem_bus_width_bits;
    uint64_t total_mem_bytes;
} wl_device_row;
int wl_session_each_device(wl_session *s, void (*fn)(const wl_device_row *, void *), void *arg);

/* One row per kernel name (GPU time statistics over the kernels that have timestamps). */
typedef struct wl_kernel_summary {
    int64_t name_id;
    char name[1024], short_name[256];
    uint64_t calls, timed_calls;
    uint64_t total_ns, min_ns, max_ns, p50_ns, p99_ns;
    double mean_ns;
    int configs;                        /* distinct (grid, block) pairs */
    int grid[3], block[3];              /* the most frequent configuration */
    int registers, static_smem, dynamic_smem;
    double mean_queue_ns, mean_submit_ns, mean_launch_ns; /* launch_ns: the API call's duration */
} wl_kernel_summary;
/* Kernel summaries ordered by total GPU time, descending. *out is malloc'd; returns count or -1. */
int wl_session_kernel_summaries(wl_session *s, wl_kernel_summary **out);

typedef struct wl_copy_summary {
    char kind[16];                      /* HtoD, DtoH, DtoD, PtoP, ... or "memset" */
    char memory[48];                    /* e.g. "pageable->device" */
    uint64_t count, bytes, total_ns;
    double gbps;                        /* bytes / total time */
} wl_copy_summary;
int wl_session_copy_summaries(wl_session *s, wl_copy_summary **out);

/* Generic named-interval summary (API calls, NVTX ranges, scopes, synchronisation). */
typedef struct wl_interval_summary {
    char name[256];
    char group[64];                     /* API category, NVTX domain, sync type */
    uint64_t count, total_ns, min_ns, max_ns;
    double mean_ns;
} wl_interval_summary;
int wl_session_api_summaries(wl_session *s, wl_interval_summary **out);
int wl_session_nvtx_summaries(wl_session *s, wl_interval_summary **out);
int wl_session_scope_summaries(wl_session *s, wl_interval_summary **out);
int wl_session_sync_summaries(wl_session *s, wl_interval_summary **out);
/* Timer API intervals (completed ones), grouped by name; group = "<category> <kind>" (kind gpu,
 * span or host; "(host-timed)" appended when any was timed on the host). -1 without a timer table. */
int wl_session_timer_summaries(wl_session *s, wl_interval_summary **out);

/* A row of the lost table, summed per process and source. Most sources count records of their own
 * kind; a few count something else (unit says what) and are never added into a total of records
 * lost: a refused buffer request costs records that CUPTI counts itself (cupti_dropped), an
 * overflow is a number of times (docs/schema.md, "lost"). */
typedef struct wl_lost_row {
    uint32_t pid;
    char source[32], detail[160];
    uint64_t count;
    const char *unit;      /* "records", "requests" or "times" */
} wl_lost_row;
int wl_lost_counts_records(const char *source); /* 1 unless the source counts something else */
/* The same rule as SQL, for sums over the lost table. */
#define WL_LOST_RECORDS_WHERE "source NOT IN ('buffer_refused', 'pc_buffer_overflows')"
int wl_session_lost(wl_session *s, wl_lost_row **out);

/* `warplens run --check-occupancy`: the driver's occupancy answer for the first launch of each
 * distinct (function, block size, dynamic shared memory), with the kernel it belongs to. */
typedef struct wl_occ_check_row {
    int64_t kernel_id;                /* -1 when the kernel record is missing */
    uint32_t pid, correlation_id, block_size, dynamic_smem;
    int driver_active_blocks, function_registers; /* registers -1 when unknown */
    uint32_t status;                  /* CUresult of the driver query (0 = success) */
} wl_occ_check_row;
/* Returns the number of rows, or -1 with err set (e.g. recorded without --check-occupancy). */
int wl_session_each_occ_check(wl_session *s, void (*fn)(const wl_occ_check_row *, void *), void *arg, char *err,
                              size_t err_size);

/* Throughput of annotated work (warplens_annotate_next_launch / _scope): one row per kernel name
 * or scope name, with FLOPs, bytes and GPU time summed over its annotated instances, so rates are
 * ratios of sums. A scope's GPU time is the summed duration of the kernels launched inside it. */
typedef struct wl_annotated_work {
    char kind[8];                     /* "kernel" or "scope" */
    char name[256];                   /* short kernel name or scope name */
    char precision[16];
    uint32_t pid, device_id;          /* the device whose peaks apply (first kernel's) */
    uint64_t instances;
    double flops, bytes;
    uint64_t gpu_ns;
} wl_annotated_work;
int wl_session_annotated_work(wl_session *s, wl_annotated_work **out);
/* FLOPs, bytes and precision annotated for one kernel; 0 when found, -1 otherwise. */
int wl_session_kernel_annotation(wl_session *s, int64_t kernel_id, double *flops, double *bytes, char *precision,
                                 size_t precision_size);

#endif
