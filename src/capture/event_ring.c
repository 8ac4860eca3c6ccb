/* A bounded lock-free multi-producer queue of fixed-size events (scope begin/end, thread names)
 * from application threads to the writer thread. Each slot carries a sequence number that says
 * whether it is free for the producer of a given position or full for the consumer (the classic
 * bounded MPMC design), so producers never wait on each other or on the writer; a full ring drops
 * the event and counts it. */
#include "capture/recorder.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot {
    _Atomic uint64_t seq;
    wl_event ev;
} slot;

static slot *g_slots;
static uint64_t g_mask;
static _Atomic uint64_t g_head; /* next position to claim for writing */
static uint64_t g_tail;         /* next position to read (writer thread only) */
static _Atomic uint64_t g_dropped;

int wl_ring_init(unsigned capacity_pow2)
{
    if (capacity_pow2 < 2 || (capacity_pow2 & (capacity_pow2 - 1)))
        return -1;
    if (g_slots)
        return 0;
    g_slots = calloc(capacity_pow2, sizeof *g_slots);
    if (!g_slots)
        return -1;
    for (uint64_t i = 0; i < capacity_pow2; i++)
        atomic_store_explicit(&g_slots[i].seq, i, memory_order_relaxed);
    g_mask = capacity_pow2 - 1;
    return 0;
}

int wl_ring_push(const wl_event *ev)
{
    if (!g_slots)
        return -1;
    uint64_t pos = atomic_load_explicit(&g_head, memory_order_relaxed);
    for (;;) {
        slot *s = &g_slots[pos & g_mask];
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        int64_t diff = (int64_t)(seq - pos);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&g_head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                s->ev = *ev;
                atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
                return 0;
            }
        } else if (diff < 0) {
            atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
            return -1;
        } else {
            pos = atomic_load_explicit(&g_head, memory_order_relaxed);
        }
    }
}

int wl_ring_pop(wl_event *ev)
{
    if (!g_slots)
        return 0;
    slot *s = &g_slots[g_tail & g_mask];
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
    if ((int64_t)(seq - (g_tail + 1)) < 0)
        return 0;
    *ev = s->ev;
    atomic_store_explicit(&s->seq, g_tail + g_mask + 1, memory_order_release);
    g_tail++;
    return 1;
}

uint64_t wl_ring_take_dropped(void)
{
    return atomic_exchange_explicit(&g_dropped, 0, memory_order_relaxed);
}
