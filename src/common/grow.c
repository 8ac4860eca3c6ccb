/* Doubling arrays (see grow.h). */
#include "common/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int wl_reserve(void **p, size_t *cap, size_t need, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : first;
    while (nc < need)
        if (nc > SIZE_MAX / 2 || !(nc *= 2))
            return -1;
    void *q = realloc(*p, nc);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

int wl_grow_hash(void **table, size_t *cap, size_t n, size_t elem, size_t first, size_t used_off,
                 uint64_t (*hash)(const void *entry, const void *arg), const void *arg)
{
    if ((n + 1) * 2 <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    if (nc <= *cap || nc > SIZE_MAX / elem || (nc & (nc - 1)))
        return -1;
    char *to = calloc(nc, elem), *from = *table;
    if (!to)
        return -1;
    for (size_t i = 0; i < *cap; i++) {
        const char *e = from + i * elem;
        int used;
        memcpy(&used, e + used_off, sizeof used);
        if (!used)
            continue;
        size_t j = (size_t)hash(e, arg) & (nc - 1);
        while (memcpy(&used, to + j * elem + used_off, sizeof used), used)
            j = (j + 1) & (nc - 1);
        memcpy(to + j * elem, e, elem);
    }
    free(from);
    *table = to;
    *cap = nc;
    return 0;
}
