/* The capture file (.wlcap): what the recorder streams out of the profiled process and the CLI
 * turns into a session database. It is an append-only sequence of typed records so that a
 * process killed mid-run still leaves everything written so far readable; the END record marks a
 * clean finish. Layout (little-endian, x86-64):
 *
 *   file header (32 bytes)  : magic "WLCAP\x01\r\n", u32 version, u32 header size, u64 pid, u64 start ns
 *   records, each           : u16 type, u16 flags, u32 payload size, payload
 *
 * Payloads are the fixed structs below (their sizes are checked at compile time); a reader accepts
 * a payload larger than it knows (newer minor revision: extra fields ignored) but never a smaller
 * one. Strings are interned: a STRING record defines an id once; other records refer to it
 * (id 0 = no string). docs/capture-format.md describes every field. */
#ifndef WARPLENS_CAPFILE_H
#define WARPLENS_CAPFILE_H

#include <assert.h>
#include <stdint.h>

#define WLCAP_MAGIC "WLCAP\x01\r\n"
#define WLCAP_MAGIC_LEN 8
#define WLCAP_VERSION 1u
#define WLCAP_MAX_PAYLOAD (1u << 20) /* no record is larger; protects readers from garbage sizes */

typedef struct wlcap_file_header {
    char magic[WLCAP_MAGIC_LEN];
    uint32_t version;
    uint32_t header_size;
    uint64_t pid;
    uint64_t start_ns;
} wlcap_file_header;
static_assert(sizeof(wlcap_file_header) == 32, "wlcap header layout");

typedef struct wlcap_record_header {
    uint16_t type;
    uint16_t flags;
    uint32_t size;
} wlcap_record_header;
static_assert(sizeof(wlcap_record_header) == 8, "wlcap record header layout");

enum wlcap_type {
    WLCAP_STRING = 1,
    WLCAP_PROCESS = 2,
    WLCAP_DEVICE = 3,
    WLCAP_KERNEL = 4,
    WLCAP_MEMCPY = 5,
    WLCAP_MEMSET = 6,
    WLCAP_API = 7,
    WLCAP_SYNC = 8,
    WLCAP_MARKER = 9,
    WLCAP_EXTCORR = 10,
    WLCAP_SCOPE = 11,
    WLCAP_THREAD = 12,
    WLCAP_DROPPED = 13,
    WLCAP_END = 14,
    WLCAP_API_NAME = 15,
    WLCAP_OCC_CHECK = 16,
    WLCAP_ANNOTATION = 17,
    /* 18 is reserved (another record family) */
    WLCAP_METRIC_DEF = 19,
    WLCAP_METRIC_RANGE = 20,
    WLCAP_DEVICE_SAMPLE = 21,
    WLCAP_PM_METRIC_DEF = 22,
    WLCAP_PM_SAMPLE = 23,
    WLCAP_STALL_REASON = 24,
    WLCAP_KERNEL_STALL = 25,
    WLCAP_CAPTURE_RANGE = 26,
    WLCAP_STAT = 27,
    WLCAP_ATTR = 28,
    WLCAP_METRIC_OWNER = 29,
    WLCAP_TYPE_COUNT
};

/* STRING: u32 id, u32 len, then len bytes (no terminator). */
typedef struct wlcap_string {
    uint32_t id;
    uint32_t len;
} wlcap_string;

typedef struct wlcap_process {
    uint32_t pid, ppid;
    uint64_t start_ns;        /* CLOCK_REALTIME ns when the recorder started */
    int32_t rank, local_rank, world_size, ompi_rank, slurm_procid; /* -1 when unset */
    uint32_t hostname_str, cmdline_str, exe_str;
    uint32_t cupti_version;
    uint32_t record_mask;     /* WL_RECORD_* that were enabled */
    uint32_t buffer_size;     /* activity buffer bytes */
    uint32_t pad;
} wlcap_process;
static_assert(sizeof(wlcap_process) == 64, "wlcap_process layout");

typedef struct wlcap_device {
    uint32_t device_id;       /* CUDA ordinal (= CUPTI deviceId) */
    uint32_t name_str, pci_str;
    uint8_t uuid[16];
    int32_t cc_major, cc_minor;
    int32_t sm_count, warp_size;
    int32_t max_threads_per_block, max_threads_per_sm, max_blocks_per_sm;
    int32_t regs_per_sm, regs_per_block;
    int32_t smem_per_sm, smem_per_block, smem_per_block_optin, reserved_smem_per_block;
    int32_t l2_bytes, core_clock_khz, mem_clock_khz, mem_bus_width_bits;
    int32_t max_grid_x, max_grid_y, max_grid_z;
    int32_t async_engines, ecc_enabled, concurrent_kernels;
    uint32_t pad;
    uint64_t total_mem_bytes;
} wlcap_device;
static_assert(sizeof(wlcap_device) == 136, "wlcap_device layout");

typedef struct wlcap_kernel {
    uint64_t start, end, queued, submitted, completed; /* ns; 0 = not recorded */
    uint64_t graph_node_id;
    uint64_t local_mem_total;
    int64_t grid_id;
    uint32_t correlation_id, device_id, context_id, stream_id, graph_id;
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    uint32_t cluster_x, cluster_y, cluster_z, cluster_sched_policy;
    int32_t static_smem, dynamic_smem;
    uint32_t smem_executed, smem_limit_config, local_mem_per_thread;
    uint32_t max_potential_cluster_size, max_active_clusters;
    uint32_t name_str;
    uint16_t registers_per_thread;
    uint8_t launch_type, is_device_launched;
    uint8_t cache_config_requested, cache_config_executed, smem_config;
    uint8_t carveout_requested; /* 0xff = not requested, else percent */
} wlcap_kernel;
static_assert(sizeof(wlcap_kernel) == 168, "wlcap_kernel layout");

typedef struct wlcap_memcpy {
    uint64_t bytes, start, end, graph_node_id;
    uint32_t device_id, context_id, stream_id, correlation_id;
    uint32_t graph_id, src_device, dst_device;
    uint8_t copy_kind, src_kind, dst_kind, flags; /* CUPTI enum values */
    uint8_t is_peer;
    uint8_t pad[7];
} wlcap_memcpy;
static_assert(sizeof(wlcap_memcpy) == 72, "wlcap_memcpy layout");

typedef struct wlcap_memset {
    uint64_t bytes, start, end, graph_node_id;
    uint32_t device_id, context_id, stream_id, correlation_id;
    uint32_t graph_id, value;
    uint16_t memory_kind, flags;
    uint32_t pad;
} wlcap_memset;
static_assert(sizeof(wlcap_memset) == 64, "wlcap_memset layout");

enum wlcap_api_domain { WLCAP_API_DRIVER = 1, WLCAP_API_RUNTIME = 2 };

typedef struct wlcap_api {
    uint64_t start, end;
    uint32_t cbid, tid, correlation_id, return_value;
    uint8_t domain;
    uint8_t pad[7];
} wlcap_api;
static_assert(sizeof(wlcap_api) == 40, "wlcap_api layout");

typedef struct wlcap_sync {
    uint64_t start, end, event_sync_id;
    uint32_t type, correlation_id, context_id, stream_id, event_id, return_value;
} wlcap_sync;
static_assert(sizeof(wlcap_sync) == 48, "wlcap_sync layout");

enum wlcap_marker_kind { WLCAP_MARK_INSTANT = 1, WLCAP_MARK_START = 2, WLCAP_MARK_END = 3 };

typedef struct wlcap_marker {
    uint64_t timestamp;
    uint32_t id, kind, tid, name_str, domain_str;
    uint32_t pad;
} wlcap_marker;
static_assert(sizeof(wlcap_marker) == 32, "wlcap_marker layout");

typedef struct wlcap_extcorr {
    uint64_t external_id;
    uint32_t correlation_id, kind;
} wlcap_extcorr;
static_assert(sizeof(wlcap_extcorr) == 16, "wlcap_extcorr layout");

enum wlcap_scope_kind { WLCAP_SCOPE_BEGIN = 1, WLCAP_SCOPE_END = 2 };

typedef struct wlcap_scope {
    uint64_t timestamp, scope_id, parent_id;
    uint32_t tid, kind, name_str, truncated;
} wlcap_scope;
static_assert(sizeof(wlcap_scope) == 40, "wlcap_scope layout");

enum wlcap_thread_source { WLCAP_THREAD_OS = 1, WLCAP_THREAD_API = 2 };

typedef struct wlcap_thread {
    uint32_t tid, name_str, source, pad;
} wlcap_thread;
static_assert(sizeof(wlcap_thread) == 16, "wlcap_thread layout");

/* Where records were lost. CUPTI: its own count of dropped activity records; BUFFER: CUPTI asked
 * for a buffer while the pool was at its limit; EVENTS: the scope/thread event ring was full;
 * API: the API-call ring was full; METRICS: range-profiler values lost (metric ring full, or
 * ranges CUPTI dropped); INKERNEL: registered in-kernel buffers that did not reach a side file;
 * SAMPLES: NVML device samples lost (the sample ring was full); PMSAMPLING: CUPTI PM samples lost
 * (context_id = the device; stream_id 0: the sample ring was full, 1: missing from the hardware's
 * sequence, i.e. gaps between consecutive windows: hardware buffer overflow or decode too late). */
enum wlcap_drop_source {
    WLCAP_DROP_CUPTI = 1, WLCAP_DROP_BUFFER = 2, WLCAP_DROP_EVENTS = 3, WLCAP_DROP_API = 4, WLCAP_DROP_METRICS = 5,
    WLCAP_DROP_INKERNEL = 6, /* in-kernel buffers refused, not copied or never collected */
    WLCAP_DROP_SAMPLES = 7,  /* device samples lost: the sample ring was full */
    WLCAP_DROP_PMSAMPLING = 8, /* PM samples lost (see above) */
    WLCAP_DROP_PCSAMPLING = 9 /* PC sampling: stream_id says what (WLCAP_PCS_LOST_*) */
};
/* WLCAP_DROP_PCSAMPLING detail, carried in wlcap_dropped.stream_id: SAMPLES counts warp samples the
 * hardware or CUPTI dropped, RECORDS kernel-stall records the recorder's ring could not take,
 * OVERFLOWS the times CUPTI reported its hardware buffer full (samples lost, count unknown). */
enum wlcap_pcs_lost { WLCAP_PCS_LOST_SAMPLES = 0, WLCAP_PCS_LOST_RECORDS = 1, WLCAP_PCS_LOST_OVERFLOWS = 2 };
/* WLCAP_DROP_METRICS detail, in wlcap_dropped.stream_id: LOST counts ranges lost (dropped by CUPTI,
 * or the metric ring was full), UNTIED ranges kept but not tied to one activity, NO_RANGE profiled
 * kernel launches that got no range of their own. */
enum wlcap_metric_drop { WLCAP_METRIC_LOST = 0, WLCAP_METRIC_UNTIED = 1, WLCAP_METRIC_NO_RANGE = 2 };

typedef struct wlcap_dropped {
    uint64_t count;
    uint32_t source, context_id, stream_id, pad;
} wlcap_dropped;
static_assert(sizeof(wlcap_dropped) == 24, "wlcap_dropped layout");

typedef struct wlcap_end {
    uint64_t end_ns;
    uint64_t buffers_completed, records_written, bytes_written;
    uint64_t buffers_allocated, peak_buffers_in_use;
    uint32_t reason; /* WLCAP_END_* */
    uint32_t pad;
} wlcap_end;
static_assert(sizeof(wlcap_end) == 56, "wlcap_end layout");

/* STAT: one figure about the recorder itself (its buffers, queues and memory), written before
 * END; name_str names it (docs/capture-format.md lists them). A reader keeps figures whose names
 * it does not know. */
typedef struct wlcap_stat {
    uint32_t name_str, pad;
    uint64_t value;
} wlcap_stat;
static_assert(sizeof(wlcap_stat) == 16, "wlcap_stat layout");

/* API_NAME: the name of a recorded API callback id, so readers need no CUPTI. */
typedef struct wlcap_api_name {
    uint32_t domain, cbid, name_str, pad;
} wlcap_api_name;
static_assert(sizeof(wlcap_api_name) == 16, "wlcap_api_name layout");

/* OCC_CHECK (`warplens run --check-occupancy`): the driver's own occupancy answer for the first
 * launch of each distinct (function, block size, dynamic shared memory), to validate warplens'
 * calculator against NVIDIA's on real kernels. */
typedef struct wlcap_occ_check {
    uint32_t correlation_id, block_size, dynamic_smem;
    int32_t driver_active_blocks; /* cuOccupancyMaxActiveBlocksPerMultiprocessor */
    int32_t function_registers;   /* the function's compiled count; -1 when not readable */
    uint32_t status;              /* CUresult of the occupancy query */
    uint32_t pad[2];
} wlcap_occ_check;
static_assert(sizeof(wlcap_occ_check) == 32, "wlcap_occ_check layout");

/* ANNOTATION: FLOPs and bytes the program declared for a launch (target KERNEL: by correlation
 * id) or a scope (target SCOPE: by scope id); precision = enum warplens_precision. */
enum wlcap_annotation_target { WLCAP_ANNOTATE_KERNEL = 1, WLCAP_ANNOTATE_SCOPE = 2 };
typedef struct wlcap_annotation {
    double flops, bytes;
    uint64_t scope_id;
    uint32_t target, correlation_id, tid, precision;
} wlcap_annotation;
static_assert(sizeof(wlcap_annotation) == 40, "wlcap_annotation layout");

/* METRIC_DEF (`warplens run --metrics`): one hardware metric of a device's range-profiler
 * configuration. metric_id indexes the values of METRIC_RANGE records of the same process;
 * num_passes is the replay passes the whole configuration needs on that device. */
enum wlcap_metric_type { WLCAP_METRIC_COUNTER = 0, WLCAP_METRIC_RATIO = 1, WLCAP_METRIC_THROUGHPUT = 2 };
typedef struct wlcap_metric_def {
    uint32_t metric_id, name_str, unit_str, metric_type;
    uint32_t device_id, num_passes;
    uint32_t replay; /* wlcap_metric_replay; 0 in captures made before it was recorded */
    uint32_t pad;
} wlcap_metric_def;
/* How the values were collected: kernel replay (each kernel re-run once per pass; CUPTI then gives
 * kernel records no timestamps) or, for a one-pass set, as the kernels ran. */
enum wlcap_metric_replay { WLCAP_METRIC_REPLAY_UNKNOWN = 0, WLCAP_METRIC_REPLAY_KERNEL = 1, WLCAP_METRIC_REPLAY_NONE = 2 };
static_assert(sizeof(wlcap_metric_def) == 32, "wlcap_metric_def layout");

/* METRIC_RANGE: up to WLCAP_METRIC_CHUNK values of one profiled range (auto range = one kernel
 * launch), metrics first_metric .. first_metric+count-1; a range with more metrics takes several
 * records with the same range_index. correlation_id is the launch's (0: the range could not be
 * attributed to one launch, e.g. a batch whose range count differed from its launch count). */
#define WLCAP_METRIC_CHUNK 8
typedef struct wlcap_metric_range {
    uint64_t range_index;     /* per device, counting from 0 across re-initialised counter images */
    uint32_t correlation_id, device_id;
    uint32_t first_metric, count;
    double values[WLCAP_METRIC_CHUNK];
} wlcap_metric_range;
static_assert(sizeof(wlcap_metric_range) == 88, "wlcap_metric_range layout");

/* METRIC_OWNER: the GPU activity one profiled range measured, written once per range next to its
 * METRIC_RANGE records (same device_id and range_index). Captures without it (older recorders)
 * read each range as the kernel of its correlation id. kind says what the range measured; match
 * how that is known (docs/recorder.md, "Identity"); part/parts place it among the ranges one call
 * produced (a copy or a graph launch may produce several). */
enum wlcap_metric_owner_kind {
    WLCAP_OWNER_UNKNOWN = 0,      /* not tied to one activity (counted); correlation_id may name the call */
    WLCAP_OWNER_KERNEL = 1,       /* the kernel the launch ran */
    WLCAP_OWNER_MEMCPY = 2,       /* a copy call */
    WLCAP_OWNER_MEMSET = 3,       /* a set call */
    WLCAP_OWNER_GRAPH_NODE = 4,   /* part `part` of a graph launch's ranges, in the GPU's order */
    WLCAP_OWNER_GRAPH_LAUNCH = 5, /* a whole graph launch as one range */
    WLCAP_OWNER_INTERNAL = 6,     /* work the driver ran inside the launch call besides the kernel */
    WLCAP_OWNER_KIND_COUNT
};
enum wlcap_metric_match {
    WLCAP_MATCH_NONE = 0,      /* not matched */
    WLCAP_MATCH_ORDER = 1,     /* range i of a batch whose range and call counts agreed is call i */
    WLCAP_MATCH_ISOLATED = 2,  /* the call was profiled in a batch of its own */
    WLCAP_MATCH_SIGNATURE = 3, /* placed by its launched-CTA count (sm__ctas_launched.sum = grid size) */
    WLCAP_MATCH_COUNT
};
typedef struct wlcap_metric_owner {
    uint64_t range_index;
    uint32_t device_id, correlation_id; /* correlation_id: the call's (0 when not known) */
    uint32_t kind, match;               /* wlcap_metric_owner_kind, wlcap_metric_match */
    uint32_t part, parts;               /* 0-based place among the call's ranges, their number */
} wlcap_metric_owner;
static_assert(sizeof(wlcap_metric_owner) == 32, "wlcap_metric_owner layout");

/* <pid>.wlprogress, a side file next to <pid>.wlcap while `--metrics` runs: the recorder's running
 * counts, rewritten in place about every 250 ms so that `warplens run` can show progress. Not part
 * of the capture; a reader checks magic and size and treats a torn read as "no news". */
#define WLCAP_PROGRESS_MAGIC 0x31475250u /* "PRG1" */
typedef struct wlcap_progress {
    uint32_t magic, size;
    uint64_t updated_ns;    /* the recorder's CLOCK_MONOTONIC */
    uint64_t calls_seen;    /* calls to profile that reached the profiler (some may wait for it) */
    uint64_t calls_done;    /* of those, calls that returned (kernel replay: measured by then) */
    uint64_t ranges;        /* ranges decoded */
    uint64_t kernels, copies, sets, graphs; /* ranges tied: kernels (graph nodes included), copies,
                                             * sets, whole graph launches */
    uint64_t unknown;       /* ranges not tied to one activity */
    uint64_t left_out;      /* kernel launches the filters left out */
    uint32_t passes, replay; /* the most passes of any device; wlcap_metric_replay */
} wlcap_progress;
static_assert(sizeof(wlcap_progress) == 96, "wlcap_progress layout");

/* DEVICE_SAMPLE (`warplens run --nvml-interval`): one NVML reading of a CUDA device, taken by the
 * recorder's sampler thread. The window is the time since the previous sample of that device (the
 * first one starts when the device was matched); utilisation is NVML's own average over its last
 * period. A value is meaningful only when its WLCAP_SAMPLE_* bit is set in `valid`. */
enum wlcap_sample_valid {
    WLCAP_SAMPLE_UTIL = 1u << 0,      /* gpu_util_pct and mem_util_pct */
    WLCAP_SAMPLE_SM_CLOCK = 1u << 1,
    WLCAP_SAMPLE_MEM_CLOCK = 1u << 2,
    WLCAP_SAMPLE_POWER = 1u << 3,
    WLCAP_SAMPLE_TEMP = 1u << 4,
    WLCAP_SAMPLE_MEM_USED = 1u << 5,
    WLCAP_SAMPLE_ENERGY = 1u << 6
};
typedef struct wlcap_device_sample {
    uint64_t timestamp;               /* CLOCK_REALTIME ns when the reading was taken */
    uint64_t window_start;            /* previous sample of this device (ns) */
    uint64_t memory_used_bytes;
    uint64_t energy_mj;               /* total energy since the driver loaded, millijoules */
    uint32_t device_id;               /* CUDA ordinal, as in DEVICE records */
    uint32_t valid;                   /* WLCAP_SAMPLE_* */
    uint32_t gpu_util_pct, mem_util_pct;
    uint32_t sm_clock_mhz, mem_clock_mhz;
    uint32_t power_mw, temperature_c;
} wlcap_device_sample;
static_assert(sizeof(wlcap_device_sample) == 64, "wlcap_device_sample layout");

/* PM_METRIC_DEF (`warplens run --pm-sampling`): metric_index names the values of the device's
 * PM_SAMPLE records (indices are per device: a name the chip does not know is left out). A record
 * with metric_index WLCAP_PM_STATUS is a status line of the device instead: name_str is its text,
 * kind WLCAP_PM_ON (sampling runs; e.g. the configuration, or the final counts at exit) or
 * WLCAP_PM_OFF (why sampling is off there). */
#define WLCAP_PM_STATUS UINT32_MAX
enum wlcap_pm_status { WLCAP_PM_ON = 0, WLCAP_PM_OFF = 1 };
typedef struct wlcap_pm_metric_def {
    uint64_t interval_ns;             /* sampling interval configured on the device */
    uint32_t metric_index, device_id;
    uint32_t name_str, unit_str;      /* CUPTI metric name and unit (status: the text, 0) */
    uint32_t kind;                    /* status records: WLCAP_PM_ON / WLCAP_PM_OFF; metrics: CUPTI's
                                       * metric type (0 counter, 1 ratio, 2 throughput) */
    uint32_t pad;
} wlcap_pm_metric_def;
static_assert(sizeof(wlcap_pm_metric_def) == 32, "wlcap_pm_metric_def layout");

/* PM_SAMPLE: up to WLCAP_PM_CHUNK values of one device-wide sample window [start, end] (session
 * clock, ns), metrics first_metric .. first_metric+count-1; a sample with more metrics takes
 * several records with the same sample_index. NaN: CUPTI gave no value. */
#define WLCAP_PM_CHUNK 8
typedef struct wlcap_pm_sample {
    uint64_t start, end;
    uint64_t sample_index;            /* per device, from 0, in time order */
    uint32_t device_id, first_metric, count, pad;
    double values[WLCAP_PM_CHUNK];
} wlcap_pm_sample;
static_assert(sizeof(wlcap_pm_sample) == 104, "wlcap_pm_sample layout");
/* STALL_REASON (`warplens run --stalls`): the name CUPTI's PC sampling gives a stall-reason index on
 * one device (indices are per device: GPUs of different architectures number them differently).
 * reason_index WLCAP_STALL_STATUS is not a reason: name_str then says why PC sampling is off on
 * that device. period_log2: the sampling period on that device, 2^period_log2 cycles. */
#define WLCAP_STALL_STATUS 0xFFFFFFFFu
typedef struct wlcap_stall_reason {
    uint32_t device_id, reason_index, name_str, period_log2;
} wlcap_stall_reason;
static_assert(sizeof(wlcap_stall_reason) == 16, "wlcap_stall_reason layout");

/* KERNEL_STALL: warp samples of one kernel launch (CUPTI's correlation id, as in KERNEL records)
 * with one stall reason (an index of that device's STALL_REASON records). A launch's samples may
 * arrive in several records with the same key: readers add them up. */
typedef struct wlcap_kernel_stall {
    uint32_t correlation_id, device_id, reason_index, pad;
    uint64_t samples;
} wlcap_kernel_stall;
static_assert(sizeof(wlcap_kernel_stall) == 24, "wlcap_kernel_stall layout");

/* CAPTURE_RANGE (`warplens run --capture-range profiler-api`): tracing is limited to the spans between
 * cudaProfilerStart and cudaProfilerStop. MODE, once at the start: this process records only inside
 * such spans; START / STOP: a span began (the first start after a stop) or ended, by thread tid. */
enum wlcap_capture_kind { WLCAP_CAPTURE_MODE = 0, WLCAP_CAPTURE_START = 1, WLCAP_CAPTURE_STOP = 2 };
typedef struct wlcap_capture_range {
    uint64_t timestamp;
    uint32_t kind, tid;
} wlcap_capture_range;
static_assert(sizeof(wlcap_capture_range) == 16, "wlcap_capture_range layout");

/* ATTR: a user attribute. TIER: thread tid's tier (string str; 0: cleared) from timestamp on;
 * tid 0 is the process's default (WARPLENS_TIER, timestamp 0). SCOPE_THREAD: the application
 * thread id `value` (a Java virtual thread id, a task id) attached to scope scope_id. */
enum wlcap_attr_kind { WLCAP_ATTR_TIER = 1, WLCAP_ATTR_SCOPE_THREAD = 2 };
typedef struct wlcap_attr {
    uint64_t timestamp, scope_id, value;
    uint32_t kind, tid, str, pad;
} wlcap_attr;
static_assert(sizeof(wlcap_attr) == 40, "wlcap_attr layout");

enum wlcap_end_reason { WLCAP_END_EXIT = 1, WLCAP_END_PROFILER_STOP = 2, WLCAP_END_SIGNAL = 3 /* SIGTERM/INT/HUP, --metrics */ };

/* What the recorder was asked to record (WARPLENS_RECORD / `warplens run --record`). */
enum wl_record_mask {
    WL_RECORD_KERNELS = 1u << 0,
    WL_RECORD_MEMCPY = 1u << 1,
    WL_RECORD_API = 1u << 2,
    WL_RECORD_NVTX = 1u << 3,
    WL_RECORD_SYNC = 1u << 4,
    WL_RECORD_ALL = 0x1f
};

/* `warplens run --stalls [--pc-period N]` (WARPLENS_PC_PERIOD): one warp sample per SM every 2^N
 * cycles; CUPTI accepts 5..31. Default 2^14 = 16,384 cycles, ~9 us at an H100's 1.755 GHz: a 100 us
 * kernel on 132 SMs still gets ~1,400 samples (stall shares to a few percent; a name's calls add up),
 * while the whole GPU produces ~14 M samples/s, a stream CUPTI's hardware buffer (512 MB, drained by
 * its worker threads every 100 ms) should hold; each step down doubles CUPTI's decoding work and
 * the risk of dropped samples, for kernels too short to get enough samples otherwise. */
#define WL_PC_PERIOD_MIN 5
#define WL_PC_PERIOD_MAX 31
#define WL_PC_PERIOD_DEFAULT 14
/* Stall-reason indices a capture may use (CUPTI numbers about 40 reasons from 0 on sm_90). */
#define WLCAP_STALL_INDEX_MAX 4096u

/* Parses "kernels,memcpy,api,nvtx,sync" or "all" into a mask; returns -1 and names the bad word. */
int wl_record_mask_parse(const char *spec, uint32_t *mask, char *bad, int bad_size);
/* Expected payload size of a fixed-size record type, 0 for STRING (variable) or unknown types. */
uint32_t wlcap_payload_size(uint16_t type);
const char *wlcap_type_name(uint16_t type);

#endif
