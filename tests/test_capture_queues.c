/* The recorder's two queues between application threads and its writer, under many threads, with
 * no GPU: the activity-buffer pool (src/capture/buffer_pool.c) and the MPSC ring with its spill
 * (src/capture/mpsc_ring.c). What the lossless-capture fix relies on:
 *  - pool: a burst of requests from many threads is served (buffers mapped on the requesting
 *    thread) until the budget, and only past it refused and counted; recycled buffers come back
 *    zeroed; free buffers nobody needed for the trim window are unmapped again;
 *  - ring: producers that outrun the writer spill instead of dropping, every element arrives
 *    exactly once and each producer's elements in the order it pushed them; past the spill's
 *    budget elements are dropped and counted, never lost silently. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/mpsc_ring.h"
#include "capture/recorder.h"
#include "test.h"

/* ---- pool ----------------------------------------------------------------------------------- */

#define POOL_SIZE (64u << 10)

static atomic_int g_go;
static pthread_barrier_t g_barrier;

static void *burst_requester(void *arg)
{
    uint8_t **out = arg;
    pthread_barrier_wait(&g_barrier);
    *out = wl_pool_get(); /* all threads at once, as CUPTI after a flush with per-thread buffers */
    return NULL;
}

static int all_zero(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

static void test_pool(void)
{
    enum { THREADS = 96, BUDGET = 80 };
    CHECK_EQ_INT(wl_pool_init(POOL_SIZE, 4, BUDGET), 0);
    uint8_t *got[THREADS] = {0};
    pthread_t th[THREADS];
    pthread_barrier_init(&g_barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, burst_requester, &got[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_barrier);
    int served = 0;
    for (int i = 0; i < THREADS; i++)
        served += got[i] != NULL;
    wl_pool_stats s = wl_pool_get_stats();
    /* the old pool served 4 (its spares) and refused the rest; this one serves up to the budget */
    CHECK_EQ_INT(served, BUDGET);
    CHECK_EQ_INT(s.requests, THREADS);
    CHECK_EQ_INT(s.refused, THREADS - BUDGET);
    CHECK_EQ_INT(s.on_demand, BUDGET - 4);
    CHECK_EQ_INT(s.allocated, BUDGET);
    CHECK_EQ_INT(s.peak_in_use, BUDGET);
    for (int i = 0; i < THREADS; i++)
        if (got[i])
            CHECK(((uintptr_t)got[i] & 7) == 0 && all_zero(got[i], POOL_SIZE));

    /* CUPTI writes records, completes them; the writer recycles: zeroed again, back in the free list */
    for (int i = 0; i < THREADS; i++)
        if (got[i]) {
            size_t valid = (size_t)(i * 977) % (POOL_SIZE - 100);
            memset(got[i], 0xab, valid + 100); /* a record it began past valid, too */
            wl_pool_complete(got[i], valid);
        }
    uint8_t *b;
    size_t valid;
    int completed = 0;
    while (wl_pool_next_completed(&b, &valid)) {
        wl_pool_recycle(b, valid);
        completed++;
    }
    CHECK_EQ_INT(completed, BUDGET);
    s = wl_pool_get_stats();
    CHECK_EQ_INT(s.completed, BUDGET);
    CHECK_EQ_INT(s.peak_allocated, BUDGET);
    int zero = 1;
    for (int i = 0; i < BUDGET; i++) { /* every buffer served again comes zeroed */
        uint8_t *x = wl_pool_get();
        CHECK(x != NULL);
        if (x) {
            zero &= all_zero(x, POOL_SIZE);
            wl_pool_complete(x, 0);
        }
    }
    CHECK(zero);
    CHECK_EQ_INT(wl_pool_get_stats().refused, THREADS - BUDGET); /* the budget held nothing back */
    while (wl_pool_next_completed(&b, &valid))
        wl_pool_recycle(b, valid);

    /* the window that held the burst needed every buffer: nothing is unmapped when it closes */
    struct timespec ts = {2, 100000000};
    nanosleep(&ts, NULL);
    wl_pool_refill();
    CHECK_EQ_INT(wl_pool_get_stats().trimmed, 0);
    /* a whole window in which nothing asked: all but the spares are unmapped */
    nanosleep(&ts, NULL);
    wl_pool_refill();
    s = wl_pool_get_stats();
    CHECK_EQ_INT(s.allocated, 4);
    CHECK_EQ_INT(s.trimmed, BUDGET - 4);
    CHECK(wl_pool_get() != NULL);           /* and serving goes on */
}

/* ---- ring ----------------------------------------------------------------------------------- */

typedef struct item {
    uint32_t producer, seq;
    uint64_t payload;
} item;

enum { PRODUCERS = 16, PER_PRODUCER = 40000 };
/* rings live as long as the recorder, as in it: one per test, never freed */
static wl_mpsc g_rings[2], g_budget_ring;
static wl_mpsc *g_ring; /* the one the producers push to */
static atomic_int g_wakes;

static void count_wake(void) { atomic_fetch_add(&g_wakes, 1); }

static void *producer(void *arg)
{
    uint32_t p = (uint32_t)(uintptr_t)arg;
    while (!atomic_load(&g_go))
        ;
    for (uint32_t i = 0; i < PER_PRODUCER; i++) {
        item it = {p, i, (uint64_t)p * 1000003u + i};
        wl_mpsc_push(g_ring, &it);
    }
    return NULL;
}

/* Pops everything, checking each producer's order; returns how many arrived. */
static uint64_t drain_checked(wl_mpsc *r, uint32_t *next, int *in_order, int *payload_ok)
{
    item it;
    uint64_t n = 0;
    while (wl_mpsc_pop(r, &it)) {
        n++;
        if (it.producer >= PRODUCERS || it.seq != next[it.producer])
            *in_order = 0;
        else
            next[it.producer]++;
        if (it.payload != (uint64_t)it.producer * 1000003u + it.seq)
            *payload_ok = 0;
    }
    return n;
}

static void test_ring_spill(int consumer_runs)
{
    g_ring = &g_rings[consumer_runs];
    atomic_store(&g_go, 0);
    atomic_store(&g_wakes, 0);
    CHECK_EQ_INT(wl_mpsc_init(g_ring, 1024, sizeof(item)), 0);
    wl_mpsc_set_spill(g_ring, 64u << 20, count_wake);
    pthread_t th[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++)
        pthread_create(&th[i], NULL, producer, (void *)(uintptr_t)i);
    uint32_t next[PRODUCERS] = {0};
    int in_order = 1, payload_ok = 1;
    uint64_t got = 0;
    atomic_store(&g_go, 1);
    if (consumer_runs) /* the writer drains while they push: ring and spill interleave */
        for (int k = 0; k < 200000 && got < (uint64_t)PRODUCERS * PER_PRODUCER; k++)
            got += drain_checked(g_ring, next, &in_order, &payload_ok);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(th[i], NULL);
    got += drain_checked(g_ring, next, &in_order, &payload_ok);
    got += drain_checked(g_ring, next, &in_order, &payload_ok); /* what the first took from the spill */
    CHECK_EQ_INT(got, (uint64_t)PRODUCERS * PER_PRODUCER);
    CHECK(in_order);
    CHECK(payload_ok);
    CHECK_EQ_INT(wl_mpsc_take_dropped(g_ring), 0);
    wl_mpsc_stats s = wl_mpsc_get_stats(g_ring);
    if (!consumer_runs) /* a writer away for the whole burst: all but the ring's 1,024 spilled */
        CHECK_EQ_INT(s.spilled, (uint64_t)PRODUCERS * PER_PRODUCER - 1024);
    CHECK(atomic_load(&g_wakes) > 0);
    item it;
    CHECK(!wl_mpsc_pop(g_ring, &it));
}

static void test_ring_budget(void)
{
    wl_mpsc *r = &g_budget_ring;
    CHECK_EQ_INT(wl_mpsc_init(r, 8, sizeof(item)), 0);
    /* no spill: the old behaviour, a full ring drops and counts */
    item it = {0, 0, 0};
    int pushed = 0;
    for (uint32_t i = 0; i < 20; i++) {
        it.seq = i;
        it.payload = i;
        pushed += wl_mpsc_push(r, &it) == 0;
    }
    CHECK_EQ_INT(pushed, 8);
    CHECK_EQ_INT(wl_mpsc_take_dropped(r), 12);
    /* a spill of one 64 KiB chunk: what fits goes there, the rest is counted */
    wl_mpsc_set_spill(r, 64u << 10, NULL);
    for (uint32_t i = 20; i < 10000; i++) {
        it.seq = i;
        it.payload = i;
        pushed += wl_mpsc_push(r, &it) == 0;
    }
    uint64_t dropped = wl_mpsc_take_dropped(r);
    CHECK(pushed > 8 + 3000 && pushed < 8 + 4096); /* one chunk holds about 4,000 items of 16 bytes */
    CHECK_EQ_INT((uint64_t)pushed + dropped, 10000 - 12);
    uint32_t last = 0;
    int n = 0, ordered = 1;
    while (wl_mpsc_pop(r, &it)) {
        if (n && it.seq <= last)
            ordered = 0;
        last = it.seq;
        n++;
    }
    CHECK_EQ_INT(n, pushed);
    CHECK(ordered);
    /* taken and freed: the budget is free again */
    it.seq = 1;
    CHECK_EQ_INT(wl_mpsc_push(r, &it), 0);
    CHECK(wl_mpsc_pop(r, &it) && it.seq == 1);
}

int main(void)
{
    test_pool();
    test_ring_spill(0);
    test_ring_spill(1);
    test_ring_budget();
    return test_report("capture_queues");
}
