/* Unit tests of the in-kernel buffer decoder (src/analysis/inkernel_decode.h) on hand-built
 * vectors: every case listed in the wire-format notes, hostile headers/tags, placement, summary. */
#include <stdlib.h>
#include <string.h>

#include "analysis/inkernel_decode.h"
#include "test.h"

#define REC(ts, bg, ev, type)                                                                      \
    (((uint64_t)(uint32_t)(ts) << 32) | ((uint64_t)(bg) << 12) | ((uint64_t)(ev) << 2) | (type))
#define HDR(ng, nb) (((uint64_t)(ng) << 32) | (uint64_t)(nb))
#define B WL_IK_BEGIN
#define E WL_IK_END
#define I WL_IK_INSTANT
#define F WL_IK_FINALIZE
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const wl_ik_slice *find_slice(const wl_ik_result *r, uint32_t block, uint32_t group,
                                     uint32_t event, size_t nth)
{
    for (size_t i = 0; i < r->n_slices; i++)
        if (r->slices[i].block == block && r->slices[i].group == group &&
            r->slices[i].event == event && nth-- == 0)
            return &r->slices[i];
    return NULL;
}

static void test_notes_vector(void)
{
    const uint64_t w[] = {0x200000001, 0x3e800000004, 0x44c00001004, 0x5dc00000005,
                          0x76c00001005, 0x64000000003, 0x7d000001003, 0, 0};
    wl_ik_result r;
    wl_ik_error err;
    for (int with_stride = 0; with_stride < 2; with_stride++) {
        wl_ik_options opt = {.stride = with_stride ? 2 : 0, .max_records = with_stride ? 4 : 0};
        CHECK_EQ_INT(wl_ik_decode(w, N(w), &opt, &r, &err), 0);
        CHECK_EQ_INT(r.num_groups, 2);
        CHECK_EQ_INT(r.num_blocks, 1);
        CHECK_EQ_INT(r.n_slices, 2);
        const wl_ik_slice *a = find_slice(&r, 0, 0, 1, 0), *b = find_slice(&r, 0, 1, 1, 0);
        CHECK(a && a->start_ns == 1000 && a->dur_ns == 500);
        CHECK(b && b->start_ns == 1100 && b->dur_ns == 800);
        CHECK_EQ_INT(r.counts.lanes_finalized, 2);
        CHECK_EQ_INT(r.counts.lanes_seen, 2);
        CHECK_EQ_INT(r.counts.empty, 2);
        CHECK_EQ_INT(r.counts.records, 6);
        CHECK_EQ_INT(r.n_unmatched, 0);
        CHECK_EQ_INT(r.min_ts, 1000);
        CHECK_EQ_INT(r.max_ts, 2000);
        wl_ik_result_free(&r);
    }
}

static void test_wrap(void)
{
    /* lane 0 straddles the 32-bit wrap; lane 1 starts just after it */
    const uint64_t w[] = {HDR(2, 1), REC(0xFFFFFF00u, 0, 3, B), REC(0x50, 1, 3, B),
                          REC(0x100, 0, 3, E), REC(0x90, 1, 3, E)};
    wl_ik_result r;
    wl_ik_error err;
    CHECK_EQ_INT(wl_ik_decode(w, N(w), NULL, &r, &err), 0);
    const wl_ik_slice *a = find_slice(&r, 0, 0, 3, 0), *b = find_slice(&r, 0, 1, 3, 0);
    CHECK(a && a->dur_ns == 0x200 && a->start_ns == 0xFFFFFF00u);
    CHECK(b && b->dur_ns == 0x40 && b->start_ns == 0x100000050ull);
    CHECK_EQ_INT(r.n_unmatched, 0);
    wl_ik_result_free(&r);

    /* the reference lane (lowest index) started after the wrap, lane 1 just before it */
    const uint64_t w2[] = {HDR(2, 1), REC(0x50, 0, 1, B), REC(0xFFFFFF80u, 1, 1, B),
                           REC(0x70, 0, 1, E), REC(0x10, 1, 1, E)};
    CHECK_EQ_INT(wl_ik_decode(w2, N(w2), NULL, &r, &err), 0);
    a = find_slice(&r, 0, 0, 1, 0);
    b = find_slice(&r, 0, 1, 1, 0);
    CHECK(a && b && b->start_ns < a->start_ns);
    CHECK(a && a->start_ns == 0x100000050ull && a->dur_ns == 0x20);
    CHECK(b && b->start_ns == 0xFFFFFF80u && b->dur_ns == 0x90);
    CHECK(a && (uint32_t)a->start_ns == 0x50); /* congruent to the raw timer mod 2^32 */
    wl_ik_result_free(&r);

    /* several wraps along one lane: unwrapped monotonically through intermediate records */
    const uint64_t w3[] = {HDR(1, 1), REC(0xF0000000u, 0, 2, B), REC(0x80000000u, 0, 5, I),
                           REC(0x10000000u, 0, 2, E)};
    CHECK_EQ_INT(wl_ik_decode(w3, N(w3), NULL, &r, &err), 0);
    CHECK(r.n_slices == 1 && r.slices[0].dur_ns == 0x120000000ull);
    CHECK(r.n_instants == 1 && r.instants[0].ts_ns == 0x180000000ull);
    wl_ik_result_free(&r);
}

static void test_sparse_nesting_edges(void)
{
    /* 4 blocks x 2 groups, stride 8: only lanes 3 and 6 record; lane 3 nests 1023 inside 0 */
    enum { ST = 8 };
    uint64_t w[1 + ST * 4] = {HDR(2, 4)};
    w[1 + 3 + 0 * ST] = REC(100, 3, 0, B);
    w[1 + 3 + 1 * ST] = REC(110, 3, 1023, B);
    w[1 + 3 + 2 * ST] = REC(150, 3, 1023, E);
    w[1 + 3 + 3 * ST] = REC(200, 3, 0, E);
    w[1 + 6 + 0 * ST] = REC(120, 6, 1023, I);
    w[1 + 6 + 1 * ST] = REC(130, 6, 0, F);
    wl_ik_options opt = {.stride = ST};
    wl_ik_result r;
    wl_ik_error err;
    CHECK_EQ_INT(wl_ik_decode(w, N(w), &opt, &r, &err), 0);
    CHECK_EQ_INT(r.n_slices, 2);
    const wl_ik_slice *outer = find_slice(&r, 1, 1, 0, 0), *inner = find_slice(&r, 1, 1, 1023, 0);
    CHECK(outer && outer->start_ns == 100 && outer->dur_ns == 100 && outer->depth == 0);
    CHECK(inner && inner->start_ns == 110 && inner->dur_ns == 40 && inner->depth == 1);
    CHECK(outer && inner && inner->begin_seq == 1 && inner->end_seq == 2 && outer->end_seq == 3);
    CHECK(outer && !(outer->flags & WL_IK_SLICE_CROSSED));
    CHECK(r.n_instants == 1 && r.instants[0].block == 3 && r.instants[0].group == 0 &&
          r.instants[0].event == 1023 && r.instants[0].ts_ns == 120);
    CHECK_EQ_INT(r.counts.lanes_seen, 2);
    CHECK_EQ_INT(r.counts.lanes_finalized, 1);
    CHECK_EQ_INT(r.counts.empty, N(w) - 1 - 6);
    wl_ik_result_free(&r);
}

static void test_unmatched_and_finalize(void)
{
    const uint64_t w[] = {HDR(1, 2),
                          REC(10, 0, 2, B),  /* never ended */
                          REC(10, 1, 3, E),  /* end without begin */
                          REC(20, 0, 4, B),
                          REC(30, 1, 0, F),
                          REC(40, 0, 4, E),
                          REC(40, 1, 3, B),  /* after finalize */
                          REC(50, 0, 0, F),
                          REC(60, 0, 0, F),  /* second finalize */
                          REC(70, 1, 3, E)}; /* after finalize */
    wl_ik_result r;
    wl_ik_error err;
    CHECK_EQ_INT(wl_ik_decode(w, N(w), NULL, &r, &err), 0);
    CHECK_EQ_INT(r.n_slices, 1);
    CHECK(find_slice(&r, 0, 0, 4, 0) && find_slice(&r, 0, 0, 4, 0)->dur_ns == 20);
    CHECK_EQ_INT(r.counts.unmatched_begins, 1);
    CHECK_EQ_INT(r.counts.unmatched_ends, 1);
    CHECK_EQ_INT(r.counts.after_finalize, 3);
    CHECK_EQ_INT(r.counts.lanes_finalized, 2);
    CHECK_EQ_INT(r.n_unmatched, 2);
    int saw_begin = 0, saw_end = 0;
    for (size_t i = 0; i < r.n_unmatched; i++) {
        const wl_ik_unmatched *u = &r.unmatched[i];
        if (u->type == WL_IK_BEGIN && u->event == 2 && u->block == 0 && u->word == 1 &&
            u->ts_ns == 10)
            saw_begin = 1;
        if (u->type == WL_IK_END && u->event == 3 && u->block == 1 && u->word == 2)
            saw_end = 1;
    }
    CHECK(saw_begin);
    CHECK(saw_end);
    wl_ik_result_free(&r);
}

static void test_lifo_and_crossed(void)
{
    const uint64_t w[] = {HDR(1, 1),         REC(100, 0, 4, B), REC(200, 0, 4, B),
                          REC(300, 0, 4, E), REC(500, 0, 4, E), REC(600, 0, 1, B),
                          REC(610, 0, 2, B), REC(620, 0, 1, E), REC(630, 0, 2, E)};
    wl_ik_result r;
    wl_ik_error err;
    CHECK_EQ_INT(wl_ik_decode(w, N(w), NULL, &r, &err), 0);
    const wl_ik_slice *s0 = find_slice(&r, 0, 0, 4, 0), *s1 = find_slice(&r, 0, 0, 4, 1);
    CHECK(s0 && s0->start_ns == 200 && s0->dur_ns == 100); /* the later begin closes first */
    CHECK(s1 && s1->start_ns == 100 && s1->dur_ns == 400);
    const wl_ik_slice *a = find_slice(&r, 0, 0, 1, 0), *b = find_slice(&r, 0, 0, 2, 0);
    CHECK(a && a->dur_ns == 20 && (a->flags & WL_IK_SLICE_CROSSED));
    CHECK(b && b->dur_ns == 20 && !(b->flags & WL_IK_SLICE_CROSSED));
    CHECK_EQ_INT(r.counts.crossed, 1);
    CHECK_EQ_INT(r.counts.lanes_finalized, 0);
    wl_ik_result_free(&r);
}

static void expect_error(const uint64_t *w, size_t n, const wl_ik_options *opt, uint64_t word,
                         const char *needle, int line)
{
    wl_ik_result r;
    wl_ik_error err;
    int rc = wl_ik_decode(w, n, opt, &r, &err);
    if (rc == -1 && err.word == word && strstr(err.msg, needle) && r.slices == NULL) {
        test_passed_++;
        return;
    }
    test_failed_++;
    fprintf(stderr, "line %d: expected error at word %llu with '%s', got rc %d word %llu '%s'\n",
            line, (unsigned long long)word, needle, rc, (unsigned long long)err.word, err.msg);
    if (rc == 0)
        wl_ik_result_free(&r);
}

static void test_bad_input(void)
{
    const uint64_t zero[] = {0, REC(1, 0, 1, B)};
    expect_error(zero, 0, NULL, 0, "empty buffer", __LINE__);
    expect_error(zero, N(zero), NULL, 0, "zero", __LINE__);
    const uint64_t ng0[] = {HDR(0, 4), REC(1, 0, 1, B)};
    expect_error(ng0, N(ng0), NULL, 0, "num_groups 0", __LINE__);
    const uint64_t nb0[] = {HDR(4, 0), REC(1, 0, 1, B)};
    expect_error(nb0, N(nb0), NULL, 0, "num_blocks 0", __LINE__);
    const uint64_t big[] = {HDR(1u << 11, 1u << 10), 0};
    expect_error(big, N(big), NULL, 0, "2^20", __LINE__);
    const uint64_t huge[] = {HDR(0xffffffffu, 0xffffffffu), 0};
    expect_error(huge, N(huge), NULL, 0, "2^20", __LINE__);
    const uint64_t trunc[] = {HDR(4, 2), REC(1, 0, 1, B), 0};
    expect_error(trunc, N(trunc), NULL, 3, "truncated", __LINE__);
    const uint64_t badlane[] = {HDR(2, 1), REC(1, 0, 1, B), REC(1, 2, 1, B)};
    expect_error(badlane, N(badlane), NULL, 2, "lane 2 is outside", __LINE__);
    const uint64_t badfin[] = {HDR(1, 1), REC(1, 0, 5, F)};
    expect_error(badfin, N(badfin), NULL, 1, "finalize with event bits", __LINE__);
    const uint64_t misplaced[] = {HDR(2, 1), REC(1, 1, 1, B), 0};
    wl_ik_options opt = {.stride = 2};
    expect_error(misplaced, N(misplaced), &opt, 1, "misplaced", __LINE__);
    opt.stride = 1;
    expect_error(misplaced, N(misplaced), &opt, 0, "stride 1 is smaller", __LINE__);
}

static void test_capacity(void)
{
    /* one lane, max 3 records: the 4th and later are counted, never decoded */
    const uint64_t w[] = {HDR(1, 1), REC(1, 0, 1, B), REC(2, 0, 1, E), REC(3, 0, 2, B),
                          REC(4, 0, 2, E), REC(5, 0, 0, F)};
    for (int with_stride = 0; with_stride < 2; with_stride++) {
        wl_ik_options opt = {.stride = (uint64_t)with_stride, .max_records = 3};
        wl_ik_result r;
        wl_ik_error err;
        CHECK_EQ_INT(wl_ik_decode(w, N(w), &opt, &r, &err), 0);
        CHECK_EQ_INT(r.counts.over_capacity, 2);
        CHECK_EQ_INT(r.n_slices, 1);
        CHECK_EQ_INT(r.counts.unmatched_begins, 1);
        wl_ik_result_free(&r);
    }
    uint64_t words = 0;
    CHECK_EQ_INT(wl_ik_buffer_words(132, 4, 0, 100, &words), 0);
    CHECK_EQ_INT(words, 1 + 528 * 100);
    CHECK_EQ_INT(wl_ik_buffer_words(2, 4, 16, 10, &words), 0);
    CHECK_EQ_INT(words, 161);
    CHECK_EQ_INT(wl_ik_buffer_words(0, 4, 0, 10, &words), -1);
    CHECK_EQ_INT(wl_ik_buffer_words(4, 0, 0, 10, &words), -1);
    CHECK_EQ_INT(wl_ik_buffer_words(4, 4, 0, 0, &words), -1);
    CHECK_EQ_INT(wl_ik_buffer_words(1u << 20, 1, 0, 1, &words), 0);
    CHECK_EQ_INT(wl_ik_buffer_words(1u << 20, 2, 0, 1, &words), -1);
    CHECK_EQ_INT(wl_ik_buffer_words(4, 4, 15, 1, &words), -1);
    CHECK_EQ_INT(wl_ik_buffer_words(4, 4, 1ull << 33, 1, &words), -1);
}

static void test_unaligned_and_names(void)
{
    const uint64_t w[] = {HDR(1, 1), REC(7, 0, 5, B), REC(9, 0, 5, E), REC(9, 0, 6, I)};
    unsigned char raw[sizeof w + 1];
    memcpy(raw + 1, w, sizeof w); /* x86 is little-endian: the bytes are the wire bytes */
    wl_ik_result r;
    wl_ik_error err;
    CHECK_EQ_INT(wl_ik_decode(raw + 1, N(w), NULL, &r, &err), 0);
    CHECK(r.n_slices == 1 && r.slices[0].dur_ns == 2 && r.n_instants == 1);
    wl_ik_names names;
    CHECK_EQ_INT(wl_ik_names_parse(&names, "a,,c", "producer", &err), 0);
    char buf[32];
    CHECK_EQ_STR(wl_ik_event_name(&names, 0, buf, sizeof buf), "a");
    CHECK_EQ_STR(wl_ik_event_name(&names, 1, buf, sizeof buf), "event_1");
    CHECK_EQ_STR(wl_ik_event_name(&names, 2, buf, sizeof buf), "c");
    CHECK_EQ_STR(wl_ik_event_name(&names, 5, buf, sizeof buf), "event_5");
    CHECK_EQ_STR(wl_ik_event_name(NULL, 1023, buf, sizeof buf), "event_1023");
    CHECK_EQ_STR(wl_ik_group_name(&names, 0, buf, sizeof buf), "producer");
    CHECK_EQ_STR(wl_ik_group_name(&names, 3, buf, sizeof buf), "group_3");
    wl_ik_names_free(&names);
    wl_ik_result_free(&r);
}

static void test_reuse(void)
{
    const uint64_t a[] = {HDR(1, 2), REC(1, 0, 1, B), REC(1, 1, 1, B), REC(5, 0, 1, E),
                          REC(9, 1, 1, E), REC(9, 1, 2, I)};
    const uint64_t b[] = {HDR(1, 1), REC(100, 0, 7, B), REC(130, 0, 7, E), REC(140, 0, 8, E)};
    const uint64_t bad[] = {HDR(0, 1), 0};
    wl_ik_result r;
    wl_ik_error err;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(wl_ik_decode_reuse(a, N(a), NULL, &r, &err), 0);
    CHECK(r.n_slices == 2 && r.n_instants == 1 && r.num_blocks == 2);
    wl_ik_slice *first = r.slices;
    CHECK_EQ_INT(wl_ik_decode_reuse(b, N(b), NULL, &r, &err), 0);
    CHECK(r.slices == first); /* big enough: reused */
    CHECK(r.n_slices == 1 && r.slices[0].event == 7 && r.slices[0].dur_ns == 30);
    CHECK(r.n_instants == 0 && r.n_unmatched == 1 && r.counts.unmatched_ends == 1);
    CHECK(r.num_blocks == 1 && r.counts.records == 3);
    CHECK_EQ_INT(wl_ik_decode_reuse(bad, N(bad), NULL, &r, &err), -1);
    CHECK(r.slices == NULL && r.slices_cap == 0); /* freed on error */
}

static void test_summary(void)
{
    /* 100 slices of event 1 in group 0 with durations 1..100 ns */
    uint64_t w[1 + 200] = {HDR(1, 1)};
    for (int k = 0; k < 100; k++) {
        w[1 + 2 * k] = REC(1000 * (k + 1), 0, 1, B);
        w[2 + 2 * k] = REC(1000 * (k + 1) + k + 1, 0, 1, E);
    }
    wl_ik_result r;
    wl_ik_error err;
    CHECK_EQ_INT(wl_ik_decode(w, N(w), NULL, &r, &err), 0);
    wl_ik_stat *st;
    size_t n;
    CHECK_EQ_INT(wl_ik_summarize(&r, &st, &n), 0);
    CHECK_EQ_INT(n, 1);
    if (n == 1) {
        CHECK_EQ_INT(st[0].count, 100);
        CHECK_EQ_INT(st[0].total_ns, 5050);
        CHECK_EQ_INT(st[0].min_ns, 1);
        CHECK_EQ_INT(st[0].max_ns, 100);
        CHECK_EQ_INT(st[0].p50_ns, 50);
        CHECK_EQ_INT(st[0].p99_ns, 99);
        CHECK(st[0].mean_ns > 50.49 && st[0].mean_ns < 50.51);
    }
    free(st);
    wl_ik_result_free(&r);
}

static void test_shift_and_place(void)
{
    /* events at lane times 1000..3000; the real %globaltimer was 7*2^32 + those values */
    const uint64_t w[] = {HDR(1, 1), REC(1000, 0, 1, B), REC(3000, 0, 1, E), REC(3000, 0, 0, F)};
    wl_ik_result r;
    wl_ik_error err;
    CHECK_EQ_INT(wl_ik_decode(w, N(w), NULL, &r, &err), 0);
    const int64_t c = 500000; /* realtime - globaltimer */
    const uint64_t gt_first = 7ull * (1ull << 32) + 1000;
    uint64_t kstart = gt_first + c - 700, kend = gt_first + c + 2000 + 900;
    wl_ik_calibration cal = {.realtime_minus_globaltimer_ns = c, .uncertainty_ns = 100};
    wl_ik_placement pl;
    CHECK_EQ_INT(wl_ik_place(&r, kstart, kend, &cal, &pl, &err), 0);
    CHECK_EQ_INT(pl.method, WL_IK_PLACE_CALIBRATED);
    CHECK_EQ_INT(pl.delta_ns, (int64_t)(7ull << 32) + c);
    CHECK_EQ_INT(pl.feasible_lo_ns, (int64_t)kstart - 1000);
    CHECK_EQ_INT(pl.feasible_hi_ns, (int64_t)kend - 3000);
    /* a calibration 50 ns past the feasible interval, within its 100 ns uncertainty: kept as
     * calibrated but moved onto the bound, so no event leaves the kernel */
    cal.realtime_minus_globaltimer_ns = c + 900 + 50; /* feasible_hi = 7 * 2^32 + c + 900 */
    CHECK_EQ_INT(wl_ik_place(&r, kstart, kend, &cal, &pl, &err), 0);
    CHECK_EQ_INT(pl.method, WL_IK_PLACE_CALIBRATED);
    CHECK_EQ_INT(pl.delta_ns, pl.feasible_hi_ns);
    CHECK_EQ_INT(pl.clamp_ns, -50);
    /* a calibration 50 us off is clamped into what the kernel record allows */
    cal.realtime_minus_globaltimer_ns = c + 50000;
    CHECK_EQ_INT(wl_ik_place(&r, kstart, kend, &cal, &pl, &err), 0);
    CHECK_EQ_INT(pl.method, WL_IK_PLACE_CLAMPED);
    CHECK_EQ_INT(pl.delta_ns, pl.feasible_hi_ns);
    /* without calibration: middle of the feasible interval */
    CHECK_EQ_INT(wl_ik_place(&r, kstart, kend, NULL, &pl, &err), 0);
    CHECK_EQ_INT(pl.method, WL_IK_PLACE_WINDOW);
    CHECK_EQ_INT(pl.delta_ns, (int64_t)kstart - 1000 + 800);
    CHECK_EQ_INT(pl.uncertainty_ns, 800);
    CHECK_EQ_INT(wl_ik_place(&r, kend, kstart, NULL, &pl, &err), -1);
    CHECK_EQ_INT(wl_ik_place(&r, kstart, kend, NULL, &pl, &err), 0);
    CHECK_EQ_INT(wl_ik_shift(&r, pl.delta_ns), 0);
    CHECK_EQ_INT(r.slices[0].start_ns, kstart + 800);
    CHECK_EQ_INT(r.min_ts, kstart + 800);
    CHECK_EQ_INT(wl_ik_shift(&r, -(int64_t)(kstart + 801)), -1); /* would go below 0 */
    CHECK_EQ_INT(wl_ik_shift(&r, INT64_MAX), -1);
    CHECK_EQ_INT(r.slices[0].start_ns, kstart + 800);
    wl_ik_result_free(&r);
}

/* Deep nesting: a lane leaves the decoder's fast path (open begins past its inline slots, a
 * crossed end, a finalize) while its neighbour stays on it, and comes back to shallow regions; the
 * grid walk and the tag walk must agree, pairs stay LIFO and depths saturate at 255. */
static void test_deep_and_mixed_lanes(void)
{
    enum { DEEP = 300, ROWS = 2 * DEEP + 8 };
    const size_t n = 1 + 2 * (size_t)ROWS;
    uint64_t *w = calloc(n, sizeof *w);
    CHECK(w != NULL);
    if (!w)
        return;
    w[0] = HDR(2, 1); /* lanes 0 and 1, stride 2 */
    uint32_t ts = 1000;
    size_t r = 0;
    /* lane 0: DEEP nested begins (ids 0..DEEP-1 mod 1024), their ends, a crossed pair, an
     * instant, a finalize, one record after it. lane 1: begin/end pairs and instants throughout */
    for (uint32_t k = 0; k < DEEP; k++, r++)
        w[1 + 2 * r] = REC(ts += 3, 0, k % 1024, B);
    for (uint32_t k = DEEP; k-- > 0; r++)
        w[1 + 2 * r] = REC(ts += 3, 0, k % 1024, E);
    w[1 + 2 * r++] = REC(ts += 3, 0, 5, B);
    w[1 + 2 * r++] = REC(ts += 3, 0, 6, B);
    w[1 + 2 * r++] = REC(ts += 3, 0, 5, E); /* crossed: 6 still open */
    w[1 + 2 * r++] = REC(ts += 3, 0, 6, E);
    w[1 + 2 * r++] = REC(ts += 3, 0, 7, I);
    w[1 + 2 * r++] = REC(ts += 3, 0, 0, F);
    w[1 + 2 * r++] = REC(ts += 3, 0, 8, I); /* after the finalize: counted, not decoded */
    for (size_t k = 0; k < (size_t)ROWS; k++)
        w[2 + 2 * k] = REC(2000 + 10 * k, 1, 9, k % 3 == 0 ? B : k % 3 == 1 ? E : I);
    wl_ik_result a, b;
    wl_ik_error err;
    wl_ik_options grid = {.stride = 2, .max_records = 0};
    CHECK_EQ_INT(wl_ik_decode(w, n, &grid, &a, &err), 0);
    CHECK_EQ_INT(wl_ik_decode(w, n, NULL, &b, &err), 0);
    CHECK_EQ_INT(a.n_slices, DEEP + 2 + (ROWS + 2) / 3);
    CHECK_EQ_INT(a.counts.crossed, 1);
    CHECK_EQ_INT(a.counts.after_finalize, 1);
    CHECK_EQ_INT(a.counts.lanes_finalized, 1);
    CHECK_EQ_INT(a.n_unmatched, 0);
    CHECK_EQ_INT(a.n_instants, 1 + ROWS / 3);
    /* the deep lane's slices: ends read innermost first, depth = the begins open below it */
    int ok = 1;
    size_t seen = 0;
    for (size_t i = 0; i < a.n_slices; i++) {
        const wl_ik_slice *sl = &a.slices[i];
        if (sl->group != 0 || seen >= DEEP)
            continue;
        const uint32_t k = DEEP - 1 - (uint32_t)seen++; /* its begin's position */
        ok &= sl->event == k % 1024 && sl->depth == (k > 255 ? 255 : k) &&
              sl->start_ns == 1000 + 3 * (uint64_t)(k + 1) &&
              sl->dur_ns == 3 * (uint64_t)(2 * (DEEP - k) - 1) && sl->begin_seq == k &&
              sl->end_seq == 2 * DEEP - 1 - k && sl->flags == 0;
    }
    CHECK(ok && seen == DEEP);
    const wl_ik_slice *x = find_slice(&a, 0, 0, 5, 1); /* the deep nest had an id 5 too */
    CHECK(x && (x->flags & WL_IK_SLICE_CROSSED) && x->depth == 0);
    /* both walks give the same outputs, element for element */
    CHECK_EQ_INT(b.n_slices, a.n_slices);
    CHECK_EQ_INT(b.n_instants, a.n_instants);
    CHECK(memcmp(&a.counts, &b.counts, sizeof a.counts) == 0);
    CHECK(a.n_slices == b.n_slices && memcmp(a.slices, b.slices, a.n_slices * sizeof *a.slices) == 0);
    int same = a.n_instants == b.n_instants;
    for (size_t i = 0; same && i < a.n_instants; i++)
        same = a.instants[i].ts_ns == b.instants[i].ts_ns && a.instants[i].seq == b.instants[i].seq &&
               a.instants[i].block == b.instants[i].block && a.instants[i].group == b.instants[i].group &&
               a.instants[i].event == b.instants[i].event;
    CHECK(same);
    wl_ik_result_free(&a);
    wl_ik_result_free(&b);
    free(w);
}

int main(void)
{
    test_notes_vector();
    test_wrap();
    test_sparse_nesting_edges();
    test_unmatched_and_finalize();
    test_lifo_and_crossed();
    test_bad_input();
    test_capacity();
    test_unaligned_and_names();
    test_reuse();
    test_summary();
    test_shift_and_place();
    test_deep_and_mixed_lanes();
    return test_report("inkernel_decode");
}
