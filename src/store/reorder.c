/* The reorder window (see reorder.h). */
#include "store/reorder.h"

#include <stdlib.h>
#include <string.h>

#define SHIFT_AVG 16 /* places items may move back in the sorted run, on average */

static int before(const wl_reorder_item *a, const wl_reorder_item *b)
{
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

int wl_reorder_init(wl_reorder *r, size_t cap)
{
    memset(r, 0, sizeof *r);
    if (!cap || !(r->v = malloc(2 * cap * sizeof *r->v)))
        return -1;
    r->cap = cap;
    return 0;
}

int wl_reorder_init_slots(wl_reorder *r, size_t cap)
{
    if (wl_reorder_init(r, cap))
        return -1;
    if (!(r->free_slots = malloc(cap * sizeof *r->free_slots))) {
        wl_reorder_free(r);
        return -1;
    }
    for (size_t i = 0; i < cap; i++) /* slot 0 first */
        r->free_slots[r->nfree++] = (uint32_t)(cap - 1 - i);
    return 0;
}

void wl_reorder_free(wl_reorder *r)
{
    free(r->v);
    free(r->free_slots);
    memset(r, 0, sizeof *r);
}

static void heap_push(wl_reorder *r, wl_reorder_item x)
{
    size_t i = r->n++;
    while (i && before(&x, &r->v[(i - 1) / 2])) {
        r->v[i] = r->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    r->v[i] = x;
}

static wl_reorder_item heap_pop(wl_reorder *r)
{
    wl_reorder_item top = r->v[0], x = r->v[--r->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= r->n)
            break;
        if (c + 1 < r->n && before(&r->v[c + 1], &r->v[c]))
            c++;
        if (!before(&r->v[c], &x))
            break;
        r->v[i] = r->v[c];
        i = c;
    }
    if (r->n)
        r->v[i] = x;
    return top;
}

void wl_reorder_push(wl_reorder *r, uint64_t key, uint64_t val)
{
    wl_reorder_item x = {key, r->seq++, val};
    if (r->is_heap) {
        heap_push(r, x);
        return;
    }
    wl_reorder_item *w = r->v;
    if (r->head + r->n == 2 * r->cap) { /* the run reached the end: back to the start */
        memmove(w, w + r->head, r->n * sizeof *w);
        r->head = 0;
    }
    /* after the last with a key no greater (arrivals come in seq order) */
    size_t end = r->head + r->n, pos = end;
    if (pos > r->head && w[pos - 1].key > key) {
        size_t lo = r->head, hi = end - 1;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (w[mid].key > key)
                hi = mid;
            else
                lo = mid + 1;
        }
        pos = lo;
    }
    r->moved += end - pos;
    if (r->moved > SHIFT_AVG * r->seq + 4 * r->cap) { /* far from key order: a heap from here on */
        memmove(w, w + r->head, r->n * sizeof *w);
        r->head = 0;
        r->is_heap = 1;
        heap_push(r, x);
        return;
    }
    memmove(w + pos + 1, w + pos, (end - pos) * sizeof *w);
    w[pos] = x;
    r->n++;
}

int wl_reorder_pop(wl_reorder *r, wl_reorder_item *out)
{
    if (!r->n)
        return 0;
    if (r->is_heap) {
        *out = heap_pop(r);
    } else {
        r->n--;
        *out = r->v[r->head++];
    }
    r->popped = 1;
    r->last = out->key;
    return 1;
}

int wl_reorder_admit(wl_reorder *r, uint64_t key, int (*drain)(void *arg), void *arg, uint32_t *slot)
{
    if (wl_reorder_full(r) && drain(arg))
        return 1;
    if (wl_reorder_late(r, key))
        return -1;
    *slot = wl_reorder_slot(r);
    return 0;
}
