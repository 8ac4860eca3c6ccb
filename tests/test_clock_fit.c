/* Unit tests of the %globaltimer <-> CUPTI offset intersection and drift (src/common/clock_fit.h). */
#include "common/clock_fit.h"
#include "common/probe_floors.h"
#include "test.h"

static void test_intersect(void)
{
    /* true offset 1,000,000 ns; each kernel's CUPTI window is wider than its reads by a head and
     * a tail that vary: the intersection keeps the tightest of each */
    const int64_t c = 1000000;
    wl_clock_sample s[4];
    const uint64_t g[4] = {5000, 90000, 200000, 350000};
    const uint64_t head[4] = {700, 400, 900, 500}, tail[4] = {800, 1200, 300, 600};
    for (int i = 0; i < 4; i++) {
        s[i].gpu_first_ns = g[i];
        s[i].gpu_last_ns = g[i] + 1000;
        s[i].cupti_start_ns = (uint64_t)((int64_t)g[i] + c) - head[i];
        s[i].cupti_end_ns = (uint64_t)((int64_t)(g[i] + 1000) + c) + tail[i];
    }
    wl_clock_fit f;
    CHECK_EQ_INT(wl_clock_intersect(s, 4, 0, &f), 0);
    CHECK_EQ_INT(f.used, 4);
    CHECK_EQ_INT(f.lo_ns, c - 400); /* smallest head */
    CHECK_EQ_INT(f.hi_ns, c + 300); /* smallest tail */
    CHECK_EQ_INT(f.offset_ns, c - 50);
    CHECK_EQ_INT(f.uncertainty_ns, 350);
    CHECK(f.offset_ns - (int64_t)f.uncertainty_ns <= c && c <= f.offset_ns + (int64_t)f.uncertainty_ns);
    /* the timer step widens the lower bound */
    CHECK_EQ_INT(wl_clock_intersect(s, 4, 32, &f), 0);
    CHECK_EQ_INT(f.lo_ns, c - 432);
    CHECK_EQ_INT(f.uncertainty_ns, 366);
    /* samples without a record or with reads out of order are skipped */
    s[1].cupti_start_ns = s[1].cupti_end_ns = 0;
    s[2].gpu_last_ns = s[2].gpu_first_ns - 1;
    CHECK_EQ_INT(wl_clock_intersect(s, 4, 0, &f), 0);
    CHECK_EQ_INT(f.used, 2);
    CHECK_EQ_INT(f.lo_ns, c - 500);
    CHECK_EQ_INT(f.hi_ns, c + 600);
    /* disjoint intervals: the clocks are not related as assumed */
    s[0].cupti_start_ns += 5000;
    s[0].cupti_end_ns += 5000;
    CHECK_EQ_INT(wl_clock_intersect(s, 4, 0, &f), -1);
    CHECK_EQ_INT(wl_clock_intersect(s, 0, 0, &f), -1);
    /* a negative offset (CUPTI clock behind the GPU timer) */
    wl_clock_sample neg = {1000, 3000, 5000, 6000};
    CHECK_EQ_INT(wl_clock_intersect(&neg, 1, 0, &f), 0);
    CHECK_EQ_INT(f.lo_ns, -4000);
    CHECK_EQ_INT(f.hi_ns, -3000);
    CHECK_EQ_INT(f.offset_ns, -3500);
}

/* Floors: probes modelled as on the H100, CUPTI's start 160-224 ns before the first read and its
 * end 672-736 ns after the last; the plain intersection is ~900 ns wide, floors at the gaps' minima
 * leave their jitter, and floors above the real gaps empty it (the caller's fallback). */
static void test_floors(void)
{
    const int64_t c = 364000;
    const int64_t head[6] = {192, 224, 160, 192, 224, 192}, tail[6] = {704, 672, 736, 704, 704, 736};
    wl_clock_sample s[6];
    for (int i = 0; i < 6; i++) {
        const uint64_t g = 1000000 + 50000 * (uint64_t)i;
        s[i].gpu_first_ns = g;
        s[i].gpu_last_ns = g + 32;
        s[i].cupti_start_ns = (uint64_t)((int64_t)g + c - head[i]);
        s[i].cupti_end_ns = (uint64_t)((int64_t)g + 32 + c + tail[i]);
    }
    wl_clock_fit plain, f;
    CHECK_EQ_INT(wl_clock_intersect(s, 6, 32, &plain), 0);
    CHECK_EQ_INT(plain.lo_ns, c - 160 - 32);
    CHECK_EQ_INT(plain.hi_ns, c + 672);
    /* the same as no floors: start floor -step, end floor 0 */
    CHECK_EQ_INT(wl_clock_intersect_floors(s, 6, -32, 0, &f), 0);
    CHECK_EQ_INT(f.lo_ns, plain.lo_ns);
    CHECK_EQ_INT(f.hi_ns, plain.hi_ns);
    /* floors one step under the minima: [c - 32, c + 32] */
    CHECK_EQ_INT(wl_clock_intersect_floors(s, 6, 128, 640, &f), 0);
    CHECK_EQ_INT(f.lo_ns, c - 32);
    CHECK_EQ_INT(f.hi_ns, c + 32);
    CHECK_EQ_INT(f.offset_ns, c);
    CHECK_EQ_INT(f.uncertainty_ns, 32);
    CHECK(f.lo_ns >= plain.lo_ns && f.hi_ns <= plain.hi_ns);
    /* floors above what this GPU shows: empty, and by how much */
    CHECK_EQ_INT(wl_clock_intersect_floors(s, 6, 200, 700, &f), -1);
    CHECK_EQ_INT(f.used, 6);
    CHECK_EQ_INT(f.lo_ns - f.hi_ns, 68);
    /* absurd floors are refused */
    CHECK_EQ_INT(wl_clock_intersect_floors(s, 6, 2000000, 0, &f), -1);
    CHECK_EQ_INT(f.used, 0);
}

static void test_drift(void)
{
    /* +50 ns over 10 s: 5 ppb */
    CHECK_EQ_INT(wl_clock_drift_ppb(1000000000ull, 700, 11000000000ull, 750), 5);
    CHECK_EQ_INT(wl_clock_drift_ppb(1000000000ull, 700, 11000000000ull, 650), -5);
    CHECK_EQ_INT(wl_clock_drift_ppb(5, 0, 5, 100), 0);
    CHECK_EQ_INT(wl_clock_drift_ppb(0, 0, 1000, 1000000000), 1000000);
    /* interpolation between, and extrapolation around, the calibration */
    CHECK_EQ_INT(wl_clock_offset_at(700, 11000000000ull, 5, 11000000000ull), 700);
    CHECK_EQ_INT(wl_clock_offset_at(750, 11000000000ull, 5, 6000000000ull), 725);
    CHECK_EQ_INT(wl_clock_offset_at(750, 11000000000ull, 5, 13000000000ull), 760);
    CHECK_EQ_INT(wl_clock_offset_at(750, 11000000000ull, 0, 1), 750);
}

/* the floors table and WARPLENS_PROBE_FLOORS's syntax */
static void test_floor_table(void)
{
    wl_probe_floors f = {-1, -1};
    CHECK_EQ_INT(wl_probe_floors_for("NVIDIA H100 80GB HBM3", &f), 1);
    CHECK(f.start_ns > 0 && f.end_ns > f.start_ns);
    CHECK_EQ_INT(wl_probe_floors_for("NVIDIA H100", &f), 0); /* exact names only */
    CHECK_EQ_INT(wl_probe_floors_for(NULL, &f), 0);
    CHECK_EQ_INT(wl_probe_floors_parse("160,672", &f), 0);
    CHECK_EQ_INT(f.start_ns, 160);
    CHECK_EQ_INT(f.end_ns, 672);
    CHECK_EQ_INT(wl_probe_floors_parse("0,1000000", &f), 0);
    CHECK_EQ_INT(f.end_ns, 1000000);
    const char *bad[] = {"", "160", "160,", ",672", "160,672,", "160 ,672", "-1,672", "160,1000001",
                         "99999999999999999999,1", "160;672", "0x10,5", "160,672 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f.start_ns = f.end_ns = 7;
        CHECK_EQ_INT(wl_probe_floors_parse(bad[i], &f), -1);
        CHECK(f.start_ns == 7 && f.end_ns == 7); /* untouched */
    }
    CHECK_EQ_INT(wl_probe_floors_parse(NULL, &f), -1);
}

int main(void)
{
    test_intersect();
    test_floors();
    test_drift();
    test_floor_table();
    return test_report("clock_fit");
}
