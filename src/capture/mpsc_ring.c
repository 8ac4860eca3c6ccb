/* Bounded MPSC ring with an ordered spill (see mpsc_ring.h). */
#include "capture/mpsc_ring.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES (64u << 10)

struct wl_mpsc_chunk {
    wl_mpsc_chunk *next;
    uint32_t count, read, cap, pad;
    unsigned char data[];
};

static _Atomic uint64_t *seq_at(wl_mpsc *r, uint64_t pos)
{
    return (_Atomic uint64_t *)(void *)(r->slots + (pos & r->mask) * r->stride);
}

static void *elem_at(wl_mpsc *r, uint64_t pos) { return r->slots + (pos & r->mask) * r->stride + 8; }

int wl_mpsc_init(wl_mpsc *r, unsigned capacity, size_t elem_size)
{
    if (capacity < 8 || (capacity & (capacity - 1)) || elem_size == 0 || elem_size > CHUNK_BYTES / 4)
        return -1;
    if (r->slots)
        return 0;
    size_t stride = 8 + ((elem_size + 7) & ~(size_t)7);
    unsigned char *s = calloc(capacity, stride);
    if (!s)
        return -1;
    if (pthread_mutex_init(&r->spill_lock, NULL) != 0) {
        free(s);
        return -1;
    }
    r->stride = stride;
    r->elem_size = elem_size;
    r->mask = capacity - 1;
    r->wake_mask = capacity / 4 - 1;
    for (uint64_t i = 0; i < capacity; i++)
        atomic_store_explicit((_Atomic uint64_t *)(void *)(s + i * stride), i, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    r->slots = s; /* last: a push before this point finds no ring */
    return 0;
}

void wl_mpsc_set_spill(wl_mpsc *r, size_t budget, void (*wake)(void))
{
    pthread_mutex_lock(&r->spill_lock);
    r->spill_budget = budget;
    r->wake = wake;
    pthread_mutex_unlock(&r->spill_lock);
}

/* Appends under the lock; 0 spilled, -1 past the budget (dropped, counted). */
static int spill(wl_mpsc *r, const void *elem)
{
    int rc = 0, first = 0;
    pthread_mutex_lock(&r->spill_lock);
    wl_mpsc_chunk *c = r->spill_tail;
    if (!c || c->count == c->cap) {
        c = r->spill_bytes + CHUNK_BYTES <= r->spill_budget ? malloc(CHUNK_BYTES) : NULL;
        if (c) {
            c->next = NULL;
            c->count = c->read = 0;
            c->cap = (uint32_t)((CHUNK_BYTES - sizeof *c) / r->elem_size);
            if (r->spill_tail)
                r->spill_tail->next = c;
            else
                r->spill_head = c;
            r->spill_tail = c;
            r->spill_bytes += CHUNK_BYTES;
            if (r->spill_bytes > r->spill_peak)
                r->spill_peak = r->spill_bytes;
        }
    }
    if (c) {
        memcpy(c->data + (size_t)c->count * r->elem_size, elem, r->elem_size);
        c->count++;
        r->spilled++;
        first = !atomic_load_explicit(&r->spilling, memory_order_relaxed);
        atomic_store_explicit(&r->spilling, 1, memory_order_release);
    } else {
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        rc = -1;
    }
    pthread_mutex_unlock(&r->spill_lock);
    if (first && r->wake)
        r->wake();
    return rc;
}

int wl_mpsc_push(wl_mpsc *r, const void *elem)
{
    if (!r->slots)
        return -1;
    if (atomic_load_explicit(&r->spilling, memory_order_acquire))
        return spill(r, elem); /* behind earlier spilled elements, not ahead of them */
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    for (;;) {
        _Atomic uint64_t *seq = seq_at(r, pos);
        int64_t diff = (int64_t)(atomic_load_explicit(seq, memory_order_acquire) - pos);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                memcpy(elem_at(r, pos), elem, r->elem_size);
                atomic_store_explicit(seq, pos + 1, memory_order_release);
                if ((pos & r->wake_mask) == r->wake_mask && r->wake)
                    r->wake();
                return 0;
            }
        } else if (diff < 0) {
            return spill(r, elem);
        } else {
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
        }
    }
}

static int pop_taken(wl_mpsc *r, void *elem)
{
    wl_mpsc_chunk *c;
    while ((c = r->taken) && c->read == c->count) {
        r->taken = c->next;
        free(c);
        pthread_mutex_lock(&r->spill_lock);
        r->spill_bytes -= CHUNK_BYTES; /* the budget counts chunks until they are freed */
        pthread_mutex_unlock(&r->spill_lock);
    }
    if (!c)
        return 0;
    memcpy(elem, c->data + (size_t)c->read * r->elem_size, r->elem_size);
    c->read++;
    return 1;
}

int wl_mpsc_pop(wl_mpsc *r, void *elem)
{
    if (!r->slots)
        return 0;
    if (pop_taken(r, elem)) /* spilled elements the consumer took: older than what the ring holds now */
        return 1;
    _Atomic uint64_t *seq = seq_at(r, r->tail);
    if ((int64_t)(atomic_load_explicit(seq, memory_order_acquire) - (r->tail + 1)) >= 0) {
        memcpy(elem, elem_at(r, r->tail), r->elem_size);
        atomic_store_explicit(seq, r->tail + r->mask + 1, memory_order_release);
        r->tail++;
        return 1;
    }
    /* the spill is taken only once every claimed slot has been read: a slot claimed before the
     * spill began may still be being written, and it is older than everything spilled. head is
     * read again under the lock: a producer that loaded spilling == 0 may claim a slot after the
     * first look and then spill its next element; its spill() unlock orders that claim before
     * this load, so the spill is left until the slot is read (without it, CI saw one thread's
     * elements out of order, about once in 40 runs of test_capture_queues) */
    if (!atomic_load_explicit(&r->spilling, memory_order_acquire) ||
        atomic_load_explicit(&r->head, memory_order_acquire) != r->tail)
        return 0;
    pthread_mutex_lock(&r->spill_lock);
    if (atomic_load_explicit(&r->head, memory_order_acquire) != r->tail) {
        pthread_mutex_unlock(&r->spill_lock);
        return 0;
    }
    r->taken = r->spill_head;
    r->spill_head = r->spill_tail = NULL;
    atomic_store_explicit(&r->spilling, 0, memory_order_release);
    pthread_mutex_unlock(&r->spill_lock);
    return pop_taken(r, elem);
}

uint64_t wl_mpsc_take_dropped(wl_mpsc *r)
{
    return atomic_exchange_explicit(&r->dropped, 0, memory_order_relaxed);
}

wl_mpsc_stats wl_mpsc_get_stats(wl_mpsc *r)
{
    wl_mpsc_stats s = {0, 0, 0};
    if (!r->slots)
        return s;
    pthread_mutex_lock(&r->spill_lock);
    s.spilled = r->spilled;
    s.spill_peak_bytes = r->spill_peak;
    pthread_mutex_unlock(&r->spill_lock);
    s.ring_bytes = (r->mask + 1) * r->stride;
    return s;
}
