/* What `warplens advise` reads from a session: every piece of GPU work in start order with the
 * API call that started it (when it was submitted, from which thread), and the host calls that
 * block the calling thread until the GPU catches up. Each in one ordered pass, so the analysis
 * keeps only per-device, per-stream and per-name state. */
#ifndef WARPLENS_STORE_SESSION_WORK_H
#define WARPLENS_STORE_SESSION_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"
#include "store/session_kernels.h"

typedef enum wl_work_kind { WL_WORK_KERNEL = 1, WL_WORK_COPY = 2, WL_WORK_SET = 3 } wl_work_kind;

typedef enum wl_copy_dir { WL_COPY_OTHER = 0, WL_COPY_HTOD = 1, WL_COPY_DTOH = 2, WL_COPY_DTOD = 3 } wl_copy_dir;

typedef struct wl_work_row {
    wl_work_kind kind;
    int64_t id;
    uint32_t pid, device_id;
    int64_t stream_id;
    uint64_t start_ns, end_ns;
    int64_t api_id;                   /* -1: no API record */
    int64_t api_start_ns, api_end_ns; /* the call that started it; -1 without one */
    int64_t submitted_ns;             /* kernels: CUPTI's submission to the GPU; -1 unknown */
    int64_t tid;                      /* the launching thread; -1 unknown */
    int64_t graph_id;                 /* -1: not from a graph */
    uint64_t bytes;                   /* copies and sets */
    wl_copy_dir dir;
    int host_pageable;                /* a copy whose host side is pageable memory */
    int is_async;                     /* copies: CUPTI's async flag */
    wl_kernel_config cfg;             /* kernels: name_id, pid, device and launch configuration */
} wl_work_row;

/* Calls fn for each timed kernel, copy and set, all processes and devices interleaved in start
 * order (kernels first at equal starts, then copies, then sets; each kind by id). fn returns
 * non-zero to stop. Returns the number of rows passed, or -1 on a read error.
 * With can_restart the kernels are first read in the table's own order (about a third of the
 * CPU of the start-ordered index) and put in start order by a window of 8,192 kernels; when the
 * table turns out further from start order than that after rows were passed, the walk returns
 * WL_WORK_RESTART: the caller forgets what it was given and calls again, which then reads by
 * the index (the handle remembers). */
#define WL_WORK_RESTART (-2)
long wl_session_each_work(wl_session *s, int can_restart, int (*fn)(const wl_work_row *, void *), void *arg);

/* A host call that waits for the GPU: the explicit synchronisations (API category `sync`) and the
 * copies and sets whose call returns only when the GPU has done them (synchronous cudaMemcpy /
 * cuMemcpy*, not *Async). */
typedef struct wl_blocking_call {
    int64_t id;
    uint32_t pid, tid;
    uint64_t start_ns, end_ns;
    char name[64];
    int implicit; /* 1: a synchronous copy or set, 0: an explicit synchronisation */
} wl_blocking_call;
/* In start order; fn returns non-zero to stop. Returns the count passed, or -1. */
long wl_session_each_blocking_call(wl_session *s, int (*fn)(const wl_blocking_call *, void *), void *arg);
/* The same read on a thread of its own (a second connection) while the caller reads other tables:
 * fn runs on that thread until _end, which waits for it and returns what the read above returns.
 * Without a second thread (wl_session_set_read_threads(s, 1), or none could start) the read is
 * made in _begin. NULL only when out of memory (_end(NULL) is -1). */
typedef struct wl_blocking_read wl_blocking_read;
wl_blocking_read *wl_session_blocking_calls_begin(wl_session *s, int (*fn)(const wl_blocking_call *, void *),
                                                  void *arg);
long wl_session_blocking_calls_end(wl_blocking_read *r);

#endif
