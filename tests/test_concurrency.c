/* The concurrency sweep on hand-built intervals: nested, touching, identical starts, same-stream
 * kernels (never counted), another device; the fill series and its summary against values worked
 * out by hand; pairs; ordering errors; and overlap counts against brute force on random input. */
#include <math.h>
#include <stdlib.h>

#include "analysis/concurrency.h"
#include "test.h"

#define MAXK 4096

typedef struct rec {
    uint64_t overlaps[MAXK];
    int done[MAXK];
    wl_fill_point pts[MAXK];
    int npts;
    int64_t pair_a[64], pair_b[64];
    uint64_t pair_ns[64];
    int npairs;
    wl_fill_summary sum;
} rec;

static void on_kernel(const wl_conc_kernel *k, uint64_t n, void *arg)
{
    rec *r = arg;
    r->overlaps[k->id] = n;
    r->done[k->id]++;
}

static void on_point(const wl_fill_point *p, void *arg)
{
    rec *r = arg;
    if (r->npts < MAXK)
        r->pts[r->npts++] = *p;
    if (p->device_id == 0)
        wl_fill_summary_add(&r->sum, p);
}

static void on_pair(const wl_conc_kernel *a, const wl_conc_kernel *b, uint64_t ns, void *arg)
{
    rec *r = arg;
    if (r->npairs < 64) {
        r->pair_a[r->npairs] = a->id, r->pair_b[r->npairs] = b->id, r->pair_ns[r->npairs] = ns;
        r->npairs++;
    }
}

static wl_conc_kernel K(int64_t id, uint32_t dev, uint32_t stream, uint64_t s, uint64_t e, double w, double sm)
{
    return (wl_conc_kernel){.id = id, .pid = 1, .device_id = dev, .stream_id = stream, .start_ns = s, .end_ns = e,
                            .warp_fill = w, .sm_share = sm};
}

static int near(double a, double b) { return fabs(a - b) < 1e-9; }

static void check_point(const wl_fill_point *p, uint64_t ts, int running, double w, double sm, int over)
{
    CHECK_EQ_INT(p->ts_ns, ts);
    CHECK_EQ_INT(p->running, running);
    CHECK(near(p->warp_fill_pct, w));
    CHECK(near(p->sm_fill_pct, sm));
    CHECK_EQ_INT(p->oversubscribed, over);
}

static void test_hand_built(void)
{
    static rec r;
    memset(&r, 0, sizeof r);
    wl_conc_callbacks cb = {on_kernel, on_point, on_pair, &r};
    wl_conc_sweep *sw = wl_conc_sweep_new(&cb);
    /* device 0, in (start, end) order; device 1 interleaved */
    wl_conc_kernel ks[] = {
        K(0, 0, 1, 0, 100, .5, .5),    /* A */
        K(7, 1, 1, 0, 100, .9, .9),    /* G: another device, same time */
        K(1, 0, 2, 10, 50, .25, 1.0),  /* B: nested in A */
        K(2, 0, 1, 20, 30, .3, .3),    /* F: same stream as A, inside A: not counted with A */
        K(3, 0, 2, 50, 60, .1, .2),    /* C: touches B (same stream) at 50 */
        K(4, 0, 1, 100, 110, .2, .2),  /* E: touches A at 100; same start as D */
        K(5, 0, 3, 100, 120, .2, .9),  /* D */
    };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        CHECK_EQ_INT(wl_conc_sweep_add(sw, &ks[i]), 0);
    /* out of order on device 0, and end before start: refused */
    wl_conc_kernel bad = K(6, 0, 1, 90, 95, 0, 0);
    CHECK_EQ_INT(wl_conc_sweep_add(sw, &bad), -1);
    bad = K(6, 0, 1, 200, 150, 0, 0);
    CHECK_EQ_INT(wl_conc_sweep_add(sw, &bad), -1);
    wl_conc_sweep_finish(sw);
    wl_conc_sweep_free(sw);

    static const uint64_t want[] = {2, 2, 1, 1, 1, 1, 0, 0};
    int ids[] = {0, 1, 2, 3, 4, 5, 7};
    for (int i = 0; i < 7; i++) {
        CHECK_EQ_INT(r.done[ids[i]], 1);
        CHECK_EQ_INT(r.overlaps[ids[i]], want[ids[i]]);
    }
    CHECK_EQ_INT(r.done[6], 0);

    /* device 0's series, worked out by hand (see the interval list above) */
    wl_fill_point d0[16];
    int n = 0;
    for (int i = 0; i < r.npts; i++)
        if (r.pts[i].device_id == 0 && n < 16)
            d0[n++] = r.pts[i];
    CHECK_EQ_INT(n, 9);
    if (n == 9) {
        check_point(&d0[0], 0, 1, 50, 50, 0);
        check_point(&d0[1], 10, 2, 75, 150, 1);
        check_point(&d0[2], 20, 3, 105, 180, 1);
        check_point(&d0[3], 30, 2, 75, 150, 1);
        check_point(&d0[4], 50, 2, 60, 70, 0);   /* B ends and C starts at the same time */
        check_point(&d0[5], 60, 1, 50, 50, 0);
        check_point(&d0[6], 100, 2, 40, 110, 1); /* A ends, E and D start */
        check_point(&d0[7], 110, 1, 20, 90, 0);
        check_point(&d0[8], 120, 0, 0, 0, 0);
    }
    CHECK_EQ_INT(r.sum.busy_ns, 120);
    CHECK_EQ_INT(r.sum.concurrent_ns, 60);
    CHECK_EQ_INT(r.sum.oversubscribed_ns, 50);
    CHECK_EQ_INT(r.sum.max_running, 3);
    CHECK(near(r.sum.peak_warp_fill_pct, 105));
    CHECK(near(r.sum.peak_sm_fill_pct, 180));
    CHECK(near(wl_fill_summary_mean_fill(&r.sum), 7000.0 / 120.0));

    /* pairs on different streams with their shared time */
    CHECK_EQ_INT(r.npairs, 4);
    if (r.npairs == 4) {
        CHECK(r.pair_a[0] == 0 && r.pair_b[0] == 1 && r.pair_ns[0] == 40);
        CHECK(r.pair_a[1] == 1 && r.pair_b[1] == 2 && r.pair_ns[1] == 10);
        CHECK(r.pair_a[2] == 0 && r.pair_b[2] == 3 && r.pair_ns[2] == 10);
        CHECK(r.pair_a[3] == 4 && r.pair_b[3] == 5 && r.pair_ns[3] == 10);
    }
}

static int cmp_kernel(const void *pa, const void *pb)
{
    const wl_conc_kernel *a = pa, *b = pb;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return a->end_ns < b->end_ns ? -1 : a->end_ns > b->end_ns;
}

static void test_random(void)
{
    static rec r;
    static wl_conc_kernel ks[2000];
    srand(12345);
    for (int round = 0; round < 20; round++) {
        memset(&r, 0, sizeof r);
        int n = 200 + rand() % 1800;
        for (int i = 0; i < n; i++) {
            uint64_t s = (uint64_t)(rand() % 5000), len = (uint64_t)(rand() % 4 == 0 ? 0 : rand() % 300);
            ks[i] = K(0, (uint32_t)(rand() % 2), (uint32_t)(rand() % 4), s, s + len, .1, .1);
        }
        qsort(ks, (size_t)n, sizeof ks[0], cmp_kernel);
        for (int i = 0; i < n; i++)
            ks[i].id = i;
        wl_conc_callbacks cb = {on_kernel, NULL, NULL, &r};
        wl_conc_sweep *sw = wl_conc_sweep_new(&cb);
        for (int i = 0; i < n; i++)
            wl_conc_sweep_add(sw, &ks[i]);
        wl_conc_sweep_finish(sw);
        wl_conc_sweep_free(sw);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            uint64_t want = 0;
            for (int j = 0; j < n; j++)
                want += j != i && ks[j].device_id == ks[i].device_id && ks[j].stream_id != ks[i].stream_id &&
                        ks[j].start_ns < ks[i].end_ns && ks[j].end_ns > ks[i].start_ns;
            bad += r.overlaps[i] != want || r.done[i] != 1;
        }
        CHECK_EQ_INT(bad, 0);
    }
}

int main(void)
{
    test_hand_built();
    test_random();
    return test_report("test_concurrency");
}
