/* Lookup in an ascending array of row ids, the shape the store's readers hand out (groups keyed by
 * kernel name, kernel or reason id): one binary search for all of them. */
#ifndef WARPLENS_STORE_SORTED_IDS_H
#define WARPLENS_STORE_SORTED_IDS_H

#include <stddef.h>
#include <stdint.h>

/* Index of id in ids[0..n) (ascending, no duplicates), or -1. */
static inline long wl_sorted_id_index(const int64_t *ids, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ids[lo] == id ? (long)lo : -1;
}

#endif
