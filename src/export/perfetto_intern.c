/* A Perfetto sequence's interning table (see perfetto_intern.h): open addressing over owned copies
 * of the strings, with their hashes kept so that a probe compares bytes only on a likely match. */
#include "export/perfetto_intern.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ n;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t x;
        memcpy(&x, s, 8);
        h = (h ^ x) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    uint64_t t = 0;
    memcpy(&t, s, n);
    h = (h ^ t) * 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 29);
}

void wl_pf_intern_free(wl_pf_intern *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->lens);
    free(t->iids);
    free(t->hashes);
    memset(t, 0, sizeof *t);
}

static int intern_rehash(wl_pf_intern *t, size_t ncap)
{
    char **keys = calloc(ncap, sizeof *keys);
    size_t *lens = calloc(ncap, sizeof *lens);
    uint64_t *iids = calloc(ncap, sizeof *iids), *hashes = calloc(ncap, sizeof *hashes);
    if (!keys || !lens || !iids || !hashes) {
        free(keys);
        free(lens);
        free(iids);
        free(hashes);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->keys[i])
            continue;
        size_t j = t->hashes[i] & (ncap - 1);
        while (keys[j])
            j = (j + 1) & (ncap - 1);
        keys[j] = t->keys[i], lens[j] = t->lens[i], iids[j] = t->iids[i], hashes[j] = t->hashes[i];
    }
    free(t->keys);
    free(t->lens);
    free(t->iids);
    free(t->hashes);
    t->keys = keys, t->lens = lens, t->iids = iids, t->hashes = hashes;
    t->cap = ncap;
    return 0;
}

uint64_t wl_pf_intern_find(wl_pf_intern *t, const char *s, int *is_new)
{
    *is_new = 0;
    if ((t->n + 1) * 2 > t->cap && intern_rehash(t, t->cap ? t->cap * 2 : 64))
        return 0;
    size_t len = strlen(s);
    uint64_t h = hash_bytes(s, len);
    size_t j = h & (t->cap - 1);
    while (t->keys[j]) {
        if (t->hashes[j] == h && t->lens[j] == len && !memcmp(t->keys[j], s, len))
            return t->iids[j];
        j = (j + 1) & (t->cap - 1);
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, len + 1);
    t->keys[j] = copy, t->lens[j] = len, t->hashes[j] = h;
    t->iids[j] = ++t->n;
    *is_new = 1;
    return t->iids[j];
}
