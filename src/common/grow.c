/* Doubling arrays (see grow.h). */
#include "common/grow.h"

#include <stdint.h>
#include <stdlib.h>

int wl_grow(void **p, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    if (nc <= n || nc > SIZE_MAX / elem)
        return -1;
    void *q = realloc(*p, nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}
