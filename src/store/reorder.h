/* A bounded reorder window (internal to the store): rows read in table order, which is start
 * order up to a bounded disorder (CUPTI hands records over in completion order, and concurrent
 * work completes out of start order), come out in (key, arrival) order. The caller pops the
 * earliest once the window is full and must check that each new key is not below the last popped
 * one: a key that is, arrived too late for the window, and the order is broken.
 * While keys arrive close to their place the window is a sorted run that an item joins at the
 * end or a few places before it (no heap work per item); once items have moved back more than
 * SHIFT_AVG places on average it turns into a binary min-heap (a sorted run already is one).
 * Memory: 2 * cap items of 24 bytes. */
#ifndef WARPLENS_STORE_REORDER_H
#define WARPLENS_STORE_REORDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_reorder_item {
    uint64_t key, seq, val; /* seq: arrival, so equal keys keep their table order */
} wl_reorder_item;

typedef struct wl_reorder {
    wl_reorder_item *v;    /* 2 * cap: sorted, the run is v[head, head + n); as a heap, v[0, n) */
    size_t cap, head, n;
    uint64_t seq, moved;   /* items pushed; places they moved back in the sorted run */
    int is_heap;
} wl_reorder;

/* 0, or -1 when out of memory. */
int wl_reorder_init(wl_reorder *r, size_t cap);
void wl_reorder_free(wl_reorder *r);
static inline int wl_reorder_full(const wl_reorder *r) { return r->n == r->cap; }
/* Room for one more item is the caller's to make (wl_reorder_full, then wl_reorder_pop). */
void wl_reorder_push(wl_reorder *r, uint64_t key, uint64_t val);
/* The earliest item into *out: 1, or 0 when the window is empty. */
int wl_reorder_pop(wl_reorder *r, wl_reorder_item *out);

#endif
