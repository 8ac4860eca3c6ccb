/* In-kernel timer buffer decoder (wire format v1): one pass over the words in index order, with a
 * small state per lane (unwrapped clock, stack of open begins). See inkernel_decode.h.
 *
 * Speed (bench/bench_decode.c, bench/results/decode.txt): the loop is written for the common case
 * of a well-formed buffer, so every check a hostile buffer can fail is one compare whose branch is
 * never taken on good input, and the cold work (first record of a lane, finalized lanes, capacity
 * limits, deep nesting, unmatched records, growing the outputs) lives out of line. Per record the
 * hot path is: load, zero test, grid position, lane look-up, one state compare, the modular clock
 * step, a three-way dispatch on the type and a direct write of the output element (slices are
 * written as precomputed 8-byte bitfield words: the begin stores the slice's block / group /
 * event / depth bits, the end copies them). One pass: the outputs grow geometrically (realloc of
 * large blocks is an mremap, no copy), so the input is read once. */
#include "analysis/inkernel_decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define EPOCH (UINT64_C(1) << 32)
#define BIG_ALLOC (UINT64_C(4) << 20) /* outputs this large get transparent huge pages */
#define INLINE_OPEN 2u                /* open begins a lane keeps without a heap stack */

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NOINLINE __attribute__((noinline, cold))
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE_HOT __attribute__((noinline))
#else
#define NOINLINE_HOT
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#define NOINLINE
#define ALWAYS_INLINE inline
#endif

typedef struct open_begin { /* 32 bytes */
    uint64_t ts;
    uint64_t meta;  /* the slice's last 8 bytes: block, group, event, depth (flags 0) */
    uint64_t word;
    uint32_t seq;
    uint32_t event;
} open_begin;

enum { LANE_UNSEEN = 0, LANE_LIVE = 1, LANE_FINALIZED = 2 };

typedef struct lane_state { /* 64 bytes */
    uint64_t last_ts;           /* unwrapped; may be "negative" (mod 2^64) until the final fix. It is
                                 * congruent to its raw 32-bit timer value mod 2^32, so its low half
                                 * is the last raw value (no separate field to load and store) */
    uint64_t first_ts;
    uint64_t meta;              /* slice bits of this lane's block and group */
    open_begin *open;           /* the lane's slots of the shared pool, or its own heap stack */
    uint32_t spare_;
    uint32_t nrec;              /* accepted records so far: the next record's seq */
    uint32_t open_len, open_cap;
    uint32_t block, group;
    uint32_t state;             /* LANE_* */
    uint32_t heap;              /* open points to the heap (free it) */
} lane_state;

/* Bit units of the slice's packed word (its bitfields after end_seq), found from the compiler's
 * own layout: a field's value times its unit is its bits. */
typedef struct slice_bits {
    uint64_t block, group, event, depth, crossed;
} slice_bits;

static uint64_t slice_word(const wl_ik_slice *s)
{
    uint64_t m;
    memcpy(&m, (const unsigned char *)s + offsetof(wl_ik_slice, end_seq) + 4, sizeof m);
    return m;
}

static void slice_bits_init(slice_bits *b)
{
    wl_ik_slice s;
    memset(&s, 0, sizeof s);
    s.block = 1;
    b->block = slice_word(&s);
    s.block = 0, s.group = 1;
    b->group = slice_word(&s);
    s.group = 0, s.event = 1;
    b->event = slice_word(&s);
    s.event = 0, s.depth = 1;
    b->depth = slice_word(&s);
    s.depth = 0, s.flags = WL_IK_SLICE_CROSSED;
    b->crossed = slice_word(&s);
}

_Static_assert(sizeof(wl_ik_slice) == 32 && offsetof(wl_ik_slice, end_seq) + 4 + 8 == 32,
               "wl_ik_slice: 24 bytes of fields, then one 8-byte word of bitfields");

_Static_assert(sizeof(wl_ik_instant) == 24 && offsetof(wl_ik_instant, block) == 8 &&
                   offsetof(wl_ik_instant, group) == 12 && offsetof(wl_ik_instant, seq) == 16 &&
                   offsetof(wl_ik_instant, event) == 20,
               "wl_ik_instant: the layout put_instant writes");

static void set_err(wl_ik_error *err, uint64_t word, const char *fmt, ...)
{
    if (!err)
        return;
    err->word = word;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

static inline uint64_t load_le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

int wl_ik_buffer_words(uint64_t num_blocks, uint64_t num_groups, uint64_t stride,
                       uint64_t max_records_per_lane, uint64_t *words)
{
    if (num_blocks == 0 || num_groups == 0 || max_records_per_lane == 0)
        return -1;
    if (num_blocks > WL_IK_MAX_LANES || num_groups > WL_IK_MAX_LANES)
        return -1;
    uint64_t lanes = num_blocks * num_groups;
    if (lanes > WL_IK_MAX_LANES)
        return -1;
    if (stride == 0)
        stride = lanes;
    /* The device keeps stride and the record limit in 32-bit registers. */
    if (stride < lanes || stride > UINT32_MAX || max_records_per_lane > UINT32_MAX)
        return -1;
    uint64_t body = stride * max_records_per_lane; /* both < 2^32: cannot overflow */
    if (body > UINT64_MAX / 8 - 1)
        return -1;
    if (words)
        *words = 1 + body;
    return 0;
}

/* Growable arrays of the outputs. Large blocks are 2 MiB aligned and advised to use huge pages,
 * which divides the page faults of a 1 GiB slice array by 512 (they dominated the decode time);
 * growing them is a realloc, which glibc does with mremap (no copy). The old content is kept. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 256;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            return -1;
        ncap *= 2;
    }
    const size_t bytes = ncap * elem;
    void *p = NULL;
    if (!*arr && bytes >= BIG_ALLOC) {
        if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0)
            p = NULL;
    } else {
        p = realloc(*arr, bytes);
    }
    if (!p)
        return -1;
#ifdef MADV_HUGEPAGE
    if (bytes >= BIG_ALLOC) {
        const size_t huge = (size_t)2 << 20;
        uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
        uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)(huge - 1);
        if (e > a)
            madvise((void *)a, (size_t)(e - a), MADV_HUGEPAGE);
    }
#endif
    *arr = p;
    *cap = ncap;
    return 0;
}

void wl_ik_result_free(wl_ik_result *r)
{
    if (!r)
        return;
    free(r->slices);
    free(r->instants);
    free(r->unmatched);
    memset(r, 0, sizeof *r);
}

/* Adds one unmatched record; returns -1 on allocation failure. */
static int add_unmatched(wl_ik_result *r, uint64_t ts, uint64_t word,
                         const lane_state *L, uint32_t seq, uint16_t ev, uint8_t type)
{
    if (grow((void **)&r->unmatched, &r->unmatched_cap, r->n_unmatched + 1, sizeof *r->unmatched))
        return -1;
    wl_ik_unmatched *u = &r->unmatched[r->n_unmatched++];
    u->ts_ns = ts;
    u->word = word;
    u->block = L->block;
    u->group = L->group;
    u->seq = seq;
    u->event = ev;
    u->type = type;
    return 0;
}

int wl_ik_decode(const void *data, size_t n_words, const wl_ik_options *opt, wl_ik_result *out,
                 wl_ik_error *err)
{
    memset(out, 0, sizeof *out);
    return wl_ik_decode_reuse(data, n_words, opt, out, err);
}

/* Output element stores. The outputs of a large buffer are far bigger than the caches and are
 * not read back during the decode, so on x86 they are written with non-temporal stores: the
 * ordinary stores' read-for-ownership of every output line halves the bandwidth left for them
 * (bench: the decode was store-bound). Slices are 32 bytes (16-byte aligned: malloc and the 2 MiB
 * blocks both give that), instants 24 (three 8-byte stores). */
static ALWAYS_INLINE void put_slice(wl_ik_slice *s, uint64_t start, uint64_t dur, uint32_t bseq,
                                    uint32_t eseq, uint64_t meta)
{
#if defined(__SSE2__)
    __m128i *v = (__m128i *)(void *)s;
    _mm_stream_si128(v, _mm_set_epi64x((long long)dur, (long long)start));
    _mm_stream_si128(v + 1, _mm_set_epi64x((long long)meta,
                                           (long long)((uint64_t)eseq << 32 | bseq)));
#else
    s->start_ns = start;
    s->dur_ns = dur;
    s->begin_seq = bseq;
    s->end_seq = eseq;
    memcpy((unsigned char *)s + offsetof(wl_ik_slice, end_seq) + 4, &meta, sizeof meta);
#endif
}

static ALWAYS_INLINE void put_instant(wl_ik_instant *in, uint64_t ts, uint32_t block,
                                      uint32_t group, uint32_t seq, uint32_t ev)
{
#if defined(__SSE2__) && defined(__x86_64__)
    long long *q = (long long *)(void *)in;
    _mm_stream_si64(q, (long long)ts);
    _mm_stream_si64(q + 1, (long long)((uint64_t)group << 32 | block));
    _mm_stream_si64(q + 2, (long long)((uint64_t)ev << 32 | seq)); /* event, then padding 0 */
#else
    in->ts_ns = ts;
    in->block = block;
    in->group = group;
    in->seq = seq;
    in->event = (uint16_t)ev;
#endif
}

/* Everything one decode needs, so the out-of-line helpers take one pointer. */
typedef struct decoder {
    const unsigned char *p;
    uint64_t n_words, lanes_n, ng, stride;
    uint64_t row_limit;  /* stride known: rows (slots) a lane may use; else UINT64_MAX */
    uint32_t rec_limit;  /* stride unknown: records a lane may use; else UINT32_MAX */
    lane_state *lanes;
    open_begin *pool;    /* INLINE_OPEN slots per lane */
    slice_bits bits;
    uint32_t ref_raw;
    int have_ref;
    wl_ik_result *out;
    wl_ik_error *err;
} decoder;

/* First accepted record of a lane: its place in the grid of lanes and its unwrapping. Lanes are
 * unwrapped against one reference (the first record read) so they stay comparable; a lane that
 * started just before a wrap the reference is past comes out "negative" (mod 2^64) and is fixed
 * at the end. */
static NOINLINE void lane_start(decoder *d, lane_state *L, uint32_t bg, uint32_t raw)
{
    if (!d->have_ref) {
        d->ref_raw = raw;
        d->have_ref = 1;
    }
    const uint64_t ts = (uint64_t)d->ref_raw + (uint64_t)(int64_t)(int32_t)(raw - d->ref_raw);
    L->block = (uint32_t)(bg / d->ng);
    L->group = (uint32_t)(bg % d->ng);
    L->meta = L->block * d->bits.block + L->group * d->bits.group;
    L->open = d->pool + (size_t)bg * INLINE_OPEN;
    L->open_cap = INLINE_OPEN;
    L->first_ts = ts;
    L->last_ts = ts;
    L->state = LANE_LIVE;
    d->out->counts.lanes_seen++;
}

/* A begin deeper than the lane's stack: moves the stack to (a larger) heap array. */
static NOINLINE int open_grow(lane_state *L)
{
    size_t cap = L->open_cap;
    open_begin *old = L->open;
    open_begin *p = L->heap ? old : NULL;
    if (grow((void **)&p, &cap, (size_t)L->open_len + 1, sizeof *p) || cap > UINT32_MAX)
        return -1;
    if (!L->heap)
        memcpy(p, old, (size_t)L->open_len * sizeof *p);
    L->open = p;
    L->open_cap = (uint32_t)cap;
    L->heap = 1;
    return 0;
}

/* An end whose begin is not on top of the stack: search below (crossed slice) or unmatched. */
static NOINLINE int end_slow(decoder *d, lane_state *L, uint64_t i, uint64_t ts, uint32_t seq,
                             uint32_t ev)
{
    wl_ik_result *out = d->out;
    uint32_t k = L->open_len;
    while (k > 0 && L->open[k - 1].event != ev)
        k--;
    if (k == 0) {
        out->counts.unmatched_ends++;
        return add_unmatched(out, ts, i, L, seq, (uint16_t)ev, WL_IK_END);
    }
    if (out->n_slices == out->slices_cap &&
        grow((void **)&out->slices, &out->slices_cap, out->n_slices + 1, sizeof *out->slices))
        return -1;
    const open_begin *o = &L->open[k - 1];
    wl_ik_slice *s = &out->slices[out->n_slices++];
    s->start_ns = o->ts;
    s->dur_ns = ts - o->ts;
    s->begin_seq = o->seq;
    s->end_seq = seq;
    uint64_t meta = o->meta;
    if (k != L->open_len) {
        /* later begins are still open: this slice overlaps them partially */
        meta |= d->bits.crossed;
        out->counts.crossed++;
        memmove(&L->open[k - 1], &L->open[k], (L->open_len - k) * sizeof *L->open);
    }
    memcpy((unsigned char *)s + offsetof(wl_ik_slice, end_seq) + 4, &meta, sizeof meta);
    L->open_len--;
    return 0;
}

/* The instants are full: doubles them. */
static NOINLINE int instants_grow(wl_ik_result *out)
{
    return grow((void **)&out->instants, &out->instants_cap, out->n_instants + 1,
                sizeof *out->instants);
}

static NOINLINE void misplaced(decoder *d, uint64_t i, uint64_t w, uint64_t col)
{
    set_err(d->err, i,
            "misplaced record at word %llu (0x%016llx): it carries lane %u but that slot belongs "
            "to lane %llu (stride %llu)",
            (unsigned long long)i, (unsigned long long)w, (uint32_t)w >> 12,
            (unsigned long long)col, (unsigned long long)d->stride);
}

static NOINLINE void bad_tag(decoder *d, uint64_t i, uint32_t tag)
{
    const uint32_t bg = tag >> 12;
    if (bg >= d->lanes_n)
        set_err(d->err, i,
                "invalid tag at word %llu (0x%08x): lane %u is outside the %llu lanes of the header",
                (unsigned long long)i, tag, bg, (unsigned long long)d->lanes_n);
    else
        set_err(d->err, i, "invalid tag at word %llu (0x%08x): finalize with event bits %u",
                (unsigned long long)i, tag, (tag >> 2) & 0x3ffu);
}

/* Output cursors of the loop, kept in registers (synced to `out` around the cold calls). */
typedef struct cursor {
    wl_ik_slice *slices;
    wl_ik_instant *instants;
    size_t n_s, cap_s, n_i, cap_i;
    uint64_t empty;  /* zero words; records = words - 1 - empty (zeros are the rarer case) */
} cursor;

static ALWAYS_INLINE void cursor_sync(wl_ik_result *out, const cursor *k)
{
    out->n_slices = k->n_s;
    out->n_instants = k->n_i;
}

static ALWAYS_INLINE void cursor_load(cursor *k, const wl_ik_result *out)
{
    k->slices = out->slices;
    k->instants = out->instants;
    k->n_s = out->n_slices;
    k->cap_s = out->slices_cap;
    k->n_i = out->n_instants;
    k->cap_i = out->instants_cap;
}

/* Records of a lane that are not decoded (finalized lane, over its limit) and a lane's first
 * record. Returns 1 when the record is consumed (counted), 0 when it is to be decoded. */
static NOINLINE int lane_cold(decoder *d, lane_state *L, uint32_t bg, uint32_t raw, int over)
{
    if (L->state == LANE_FINALIZED) {
        d->out->counts.after_finalize++;
        return 1;
    }
    if (over) {
        d->out->counts.over_capacity++;
        return 1;
    }
    lane_start(d, L, bg, raw);
    return 0;
}

/* One non-zero word whose lane index bg was checked (< lanes_n) and, for a finalize, whose event
 * bits were checked. `over`: the record is past its lane's limit (by slot row when the stride is
 * known, else by the lane's record count, tested here). Returns 0 or -2 (out of memory). */
static ALWAYS_INLINE int decode_record(decoder *d, cursor *k, uint64_t i, uint64_t w, uint32_t bg,
                                       int over)
{
    const uint32_t tag = (uint32_t)w, raw = (uint32_t)(w >> 32);
    const uint32_t type = tag & 3u, ev = (tag >> 2) & 0x3ffu;
    lane_state *const L = &d->lanes[bg];
    if (UNLIKELY(L->state != LANE_LIVE || over) && lane_cold(d, L, bg, raw, over))
        return 0;
    const uint64_t ts = L->last_ts + (uint32_t)(raw - (uint32_t)L->last_ts);
    L->last_ts = ts;
    const uint32_t seq = L->nrec++;

    if (type == WL_IK_BEGIN) {
        if (UNLIKELY(L->open_len == L->open_cap) && open_grow(L))
            return -2;
        const uint32_t depth = L->open_len > 255 ? 255 : L->open_len;
        open_begin *o = &L->open[L->open_len++];
        o->ts = ts;
        o->meta = L->meta + ev * d->bits.event + depth * d->bits.depth;
        o->word = i;
        o->seq = seq;
        o->event = ev;
    } else if (type == WL_IK_END) {
        const uint32_t top = L->open_len;
        if (LIKELY(top != 0 && L->open[top - 1].event == ev && k->n_s != k->cap_s)) {
            const open_begin *o = &L->open[top - 1];
            put_slice(&k->slices[k->n_s++], o->ts, ts - o->ts, o->seq, seq, o->meta);
            L->open_len = top - 1;
        } else { /* crossed, unmatched or the slices are full */
            cursor_sync(d->out, k);
            if (end_slow(d, L, i, ts, seq, ev))
                return -2;
            cursor_load(k, d->out);
        }
    } else if (type == WL_IK_INSTANT) {
        if (UNLIKELY(k->n_i == k->cap_i)) {
            cursor_sync(d->out, k);
            if (instants_grow(d->out))
                return -2;
            cursor_load(k, d->out);
        }
        put_instant(&k->instants[k->n_i++], ts, L->block, L->group, seq, ev);
    } else {
        L->state = LANE_FINALIZED;
        d->out->counts.lanes_finalized++;
    }
    return 0;
}

/* Stride unknown: the lane comes from the tag. Returns 0, -1 (err set) or -2 (out of memory). */
static ALWAYS_INLINE int decode_tagged(decoder *d, cursor *k)
{
    const unsigned char *const p = d->p;
    const uint64_t n = d->n_words, lanes_n = d->lanes_n;
    const uint32_t rec_limit = d->rec_limit;
    for (uint64_t i = 1; i < n; i++) {
        const uint64_t w = load_le64(p + i * 8);
        if (w == 0) {
            k->empty++;
            continue;
        }
        const uint32_t tag = (uint32_t)w, bg = tag >> 12;
        /* one test for both tag errors: a lane past the header, a finalize with event bits */
        if (UNLIKELY(bg >= lanes_n || ((tag & 0xfffu) > 3u && (tag & 3u) == WL_IK_FINALIZE))) {
            bad_tag(d, i, tag);
            return -1;
        }
        if (decode_record(d, k, i, w, bg, d->lanes[bg].nrec >= rec_limit))
            return -2;
    }
    return 0;
}

/* Stride known: slot (row, col) is word 1 + row * stride + col and must hold lane col, so rows are
 * walked lane by lane (the lane states are read in order, independently of the data) and the
 * columns past the lanes (stride > lanes) can only hold errors. */
/* A row past the lanes' record limit: its records are counted (after finalize, over capacity),
 * never decoded, but still checked. Returns 0 or -1 (err set). */
static NOINLINE int grid_row_over(decoder *d, uint64_t base, uint64_t live, uint64_t *empty)
{
    for (uint64_t col = 0; col < live; col++) {
        const uint64_t i = base + col, w = load_le64(d->p + i * 8);
        if (w == 0) {
            (*empty)++;
            continue;
        }
        const uint32_t tag = (uint32_t)w;
        if ((tag >> 12) != col) {
            misplaced(d, i, w, col);
            return -1;
        }
        if ((tag & 0xfffu) > 3u && (tag & 3u) == WL_IK_FINALIZE) {
            bad_tag(d, i, tag);
            return -1;
        }
        if (d->lanes[col].state == LANE_FINALIZED)
            d->out->counts.after_finalize++;
        else
            d->out->counts.over_capacity++;
    }
    return 0;
}

static ALWAYS_INLINE int decode_grid(decoder *d, cursor *k)
{
    const unsigned char *const p = d->p;
    const uint64_t n = d->n_words, lanes_n = d->lanes_n, stride = d->stride;
    for (uint64_t row = 0, base = 1; base < n; row++, base += stride) {
        const uint64_t cols = n - base < stride ? n - base : stride;
        const uint64_t live = cols < lanes_n ? cols : lanes_n;
        if (UNLIKELY(row >= d->row_limit)) {
            if (grid_row_over(d, base, live, &k->empty))
                return -1;
        } else {
            for (uint64_t col = 0; col < live; col++) {
                const uint64_t i = base + col, w = load_le64(p + i * 8);
                if (w == 0) {
                    k->empty++;
                    continue;
                }
                const uint32_t tag = (uint32_t)w;
                if (UNLIKELY((tag >> 12) != col)) {
                    misplaced(d, i, w, col);
                    return -1;
                }
                if (UNLIKELY((tag & 0xfffu) > 3u && (tag & 3u) == WL_IK_FINALIZE)) {
                    bad_tag(d, i, tag);
                    return -1;
                }
                if (decode_record(d, k, i, w, (uint32_t)col, 0))
                    return -2;
            }
        }
        for (uint64_t col = live; col < cols; col++) {
            const uint64_t i = base + col, w = load_le64(p + i * 8);
            if (w == 0) {
                k->empty++;
                continue;
            }
            if (((uint32_t)w >> 12) != col)
                misplaced(d, i, w, col);
            else
                bad_tag(d, i, (uint32_t)w);
            return -1;
        }
    }
    return 0;
}

/* Runs the loop; returns 0, -1 (err set) or -2 (out of memory). The cursor's address never leaves
 * this function (everything that takes it is inlined), so it lives in registers: kept in memory,
 * every slice paid a store-to-load forwarding latency on its count. */
static NOINLINE_HOT int decode_words(decoder *d)
{
    cursor k;
    memset(&k, 0, sizeof k);
    cursor_load(&k, d->out);
    const int rc = d->stride ? decode_grid(d, &k) : decode_tagged(d, &k);
#if defined(__SSE2__)
    _mm_sfence(); /* the non-temporal stores are ordered before anything the caller does next */
#endif
    cursor_sync(d->out, &k);
    d->out->counts.empty = k.empty;
    d->out->counts.records = d->n_words - 1 - k.empty;
    return rc;
}

static void free_lanes(lane_state *lanes, uint64_t n)
{
    if (!lanes)
        return;
    for (uint64_t i = 0; i < n; i++)
        if (lanes[i].heap)
            free(lanes[i].open);
    free(lanes);
}

int wl_ik_decode_reuse(const void *data, size_t n_words, const wl_ik_options *opt,
                       wl_ik_result *out, wl_ik_error *err)
{
    const unsigned char *p = data;
    {
        /* keep the arrays, forget everything else */
        wl_ik_result keep = *out;
        memset(out, 0, sizeof *out);
        out->slices = keep.slices;
        out->slices_cap = keep.slices_cap;
        out->instants = keep.instants;
        out->instants_cap = keep.instants_cap;
        out->unmatched = keep.unmatched;
        out->unmatched_cap = keep.unmatched_cap;
    }
    if (err) {
        err->word = 0;
        err->msg[0] = 0;
    }
    if (n_words == 0 || !data) {
        set_err(err, 0, "empty buffer: no header word (word 0)");
        wl_ik_result_free(out);
        return -1;
    }
    uint64_t hdr = load_le64(p);
    uint64_t ng = hdr >> 32, nb = hdr & 0xffffffffu;
    if (hdr == 0) {
        set_err(err, 0, "header (word 0) is zero: the kernel did not write the buffer");
        wl_ik_result_free(out);
        return -1;
    }
    if (ng == 0 || nb == 0) {
        set_err(err, 0, "invalid header (word 0) 0x%016llx: num_groups %llu, num_blocks %llu",
                (unsigned long long)hdr, (unsigned long long)ng, (unsigned long long)nb);
        wl_ik_result_free(out);
        return -1;
    }
    if (ng > WL_IK_MAX_LANES || nb > WL_IK_MAX_LANES || nb * ng > WL_IK_MAX_LANES) {
        set_err(err, 0,
                "invalid header (word 0) 0x%016llx: %llu blocks x %llu groups exceeds the 2^20 "
                "lanes a tag can address",
                (unsigned long long)hdr, (unsigned long long)nb, (unsigned long long)ng);
        wl_ik_result_free(out);
        return -1;
    }
    const uint64_t lanes_n = nb * ng;
    if ((uint64_t)n_words < 1 + lanes_n) {
        set_err(err, n_words,
                "truncated buffer at word %llu: the header declares %llu lanes (needs at least "
                "%llu words)",
                (unsigned long long)n_words, (unsigned long long)lanes_n,
                (unsigned long long)(1 + lanes_n));
        wl_ik_result_free(out);
        return -1;
    }
    const uint64_t stride = opt ? opt->stride : 0;
    const uint32_t max_rec = opt ? opt->max_records : 0;
    if (stride && stride < lanes_n) {
        set_err(err, 0, "stride %llu is smaller than the %llu lanes the header (word 0) declares",
                (unsigned long long)stride, (unsigned long long)lanes_n);
        wl_ik_result_free(out);
        return -1;
    }

    decoder d;
    memset(&d, 0, sizeof d);
    d.p = p;
    d.n_words = n_words;
    d.lanes_n = lanes_n;
    d.ng = ng;
    d.stride = stride;
    d.row_limit = max_rec ? max_rec : UINT64_MAX;
    d.rec_limit = max_rec ? max_rec : UINT32_MAX;
    d.out = out;
    d.err = err;
    slice_bits_init(&d.bits);
    /* lane states are touched only for lanes that appear (calloc of large blocks maps zero pages) */
    d.lanes = calloc(lanes_n, sizeof *d.lanes);
    d.pool = malloc(lanes_n * INLINE_OPEN * sizeof *d.pool);
    if (!d.lanes || !d.pool) {
        free(d.lanes);
        free(d.pool);
        set_err(err, 0, "out of memory for %llu lanes", (unsigned long long)lanes_n);
        wl_ik_result_free(out);
        return -1;
    }
    out->num_blocks = (uint32_t)nb;
    out->num_groups = (uint32_t)ng;
    wl_ik_counts *c = &out->counts;
    c->words = n_words;

    /* First sizes of the outputs when they are new: a quarter of the words for slices (two
     * records each, plus instants), an eighth for instants; outgrown by doubling. */
    const size_t body = n_words - 1;
    if ((!out->slices_cap && grow((void **)&out->slices, &out->slices_cap, body / 4 + 16,
                                  sizeof *out->slices)) ||
        (!out->instants_cap && grow((void **)&out->instants, &out->instants_cap, body / 8 + 16,
                                    sizeof *out->instants)))
        goto oom;

    int rc = decode_words(&d);
    if (rc == -2)
        goto oom;
    if (rc != 0)
        goto fail;

    /* Begins still open at the end are reported, never paired. */
    int64_t min_ts = INT64_MAX, max_ts = INT64_MIN;
    for (uint64_t bg = 0; bg < lanes_n; bg++) {
        lane_state *L = &d.lanes[bg];
        if (L->state == LANE_UNSEEN)
            continue;
        if ((int64_t)L->first_ts < min_ts)
            min_ts = (int64_t)L->first_ts;
        if ((int64_t)L->last_ts > max_ts)
            max_ts = (int64_t)L->last_ts;
        for (uint32_t k = 0; k < L->open_len; k++) {
            c->unmatched_begins++;
            if (add_unmatched(out, L->open[k].ts, L->open[k].word, L, L->open[k].seq,
                              (uint16_t)L->open[k].event, WL_IK_BEGIN))
                goto oom;
        }
    }
    c->slices = out->n_slices;
    c->instants = out->n_instants;
    free_lanes(d.lanes, lanes_n);
    free(d.pool);
    if (c->lanes_seen) {
        out->min_ts = (uint64_t)min_ts;
        out->max_ts = (uint64_t)max_ts;
        /* Rare: a lane began before the reference's wrap. Adding one epoch keeps every timestamp
         * >= 0 and congruent to its %globaltimer_lo value mod 2^32. */
        if (min_ts < 0) {
            uint64_t e = EPOCH;
            for (size_t i = 0; i < out->n_slices; i++)
                out->slices[i].start_ns += e;
            for (size_t i = 0; i < out->n_instants; i++)
                out->instants[i].ts_ns += e;
            for (size_t i = 0; i < out->n_unmatched; i++)
                out->unmatched[i].ts_ns += e;
            out->min_ts += e;
            out->max_ts += e;
        }
    }
    return 0;

oom:
    set_err(err, 0, "out of memory while decoding");
fail:
    free_lanes(d.lanes, lanes_n);
    free(d.pool);
    wl_ik_result_free(out);
    return -1;
}

int wl_ik_shift(wl_ik_result *r, int64_t delta)
{
    const uint64_t lim = UINT64_C(1) << 63;
    if (r->counts.lanes_seen == 0 && r->n_slices == 0 && r->n_instants == 0 && r->n_unmatched == 0) {
        r->shift_ns += delta;
        return 0;
    }
    /* every timestamp lies within [min_ts, max_ts]: checking the extent is enough */
    if (delta < 0 ? r->min_ts < (uint64_t)(-(delta + 1)) + 1 : r->max_ts >= lim - (uint64_t)delta)
        return -1;
    if (r->max_ts >= lim)
        return -1;
    uint64_t d = (uint64_t)delta; /* modular add works for both signs */
    for (size_t i = 0; i < r->n_slices; i++)
        r->slices[i].start_ns += d;
    for (size_t i = 0; i < r->n_instants; i++)
        r->instants[i].ts_ns += d;
    for (size_t i = 0; i < r->n_unmatched; i++)
        r->unmatched[i].ts_ns += d;
    r->min_ts += d;
    r->max_ts += d;
    r->shift_ns += delta;
    return 0;
}
