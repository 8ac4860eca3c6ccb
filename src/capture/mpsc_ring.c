/* Bounded MPSC ring (see mpsc_ring.h). */
#include "capture/mpsc_ring.h"

#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t *seq_at(wl_mpsc *r, uint64_t pos)
{
    return (_Atomic uint64_t *)(void *)(r->slots + (pos & r->mask) * r->stride);
}

static void *elem_at(wl_mpsc *r, uint64_t pos) { return r->slots + (pos & r->mask) * r->stride + 8; }

int wl_mpsc_init(wl_mpsc *r, unsigned capacity, size_t elem_size)
{
    if (capacity < 2 || (capacity & (capacity - 1)) || elem_size == 0)
        return -1;
    if (r->slots)
        return 0;
    size_t stride = 8 + ((elem_size + 7) & ~(size_t)7);
    unsigned char *s = calloc(capacity, stride);
    if (!s)
        return -1;
    r->stride = stride;
    r->elem_size = elem_size;
    r->mask = capacity - 1;
    r->slots = s;
    for (uint64_t i = 0; i < capacity; i++)
        atomic_store_explicit(seq_at(r, i), i, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    return 0;
}

int wl_mpsc_push(wl_mpsc *r, const void *elem)
{
    if (!r->slots)
        return -1;
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    for (;;) {
        _Atomic uint64_t *seq = seq_at(r, pos);
        int64_t diff = (int64_t)(atomic_load_explicit(seq, memory_order_acquire) - pos);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                memcpy(elem_at(r, pos), elem, r->elem_size);
                atomic_store_explicit(seq, pos + 1, memory_order_release);
                return 0;
            }
        } else if (diff < 0) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return -1;
        } else {
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
        }
    }
}

int wl_mpsc_pop(wl_mpsc *r, void *elem)
{
    if (!r->slots)
        return 0;
    _Atomic uint64_t *seq = seq_at(r, r->tail);
    if ((int64_t)(atomic_load_explicit(seq, memory_order_acquire) - (r->tail + 1)) < 0)
        return 0;
    memcpy(elem, elem_at(r, r->tail), r->elem_size);
    atomic_store_explicit(seq, r->tail + r->mask + 1, memory_order_release);
    r->tail++;
    return 1;
}

uint64_t wl_mpsc_take_dropped(wl_mpsc *r)
{
    return atomic_exchange_explicit(&r->dropped, 0, memory_order_relaxed);
}
