/* A bounded lock-free multi-producer, single-consumer queue of fixed-size elements: application
 * threads push, the recorder's writer thread pops. Each slot carries a sequence number that says
 * whether it is free for the producer of a given position or full for the consumer (the classic
 * bounded-queue design), so producers never wait on each other or on the writer; a full ring drops
 * the element and counts it. */
#ifndef WARPLENS_CAPTURE_MPSC_RING_H
#define WARPLENS_CAPTURE_MPSC_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wl_mpsc {
    unsigned char *slots;          /* capacity * stride bytes; each slot: u64 sequence, element */
    size_t stride, elem_size;
    uint64_t mask;
    _Alignas(64) _Atomic uint64_t head; /* next position to claim (producers) */
    _Alignas(64) uint64_t tail;         /* next position to read (consumer only) */
    _Atomic uint64_t dropped;
} wl_mpsc;

/* capacity must be a power of two; returns 0 or -1 (bad size, no memory). */
int wl_mpsc_init(wl_mpsc *r, unsigned capacity, size_t elem_size);
int wl_mpsc_push(wl_mpsc *r, const void *elem); /* -1 when full (counted) */
int wl_mpsc_pop(wl_mpsc *r, void *elem);        /* 1 when an element was taken */
uint64_t wl_mpsc_take_dropped(wl_mpsc *r);

#endif
