/* The in-kernel decoder's walk over the words (inkernel_walk.c), apart from its entry points
 * (inkernel_decode.c: header checks, allocation, the unmatched begins left at the end, shifting).
 * Private to src/analysis: the per-lane state both halves read, the decoder they share, and the
 * helpers both use. */
#ifndef WARPLENS_ANALYSIS_INKERNEL_WALK_H
#define WARPLENS_ANALYSIS_INKERNEL_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "analysis/inkernel_decode.h"

#define IK_INLINE_OPEN 4u /* open begins a lane keeps without a heap stack */

typedef struct open_begin { /* 32 bytes; seq, event, meta: the slice's last 16 bytes but end_seq */
    uint64_t ts;
    uint64_t word;  /* the record's word offset; a grid walk's fast path leaves it unset and the
                     * begins still open at the end get it from find_open_words */
    uint32_t seq;
    uint32_t event;
    uint64_t meta;  /* the slice's last 8 bytes: block, group, event, depth (flags 0) */
} open_begin;

enum { LANE_UNSEEN = 0, LANE_LIVE = 1, LANE_FINALIZED = 2 };

/* A lane's state is split by use. The hot half (32 bytes) is what every record of a live lane reads
 * and writes; the cold half only the first record, the finalize and the rare cases. The hot half's
 * key is the lane's own index while the lane may take the fast path (live, its open begins in the
 * inline slots, the slice layout the fast path writes) and KEY_SLOW otherwise: one compare of the
 * record's lane bits against it checks the slot's owner and the lane's state at once. */
typedef struct lane_hot {
    uint64_t last_ts;           /* unwrapped; may be "negative" (mod 2^64) until the final fix.
                                 * It is congruent to its raw 32-bit timer value mod 2^32, so its
                                 * low half is the last raw value (no separate field to load) */
    uint64_t ctr;               /* accepted records (the next seq) << 32 | open begins */
    uint64_t meta;              /* slice bits of this lane's block and group; in the fast layout
                                 * also an instant's second word (block, then group) */
    uint32_t key;
    uint32_t spare_;
} lane_hot;

#define CTR_REC (UINT64_C(1) << 32)
#define KEY_SLOW UINT32_MAX     /* never a lane index (they have 20 bits) */

typedef struct lane_cold {
    uint64_t first_ts;
    open_begin *open;           /* the lane's slots of the shared pool, or its own heap stack */
    uint32_t open_cap;
    uint32_t block, group;
    uint32_t state;             /* LANE_* */
    uint32_t heap;              /* open points to the heap (free it) */
} lane_cold;

/* Bit units of the slice's packed word (its bitfields after end_seq): a field's value times its
 * unit is its bits. */
typedef struct slice_bits {
    uint64_t block, group, event, depth, crossed;
} slice_bits;

/* Everything one decode needs, so the out-of-line helpers take one pointer. */
typedef struct decoder {
    const unsigned char *p;
    uint64_t n_words, lanes_n, ng, stride;
    uint64_t row_limit;  /* stride known: rows (slots) a lane may use; else UINT64_MAX */
    uint64_t row_base;   /* stride known: the word offset of the row being walked */
    uint32_t rec_limit;  /* stride unknown: records a lane may use; else UINT32_MAX */
    lane_hot *hot;
    lane_cold *cold;
    open_begin *pool;    /* IK_INLINE_OPEN slots per lane */
    slice_bits bits;
    int fast;            /* the slice layout is the one record_fast writes */
    uint32_t ref_raw;
    int have_ref;
    wl_ik_result *out;
    wl_ik_error *err;
} decoder;

/* Runs the walk over d->p's words (d filled by the caller, lane arrays allocated, every key
 * KEY_SLOW, out's arrays present). Returns 0, -1 (err set) or -2 (out of memory). */
int wl_ik_walk(decoder *d);

/* Growable output arrays (2 MiB-aligned huge-page blocks when large). Returns 0 or -1. */
int wl_ik_grow(void **arr, size_t *cap, size_t need, size_t elem);
/* Appends one unmatched record; returns -1 on allocation failure. */
int wl_ik_add_unmatched(wl_ik_result *r, uint64_t ts, uint64_t word, const lane_cold *L,
                        uint32_t seq, uint16_t ev, uint8_t type);
void wl_ik_set_err(wl_ik_error *err, uint64_t word, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static inline uint64_t wl_ik_load_le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}


#endif
