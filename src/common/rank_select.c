/* Exact ranks by radix selection (see rank_select.h). */
#include "common/rank_select.h"

#include <string.h>

/* 16 bits at a time, from the highest digit max has: the values sharing the chosen leading digits
 * are swapped to the front and the next digit is chosen among them only. */
uint64_t wl_select_rank(uint64_t *v, size_t n, size_t k, uint64_t max, uint32_t *hist)
{
    size_t lo = 0, cnt = n;
    int top = 48; /* digits above max's highest are 0 in every value: no pass over them */
    while (top > 0 && !(max >> top))
        top -= 16;
    for (int shift = top; shift >= 0; shift -= 16) {
        memset(hist, 0, WL_RANK_HIST * sizeof *hist);
        for (size_t i = lo; i < lo + cnt; i++)
            hist[v[i] >> shift & 0xffff]++;
        uint32_t d = 0;
        while (k >= hist[d])
            k -= hist[d++];
        size_t w = lo;
        for (size_t i = lo; i < lo + cnt; i++)
            if ((v[i] >> shift & 0xffff) == d) {
                uint64_t t = v[w];
                v[w++] = v[i];
                v[i] = t;
            }
        cnt = hist[d];
        if (cnt == 1 || shift == 0)
            return v[lo + k];
    }
    return v[lo + k];
}

uint64_t wl_nearest_rank(uint64_t *v, size_t n, double pct, uint64_t max, uint32_t *hist)
{
    if (!n)
        return 0;
    size_t rank = (size_t)(pct / 100.0 * (double)n + 0.999999999);
    rank = rank < 1 ? 1 : rank > n ? n : rank;
    return wl_select_rank(v, n, rank - 1, max, hist);
}
