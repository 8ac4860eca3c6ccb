/* Internals of the explicit timers (include/warplens/timer.h): the interval table shared by the
 * core, the summary printer and the session side file, and the event backend interface that
 * timer_backend_cuda.c (CUDA driver, loaded with dlopen) or timer_backend_hip.c (HIP, compile-time
 * with -DWARPLENS_TIMER_HIP) implements. */
#ifndef WARPLENS_TIMER_INTERNAL_H
#define WARPLENS_TIMER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "warplens/timer.h"

#define WL_TIMER_CAT_NAME_MAX 32
#define WL_TB_MAX_CTX 16 /* contexts (devices) with their own event pool and anchor */

enum { WL_TB_NONE = 0, WL_TB_HOST = 1, WL_TB_CUDA = 2, WL_TB_HIP = 3 };

/* One pooled event and the context pool it belongs to. */
typedef struct wl_tev {
    void *ev;
    int ctx;
} wl_tev;

/* One interval. Written under the table mutex; event records happen outside it (see timer_core.c). */
typedef struct wl_tinterval {
    char name[WL_TIMER_NAME_MAX];
    int32_t category, kind, status, host_timed;
    void *stream;
    wl_tev ev_begin, ev_end;
    uint64_t host_begin_ns, host_end_ns; /* CLOCK_REALTIME of the begin/end calls */
    uint64_t duration_ns;
    double rel_begin_ms;                 /* event-timed: begin relative to the context's anchor */
    int has_rel;
    uint64_t tid;
    int closing;                         /* end claimed by a thread, its event not yet recorded */
} wl_tinterval;

typedef struct wl_ttable {
    pthread_mutex_t mu;
    wl_tinterval *iv;
    uint64_t n, cap;
    uint64_t n_open;
    uint64_t first_unresolved;           /* every interval below this is DONE or FAILED */
    uint64_t overflow, errors;
    char cats[WL_TIMER_MAX_CATEGORIES][WL_TIMER_CAT_NAME_MAX];
    int n_cats;
    int backend;
    uint64_t anchor_abs_ns[WL_TB_MAX_CTX]; /* estimated CLOCK_REALTIME of each context's anchor */
    uint64_t last_file_write_ns;
    uint64_t resolved_since_write;
} wl_ttable;

extern wl_ttable wl_timer_table_;
extern _Atomic int wl_timer_verbosity_;

/* ---- backend (every function but wl_tb_record is called with the table mutex held) ---------- */
/* Loads the backend; returns WL_TB_CUDA/WL_TB_HIP, or WL_TB_HOST when no driver/device is usable. */
int wl_tb_init(void);
/* Takes an event from the pool of the stream's context (creating a batch when the pool is empty).
 * *need_anchor is set when the context has no anchor yet: wl_tb_record must record it first.
 * Returns 0, 1 when no context is usable (caller falls back to host time), -1 on a backend error. */
int wl_tb_acquire(void *stream, wl_tev *out, int *need_anchor);
/* Records ev (and, first, the context's anchor) on stream. No lock held. Returns 0 or -1. */
int wl_tb_record(wl_tev ev, void *stream, int need_anchor);
/* 1 complete, 0 not yet, -1 error. */
int wl_tb_query(wl_tev ev);
/* Elapsed milliseconds from a to b (both complete). Returns 0 or -1. */
int wl_tb_elapsed_ms(wl_tev a, wl_tev b, float *ms);
/* Milliseconds from ev's context anchor to ev (both complete). Returns 0 or -1. */
int wl_tb_since_anchor_ms(wl_tev ev, float *ms);
void wl_tb_release(wl_tev ev);
/* Forgets the anchors (after wl_timer_reset); their events go back to the pools. */
void wl_tb_reset_anchors(void);
uint64_t wl_tb_events_created(void);
uint64_t wl_tb_events_pooled(void);
const char *wl_tb_name(void);

/* ---- shared helpers ---------------------------------------------------------------------------- */
void wl_timer_lock(void);
void wl_timer_unlock(void);
const char *wl_timer_cat_name_locked(int cat);
/* Prints the summary (table locked by the caller). */
void wl_timer_print_locked(FILE *out, int category, int verbosity);
/* Estimated CLOCK_REALTIME start of an interval (table locked). */
uint64_t wl_timer_start_ns_locked(const wl_tinterval *t);
/* Writes $WARPLENS_CAPTURE_DIR/<pid>.wltimers (table locked). Returns 0, 1 when not under
 * `warplens run`, -1 on error. */
int wl_timer_write_side_file_locked(void);

#endif
