/* Decoder for the in-kernel timer buffer, wire format v1 (docs/inkernel.md): turns the raw words a
 * kernel instrumented with include/warplens/device.cuh wrote into slices and instants per lane
 * (block, group), with every skipped or suspicious record counted. Input is treated as hostile:
 * every index is bounds-checked and every error names the word offset. */
#ifndef WARPLENS_ANALYSIS_INKERNEL_DECODE_H
#define WARPLENS_ANALYSIS_INKERNEL_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WL_IK_LANE_BITS 20u
#define WL_IK_EVENT_BITS 10u
#define WL_IK_MAX_LANES (1u << WL_IK_LANE_BITS)   /* 1,048,576 (block, group) lanes */
#define WL_IK_MAX_EVENTS (1u << WL_IK_EVENT_BITS) /* event ids 0..1023 */

enum { WL_IK_BEGIN = 0, WL_IK_END = 1, WL_IK_INSTANT = 2, WL_IK_FINALIZE = 3 };

/* Buffer size in 64-bit words for a launch: 1 header word + stride * max_records. stride 0 means
 * "num_blocks * num_groups". Returns 0, or -1 when the configuration cannot be encoded (no lanes,
 * more than 2^20 lanes, stride smaller than the lane count or not encodable, no records). */
int wl_ik_buffer_words(uint64_t num_blocks, uint64_t num_groups, uint64_t stride,
                       uint64_t max_records_per_lane, uint64_t *words);

typedef struct wl_ik_options {
    uint64_t stride;           /* slot spacing the kernel used; 0 = unknown (positions unchecked) */
    uint32_t max_records;      /* per-lane record limit; 0 = unlimited. Extra records are counted */
} wl_ik_options;

enum { WL_IK_SLICE_CROSSED = 1 }; /* ended while a later begin of another id was still open */

typedef struct wl_ik_slice { /* 32 bytes: decoded buffers hold tens of millions of these */
    uint64_t start_ns;   /* unwrapped lane time (see docs: congruent to %globaltimer_lo mod 2^32) */
    uint64_t dur_ns;
    uint32_t begin_seq;  /* ordinal of the begin / end record within its lane: the true order */
    uint32_t end_seq;
    uint32_t block : 20; /* lanes have 20 bits, so block and group fit 20 bits each */
    uint32_t depth : 8;  /* open begins below this one when it began (saturates at 255) */
    uint32_t flags : 4;  /* WL_IK_SLICE_CROSSED */
    uint32_t group : 20;
    uint32_t event : 10;
    uint32_t reserved : 2;
} wl_ik_slice;

typedef struct wl_ik_instant {
    uint64_t ts_ns;
    uint32_t block, group;
    uint32_t seq;
    uint16_t event;
} wl_ik_instant;

/* A begin without an end, or an end without a begin: reported, never paired. */
typedef struct wl_ik_unmatched {
    uint64_t ts_ns;
    uint64_t word;       /* offset of the record in the buffer */
    uint32_t block, group;
    uint32_t seq;        /* ordinal within its lane */
    uint16_t event;
    uint8_t type;        /* WL_IK_BEGIN or WL_IK_END */
} wl_ik_unmatched;

typedef struct wl_ik_counts {
    uint64_t words;            /* words in the buffer, header included */
    uint64_t empty;            /* zero words (empty slots) */
    uint64_t records;          /* non-zero words after the header */
    uint64_t slices, instants;
    uint64_t unmatched_begins, unmatched_ends;
    uint64_t after_finalize;   /* records of a lane after its finalize (a 2nd finalize too): ignored */
    uint64_t over_capacity;    /* records past max_records of their lane: ignored */
    uint64_t crossed;          /* slices flagged WL_IK_SLICE_CROSSED */
    uint64_t lanes_seen;       /* lanes with at least one record */
    uint64_t lanes_finalized;
} wl_ik_counts;

typedef struct wl_ik_result {
    uint32_t num_blocks, num_groups;
    wl_ik_slice *slices;         /* in the order the ends were read */
    size_t n_slices;
    wl_ik_instant *instants;
    size_t n_instants;
    wl_ik_unmatched *unmatched;
    size_t n_unmatched;
    uint64_t min_ts, max_ts;     /* extent of every decoded timestamp; both 0 when there is none */
    int64_t shift_ns;            /* total applied by wl_ik_shift (0 after decode) */
    wl_ik_counts counts;
    size_t slices_cap, instants_cap, unmatched_cap; /* allocated sizes, kept for reuse */
} wl_ik_result;

typedef struct wl_ik_error {
    uint64_t word;               /* offset of the offending word (or the buffer length) */
    char msg[192];
} wl_ik_error;

/* Decodes n_words little-endian 64-bit words (any alignment). opt may be NULL. Returns 0 and fills
 * out (release it with wl_ik_result_free), or -1 with err filled and out left empty. */
int wl_ik_decode(const void *words, size_t n_words, const wl_ik_options *opt, wl_ik_result *out,
                 wl_ik_error *err);
void wl_ik_result_free(wl_ik_result *r);
/* The same, reusing the arrays of `inout` (a zeroed struct or an earlier result): repeated decodes
 * then skip the page faults of fresh output memory. On error inout is freed. */
int wl_ik_decode_reuse(const void *words, size_t n_words, const wl_ik_options *opt,
                       wl_ik_result *inout, wl_ik_error *err);

/* Adds delta_ns to every timestamp of the result (slices, instants, unmatched, extent). Returns 0,
 * or -1 (nothing changed) if a timestamp would leave [0, 2^63). */
int wl_ik_shift(wl_ik_result *r, int64_t delta_ns);

/* ---- placing lanes on the global (CLOCK_REALTIME / CUPTI) timeline ----------------------------
 * A per-process calibration measures realtime - %globaltimer (include/warplens/calibrate.cuh does
 * it with a host<->GPU ping-pong over mapped memory; uncertainty = half the best round trip). */
typedef struct wl_ik_calibration {
    int64_t realtime_minus_globaltimer_ns;
    uint64_t uncertainty_ns;
} wl_ik_calibration;

enum { WL_IK_PLACE_CALIBRATED = 1, WL_IK_PLACE_CLAMPED = 2, WL_IK_PLACE_WINDOW = 3 };

typedef struct wl_ik_placement {
    int64_t delta_ns;           /* pass to wl_ik_shift */
    int method;                 /* WL_IK_PLACE_* */
    int64_t feasible_lo_ns;     /* deltas that keep every event inside [kernel_start, kernel_end] */
    int64_t feasible_hi_ns;     /* (lo > hi: the events last longer than the kernel) */
    uint64_t uncertainty_ns;    /* how far delta_ns may be from the truth */
    int64_t clamp_ns;           /* CLAMPED: how far the calibrated delta was moved */
} wl_ik_placement;

/* Computes the delta that maps decoded lane times onto the clock of kernel_start/end_ns (CUPTI's
 * kernel record). With a calibration: the 2^32 epoch is chosen nearest the kernel start and the
 * calibrated offset is used, clamped into the feasible interval if it falls outside it. Without:
 * the midpoint of the feasible interval. Returns 0, or -1 (no events, end < start). */
int wl_ik_place(const wl_ik_result *r, uint64_t kernel_start_ns, uint64_t kernel_end_ns,
                const wl_ik_calibration *calib, wl_ik_placement *out, wl_ik_error *err);

/* ---- names ------------------------------------------------------------------------------------ */
typedef struct wl_ik_names {
    char **events;               /* events[id] or NULL; ids without a name print as event_<id> */
    size_t n_events;
    char **groups;               /* groups[g] or NULL; unnamed print as group_<g> */
    size_t n_groups;
} wl_ik_names;

/* Parses comma-separated lists ("load,mma,store"); either may be NULL. Returns 0 or -1 (err). */
int wl_ik_names_parse(wl_ik_names *names, const char *events_csv, const char *groups_csv,
                      wl_ik_error *err);
void wl_ik_names_free(wl_ik_names *names);
/* The name of an event / group; buf (at least 24 bytes) holds generated names. Never NULL. */
const char *wl_ik_event_name(const wl_ik_names *names, uint32_t event, char *buf, size_t size);
const char *wl_ik_group_name(const wl_ik_names *names, uint32_t group, char *buf, size_t size);

/* ---- summary per (event, group) --------------------------------------------------------------- */
typedef struct wl_ik_stat {
    uint32_t event, group;
    uint64_t count, total_ns, min_ns, p50_ns, p99_ns, max_ns;
    double mean_ns;
} wl_ik_stat;

/* Sorted by event then group. Percentiles are nearest-rank. Returns 0 (free *out) or -1 (ENOMEM). */
int wl_ik_summarize(const wl_ik_result *r, wl_ik_stat **out, size_t *n_out);
/* A human-readable table plus the counts of everything skipped. Returns 0 or -1 (write error). */
int wl_ik_write_summary(FILE *fp, const wl_ik_result *r, const wl_ik_names *names);

#ifdef __cplusplus
}
#endif

#endif
