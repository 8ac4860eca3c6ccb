/* Perfetto trace writer: streams `Trace.packet` records (TracePacket with TrackDescriptor,
 * TrackEvent, ClockSnapshot) to a FILE*, one packet sequence per writer, with event names and
 * categories interned per sequence. Field numbers follow Perfetto's protos
 * (docs: /work/shared/notes/perfetto-and-chrome-trace.md). Shared by every warplens exporter. */
#ifndef WARPLENS_EXPORT_PERFETTO_PACKETS_H
#define WARPLENS_EXPORT_PERFETTO_PACKETS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/pb_encode.h"
#include "export/perfetto_intern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Built-in clock ids (ClockSnapshot / timestamp_clock_id). 64..127 are sequence-scoped clocks a
 * writer defines itself through a ClockSnapshot (e.g. "REALTIME minus an origin", which keeps
 * timestamps to a few varint bytes). */
enum { WL_PF_CLOCK_REALTIME = 1, WL_PF_CLOCK_MONOTONIC = 3, WL_PF_CLOCK_BOOTTIME = 6, WL_PF_CLOCK_SEQUENCE_0 = 64 };
/* TrackEvent.type */
enum { WL_PF_SLICE_BEGIN = 1, WL_PF_SLICE_END = 2, WL_PF_INSTANT = 3, WL_PF_COUNTER = 4 };
/* TrackDescriptor.child_ordering */
enum { WL_PF_ORDER_LEXICOGRAPHIC = 1, WL_PF_ORDER_CHRONOLOGICAL = 2, WL_PF_ORDER_EXPLICIT = 3 };
/* CounterDescriptor.unit */
enum { WL_PF_UNIT_TIME_NS = 1, WL_PF_UNIT_COUNT = 2, WL_PF_UNIT_SIZE_BYTES = 3 };

#define WL_PF_STATIC_SLOTS 64
typedef struct wl_pf_static_slot {
    const char *p;   /* a constant string's address */
    uint64_t iid;
} wl_pf_static_slot;

#define WL_PF_KEY_SLOTS 256
#define WL_PF_MEMO_KINDS 8
#define WL_PF_MEMO_ARGS 32
typedef struct wl_pf_key_slot {
    uint64_t key;    /* wl_pf_event.name_key, 0 unused */
    uint64_t iid;
} wl_pf_key_slot;

typedef struct wl_pf_writer {
    FILE *fp;
    uint32_t seq_id;          /* trusted_packet_sequence_id: non-zero */
    uint32_t clock_id;        /* 0: Perfetto's default (BOOTTIME); else declared per sequence */
    int started;              /* first packet written */
    uint8_t steady[2][8];     /* every later packet's prefix (made at init): [1] relying on interned
                                 names (with SEQ_NEEDS_STATE), [0] not (the same with a clock_id) */
    uint8_t steady_len[2];
    int failed;
    /* Set by a caller whose categories and annotation names are string constants (never the
     * same address for another text): they are then interned by address, without hashing. */
    int static_names;
    wl_pb_buf pkt;
    wl_pb_buf out;            /* packets not yet written to fp (written in large chunks) */
    wl_pb_buf interned;       /* one event's InternedData */
    uint8_t *scratch;         /* one event's TrackEvent and interned data */
    size_t scratch_cap;
    wl_pf_intern names, cats, ann_names;
    wl_pf_static_slot static_cats[WL_PF_STATIC_SLOTS], static_anns[WL_PF_STATIC_SLOTS];
    wl_pf_key_slot name_keys[WL_PF_KEY_SLOTS];
    wl_pf_static_slot arg_memo[WL_PF_MEMO_KINDS][WL_PF_MEMO_ARGS]; /* static_names: by category and place */
    uint64_t packets;
    int (*out_fn)(void *ctx, wl_pb_buf *out, int last); /* wl_pf_set_output, else fwrite to fp */
    void *out_ctx;
} wl_pf_writer;

/* clock_id: 0 to leave timestamps on the default clock, or a WL_PF_CLOCK_* declared once through
 * trace_packet_defaults (pair it with wl_pf_write_clock_snapshot so it can be resolved). */
int wl_pf_init(wl_pf_writer *w, FILE *fp, uint32_t sequence_id, uint32_t clock_id);
/* Returns 0 when every packet was written, -1 otherwise. Frees the writer either way. */
int wl_pf_finish(wl_pf_writer *w);
/* From now on what is buffered and then full output buffers (about 2 MiB) go to fn instead of
 * fwrite: fn(ctx, out, 0) takes a leading part of out's bytes, leaving the rest at the start of
 * out (it may swap in another buffer; wl_out_pipe_push_some); fn(ctx, out, 1), called by
 * wl_pf_finish before it flushes fp, takes all of out and returns when everything handed over is
 * written. fn returns -1 on failure. For a background writer (out_pipe.h), so encoding overlaps
 * the output's way to the file. */
typedef int (*wl_pf_out_fn)(void *ctx, wl_pb_buf *out, int last);
int wl_pf_set_output(wl_pf_writer *w, wl_pf_out_fn fn, void *ctx);

typedef struct wl_pf_track {
    uint64_t uuid;                /* non-zero, unique in the trace */
    uint64_t parent_uuid;         /* 0: top level */
    const char *name;             /* NULL: none */
    const char *description;
    int has_process;              /* ProcessDescriptor{pid, process_name} (never pid 0) */
    int32_t pid;
    const char *process_name;
    int has_thread;               /* ThreadDescriptor{pid, tid, thread_name} */
    int32_t tid;
    const char *thread_name;
    int child_ordering;           /* WL_PF_ORDER_*, 0 unset */
    int has_rank;
    int32_t sibling_order_rank;
    int merge_none;               /* sibling_merge_behavior NONE: same-named siblings stay apart */
    int is_counter;               /* CounterDescriptor */
    int counter_unit;             /* WL_PF_UNIT_*, 0 unset */
    const char *counter_unit_name;
} wl_pf_track;

int wl_pf_write_track(wl_pf_writer *w, const wl_pf_track *t);

/* DOUBLE_EXACT: a double that text outputs (JSON) write with every significant digit instead of
 * six (hardware counters); Perfetto stores both kinds as the same 64-bit double. */
enum { WL_PF_ARG_UINT = 1, WL_PF_ARG_INT, WL_PF_ARG_DOUBLE, WL_PF_ARG_STRING, WL_PF_ARG_BOOL, WL_PF_ARG_DOUBLE_EXACT };

typedef struct wl_pf_arg {        /* a DebugAnnotation; its name is interned */
    const char *name;
    uint16_t name_len;            /* > 0: name is a literal of ours in plain ASCII, this long (the
                                     JSON writer copies it without escaping); 0: any name */
    int kind;                     /* WL_PF_ARG_* */
    uint64_t u;
    int64_t i;
    double d;
    const char *s;
} wl_pf_arg;

typedef struct wl_pf_event { /* (perfetto_export.c's pf_begin sets each field: add new ones there) */
    int type;                     /* WL_PF_SLICE_BEGIN / END / INSTANT / COUNTER */
    uint64_t ts;
    uint64_t track_uuid;
    const char *name;             /* interned; leave NULL on SLICE_END and counters */
    uint64_t name_key;            /* non-zero: the caller's promise that every event with this key
                                     has this name; then found by key, without hashing the text */
    const char *category;         /* interned; NULL: none */
    const uint64_t *flow_ids;     /* written as fixed64 (field 47) */
    size_t n_flow_ids;
    const uint64_t *terminating_flow_ids; /* fixed64 (field 48) */
    size_t n_terminating_flow_ids;
    int has_double_value;         /* COUNTER: double_counter_value, else counter_value */
    double double_value;
    int64_t int_value;
    const wl_pf_arg *args;
    size_t n_args;
} wl_pf_event;

int wl_pf_write_event(wl_pf_writer *w, const wl_pf_event *e);
/* The same as wl_pf_write_event for a SLICE_END, and for a COUNTER with a double value, without
 * building an event (the bytes are identical). */
int wl_pf_write_end(wl_pf_writer *w, uint64_t ts, uint64_t track_uuid);
int wl_pf_write_counter(wl_pf_writer *w, uint64_t ts, uint64_t track_uuid, double value);

typedef struct wl_pf_clock {
    uint32_t clock_id;
    uint64_t timestamp;
} wl_pf_clock;

/* A ClockSnapshot pairing clocks read at the same instant (e.g. BOOTTIME and REALTIME). */
int wl_pf_write_clock_snapshot(wl_pf_writer *w, uint64_t packet_ts, const wl_pf_clock *clocks,
                               size_t n, uint32_t primary_clock_id);

#ifdef __cplusplus
}
#endif

#endif
