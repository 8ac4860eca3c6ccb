/* Exact order statistics of a set of unsigned integers by radix selection: linear in the set's
 * size and independent of the values' order (for percentiles over millions of durations, where
 * sorting would cost n log n and a histogram would round). */
#ifndef WARPLENS_COMMON_RANK_SELECT_H
#define WARPLENS_COMMON_RANK_SELECT_H

#include <stddef.h>
#include <stdint.h>

/* Scratch the selections need: 65,536 counters (256 KiB), reused across calls. */
#define WL_RANK_HIST 65536

/* The k-th smallest (0-based) of v[0..n), k < n; max: no value is above it. v keeps its values in
 * another order. hist: WL_RANK_HIST counters. */
uint64_t wl_select_rank(uint64_t *v, size_t n, size_t k, uint64_t max, uint32_t *hist);
/* The nearest-rank pct-th percentile of v[0..n) (0 when n is 0): the ceil(pct / 100 * n)-th
 * smallest, at least the first. */
uint64_t wl_nearest_rank(uint64_t *v, size_t n, double pct, uint64_t max, uint32_t *hist);

#endif
