/* The in-kernel decoder's walk: one pass over the words in index order, with a small state per
 * lane (unwrapped clock, stack of open begins). See inkernel_walk.h; the entry points are in
 * inkernel_decode.c.
 *
 * Speed (bench/bench_decode.c, bench/results/decode.txt): two paths over one state. record_fast
 * takes the records of a well-formed buffer: a begin, a matched end or an instant of a live lane
 * whose open begins fit its inline slots. Its tests are one compare of the record's lane bits
 * against the lane's key (which checks the slot's owner and the lane's state at once) and the
 * type's own precondition; the output has room made per row (or run of words), the slice bit units
 * are constants, and the lane's count of records and of open begins share one word. Everything
 * else -- a lane's first record, finalizes, records after them or past a limit, deep nesting,
 * crossed and unmatched ends, every error -- goes to record_slow (out of line), which handles any
 * record from the same state, so the fast path only ever declines. Slices are written as
 * precomputed 8-byte bitfield words (the begin stores the slice's block / group / event / depth
 * bits, the end loads them with the begin's seq as the slice's last 16 bytes). Each row of the
 * grid is walked by a function of its own, so its loop has the registers to itself. One pass: the
 * outputs grow geometrically (realloc of large blocks is an mremap, no copy), so the input is read
 * once. */
#include "analysis/inkernel_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define BIG_ALLOC (UINT64_C(4) << 20) /* outputs this large get transparent huge pages */

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

/* The slice's bit units, found from the compiler's own layout. */
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

void wl_ik_set_err(wl_ik_error *err, uint64_t word, const char *fmt, ...)
{
    if (!err)
        return;
    err->word = word;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

/* Growable arrays of the outputs. Large blocks are 2 MiB aligned and advised to use huge pages,
 * which divides the page faults of a 1 GiB slice array by 512 (they dominated the decode time);
 * growing them is a realloc, which glibc does with mremap (no copy). The old content is kept. */
int wl_ik_grow(void **arr, size_t *cap, size_t need, size_t elem)
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

/* Adds one unmatched record; returns -1 on allocation failure. */
int wl_ik_add_unmatched(wl_ik_result *r, uint64_t ts, uint64_t word, const lane_cold *L,
                        uint32_t seq, uint16_t ev, uint8_t type)
{
    if (wl_ik_grow((void **)&r->unmatched, &r->unmatched_cap, r->n_unmatched + 1,
                   sizeof *r->unmatched))
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

/* Output element stores. The outputs of a large buffer are far bigger than the caches and are
 * not read back during the decode, so on x86 they are written with non-temporal stores: the
 * ordinary stores' read-for-ownership of every output line halves the bandwidth left for them
 * (bench: the decode was store-bound). Slices are 32 bytes (16-byte aligned: malloc and the 2 MiB
 * blocks both give that), instants 24 (three 8-byte stores). */
static ALWAYS_INLINE void put_instant(wl_ik_instant *in, uint64_t ts, uint64_t bgw, uint32_t seq,
                                      uint32_t ev)
{
#if defined(__SSE2__) && defined(__x86_64__)
    long long *q = (long long *)(void *)in;
    _mm_stream_si64(q, (long long)ts);
    _mm_stream_si64(q + 1, (long long)bgw);                        /* block, group */
    _mm_stream_si64(q + 2, (long long)((uint64_t)ev << 32 | seq)); /* seq, event, padding 0 */
#else
    in->ts_ns = ts;
    in->block = (uint32_t)bgw;
    in->group = (uint32_t)(bgw >> 32);
    in->seq = seq;
    in->event = (uint16_t)ev;
#endif
}

/* An end's slice from its open begin: the begin's seq, event and meta are loaded as the slice's
 * last 16 bytes and the event's half replaced by the end's seq (ctr's high half). */
_Static_assert(offsetof(open_begin, event) == offsetof(open_begin, seq) + 4 &&
                   offsetof(open_begin, meta) == offsetof(open_begin, seq) + 8,
               "open_begin: seq, event, meta contiguous, as the slice's last 16 bytes");
static ALWAYS_INLINE void put_slice_of(wl_ik_slice *s, const open_begin *o, uint64_t ts,
                                       uint64_t ctr)
{
#if defined(__SSE2__)
    __m128i *v = (__m128i *)(void *)s;
    const __m128i keep = _mm_set_epi32(-1, -1, 0, -1); /* seq and meta; not the event */
    __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)&o->seq);
    hi = _mm_or_si128(_mm_and_si128(hi, keep),
                      _mm_cvtsi64_si128((long long)(ctr & ~(uint64_t)UINT32_MAX)));
    _mm_stream_si128(v, _mm_set_epi64x((long long)(ts - o->ts), (long long)o->ts));
    _mm_stream_si128(v + 1, hi);
#else
    s->start_ns = o->ts;
    s->dur_ns = ts - o->ts;
    s->begin_seq = o->seq;
    s->end_seq = (uint32_t)(ctr >> 32);
    memcpy((unsigned char *)s + offsetof(wl_ik_slice, end_seq) + 4, &o->meta, sizeof o->meta);
#endif
}

/* First accepted record of a lane: its place in the grid of lanes and its unwrapping. Lanes are
 * unwrapped against one reference (the first record read) so they stay comparable; a lane that
 * started just before a wrap the reference is past comes out "negative" (mod 2^64) and is fixed
 * at the end. */
static NOINLINE void lane_start(decoder *d, uint32_t bg, uint32_t raw)
{
    lane_hot *H = &d->hot[bg];
    lane_cold *L = &d->cold[bg];
    if (!d->have_ref) {
        d->ref_raw = raw;
        d->have_ref = 1;
    }
    const uint64_t ts = (uint64_t)d->ref_raw + (uint64_t)(int64_t)(int32_t)(raw - d->ref_raw);
    L->block = (uint32_t)(bg / d->ng);
    L->group = (uint32_t)(bg % d->ng);
    L->open = d->pool + (size_t)bg * IK_INLINE_OPEN;
    L->open_cap = IK_INLINE_OPEN;
    L->first_ts = ts;
    L->state = LANE_LIVE;
    H->last_ts = ts;
    H->ctr = 0;
    H->meta = L->block * d->bits.block + L->group * d->bits.group;
    H->key = d->fast ? bg : KEY_SLOW;
    d->out->counts.lanes_seen++;
}

/* A begin deeper than the lane's stack: moves the stack to (a larger) heap array. The lane then
 * leaves the fast path for good (record_fast only knows the inline slots in the pool). */
static NOINLINE int open_grow(decoder *d, uint32_t bg, uint32_t open_len)
{
    lane_cold *L = &d->cold[bg];
    size_t cap = L->open_cap;
    open_begin *old = L->open;
    open_begin *p = L->heap ? old : NULL;
    if (wl_ik_grow((void **)&p, &cap, (size_t)open_len + 1, sizeof *p) || cap > UINT32_MAX)
        return -1;
    if (!L->heap)
        memcpy(p, old, (size_t)open_len * sizeof *p);
    L->open = p;
    L->open_cap = (uint32_t)cap;
    L->heap = 1;
    d->hot[bg].key = KEY_SLOW;
    return 0;
}

/* An end, out of line: its begin on top (a lane off the fast path), below the top (a crossed
 * slice) or nowhere (unmatched). Returns 0 or -1 (out of memory). */
static NOINLINE int end_slow(decoder *d, uint32_t bg, uint64_t i, uint64_t ts, uint32_t seq,
                             uint32_t ev)
{
    wl_ik_result *out = d->out;
    lane_hot *H = &d->hot[bg];
    lane_cold *L = &d->cold[bg];
    const uint32_t open_len = (uint32_t)H->ctr;
    uint32_t k = open_len;
    while (k > 0 && L->open[k - 1].event != ev)
        k--;
    if (k == 0) {
        out->counts.unmatched_ends++;
        return wl_ik_add_unmatched(out, ts, i, L, seq, (uint16_t)ev, WL_IK_END);
    }
    if (out->n_slices == out->slices_cap &&
        wl_ik_grow((void **)&out->slices, &out->slices_cap, out->n_slices + 1, sizeof *out->slices))
        return -1;
    const open_begin *o = &L->open[k - 1];
    wl_ik_slice *s = &out->slices[out->n_slices++];
    s->start_ns = o->ts;
    s->dur_ns = ts - o->ts;
    s->begin_seq = o->seq;
    s->end_seq = seq;
    uint64_t meta = o->meta;
    if (k != open_len) {
        /* later begins are still open: this slice overlaps them partially */
        meta |= d->bits.crossed;
        out->counts.crossed++;
        memmove(&L->open[k - 1], &L->open[k], (open_len - k) * sizeof *L->open);
    }
    memcpy((unsigned char *)s + offsetof(wl_ik_slice, end_seq) + 4, &meta, sizeof meta);
    H->ctr--;
    return 0;
}

/* The instants are full: doubles them. */
static NOINLINE int instants_grow(wl_ik_result *out)
{
    return wl_ik_grow((void **)&out->instants, &out->instants_cap, out->n_instants + 1,
                      sizeof *out->instants);
}

static NOINLINE void misplaced(decoder *d, uint64_t i, uint64_t w, uint64_t col)
{
    wl_ik_set_err(d->err, i,
                  "misplaced record at word %llu (0x%016llx): it carries lane %u but that slot "
                  "belongs to lane %llu (stride %llu)",
                  (unsigned long long)i, (unsigned long long)w, (uint32_t)w >> 12,
                  (unsigned long long)col, (unsigned long long)d->stride);
}

static NOINLINE void bad_tag(decoder *d, uint64_t i, uint32_t tag)
{
    const uint32_t bg = tag >> 12;
    if (bg >= d->lanes_n)
        wl_ik_set_err(d->err, i,
                      "invalid tag at word %llu (0x%08x): lane %u is outside the %llu lanes of "
                      "the header",
                      (unsigned long long)i, tag, bg, (unsigned long long)d->lanes_n);
    else
        wl_ik_set_err(d->err, i, "invalid tag at word %llu (0x%08x): finalize with event bits %u",
                      (unsigned long long)i, tag, (tag >> 2) & 0x3ffu);
}

/* A finalize carrying event bits: not a record of wire format v1. */
static ALWAYS_INLINE int bad_finalize(uint32_t tag)
{
    return (tag & 0xfffu) > 3u && (tag & 3u) == WL_IK_FINALIZE;
}

/* Output cursors of the loop, kept in registers (synced to `out` around the cold calls): the next
 * element of each output, one register each (the capacity is checked per row, see reserve). */
typedef struct cursor {
    wl_ik_slice *s;
    wl_ik_instant *in;
    uint64_t empty;  /* zero words; records = words - 1 - empty (zeros are the rarer case) */
} cursor;

static ALWAYS_INLINE void cursor_sync(wl_ik_result *out, const cursor *k)
{
    out->n_slices = (size_t)(k->s - out->slices);
    out->n_instants = (size_t)(k->in - out->instants);
}

static ALWAYS_INLINE void cursor_load(cursor *k, const wl_ik_result *out)
{
    k->s = out->slices + out->n_slices;
    k->in = out->instants + out->n_instants;
}

/* Any record, out of line: the first of a lane, records of a finalized lane or past the lane's
 * limit (`over`: by slot row when the stride is known, else by the lane's record count, tested
 * here), finalizes, deep nesting, crossed and unmatched ends, every record of a lane off the fast
 * path. The lane index bg was
 * checked (< lanes_n, and the slot's owner when the stride is known) and so were a finalize's event
 * bits. Works on the outputs in `out` (the caller syncs its cursor). Returns 0 or -2 (out of
 * memory). */
static NOINLINE int record_slow(decoder *d, uint64_t i, uint64_t w, uint32_t bg, int over)
{
    const uint32_t tag = (uint32_t)w, raw = (uint32_t)(w >> 32);
    const uint32_t type = tag & 3u, ev = (tag >> 2) & 0x3ffu;
    wl_ik_result *out = d->out;
    lane_hot *H = &d->hot[bg];
    lane_cold *L = &d->cold[bg];
    if (L->state == LANE_FINALIZED) {
        out->counts.after_finalize++;
        return 0;
    }
    if (over || (L->state == LANE_LIVE && (uint32_t)(H->ctr >> 32) >= d->rec_limit)) {
        out->counts.over_capacity++;
        return 0;
    }
    if (L->state == LANE_UNSEEN)
        lane_start(d, bg, raw);
    const uint64_t ts = H->last_ts + (uint32_t)(raw - (uint32_t)H->last_ts);
    H->last_ts = ts;
    const uint32_t seq = (uint32_t)(H->ctr >> 32), open_len = (uint32_t)H->ctr;
    H->ctr += CTR_REC;

    if (type == WL_IK_BEGIN) {
        if (open_len == L->open_cap && open_grow(d, bg, open_len))
            return -2;
        const uint32_t depth = open_len > 255 ? 255 : open_len;
        open_begin *o = &L->open[open_len];
        o->ts = ts;
        o->meta = H->meta + ev * d->bits.event + depth * d->bits.depth;
        o->word = i;
        o->seq = seq;
        o->event = ev;
        H->ctr++;
    } else if (type == WL_IK_END) {
        if (end_slow(d, bg, i, ts, seq, ev))
            return -2;
    } else if (type == WL_IK_INSTANT) {
        if (out->n_instants == out->instants_cap && instants_grow(out))
            return -2;
        wl_ik_instant *in = &out->instants[out->n_instants++];
        in->ts_ns = ts;
        in->block = L->block;
        in->group = L->group;
        in->seq = seq;
        in->event = (uint16_t)ev;
    } else {
        L->state = LANE_FINALIZED;
        H->key = KEY_SLOW;
        out->counts.lanes_finalized++;
    }
    return 0;
}

/* The slice's bit units as the fast path uses them: constants, so they cost no register in the
 * loop. This is the layout GCC and Clang give the bitfields on little-endian targets; a decode
 * checks it against the compiler's own (slice_bits_init) and, where it differs, sends every record
 * to record_slow, which uses the measured units. */
#define FAST_EVENT_UNIT (UINT64_C(1) << 52)
#define FAST_DEPTH_UNIT (UINT64_C(1) << 20)

static int fast_layout_ok(const slice_bits *b)
{
    return b->event == FAST_EVENT_UNIT && b->depth == FAST_DEPTH_UNIT;
}

/* One non-zero word of a lane whose key matched (live, open begins inline): a begin, a matched end
 * or an instant. The caller made room for one more slice and instant per word of its run (see
 * reserve). Returns 1 when it was decoded, 0 when nothing was changed and the record is for
 * record_slow. `limit`: records a lane may use (stride unknown), else UINT32_MAX. `tagged`: keep the
 * begin's word offset i (with the stride known it is not kept: find_open_words in
 * inkernel_decode.c finds the few that are reported). Per record: the hot state's words, one slot
 * of the stack, one output element. */
static ALWAYS_INLINE int record_fast(lane_hot *H, open_begin *stk, cursor *k, uint64_t i,
                                     uint64_t w, uint32_t limit, int tagged)
{
    const uint32_t tag = (uint32_t)w, raw = (uint32_t)(w >> 32);
    const uint32_t type = tag & 3u, ev = (tag >> 2) & 0x3ffu;
    const uint64_t last = H->last_ts, ctr = H->ctr;
    const uint64_t ts = last + (uint32_t)(raw - (uint32_t)last);
    const uint32_t seq = (uint32_t)(ctr >> 32), depth = (uint32_t)ctr;
    if (limit != UINT32_MAX && UNLIKELY(seq >= limit))
        return 0;
    if (type == WL_IK_BEGIN) {
        if (UNLIKELY(depth >= IK_INLINE_OPEN))
            return 0;
        open_begin *o = &stk[depth];
        o->ts = ts;
        o->meta = H->meta + ev * FAST_EVENT_UNIT + depth * FAST_DEPTH_UNIT;
        if (tagged) /* with the stride known, unmatched begins are found again at the end */
            o->word = i;
        o->seq = seq;
        o->event = ev;
        H->ctr = ctr + CTR_REC + 1;
    } else if (type == WL_IK_END) {
        if (UNLIKELY(depth == 0))
            return 0;
        const open_begin *o = &stk[depth - 1];
        if (UNLIKELY(o->event != ev))
            return 0;
        put_slice_of(k->s++, o, ts, ctr);
        H->ctr = ctr + CTR_REC - 1;
    } else if (type == WL_IK_INSTANT) {
        put_instant(k->in++, ts, H->meta, seq, ev);
        H->ctr = ctr + CTR_REC;
    } else {
        return 0;
    }
    H->last_ts = ts;
    return 1;
}

/* Room for n more slices and n more instants, so the fast path needs no capacity test: a run of n
 * words adds at most that many. Returns 0 or -2 (out of memory). */
static NOINLINE int reserve_slow(decoder *d, cursor *k, size_t n)
{
    wl_ik_result *out = d->out;
    cursor_sync(out, k);
    if (wl_ik_grow((void **)&out->slices, &out->slices_cap, out->n_slices + n,
                   sizeof *out->slices) ||
        wl_ik_grow((void **)&out->instants, &out->instants_cap, out->n_instants + n,
                   sizeof *out->instants))
        return -2;
    cursor_load(k, out);
    return 0;
}

static ALWAYS_INLINE int reserve(decoder *d, cursor *k, size_t n)
{
    const wl_ik_result *out = d->out;
    if (LIKELY(out->slices_cap - (size_t)(k->s - out->slices) >= n &&
               out->instants_cap - (size_t)(k->in - out->instants) >= n))
        return 0;
    return reserve_slow(d, k, n);
}

/* record_slow with the loop's cursor synced around it. Returns 0 or -2. */
static ALWAYS_INLINE int record_out_of_line(decoder *d, cursor *k, uint64_t i, uint64_t w,
                                            uint32_t bg, int over)
{
    cursor_sync(d->out, k);
    const int rc = record_slow(d, i, w, bg, over);
    cursor_load(k, d->out);
    return rc;
}

/* Stride unknown: the lane comes from the tag. Returns 0, -1 (err set) or -2 (out of memory). */
#define TAGGED_RUN 4096u /* words per output reservation */
static ALWAYS_INLINE int decode_tagged(decoder *d, cursor *k)
{
    const unsigned char *const p = d->p;
    const uint64_t n = d->n_words, lanes_n = d->lanes_n;
    lane_hot *const hot = d->hot;
    open_begin *const pool = d->pool;
    const uint32_t limit = d->rec_limit;
    for (uint64_t run = 1; run < n; run += TAGGED_RUN) {
        const uint64_t end = n - run < TAGGED_RUN ? n : run + TAGGED_RUN;
        if (reserve(d, k, (size_t)(end - run)))
            return -2;
        for (uint64_t i = run; i < end; i++) {
            const uint64_t w = wl_ik_load_le64(p + i * 8);
            if (w == 0) {
                k->empty++;
                continue;
            }
            const uint32_t tag = (uint32_t)w, bg = tag >> 12;
            if (LIKELY(bg < lanes_n && hot[bg].key == bg) &&
                record_fast(&hot[bg], pool + (size_t)bg * IK_INLINE_OPEN, k, i, w, limit, 1))
                continue;
            /* one test for both tag errors: a lane past the header, a finalize with event bits */
            if (UNLIKELY(bg >= lanes_n || bad_finalize(tag))) {
                bad_tag(d, i, tag);
                return -1;
            }
            if (record_out_of_line(d, k, i, w, bg, 0))
                return -2;
        }
    }
    return 0;
}

/* A record in the grid must carry its slot's lane, and a finalize no event bits. Returns 0 or -1
 * (err set). */
static NOINLINE int grid_check(decoder *d, uint64_t i, uint64_t w, uint64_t col)
{
    const uint32_t tag = (uint32_t)w;
    if ((tag >> 12) != col) {
        misplaced(d, i, w, col);
        return -1;
    }
    if (bad_finalize(tag)) {
        bad_tag(d, i, tag);
        return -1;
    }
    return 0;
}

/* A row past the lanes' record limit: its records are counted (after finalize, over capacity),
 * never decoded, but still checked. Returns 0 or -1 (err set). */
static NOINLINE int grid_row_over(decoder *d, uint64_t base, uint64_t live, uint64_t *empty)
{
    for (uint64_t col = 0; col < live; col++) {
        const uint64_t i = base + col, w = wl_ik_load_le64(d->p + i * 8);
        if (w == 0) {
            (*empty)++;
            continue;
        }
        if (grid_check(d, i, w, col))
            return -1;
        if (d->cold[col].state == LANE_FINALIZED)
            d->out->counts.after_finalize++;
        else
            d->out->counts.over_capacity++;
    }
    return 0;
}

/* A record of the grid the fast path left (lane H, in the row at d->row_base): checks it, then
 * record_slow. Returns 0, -1 (err set) or -2 (out of memory). */
static NOINLINE int grid_slow(decoder *d, const lane_hot *H, uint64_t w)
{
    const uint32_t col = (uint32_t)(H - d->hot);
    const uint64_t i = d->row_base + col;
    return grid_check(d, i, w, col) ? -1 : record_slow(d, i, w, col, 0);
}

/* One row of the grid within the lanes: its own function, so that the registers hold only what
 * the row needs (inlined into the walk of the rows, GCC kept the outer loop's values in registers
 * and spilled both output cursors). Counted up from -live to 0 against the row's ends, so no bound
 * is kept either; the slow path finds the word's offset from the lane and d->row_base. Returns 0,
 * -1 (err set) or -2 (out of memory). */
static NOINLINE_HOT int grid_row(decoder *d, cursor *kp, uint64_t base, uint64_t live)
{
    cursor k = *kp;
    int rc = 0;
    d->row_base = base;
    const unsigned char *const q_end = d->p + (base + live) * 8;
    lane_hot *const hot_end = d->hot + live;
    open_begin *const pool_end = d->pool + live * IK_INLINE_OPEN;
    for (int64_t j = -(int64_t)live; j < 0; j++) {
        const uint64_t w = wl_ik_load_le64(q_end + j * 8);
        if (w == 0) {
            k.empty++;
            continue;
        }
        lane_hot *const H = hot_end + j;
        /* the key is the lane's own index only while it is live and inline, so this one compare
         * also checks the slot's owner */
        if (LIKELY(((uint32_t)w >> 12) == H->key) &&
            record_fast(H, pool_end + j * (int64_t)IK_INLINE_OPEN, &k, 0, w, UINT32_MAX, 0))
            continue;
        cursor_sync(d->out, &k);
        rc = grid_slow(d, H, w);
        cursor_load(&k, d->out);
        if (rc)
            break;
    }
    *kp = k;
    return rc;
}

/* Stride known: slot (row, col) is word 1 + row * stride + col and must hold lane col, so rows are
 * walked lane by lane (the lane states are read in order, independently of the data) and the
 * columns past the lanes (stride > lanes) can only hold errors. */
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
            if (reserve(d, k, (size_t)live))
                return -2;
            const int rc = grid_row(d, k, base, live);
            if (rc)
                return rc;
        }
        for (uint64_t col = live; col < cols; col++) {
            const uint64_t i = base + col, w = wl_ik_load_le64(p + i * 8);
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

/* The cursor lives in registers where records are decoded (here for the tag walk, in grid_row's
 * own copy for the grid): kept in memory, every slice paid a store-to-load forwarding latency on
 * its count. */
int wl_ik_walk(decoder *d)
{
    slice_bits_init(&d->bits);
    d->fast = fast_layout_ok(&d->bits);
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

