/* Growing an array by doubling: the one helper the readers, exporters and caches share for their
 * malloc'd lists. */
#ifndef WARPLENS_COMMON_GROW_H
#define WARPLENS_COMMON_GROW_H

#include <stddef.h>

/* Makes room for element n of *p (elem bytes each, *cap allocated): doubles *cap (from `first`)
 * when n has reached it. 0, or -1 when out of memory (the array is left as it was). */
int wl_grow(void **p, size_t *cap, size_t n, size_t elem, size_t first);

#endif
