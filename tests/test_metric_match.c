/* Range-to-activity matching of the range profiler's batches (src/capture/metric_match.c), on
 * made-up batches: counts that agree, isolated copies, sets and launches (with the driver's own
 * work inside a launch), launches placed by their CTA counts around extra ranges, ambiguous
 * places left unmatched, too few ranges, and the recorder's own calls. */
#include <math.h>

#include "capture/metric_match.h"
#include "test.h"

enum { K = WLCAP_OWNER_KERNEL, C = WLCAP_OWNER_MEMCPY, S = WLCAP_OWNER_MEMSET };

static wl_mm_range out[64];
static size_t scratch[128];
static wl_mm_result res;

static void match(const wl_mm_call *calls, size_t ncalls, const double *ctas, size_t nranges)
{
    memset(out, 0xab, sizeof out);
    wl_metric_match(calls, ncalls, ctas, nranges, out, scratch, &res);
}

static void test_order(void)
{
    wl_mm_call calls[] = {{11, K, 4}, {12, K, 8}, {13, K, 4}};
    match(calls, 3, NULL, 3);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(out[i].correlation_id, 11 + i);
        CHECK_EQ_INT(out[i].kind, K);
        CHECK_EQ_INT(out[i].match, WLCAP_MATCH_ORDER);
    }
    CHECK_EQ_INT(res.tied, 3);
    CHECK_EQ_INT(res.unknown, 0);
    CHECK_EQ_INT(res.mismatch, 0);
    /* CTA counts that agree, one of them unknown (NaN): still in order */
    double ctas[] = {4, NAN, 4};
    match(calls, 3, ctas, 3);
    CHECK_EQ_INT(out[1].match, WLCAP_MATCH_ORDER);
    CHECK_EQ_INT(res.tied, 3);
}

static void test_isolated(void)
{
    wl_mm_call copy = {21, C, 0};
    match(&copy, 1, NULL, 0);
    CHECK_EQ_INT(res.tied + res.unknown + res.calls_without, 0); /* a copy without a range is not a loss */
    match(&copy, 1, NULL, 3);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(out[i].correlation_id, 21);
        CHECK_EQ_INT(out[i].kind, C);
        CHECK_EQ_INT(out[i].match, WLCAP_MATCH_ISOLATED);
        CHECK_EQ_INT(out[i].part, i);
        CHECK_EQ_INT(out[i].parts, 3);
    }
    wl_mm_call set = {22, S, 0};
    match(&set, 1, NULL, 1);
    CHECK_EQ_INT(out[0].kind, S);
    CHECK_EQ_INT(res.tied, 1);

    wl_mm_call launch = {23, K, 132};
    match(&launch, 1, NULL, 1);
    CHECK_EQ_INT(out[0].kind, K);
    CHECK_EQ_INT(out[0].match, WLCAP_MATCH_ISOLATED);
    double wrong[] = {66};
    match(&launch, 1, wrong, 1); /* one range for one launch: kept, the disagreement counted */
    CHECK_EQ_INT(out[0].kind, K);
    CHECK_EQ_INT(res.cta_disagree, 1);
    match(&launch, 1, NULL, 0);
    CHECK_EQ_INT(res.calls_without, 1);

    /* the driver's own work inside the launch call: the kernel is the range with its grid */
    double two[] = {1, 132};
    match(&launch, 1, two, 2);
    CHECK_EQ_INT(out[0].kind, WLCAP_OWNER_INTERNAL);
    CHECK_EQ_INT(out[0].correlation_id, 23);
    CHECK_EQ_INT(out[1].kind, K);
    CHECK_EQ_INT(out[1].match, WLCAP_MATCH_SIGNATURE);
    CHECK_EQ_INT(res.tied, 2);
    /* without CTA counts, or with two candidates, neither is the kernel for certain */
    match(&launch, 1, NULL, 2);
    CHECK_EQ_INT(out[0].kind, WLCAP_OWNER_UNKNOWN);
    CHECK_EQ_INT(out[1].kind, WLCAP_OWNER_UNKNOWN);
    CHECK_EQ_INT(out[1].correlation_id, 23); /* the call is still named */
    CHECK_EQ_INT(res.unknown, 2);
    CHECK_EQ_INT(res.calls_without, 1);
    double both[] = {132, 132};
    match(&launch, 1, both, 2);
    CHECK_EQ_INT(res.unknown, 2);

    wl_mm_call graph = {24, WLCAP_OWNER_GRAPH_NODE, 0};
    match(&graph, 1, NULL, 5);
    CHECK_EQ_INT(out[4].kind, WLCAP_OWNER_GRAPH_NODE);
    CHECK_EQ_INT(out[4].part, 4);
    CHECK_EQ_INT(out[4].parts, 5);

    wl_mm_call own = {25, WL_MM_DISCARD, 0};
    match(&own, 1, NULL, 2);
    CHECK_EQ_INT(res.discarded, 2);
    CHECK_EQ_INT(res.tied, 0);
}

static void test_signature_alignment(void)
{
    /* four launches of different grids, an extra range (1 CTA) between the second and third */
    wl_mm_call calls[] = {{31, K, 8}, {32, K, 16}, {33, K, 32}, {34, K, 64}};
    double ctas[] = {8, 16, 1, 32, 64};
    match(calls, 4, ctas, 5);
    CHECK_EQ_INT(res.mismatch, 1);
    CHECK_EQ_INT(out[0].correlation_id, 31);
    CHECK_EQ_INT(out[1].correlation_id, 32);
    CHECK_EQ_INT(out[2].kind, WLCAP_OWNER_UNKNOWN);
    CHECK_EQ_INT(out[3].correlation_id, 33);
    CHECK_EQ_INT(out[4].correlation_id, 34);
    CHECK_EQ_INT(out[4].match, WLCAP_MATCH_SIGNATURE);
    CHECK_EQ_INT(res.tied, 4);
    CHECK_EQ_INT(res.unknown, 1);

    /* the extra range has the CTA count of its neighbours: those places are ambiguous */
    wl_mm_call same[] = {{41, K, 8}, {42, K, 4}, {43, K, 4}, {44, K, 8}};
    double amb[] = {8, 4, 4, 4, 8};
    match(same, 4, amb, 5);
    CHECK_EQ_INT(out[0].correlation_id, 41);
    CHECK_EQ_INT(out[4].correlation_id, 44);
    CHECK_EQ_INT(out[1].kind, WLCAP_OWNER_UNKNOWN);
    CHECK_EQ_INT(out[2].kind, WLCAP_OWNER_UNKNOWN);
    CHECK_EQ_INT(out[3].kind, WLCAP_OWNER_UNKNOWN);
    CHECK_EQ_INT(res.tied, 2);
    CHECK_EQ_INT(res.unknown, 3);
    CHECK_EQ_INT(res.calls_without, 2);

    /* a disagreement that no placement explains: nothing is certain */
    wl_mm_call three[] = {{51, K, 10}, {52, K, 20}, {53, K, 30}};
    double off[] = {10, 20, 99};
    match(three, 3, off, 3);
    CHECK_EQ_INT(res.mismatch, 1);
    CHECK_EQ_INT(res.tied, 0);
    CHECK_EQ_INT(res.unknown, 3);
    CHECK_EQ_INT(res.calls_without, 3);
}

static void test_counts_differ_without_signature(void)
{
    /* the batch: 12 launches, 18 ranges, no CTA counts: kept, none tied, all counted */
    wl_mm_call calls[12];
    for (int i = 0; i < 12; i++)
        calls[i] = (wl_mm_call){(uint32_t)(100 + i), K, 0};
    match(calls, 12, NULL, 18);
    CHECK_EQ_INT(res.mismatch, 1);
    CHECK_EQ_INT(res.unknown, 18);
    CHECK_EQ_INT(res.calls_without, 12);
    /* fewer ranges than launches */
    double ctas[] = {0, 0};
    ctas[0] = ctas[1] = 1;
    calls[0].ctas = calls[1].ctas = calls[2].ctas = 1;
    match(calls, 3, ctas, 2);
    CHECK_EQ_INT(res.unknown, 2);
    CHECK_EQ_INT(res.calls_without, 3);
    /* a copy inside a multi-call batch (isolation off) when the counts agree: in order */
    wl_mm_call mixed[] = {{61, K, 0}, {62, C, 0}, {63, K, 0}};
    match(mixed, 3, NULL, 3);
    CHECK_EQ_INT(out[1].kind, C);
    CHECK_EQ_INT(out[1].correlation_id, 62);
    match(mixed, 3, NULL, 2);
    CHECK_EQ_INT(res.tied, 0);
}

int main(void)
{
    test_order();
    test_isolated();
    test_signature_alignment();
    test_counts_differ_without_signature();
    return test_report("test_metric_match");
}
