/* libFuzzer harness for the in-kernel decoder and its exporters. Input: one option byte (bits 0-1
 * choose a stride: none / lanes / lanes + 1 / 2 * lanes; bits 2-7 a per-lane record limit, 0 =
 * none), then the buffer words. Every successful decode is checked for internal consistency and
 * run through the summary, Chrome JSON, Perfetto and placement code. Built by run_fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/inkernel_decode.h"
#include "export/inkernel_export.h"
#include "export/perfetto_packets.h"

#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "invariant failed: %s (line %d)\n", #c, __LINE__);                     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void check(const wl_ik_result *r)
{
    const wl_ik_counts *c = &r->counts;
    REQUIRE(c->slices == r->n_slices && c->instants == r->n_instants);
    REQUIRE(c->unmatched_begins + c->unmatched_ends == r->n_unmatched);
    /* every record is accounted for exactly once */
    REQUIRE(c->records == 2 * c->slices + c->instants + c->unmatched_begins + c->unmatched_ends +
                              c->after_finalize + c->over_capacity + c->lanes_finalized);
    REQUIRE(c->records + c->empty + 1 == c->words);
    REQUIRE(c->lanes_finalized <= c->lanes_seen);
    for (size_t i = 0; i < r->n_slices; i++) {
        const wl_ik_slice *s = &r->slices[i];
        REQUIRE(s->block < r->num_blocks && s->group < r->num_groups);
        REQUIRE(s->start_ns >= r->min_ts && s->start_ns + s->dur_ns <= r->max_ts);
        REQUIRE(s->begin_seq < s->end_seq);
    }
    for (size_t i = 0; i < r->n_instants; i++)
        REQUIRE(r->instants[i].ts_ns >= r->min_ts && r->instants[i].ts_ns <= r->max_ts);
    for (size_t i = 0; i < r->n_unmatched; i++)
        REQUIRE(r->unmatched[i].block < r->num_blocks && r->unmatched[i].group < r->num_groups);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t o = data[0];
    const uint8_t *words = data + 1;
    size_t n = (size - 1) / 8;
    wl_ik_options opt = {.max_records = o >> 2};
    if (n >= 1 && (o & 3)) {
        uint64_t hdr;
        memcpy(&hdr, words, 8);
        uint64_t lanes = (hdr >> 32) * (hdr & 0xffffffffu);
        if (lanes && lanes <= WL_IK_MAX_LANES)
            opt.stride = (o & 3) == 1 ? lanes : (o & 3) == 2 ? lanes + 1 : 2 * lanes;
    }
    wl_ik_result r;
    wl_ik_error err;
    if (wl_ik_decode(words, n, &opt, &r, &err)) {
        REQUIRE(err.msg[0] != 0);
        return 0;
    }
    check(&r);

    wl_ik_stat *st;
    size_t n_st;
    REQUIRE(wl_ik_summarize(&r, &st, &n_st) == 0);
    uint64_t total = 0;
    for (size_t i = 0; i < n_st; i++) {
        REQUIRE(st[i].min_ns <= st[i].p50_ns && st[i].p50_ns <= st[i].p99_ns &&
                st[i].p99_ns <= st[i].max_ns);
        total += st[i].count;
    }
    REQUIRE(total == r.n_slices);
    free(st);

    wl_ik_names names;
    REQUIRE(wl_ik_names_parse(&names, "a,,\"q\\", "g0", &err) == 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    REQUIRE(fp);
    REQUIRE(wl_ik_write_summary(fp, &r, &names) == 0);
    REQUIRE(wl_ik_write_chrome_json(fp, &r, &names, NULL) == 0);
    wl_pf_writer w;
    REQUIRE(wl_pf_init(&w, fp, 1, 0) == 0);
    wl_ik_perfetto_opts po = {.uuid_base = 1000, .ts_add_ns = -(int64_t)r.min_ts, .max_lanes = 8};
    uint64_t omitted;
    REQUIRE(wl_ik_emit_perfetto(&w, &r, &names, &po, &omitted) == 0);
    REQUIRE(wl_pf_finish(&w) == 0);
    fclose(fp);
    free(buf);
    wl_ik_names_free(&names);

    if (r.counts.lanes_seen) {
        wl_ik_placement pl;
        wl_ik_calibration cal = {.realtime_minus_globaltimer_ns = 500000, .uncertainty_ns = 1000};
        uint64_t start = UINT64_C(1700000000000000000);
        if (wl_ik_place(&r, start, start + (r.max_ts - r.min_ts) + 5000, &cal, &pl, &err) == 0) {
            REQUIRE(pl.method == WL_IK_PLACE_CALIBRATED || pl.method == WL_IK_PLACE_CLAMPED);
            if (wl_ik_shift(&r, pl.delta_ns) == 0)
                check(&r);
        }
    }
    wl_ik_result_free(&r);
    return 0;
}
