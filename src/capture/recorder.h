/* Internals of the injected recorder, shared by the files of src/capture/. The recorder's rule:
 * application threads only hand over pre-allocated memory and push fixed-size events; everything
 * that allocates, formats or writes happens on the recorder's own writer thread. */
#ifndef WARPLENS_CAPTURE_RECORDER_H
#define WARPLENS_CAPTURE_RECORDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "capfile/capfile.h"
#include "capture/mpsc_ring.h"

/* Default NVML sampling period: NVML's utilisation is itself an average over 1/6 s to 1 s and
 * power a ~1 s average, so sampling faster adds records, not information (docs/capture-format.md). */
#define WL_NVML_DEFAULT_INTERVAL_MS 100u

typedef struct wl_config {
    uint32_t record_mask;     /* WL_RECORD_* */
    size_t buffer_size;       /* bytes per CUPTI activity buffer */
    unsigned max_buffers;     /* pool limit: buffer_size * max_buffers is the memory bound */
    int per_thread_buffers;   /* CUPTI's per-thread activity buffers (default 0: one shared queue) */
    int quiet;
    unsigned nvml_interval_ms; /* 0 = no NVML sampling */
    int capture_range;         /* 1: trace only between cudaProfilerStart and cudaProfilerStop */
    char nvml_library[512];    /* "" = libnvidia-ml.so.1 */
    char capture_path[4096];
} wl_config;

/* config.c: reads WARPLENS_* variables. Returns 0, or -1 after logging what was wrong (or, without
 * a word, when WARPLENS_RANKS leaves this process's rank out). */
int wl_config_from_env(wl_config *cfg);

/* buffer_pool.c: CUPTI activity buffers. get/complete may run on application threads and only
 * take a short lock (get maps a fresh buffer when the free list is empty, within the budget);
 * refill/recycle run on the writer thread. */
int wl_pool_init(size_t buffer_size, unsigned initial, unsigned max);
uint8_t *wl_pool_get(void);                       /* NULL only past the budget (counted) */
size_t wl_pool_get_buffer_size(void);
void wl_pool_complete(uint8_t *buf, size_t valid); /* CUPTI finished filling buf */
int wl_pool_next_completed(uint8_t **buf, size_t *valid);
void wl_pool_recycle(uint8_t *buf, size_t valid); /* zeroes what CUPTI wrote, back to the free list */
void wl_pool_refill(void);                        /* spares mapped, long-unused buffers unmapped */
void wl_pool_wait(unsigned timeout_ms);           /* writer sleeps until work or timeout */
void wl_pool_wake(void);
typedef struct wl_pool_stats {
    uint64_t requests, completed, refused, allocated, peak_in_use, peak_allocated, on_demand, trimmed;
    uint64_t buffer_size;
} wl_pool_stats;
wl_pool_stats wl_pool_get_stats(void);

/* Spill budgets of the rings (mpsc_ring.h): what each may allocate while the writer is behind,
 * before an element is dropped. Part of the memory bound (docs/recorder.md). */
#define WL_SPILL_API (64u << 20)     /* API calls: ~1.2 M calls beyond the ring's 65,536 */
#define WL_SPILL_EVENTS (8u << 20)   /* scopes, thread names, capture-range switches */
#define WL_SPILL_SAMPLES (16u << 20) /* NVML, PM windows, metric ranges, stall sums (recorder threads) */

/* event_ring.c: fixed-size events from application threads (scopes, thread names). */
enum wl_event_kind {
    WL_EV_SCOPE_BEGIN = 1, WL_EV_SCOPE_END, WL_EV_THREAD_NAME, WL_EV_ANNOTATE_SCOPE,
    WL_EV_CAPTURE_START, WL_EV_CAPTURE_STOP, /* --capture-range: tracing switched on / off */
    WL_EV_TIER,        /* the thread's tier from now on (name; empty: cleared) */
    WL_EV_SCOPE_THREAD /* application thread id `parent` attached to scope `id` */
};
#define WL_EVENT_NAME_MAX 96
typedef struct wl_event {
    uint64_t timestamp, id, parent;
    double flops, bytes;              /* WL_EV_ANNOTATE_SCOPE */
    uint32_t tid, kind;
    uint32_t truncated, name_len;
    uint32_t precision, pad;
    char name[WL_EVENT_NAME_MAX];
} wl_event;
extern wl_mpsc wl_event_ring;                     /* wl_event, from the public API */

/* api_callbacks.c: CUDA API calls at the CPU-GPU boundary, recorded from CUPTI callbacks into
 * wl_api_ring (see the file for why callbacks rather than API activity records). */
/* kind API: one call. kind OCC_CHECK (occupancy_check.c): start = driver's active blocks,
 * end = function registers, cbid = block size, tid = dynamic shared memory, return = CUresult. */
enum wl_api_event_kind { WL_API_EVENT_CALL = 0, WL_API_EVENT_OCC_CHECK = 1, WL_API_EVENT_ANNOTATION = 2 };
typedef struct wl_api_event {
    uint64_t start, end;
    uint32_t cbid, tid, correlation_id, return_value;
    uint32_t domain, kind;
} wl_api_event;
extern wl_mpsc wl_api_ring;
int wl_api_callbacks_select(uint32_t record_mask);  /* chooses the API ids; how many (0: said why) */
void wl_api_callbacks_set(void *subscriber, int on); /* their callbacks on or off */
void wl_api_callback(uint32_t domain, uint32_t cbid, const void *cbdata);
void wl_api_write_names(void);
void wl_occ_check_init(void);                     /* reads WARPLENS_CHECK_OCCUPANCY */
void wl_occ_check_launch(uint32_t cbid, const void *cbdata); /* launch callback, at exit */

/* capture_writer.c: the capture file, written by the writer thread only. */
int wl_capw_open(const char *path, uint64_t pid, uint64_t start_ns);
void wl_capw_record(uint16_t type, const void *payload, uint32_t size);
uint32_t wl_capw_string(const char *s);           /* interned id; 0 for NULL */
uint32_t wl_capw_string_n(const char *s, size_t n);
void wl_capw_flush(void);
int wl_capw_close(void);
uint64_t wl_capw_records(void);
uint64_t wl_capw_bytes(void);

/* activity_decode.c: CUPTI activity buffer -> capture records (writer thread). */
void wl_decode_activity_buffer(uint8_t *buf, size_t valid);
void wl_decode_report_dropped(void);

/* threads.c: names of the OS threads seen in records (writer thread). */
void wl_threads_seen(uint32_t tid);
void wl_threads_refresh_all(void);
uint32_t wl_current_tid(void);
/* The calling thread's state that a launch callback reads, in one thread-local block (threads.c):
 * in a library loaded at run time every thread-local is found through a __tls_get_addr call, so a
 * launch looks up one block instead of one variable per module. */
typedef struct wl_thread_locals {
    uint32_t tid;                 /* threads.c: the thread's id, 0 until wl_current_tid() */
    int internal_calls;           /* inkernel_capture.c: > 0 while the recorder itself calls CUDA */
    int inkernel_pending;         /* inkernel_capture.c: slot + 1 of a buffer waiting for its launch */
    uint32_t last_internal_corr;  /* api_callbacks.c: correlation id of the recorder's last own call */
    uint32_t annotation_set;      /* api_bridge.c: warplens_annotate_next_launch's counts wait below */
    uint32_t annotation_precision;
    double annotation_flops, annotation_bytes;
} wl_thread_locals;
extern _Thread_local wl_thread_locals wl_tls;
/* Starts one of the recorder's own threads, named, with every signal blocked (the application's
 * signals are not its business); pthread_create's result. */
int wl_thread_start(pthread_t *thread, const char *name, void *(*main_fn)(void *));

/* device_info.c: attributes of devices whose contexts were created. */
void wl_devices_mark(uint32_t device_id);         /* any thread */
void wl_devices_write_pending(void);              /* writer thread */

/* nvml_sampler.c: device samples from the sampler's own thread (no CUDA calls). */
int wl_nvml_start(unsigned interval_ms, const char *library); /* 0 ms: off; failures logged */
void wl_nvml_add_device(uint32_t device_id, const char *pci_bus_id); /* any recorder thread */
void wl_nvml_write_pending(void);                 /* writer thread: samples -> records */
void wl_nvml_stop(void);                          /* takes a last sample, joins the thread */

/* pm_sampler.c: CUPTI PM sampling (WARPLENS_PM_SAMPLING) on the sampler's own thread. */
int wl_pm_start(void);                            /* reads the environment; failures are logged */
void wl_pm_context_created(uint32_t device_id);   /* resource callback (any thread) */
void wl_pm_context_destroying(uint32_t device_id);/* resource callback: waits for the last decode */
void wl_pm_write_pending(void);                   /* writer thread: definitions, samples, losses */
void wl_pm_stop(void);                            /* at exit: stops, decodes the rest, joins */

/* process_info.c */
void wl_process_write(const wl_config *cfg, uint64_t start_ns);

/* writer_thread.c */
int wl_writer_start(void);
void wl_writer_stop(uint32_t end_reason);         /* drains, writes END, closes the file */
void wl_writer_request_flush(void);               /* any thread: a CUPTI flush on the writer's next turn */
void wl_writer_set_context_ids(void);

/* cupti_setup.c: subscribe, enable kinds, callbacks. */
int wl_cupti_start(const wl_config *cfg);
void wl_cupti_flush(int forced);
void wl_cupti_stop_api(void);                     /* before the recorder's own sync at exit */
void wl_cupti_stop(void);
void wl_cupti_write_api_names(void);              /* writer thread: cbid -> name table */
void wl_cupti_enable_extcorr(void);               /* idempotent; at the first scope */
uint64_t wl_cupti_now_ns(void);                   /* CUPTI's clock (CLOCK_REALTIME if it fails) */
int wl_scopes_used(void);                         /* api_bridge.c: a scope was opened already */

/* range_profiler.c, metric_calls.c: hardware metrics per kernel, copy and set (WARPLENS_METRICS).
 * init reads the environment (1 when metrics are on; the progress side file goes next to the
 * capture); call runs in the driver callbacks of launches, graph launches, copies and sets (entry
 * and exit); drain runs on the writer thread; stop and context_destroyed decode what is left. */
int wl_metrics_init(const char *capture_path);
int wl_metrics_enabled(void);
int wl_metrics_is_launch(uint32_t cbid);          /* kernel and graph launches */
int wl_metrics_is_call(uint32_t cbid);            /* launches, copies and sets */
void wl_metrics_call(uint32_t cbid, const void *cbdata);
void wl_metrics_context_destroyed(void *ctx);
void wl_metrics_stop(void);
void wl_metrics_drain(void);
int wl_metrics_forced_flush(void);                /* the writer's periodic CUPTI flush is to be forced */
int wl_api_callbacks_has(uint32_t cbid);        /* api_callbacks.c: the API recorder hooked cbid */

/* pc_sampling.c: warp stall reasons per kernel from CUPTI PC sampling (WARPLENS_PC_SAMPLING). init
 * reads the environment (1 when on; refused while metrics are on); launch runs in the driver launch
 * callbacks (set-up at a context's first launch entry, collection at every launch exit); drain
 * runs on the writer thread; stop and context_destroyed collect what is left and disable. */
int wl_stalls_init(void);
int wl_stalls_enabled(void);
void wl_stalls_launch(uint32_t cbid, const void *cbdata);
void wl_stalls_context_destroyed(void *ctx);
void wl_stalls_stop(void);
void wl_stalls_drain(void);

/* pc_names.c: CUPTI's PC-record function names, each allocation freed exactly once. A batch is
 * one cuptiPCSamplingGetData result; its set of copies to free is sized for max_records. */
typedef struct wl_pc_names_batch {
    char **fresh;
    uint32_t cap, used;
} wl_pc_names_batch;
int wl_pc_names_batch_init(wl_pc_names_batch *b, uint32_t max_records);
void wl_pc_names_note(wl_pc_names_batch *b, uint64_t cubin_crc, uint32_t function_index, char *name);
void wl_pc_names_end_batch(wl_pc_names_batch *b);  /* frees the batch's fresh copies */
void wl_pc_names_batch_free(wl_pc_names_batch *b);
void wl_pc_names_release_all(void);                /* the kept names, after PC sampling ended */
void wl_pc_names_stats(unsigned *kept, int *fresh_seen); /* for WARPLENS_PC_DEBUG */

/* signal_keep.c (--metrics): SIGTERM, SIGINT and SIGHUP left at their default run finish() on the
 * recorder's own thread, then end the process as the signal would have. */
void wl_signals_keep(void (*finish)(void));
void wl_signals_forked_child(void);

/* recorder state */
enum wl_state { WL_STATE_OFF = 0, WL_STATE_RUNNING, WL_STATE_STOPPED, WL_STATE_FORKED_CHILD };
extern atomic_int wl_state;

#endif
