/* warplens explicit timers: a program's own timing summary, without a profiler attached.
 *
 * Link with -lwarplens. GPU intervals are timed with CUDA events recorded on the caller's stream
 * (never synchronising); host intervals with CLOCK_REALTIME. After the program has synchronised,
 * wl_timer_collect() reads every finished interval without blocking, and wl_timer_print() prints a
 * summary by category. Streams are passed as `void *` (a cudaStream_t, CUstream or hipStream_t; NULL
 * is the default stream), so this header needs no CUDA headers and works from C, C++ and CUDA.
 *
 *   wl_timer_span_begin(WL_TIMER_RUNTIME, stream, "gpu_workload");
 *   for (int c = 0; c < n; c++) {
 *       wl_timer_gpu_begin(WL_TIMER_RUNTIME, stream, "h2d_chunk_%d", c);
 *       cudaMemcpyAsync(..., stream);
 *       wl_timer_gpu_end(WL_TIMER_RUNTIME, stream, "h2d_chunk_%d", c);
 *       ...
 *   }
 *   wl_timer_span_end(WL_TIMER_RUNTIME, stream, "gpu_workload");
 *   cudaStreamSynchronize(stream);
 *   wl_timer_print(stderr, -1);
 *
 * Without a CUDA driver or device the same calls time GPU intervals with host timestamps and mark
 * them host-timed. At verbosity WL_TIMER_NONE every call returns after one atomic load and nothing
 * is created or recorded. All calls are thread-safe. Details: docs/timer.md. */
#ifndef WARPLENS_TIMER_H
#define WARPLENS_TIMER_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WL_TIMER_API __attribute__((visibility("default")))
#define WL_TIMER_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WL_TIMER_API
#define WL_TIMER_PRINTF(a, b)
#endif

/* Verbosity: NONE records nothing; DEFAULT prints totals per category (and spans); VERBOSE adds one
 * line per interval; DEBUG adds every interval's stream, timing source and host call times.
 * The initial level comes from $WARPLENS_TIMER (none|default|verbose|debug), else DEFAULT. */
enum wl_timer_verbosity { WL_TIMER_NONE = 0, WL_TIMER_DEFAULT = 1, WL_TIMER_VERBOSE = 2, WL_TIMER_DEBUG = 3 };

/* Built-in categories; wl_timer_category_register() adds more (up to WL_TIMER_MAX_CATEGORIES). */
enum { WL_TIMER_CODEGEN = 0, WL_TIMER_COMPILE = 1, WL_TIMER_RUNTIME = 2, WL_TIMER_MAX_CATEGORIES = 32 };

/* Return codes (negative) of the begin/end/config calls. */
enum wl_timer_error {
    WL_TIMER_OK = 0,
    WL_TIMER_ERR_NOT_OPEN = -1,   /* end without a matching open begin */
    WL_TIMER_ERR_FULL = -2,       /* the interval table is full: counted as overflow */
    WL_TIMER_ERR_CATEGORY = -3,   /* unknown category id, or the category table is full */
    WL_TIMER_ERR_BACKEND = -4,    /* a CUDA/HIP call failed (message printed once) */
    WL_TIMER_ERR_ARG = -5,        /* bad argument (NULL name, capacity 0, ...) */
    WL_TIMER_ERR_BUSY = -6,       /* capacity changed while intervals exist (call wl_timer_reset) */
};

enum wl_timer_kind { WL_TIMER_KIND_GPU = 0, WL_TIMER_KIND_SPAN = 1, WL_TIMER_KIND_HOST = 2 };
enum wl_timer_status {
    WL_TIMER_OPEN = 0,     /* begun, not ended */
    WL_TIMER_PENDING = 1,  /* ended, but its events have not completed on the GPU (not yet collected) */
    WL_TIMER_DONE = 2,     /* duration known */
    WL_TIMER_FAILED = 3,   /* the backend reported an error for its events */
};

#define WL_TIMER_NAME_MAX 96 /* bytes, with the terminating NUL; longer names are truncated */

/* One interval as wl_timer_get() returns it. */
typedef struct wl_timer_interval {
    char name[WL_TIMER_NAME_MAX];
    int32_t category;
    int32_t kind;        /* enum wl_timer_kind */
    int32_t status;      /* enum wl_timer_status */
    int32_t host_timed;  /* 1: a GPU interval timed with host timestamps (no CUDA driver/device) */
    void *stream;        /* as passed to begin (GPU and span intervals) */
    uint64_t start_ns;   /* CLOCK_REALTIME; for event-timed intervals an estimate (docs/timer.md) */
    uint64_t duration_ns;/* valid when status is WL_TIMER_DONE */
    uint64_t tid;        /* OS thread id of the begin call */
} wl_timer_interval;

/* Counters for tests and diagnostics. */
typedef struct wl_timer_stats {
    uint64_t intervals;      /* intervals in the table now */
    uint64_t open, pending, done, failed;
    uint64_t overflow;       /* begins refused because the table was full */
    uint64_t errors;         /* calls that returned an error */
    uint64_t events_created; /* CUDA/HIP events created in total (pool growth) */
    uint64_t events_pooled;  /* events idle in the pools now */
    uint64_t capacity;       /* maximum intervals held */
    int32_t backend;         /* 0 not initialised, 1 host timestamps, 2 CUDA driver, 3 HIP */
    int32_t verbosity;
} wl_timer_stats;

WL_TIMER_API void wl_timer_set_verbosity(int level);
WL_TIMER_API int wl_timer_get_verbosity(void);

/* Registers a category (or returns the id of an existing one with that name): >= 3, or
 * WL_TIMER_ERR_CATEGORY / WL_TIMER_ERR_ARG. Names longer than 31 bytes are truncated. */
WL_TIMER_API int wl_timer_category_register(const char *name);
/* The category's name, or NULL for an unknown id. */
WL_TIMER_API const char *wl_timer_category_name(int category);

/* GPU interval on `stream`: begin records an event on the stream, end records another on the stream
 * passed to end (normally the same). End matches the most recent open GPU interval with the same
 * category and name. Begin returns an id > 0 (usable with wl_timer_end_id), 0 at verbosity NONE, or
 * a negative wl_timer_error; end returns 0 or a negative wl_timer_error. */
WL_TIMER_API int64_t wl_timer_gpu_begin(int category, void *stream, const char *fmt, ...) WL_TIMER_PRINTF(3, 4);
WL_TIMER_API int wl_timer_gpu_end(int category, void *stream, const char *fmt, ...) WL_TIMER_PRINTF(3, 4);
/* A spanning GPU interval (e.g. the whole workload, from the first copy to the last operation): the
 * same as a GPU interval, but shown on its own and not added to its category's total. Its end may
 * be recorded on another stream of the same context. */
WL_TIMER_API int64_t wl_timer_span_begin(int category, void *stream, const char *fmt, ...) WL_TIMER_PRINTF(3, 4);
WL_TIMER_API int wl_timer_span_end(int category, void *stream, const char *fmt, ...) WL_TIMER_PRINTF(3, 4);
/* Wall-clock interval for synchronous host code. */
WL_TIMER_API int64_t wl_timer_host_begin(int category, const char *fmt, ...) WL_TIMER_PRINTF(2, 3);
WL_TIMER_API int wl_timer_host_end(int category, const char *fmt, ...) WL_TIMER_PRINTF(2, 3);
/* Ends the interval `id` (from any begin); GPU and span intervals record on the stream of their
 * begin. No name formatting or lookup: the cheapest end. */
WL_TIMER_API int wl_timer_end_id(int64_t id);

/* Reads the elapsed time of every ended interval whose events have completed, never blocking.
 * Returns how many ended intervals are still pending (events not complete: synchronise first). */
WL_TIMER_API int wl_timer_collect(void);
/* Collects, then prints the summary at the current verbosity for one category, or all with -1.
 * Prints nothing at verbosity NONE. */
WL_TIMER_API void wl_timer_print(FILE *out, int category);
/* Drops every interval (open ones too) and the counters; returns completed events to the pools. */
WL_TIMER_API void wl_timer_reset(void);
/* Maximum number of intervals held (default 16384, or $WARPLENS_TIMER_CAPACITY). Only while the
 * table is empty. Returns 0 or a negative wl_timer_error. */
WL_TIMER_API int wl_timer_set_capacity(uint64_t max_intervals);

/* Number of intervals in the table, and a copy of interval `index` (0 = first begun). Returns 0,
 * or WL_TIMER_ERR_ARG for an index out of range. Collect first for up-to-date statuses. */
WL_TIMER_API uint64_t wl_timer_count(void);
WL_TIMER_API int wl_timer_get(uint64_t index, wl_timer_interval *out);
WL_TIMER_API void wl_timer_get_stats(wl_timer_stats *out);
/* One line describing a wl_timer_error code. */
WL_TIMER_API const char *wl_timer_strerror(int code);
/* Writes the session side file now (only under `warplens run`, i.e. $WARPLENS_CAPTURE_DIR set);
 * also done by wl_timer_collect (at most once a second) and at exit. Returns 0 or -1. */
WL_TIMER_API int wl_timer_write_session_file(void);

#ifdef __cplusplus
}
#endif

#endif
