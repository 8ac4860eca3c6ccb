/* Radix selection (common/rank_select.h) against a sort: every rank of small sets, and the
 * percentiles stats prints of large ones, over values of every width (one 16-bit digit to four),
 * with many repeats and none. */
#include <stdlib.h>

#include "common/rank_select.h"
#include "test.h"

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static uint32_t hist[WL_RANK_HIST];
    static uint64_t v[200000], sorted[200000], work[200000];
    int bad = 0;
    uint64_t seed = 12345;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = trial < 100 ? (size_t)(1 + trial % 40) : (size_t)(1000 + test_rand(&seed) % 199000);
        int bits = 1 + trial % 64;
        uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1, max = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = test_rand(&seed);
            v[i] = trial % 3 == 0 ? r % 7 : r & mask; /* every third set: mostly repeats */
            max = v[i] > max ? v[i] : max;
        }
        memcpy(sorted, v, n * sizeof *v);
        qsort(sorted, n, sizeof *sorted, by_value);
        if (n <= 40) {
            for (size_t k = 0; k < n; k++) {
                memcpy(work, v, n * sizeof *v);
                bad += wl_select_rank(work, n, k, max, hist) != sorted[k];
            }
        }
        static const double pcts[] = {0, 1, 50, 90, 99, 99.9, 100};
        for (size_t p = 0; p < sizeof pcts / sizeof pcts[0]; p++) {
            size_t rank = (size_t)(pcts[p] / 100.0 * (double)n + 0.999999999);
            rank = rank < 1 ? 1 : rank > n ? n : rank;
            memcpy(work, v, n * sizeof *v);
            bad += wl_nearest_rank(work, n, pcts[p], max, hist) != sorted[rank - 1];
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(wl_nearest_rank(v, 0, 50, 0, hist), 0);
    return test_report("rank_select");
}
