/* A bounded lock-free multi-producer, single-consumer queue of fixed-size elements: application
 * threads push, the recorder's writer thread pops. Each slot carries a sequence number that says
 * whether it is free for the producer of a given position or full for the consumer (the classic
 * bounded-queue design), so producers never wait on each other or on the writer.
 *
 * A full ring does not drop: the element spills into a list of chunks under a lock, allocated on
 * demand within a budget (the writer fell behind: 256 threads launching on 16 cores can keep it
 * off the CPU for longer than the ring lasts). Once anything has spilled, producers keep spilling
 * until the writer has taken the spill, and the writer takes it only when the ring is empty up to
 * the last claimed slot, so each thread's elements come out in the order it pushed them. Only
 * past the spill budget is an element dropped and counted. The writer is woken each time a
 * quarter of the ring has been claimed and at the first spill, so it drains before the ring fills
 * rather than on its timer. */
#ifndef WARPLENS_CAPTURE_MPSC_RING_H
#define WARPLENS_CAPTURE_MPSC_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wl_mpsc_chunk wl_mpsc_chunk;

typedef struct wl_mpsc {
    unsigned char *slots;          /* capacity * stride bytes; each slot: u64 sequence, element */
    size_t stride, elem_size;
    uint64_t mask, wake_mask;
    void (*wake)(void);            /* called by a producer every wake_mask + 1 claims and at a spill */
    /* read by every push, written only when a spill starts or is taken: kept off the lines the
     * consumer writes on every pop (bench_callback_cost measured +14 ns a launch beside tail) */
    _Atomic int spilling;          /* elements wait in the spill: producers append there */
    _Alignas(64) _Atomic uint64_t head; /* next position to claim (producers) */
    _Alignas(64) uint64_t tail;         /* next position to read (consumer only) */
    _Atomic uint64_t dropped;
    /* the spill (under spill_lock) */
    pthread_mutex_t spill_lock;
    wl_mpsc_chunk *spill_head, *spill_tail;
    size_t spill_bytes, spill_budget, spill_peak;
    uint64_t spilled;
    wl_mpsc_chunk *taken;          /* consumer only: spilled elements it took, older than the ring's */
} wl_mpsc;

/* capacity must be a power of two (at least 8); returns 0 or -1 (bad size, no memory). */
int wl_mpsc_init(wl_mpsc *r, unsigned capacity, size_t elem_size);
/* After init: up to budget bytes may be allocated for the spill (default 0: a full ring drops),
 * and wake (may be NULL) is called at each quarter of the ring and at the first spill. */
void wl_mpsc_set_spill(wl_mpsc *r, size_t budget, void (*wake)(void));
int wl_mpsc_push(wl_mpsc *r, const void *elem); /* 0 taken (ring or spill), -1 dropped (counted) */
int wl_mpsc_pop(wl_mpsc *r, void *elem);        /* 1 when an element was taken */
uint64_t wl_mpsc_take_dropped(wl_mpsc *r);
typedef struct wl_mpsc_stats {
    uint64_t spilled, spill_peak_bytes, ring_bytes;
} wl_mpsc_stats;
wl_mpsc_stats wl_mpsc_get_stats(wl_mpsc *r);

#endif
