/* In-kernel timer buffer decoder (wire format v1), entry points: checks the header and options,
 * sets up the lane states, runs the walk (inkernel_walk.c), then reports the begins left open and
 * makes every timestamp non-negative. Also the buffer size and the shift. See inkernel_decode.h. */
#include "analysis/inkernel_decode.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/inkernel_walk.h"

#define EPOCH (UINT64_C(1) << 32)

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

void wl_ik_result_free(wl_ik_result *r)
{
    if (!r)
        return;
    free(r->slices);
    free(r->instants);
    free(r->unmatched);
    memset(r, 0, sizeof *r);
}

int wl_ik_decode(const void *data, size_t n_words, const wl_ik_options *opt, wl_ik_result *out,
                 wl_ik_error *err)
{
    memset(out, 0, sizeof *out);
    return wl_ik_decode_reuse(data, n_words, opt, out, err);
}

static void free_lanes(decoder *d)
{
    if (d->cold)
        for (uint64_t i = 0; i < d->lanes_n; i++)
            if (d->cold[i].heap)
                free(d->cold[i].open);
    free(d->hot);
    free(d->cold);
    free(d->pool);
}

/* With the stride known the walk does not keep the word of each begin: for a lane whose begins
 * are still open at the end, they are found again in its column. Every non-zero word of the column
 * in the rows below the limit, up to its finalize, was accepted by the walk and numbered in order
 * (seq), and the open begins are in seq order: one pass down the column. */
static void find_open_words(const decoder *d, uint64_t bg, open_begin *open, uint32_t open_len)
{
    const uint64_t rows = (d->n_words - 1) / d->stride + 1; /* row * stride <= n_words - 1 */
    uint32_t k = 0, seq = 0;
    for (uint64_t row = 0; k < open_len && row < rows && row < d->row_limit; row++) {
        const uint64_t i = 1 + row * d->stride + bg;
        if (i >= d->n_words)
            break;
        if (wl_ik_load_le64(d->p + i * 8) == 0)
            continue;
        if (seq++ == open[k].seq)
            open[k++].word = i;
    }
    for (; k < open_len; k++) /* not reached: the walk numbered the same words; never unset */
        open[k].word = d->n_words;
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
        wl_ik_set_err(err, 0, "empty buffer: no header word (word 0)");
        wl_ik_result_free(out);
        return -1;
    }
    uint64_t hdr = wl_ik_load_le64(p);
    uint64_t ng = hdr >> 32, nb = hdr & 0xffffffffu;
    if (hdr == 0) {
        wl_ik_set_err(err, 0, "header (word 0) is zero: the kernel did not write the buffer");
        wl_ik_result_free(out);
        return -1;
    }
    if (ng == 0 || nb == 0) {
        wl_ik_set_err(err, 0, "invalid header (word 0) 0x%016llx: num_groups %llu, num_blocks %llu",
                      (unsigned long long)hdr, (unsigned long long)ng, (unsigned long long)nb);
        wl_ik_result_free(out);
        return -1;
    }
    if (ng > WL_IK_MAX_LANES || nb > WL_IK_MAX_LANES || nb * ng > WL_IK_MAX_LANES) {
        wl_ik_set_err(err, 0,
                      "invalid header (word 0) 0x%016llx: %llu blocks x %llu groups exceeds the "
                      "2^20 lanes a tag can address",
                      (unsigned long long)hdr, (unsigned long long)nb, (unsigned long long)ng);
        wl_ik_result_free(out);
        return -1;
    }
    const uint64_t lanes_n = nb * ng;
    if ((uint64_t)n_words < 1 + lanes_n) {
        wl_ik_set_err(err, n_words,
                      "truncated buffer at word %llu: the header declares %llu lanes (needs at "
                      "least %llu words)",
                      (unsigned long long)n_words, (unsigned long long)lanes_n,
                      (unsigned long long)(1 + lanes_n));
        wl_ik_result_free(out);
        return -1;
    }
    const uint64_t stride = opt ? opt->stride : 0;
    const uint32_t max_rec = opt ? opt->max_records : 0;
    if (stride && stride < lanes_n) {
        wl_ik_set_err(err, 0,
                      "stride %llu is smaller than the %llu lanes the header (word 0) declares",
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
    /* every key starts as KEY_SLOW, so a lane's first record goes to lane_start; the cold states
     * are touched only for lanes that appear (calloc of large blocks maps zero pages) */
    d.hot = malloc(lanes_n * sizeof *d.hot);
    d.cold = calloc(lanes_n, sizeof *d.cold);
    d.pool = malloc(lanes_n * IK_INLINE_OPEN * sizeof *d.pool);
    if (d.hot)
        for (uint64_t bg = 0; bg < lanes_n; bg++)
            d.hot[bg].key = KEY_SLOW;
    if (!d.hot || !d.cold || !d.pool) {
        free_lanes(&d);
        wl_ik_set_err(err, 0, "out of memory for %llu lanes", (unsigned long long)lanes_n);
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
    if ((!out->slices_cap && wl_ik_grow((void **)&out->slices, &out->slices_cap, body / 4 + 16,
                                        sizeof *out->slices)) ||
        (!out->instants_cap && wl_ik_grow((void **)&out->instants, &out->instants_cap,
                                          body / 8 + 16, sizeof *out->instants)))
        goto oom;

    int rc = wl_ik_walk(&d);
    if (rc == -2)
        goto oom;
    if (rc != 0)
        goto fail;

    /* Begins still open at the end are reported, never paired. */
    int64_t min_ts = INT64_MAX, max_ts = INT64_MIN;
    for (uint64_t bg = 0; bg < lanes_n; bg++) {
        const lane_cold *L = &d.cold[bg];
        if (L->state == LANE_UNSEEN)
            continue;
        if ((int64_t)L->first_ts < min_ts)
            min_ts = (int64_t)L->first_ts;
        if ((int64_t)d.hot[bg].last_ts > max_ts)
            max_ts = (int64_t)d.hot[bg].last_ts;
        const uint32_t open_len = (uint32_t)d.hot[bg].ctr;
        if (open_len && stride)
            find_open_words(&d, bg, L->open, open_len);
        for (uint32_t k = 0; k < open_len; k++) {
            c->unmatched_begins++;
            if (wl_ik_add_unmatched(out, L->open[k].ts, L->open[k].word, L, L->open[k].seq,
                                    (uint16_t)L->open[k].event, WL_IK_BEGIN))
                goto oom;
        }
    }
    c->slices = out->n_slices;
    c->instants = out->n_instants;
    free_lanes(&d);
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
    wl_ik_set_err(err, 0, "out of memory while decoding");
fail:
    free_lanes(&d);
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
