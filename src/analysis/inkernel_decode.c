/* In-kernel timer buffer decoder (wire format v1): one pass over the words in index order, with a
 * small state per lane (unwrapped clock, stack of open begins). See inkernel_decode.h. */
#include "analysis/inkernel_decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EPOCH (UINT64_C(1) << 32)
#define BIG_ALLOC (UINT64_C(4) << 20) /* outputs this large get transparent huge pages */

typedef struct open_begin {
    uint64_t ts;
    uint64_t word;
    uint32_t seq;
    uint16_t event;
    uint8_t depth;
} open_begin;

typedef struct lane_state {
    uint64_t first_ts, last_ts; /* unwrapped; may be "negative" (mod 2^64) until the final fix */
    uint32_t block, group;
    open_begin *open;
    uint32_t last_raw;
    uint32_t nrec;              /* accepted records so far: the next record's seq */
    uint32_t open_len, open_cap;
    uint8_t seen, finalized;
} lane_state;

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

/* Growable arrays of the three outputs. */
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
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* Exact-size output arrays: big ones are 2 MiB aligned and advised to use huge pages, which
 * divides the page faults of a 1 GiB slice array by 512 (they dominated the decode time). */
static void *alloc_out(size_t n, size_t elem)
{
    if (n == 0)
        return NULL;
    if (n > SIZE_MAX / elem)
        return NULL;
    size_t bytes = n * elem;
    if (bytes < BIG_ALLOC)
        return malloc(bytes);
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes & ~(((size_t)2 << 20) - 1), MADV_HUGEPAGE);
#endif
    return p;
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

static void free_lanes(lane_state *lanes, uint64_t n)
{
    if (!lanes)
        return;
    for (uint64_t i = 0; i < n; i++)
        free(lanes[i].open);
    free(lanes);
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

/* Makes *arr hold at least n elements; the old content is not kept. */
static int ensure(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n <= *cap)
        return 0;
    free(*arr);
    *arr = alloc_out(n, elem);
    *cap = *arr ? n : 0;
    return *arr ? 0 : -1;
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

    lane_state *lanes = calloc(lanes_n, sizeof *lanes);
    if (!lanes) {
        set_err(err, 0, "out of memory for %llu lanes", (unsigned long long)lanes_n);
        wl_ik_result_free(out);
        return -1;
    }
    for (uint64_t bg = 0; bg < lanes_n; bg++) { /* no division per record later */
        lanes[bg].block = (uint32_t)(bg / ng);
        lanes[bg].group = (uint32_t)(bg % ng);
    }
    out->num_blocks = (uint32_t)nb;
    out->num_groups = (uint32_t)ng;
    wl_ik_counts *c = &out->counts;
    c->words = n_words;

    /* Pre-pass: records per type bound the outputs, so they are allocated once, exactly. */
    uint64_t by_type[4] = {0, 0, 0, 0};
    for (uint64_t i = 1; i < n_words; i++) {
        uint64_t w = load_le64(p + i * 8);
        by_type[w & 3] += w != 0;
    }
    if (ensure((void **)&out->slices, &out->slices_cap,
               (size_t)(by_type[0] < by_type[1] ? by_type[0] : by_type[1]), sizeof *out->slices) ||
        ensure((void **)&out->instants, &out->instants_cap, (size_t)by_type[2],
               sizeof *out->instants))
        goto oom;
    const size_t cap_s = out->slices_cap, cap_i = out->instants_cap;

    uint32_t ref_raw = 0;
    int have_ref = 0;
    uint64_t col = 0, row = 0; /* position of word i in the (slot, lane) grid when stride is known */

    for (uint64_t i = 1; i < n_words; i++) {
        uint64_t w = load_le64(p + i * 8);
        uint64_t slot_row = row;
        if (stride) {
            /* advance the grid position incrementally: no division per word */
            uint64_t this_col = col;
            if (++col == stride) {
                col = 0;
                row++;
            }
            if (w == 0) {
                c->empty++;
                continue;
            }
            if ((uint32_t)w >> 12 != this_col) {
                set_err(err, i,
                        "misplaced record at word %llu (0x%016llx): it carries lane %u but that "
                        "slot belongs to lane %llu (stride %llu)",
                        (unsigned long long)i, (unsigned long long)w, (uint32_t)w >> 12,
                        (unsigned long long)this_col, (unsigned long long)stride);
                goto fail;
            }
        } else if (w == 0) {
            c->empty++;
            continue;
        }
        c->records++;
        const uint32_t tag = (uint32_t)w, raw = (uint32_t)(w >> 32);
        const uint32_t bg = tag >> 12, type = tag & 3u;
        const uint16_t ev = (uint16_t)((tag >> 2) & 0x3ffu);
        if (bg >= lanes_n) {
            set_err(err, i,
                    "invalid tag at word %llu (0x%08x): lane %u is outside the %llu lanes of "
                    "the header",
                    (unsigned long long)i, tag, bg, (unsigned long long)lanes_n);
            goto fail;
        }
        if (type == WL_IK_FINALIZE && ev != 0) {
            set_err(err, i, "invalid tag at word %llu (0x%08x): finalize with event bits %u",
                    (unsigned long long)i, tag, ev);
            goto fail;
        }
        lane_state *L = &lanes[bg];
        if (L->finalized) {
            c->after_finalize++;
            continue;
        }
        if (max_rec && (stride ? slot_row : L->nrec) >= max_rec) {
            c->over_capacity++;
            continue;
        }
        uint64_t ts;
        if (!L->seen) {
            if (!have_ref) {
                ref_raw = raw;
                have_ref = 1;
            }
            /* Lanes are unwrapped against one reference (the first record read) so they stay
             * comparable; a lane that started just before a wrap the reference is past comes
             * out "negative" (mod 2^64) and is fixed at the end. */
            ts = (uint64_t)ref_raw + (uint64_t)(int64_t)(int32_t)(raw - ref_raw);
            L->seen = 1;
            L->first_ts = ts;
            c->lanes_seen++;
        } else {
            ts = L->last_ts + (uint32_t)(raw - L->last_raw);
        }
        L->last_ts = ts;
        L->last_raw = raw;
        const uint32_t seq = L->nrec++;

        if (type == WL_IK_BEGIN) {
            if (L->open_len == L->open_cap) {
                size_t cap = L->open_cap;
                if (grow((void **)&L->open, &cap, (size_t)L->open_len + 1, sizeof *L->open) ||
                    cap > UINT32_MAX)
                    goto oom;
                L->open_cap = (uint32_t)cap;
            }
            open_begin *o = &L->open[L->open_len];
            o->ts = ts;
            o->word = i;
            o->seq = seq;
            o->event = ev;
            o->depth = L->open_len > 255 ? 255 : (uint8_t)L->open_len;
            L->open_len++;
        } else if (type == WL_IK_END) {
            uint32_t k = L->open_len;
            while (k > 0 && L->open[k - 1].event != ev)
                k--;
            if (k == 0) {
                c->unmatched_ends++;
                if (add_unmatched(out, ts, i, L, seq, ev, WL_IK_END))
                    goto oom;
                continue;
            }
            if (out->n_slices == cap_s) /* cannot happen: bounded by the pre-pass */
                goto oom;
            const open_begin *o = &L->open[k - 1];
            wl_ik_slice *s = &out->slices[out->n_slices++];
            s->start_ns = o->ts;
            s->dur_ns = ts - o->ts;
            s->block = L->block;
            s->group = L->group;
            s->begin_seq = o->seq;
            s->end_seq = seq;
            s->event = ev;
            s->depth = o->depth;
            s->flags = 0;
            if (k != L->open_len) {
                /* later begins are still open: this slice overlaps them partially */
                s->flags = WL_IK_SLICE_CROSSED;
                c->crossed++;
                memmove(&L->open[k - 1], &L->open[k], (L->open_len - k) * sizeof *L->open);
            }
            L->open_len--;
        } else if (type == WL_IK_INSTANT) {
            if (out->n_instants == cap_i)
                goto oom;
            wl_ik_instant *in = &out->instants[out->n_instants++];
            in->ts_ns = ts;
            in->block = L->block;
            in->group = L->group;
            in->seq = seq;
            in->event = ev;
        } else {
            L->finalized = 1;
            c->lanes_finalized++;
        }
    }

    /* Begins still open at the end are reported, never paired. */
    int64_t min_ts = INT64_MAX, max_ts = INT64_MIN;
    for (uint64_t bg = 0; bg < lanes_n; bg++) {
        lane_state *L = &lanes[bg];
        if (!L->seen)
            continue;
        if ((int64_t)L->first_ts < min_ts)
            min_ts = (int64_t)L->first_ts;
        if ((int64_t)L->last_ts > max_ts)
            max_ts = (int64_t)L->last_ts;
        for (uint32_t k = 0; k < L->open_len; k++) {
            c->unmatched_begins++;
            if (add_unmatched(out, L->open[k].ts, L->open[k].word, L, L->open[k].seq,
                              L->open[k].event, WL_IK_BEGIN))
                goto oom;
        }
    }
    c->slices = out->n_slices;
    c->instants = out->n_instants;
    free_lanes(lanes, lanes_n);
    if (c->lanes_seen) {
        out->min_ts = (uint64_t)min_ts;
        out->max_ts = (uint64_t)max_ts;
        /* Rare: a lane began before the reference's wrap. Adding one epoch keeps every timestamp
         * >= 0 and congruent to its %globaltimer_lo value mod 2^32. */
        if (min_ts < 0) {
            uint64_t d = EPOCH;
            for (size_t i = 0; i < out->n_slices; i++)
                out->slices[i].start_ns += d;
            for (size_t i = 0; i < out->n_instants; i++)
                out->instants[i].ts_ns += d;
            for (size_t i = 0; i < out->n_unmatched; i++)
                out->unmatched[i].ts_ns += d;
            out->min_ts += d;
            out->max_ts += d;
        }
    }
    return 0;

oom:
    set_err(err, 0, "out of memory while decoding");
fail:
    free_lanes(lanes, lanes_n);
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
