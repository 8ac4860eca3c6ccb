/* In-kernel lanes in the session (tables inkernel_buffer, inkernel_name, inkernel_event;
 * docs/schema.md): written by the importer of .wlik side files (src/analysis/inkernel_session.c),
 * read by the exporters and the CLI. Sessions recorded before these tables existed have none:
 * readers then report zero buffers. */
#ifndef WARPLENS_STORE_INKERNEL_STORE_H
#define WARPLENS_STORE_INKERNEL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"
#include "store/session_writer.h"

enum { WL_IKS_SLICE = 0, WL_IKS_INSTANT = 1, WL_IKS_UNMATCHED_BEGIN = 2, WL_IKS_UNMATCHED_END = 3 };

typedef struct wl_iks_buffer {
    int64_t id;                         /* filled by the reader / returned by begin */
    uint32_t pid, correlation_id, device_id;
    int64_t kernel_id;                  /* 0: no kernel with this correlation id */
    uint64_t words;
    uint32_t num_blocks, num_groups;
    uint64_t slices, instants, unmatched, after_finalize, over_capacity, crossed;
    int64_t dropped_on_device, invalid_on_device; /* -1: counters not given */
    char placement[16];                 /* calibrated | clamped | window | none */
    int64_t delta_ns, clamp_ns;
    uint64_t uncertainty_ns;
    int has_calibration;
    int64_t calibration_offset_ns;
    uint64_t calibration_uncertainty_ns;
    char error[320];                    /* why nothing was decoded, "" otherwise */
    /* reader only: the kernel it belongs to */
    uint32_t stream_id;
    uint64_t kernel_start_ns, kernel_end_ns;
    char kernel_name[256];
} wl_iks_buffer;

typedef struct wl_iks_event {
    uint64_t start_ns;                  /* session clock (after placement) */
    uint64_t dur_ns;                    /* slices only */
    uint32_t block, group;
    uint16_t event;
    uint8_t kind;                       /* WL_IKS_* */
    uint8_t depth, crossed;
} wl_iks_event;

/* ---- writing (one buffer at a time) ---- */
/* The kernel launched by (pid, correlation id): 1 found, 0 none, -1 error. */
int wl_session_writer_kernel_span(wl_session_writer *w, uint32_t pid, uint32_t correlation_id, int64_t *kernel_id,
                                  uint64_t *start_ns, uint64_t *end_ns);
/* The kernel of graph node graph_node_id (CUPTI's id) in the graph launch (pid, correlation id);
 * graph_node_id 0: the same as wl_session_writer_kernel_span. */
int wl_session_writer_graph_kernel_span(wl_session_writer *w, uint32_t pid, uint32_t correlation_id,
                                        uint64_t graph_node_id, int64_t *kernel_id, uint64_t *start_ns,
                                        uint64_t *end_ns);
/* Inserts the buffer row and prepares for its names/events; b->id gets the row id. 0 or -1. */
int wl_session_writer_inkernel_begin(wl_session_writer *w, wl_iks_buffer *b, char *err, size_t err_size);
int wl_session_writer_inkernel_name(wl_session_writer *w, const char *kind, uint32_t id, const char *name);
int wl_session_writer_inkernel_event(wl_session_writer *w, const wl_iks_event *e);
/* Finishes the buffer (statements released). Returns 0, or -1 if any insert of it failed. */
int wl_session_writer_inkernel_end(wl_session_writer *w, char *err, size_t err_size);

/* ---- reading ---- */
/* Every buffer, in kernel start order, with its kernel's stream/start/end/name. *out is malloc'ed
 * (free it); 0 buffers when the session has no in-kernel tables. Returns 0 or -1. */
int wl_session_inkernel_buffers(wl_session *s, wl_iks_buffer **out, size_t *n);
/* Events of one buffer ordered by lane (block, group) then start. fn returning non-zero stops.
 * Returns the number of events visited or -1. */
int64_t wl_session_inkernel_each_event(wl_session *s, int64_t buffer_id,
                                       int (*fn)(const wl_iks_event *, void *), void *arg);
/* Names of one buffer: kind "event" or "group". Returns the count or -1. */
int wl_session_inkernel_each_name(wl_session *s, int64_t buffer_id,
                                  void (*fn)(const char *kind, uint32_t id, const char *name, void *), void *arg);

#endif
