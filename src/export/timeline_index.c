/* Tracks by key (see timeline_index.h). */
#include "export/timeline_index.h"

#include <stdlib.h>

static size_t slot_of(tl_key k, size_t cap)
{
    uint64_t h = ((uint64_t)k.kind << 32 | k.pid) * 0x9e3779b97f4a7c15u;
    h ^= (k.a + 0x632be59bd9b4e019u) * 0xc2b2ae3d27d4eb4fu;
    h ^= (k.b + 0x165667b19e3779f9u) * 0xff51afd7ed558ccdu;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

static int same(tl_key x, tl_key y) { return x.kind == y.kind && x.pid == y.pid && x.a == y.a && x.b == y.b; }

void *tl_index_get(const tl_index *ix, tl_key k)
{
    if (!ix->cap)
        return NULL;
    for (size_t i = slot_of(k, ix->cap);; i = (i + 1) & (ix->cap - 1)) {
        if (!ix->keys[i].kind)
            return NULL;
        if (same(ix->keys[i], k))
            return ix->vals[i];
    }
}

static void place(tl_key *keys, void **vals, size_t cap, tl_key k, void *v)
{
    size_t i = slot_of(k, cap);
    while (keys[i].kind)
        i = (i + 1) & (cap - 1);
    keys[i] = k;
    vals[i] = v;
}

int tl_index_put(tl_index *ix, tl_key k, void *v)
{
    if (2 * (ix->n + 1) > ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 64;
        tl_key *keys = calloc(cap, sizeof *keys);
        void **vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return -1;
        }
        for (size_t i = 0; i < ix->cap; i++)
            if (ix->keys[i].kind)
                place(keys, vals, cap, ix->keys[i], ix->vals[i]);
        free(ix->keys);
        free(ix->vals);
        ix->keys = keys;
        ix->vals = vals;
        ix->cap = cap;
    }
    place(ix->keys, ix->vals, ix->cap, k, v);
    ix->n++;
    return 0;
}

void tl_index_free(tl_index *ix)
{
    free(ix->keys);
    free(ix->vals);
    ix->keys = NULL;
    ix->vals = NULL;
    ix->cap = ix->n = 0;
}
