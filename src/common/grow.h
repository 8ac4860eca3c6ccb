/* Growing an array by doubling: the one helper the readers, exporters and caches share for their
 * malloc'd lists, and the same for the hash tables the store folds rows into. */
#ifndef WARPLENS_COMMON_GROW_H
#define WARPLENS_COMMON_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Makes room for element n of *p (elem bytes each, *cap allocated): doubles *cap (from `first`)
 * when n has reached it. 0, or -1 when out of memory (the array is left as it was). */
int wl_grow(void **p, size_t *cap, size_t n, size_t elem, size_t first);

/* Makes room for `need` bytes at *p (*cap allocated): doubles *cap (from `first`) until they fit.
 * 0, or -1 when out of memory (the buffer is left as it was). */
int wl_reserve(void **p, size_t *cap, size_t need, size_t first);

/* Keeps an open-addressing table (linear probing, power-of-two capacity, entries of elem bytes)
 * at most half full before its (n+1)-th entry: doubles *cap from `first`, moving every used entry
 * (its int at byte used_off is not 0) to the first free slot from hash(entry, arg). 0, or -1 when
 * out of memory (the table is left as it was). */
int wl_grow_hash(void **table, size_t *cap, size_t n, size_t elem, size_t first, size_t used_off,
                 uint64_t (*hash)(const void *entry, const void *arg), const void *arg);

#endif
