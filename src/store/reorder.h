/* A bounded reorder window (internal to the store): rows read in table order, which is start
 * order up to a bounded disorder (CUPTI hands records over in completion order, and concurrent
 * work completes out of start order), come out in (key, arrival) order. The caller pops the
 * earliest once the window is full and must check each new key with wl_reorder_late: a key below
 * the last one popped arrived too late for the window, and the order is broken. A caller that
 * holds its rows beside the window takes their places from its pool of cap slots
 * (wl_reorder_init_slots): a slot for each push, given back once the popped row is used.
 * While keys arrive close to their place the window is a sorted run that an item joins at the
 * end or a few places before it (no heap work per item); once items have moved back more than
 * SHIFT_AVG places on average it turns into a binary min-heap (a sorted run already is one).
 * Memory: 2 * cap items of 24 bytes, and 4 bytes a slot. */
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
    int popped;            /* last holds the key of the last item popped */
    uint64_t last;
    uint32_t *free_slots;  /* wl_reorder_init_slots: the slots no pushed item holds */
    uint32_t nfree;
} wl_reorder;

/* The key of a signed value (SQLite orders integers as signed: start_ns): the same order. */
static inline uint64_t wl_reorder_key_i64(int64_t v) { return (uint64_t)v ^ (1ull << 63); }

/* 0, or -1 when out of memory. */
int wl_reorder_init(wl_reorder *r, size_t cap);
/* The same with a pool of cap slots (0 .. cap - 1, cap < 2^32). */
int wl_reorder_init_slots(wl_reorder *r, size_t cap);
void wl_reorder_free(wl_reorder *r);
static inline int wl_reorder_full(const wl_reorder *r) { return r->n == r->cap; }
/* Room for one more item is the caller's to make (wl_reorder_full, then wl_reorder_pop). */
void wl_reorder_push(wl_reorder *r, uint64_t key, uint64_t val);
/* The earliest item into *out: 1, or 0 when the window is empty. */
int wl_reorder_pop(wl_reorder *r, wl_reorder_item *out);
/* key would come out before an item already popped: it arrived later than the window allows. */
static inline int wl_reorder_late(const wl_reorder *r, uint64_t key) { return r->popped && key < r->last; }
/* A free slot for the next push (there is one while the window is not full), and one given back. */
static inline uint32_t wl_reorder_slot(wl_reorder *r) { return r->free_slots[--r->nfree]; }
static inline void wl_reorder_release(wl_reorder *r, uint32_t slot) { r->free_slots[r->nfree++] = slot; }
/* A row arriving with key, for a window with slots: when it is full, drain(arg) passes the
 * earliest item on (popping it and releasing its slot); then a key that comes later than the
 * window allows is refused (the check must follow the drain: the pop moves the bound). 0 with a
 * slot for the row (the caller fills it, then pushes it), 1 when drain asked to stop, -1 when the
 * key came too late (the order is broken). */
int wl_reorder_admit(wl_reorder *r, uint64_t key, int (*drain)(void *arg), void *arg, uint32_t *slot);

#endif
