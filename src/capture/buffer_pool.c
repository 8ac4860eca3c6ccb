/* CUPTI activity buffers: the pool CUPTI borrows from on application threads and the writer thread
 * drains, zeroes and returns.
 *
 * Why it allocates on demand: CUPTI keeps one activity buffer per thread that produces records
 * (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, on by default), and every flush hands all of
 * them back at once, after which each thread that records again asks for a new one. A free list
 * refilled only by the writer (four spares a turn, as this pool used to be) cannot serve a burst
 * of requests from many threads: the requests it refused lost one record each, and the recorder
 * lost 2-41 % of the kernels of 8-256 launching threads while the pool stood far below its limit
 * (docs/recorder.md, "Many launching threads"). So a request the free list cannot serve maps a
 * fresh buffer right there, on the requesting thread, as long as the budget allows: one mmap
 * system call per buffer that ever exists, not per record, and the pages are the kernel's zero
 * pages until CUPTI writes them. Only past the budget is a request refused (counted).
 *
 * Memory: at most max_buffers * buffer_size bytes are mapped (the budget); resident is only what
 * CUPTI wrote. Recycling zeroes the written prefix (plus a page of slack), not the whole buffer,
 * so a buffer's resident size is the most CUPTI ever wrote into it; buffers that stay unused in
 * the free list for TRIM_NS are unmapped, so the pool shrinks back when threads go away. */
#include "capture/recorder.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/clock.h"

#define MAX_POOL 4096
#define SPARE_BUFFERS 4          /* kept mapped ahead of requests, so one thread never maps on its own */
#define ZERO_SLACK 4096          /* beyond valid: a record CUPTI began but did not complete */
#define TRIM_NS 2000000000ull    /* free buffers unused this long (beyond the spares) are unmapped */

typedef struct completed_buf {
    uint8_t *buf;
    size_t valid;
} completed_buf;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond;
static size_t g_size;
static unsigned g_max, g_allocated, g_in_use, g_peak, g_peak_allocated;
static uint8_t *g_free[MAX_POOL];
static unsigned g_nfree;
static completed_buf g_done[MAX_POOL];
static unsigned g_done_head, g_done_count;
static uint64_t g_requests, g_completed, g_refused, g_on_demand, g_trimmed;
static unsigned g_low_free;      /* fewest free buffers since the last trim window began */
static uint64_t g_window_start;  /* monotonic ns */
static int g_wake;

static uint8_t *map_buffer(void)
{
    /* page-aligned (CUPTI needs 8), zero-filled by the kernel, released with munmap */
    void *p = mmap(NULL, g_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void note_allocated(void)
{
    if (++g_allocated > g_peak_allocated)
        g_peak_allocated = g_allocated;
}

int wl_pool_init(size_t buffer_size, unsigned initial, unsigned max)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cond, &ca);
    pthread_condattr_destroy(&ca);
    g_size = buffer_size;
    g_max = max > MAX_POOL ? MAX_POOL : max;
    if (initial > g_max)
        initial = g_max;
    for (unsigned i = 0; i < initial; i++) {
        uint8_t *b = map_buffer();
        if (!b)
            return i ? 0 : -1;
        g_free[g_nfree++] = b;
        note_allocated();
    }
    g_low_free = g_nfree;
    g_window_start = wl_monotonic_ns();
    return 0;
}

uint8_t *wl_pool_get(void)
{
    uint8_t *b = NULL;
    int map = 0;
    pthread_mutex_lock(&g_lock);
    g_requests++;
    if (g_nfree) {
        b = g_free[--g_nfree];
        if (g_nfree < g_low_free)
            g_low_free = g_nfree;
    } else if (g_allocated < g_max) {
        note_allocated(); /* reserved now, mapped below outside the lock */
        g_on_demand++;
        g_low_free = 0;
        map = 1;
    } else {
        g_refused++;
    }
    if (b || map) {
        if (++g_in_use > g_peak)
            g_peak = g_in_use;
    }
    if (g_nfree < SPARE_BUFFERS) { /* ask the writer to map spares before the next request */
        g_wake = 1;
        pthread_cond_signal(&g_cond);
    }
    pthread_mutex_unlock(&g_lock);
    if (map && !(b = map_buffer())) {
        pthread_mutex_lock(&g_lock);
        g_allocated--;
        g_in_use--;
        g_on_demand--;
        g_refused++;
        pthread_mutex_unlock(&g_lock);
    }
    return b;
}

size_t wl_pool_get_buffer_size(void) { return g_size; }

void wl_pool_complete(uint8_t *buf, size_t valid)
{
    pthread_mutex_lock(&g_lock);
    /* every buffer CUPTI holds came from this pool, and the pool has at most MAX_POOL */
    g_done[(g_done_head + g_done_count) % MAX_POOL] = (completed_buf){buf, valid};
    g_done_count++;
    g_completed++;
    g_wake = 1;
    pthread_cond_signal(&g_cond);
    pthread_mutex_unlock(&g_lock);
}

int wl_pool_next_completed(uint8_t **buf, size_t *valid)
{
    pthread_mutex_lock(&g_lock);
    int have = g_done_count > 0;
    if (have) {
        *buf = g_done[g_done_head].buf;
        *valid = g_done[g_done_head].valid;
        g_done_head = (g_done_head + 1) % MAX_POOL;
        g_done_count--;
    }
    pthread_mutex_unlock(&g_lock);
    return have;
}

void wl_pool_recycle(uint8_t *buf, size_t valid)
{
    /* CUPTI is told the buffers come zeroed; it wrote only the records it reported as valid (and at
     * most a record it never completed), so only that prefix needs zeroing */
    size_t dirty = valid > g_size - ZERO_SLACK ? g_size : valid + ZERO_SLACK;
    memset(buf, 0, dirty);
    pthread_mutex_lock(&g_lock);
    g_free[g_nfree++] = buf;
    g_in_use--;
    pthread_mutex_unlock(&g_lock);
}

/* Writer thread: map spares up to SPARE_BUFFERS, and unmap free buffers that no request needed
 * during the last trim window (beyond the spares), so memory follows the threads that record. */
void wl_pool_refill(void)
{
    uint64_t now = wl_monotonic_ns();
    pthread_mutex_lock(&g_lock);
    unsigned excess = 0;
    if (now - g_window_start >= TRIM_NS) {
        /* the fewest free buffers during the window were never needed in it */
        excess = g_low_free > SPARE_BUFFERS ? g_low_free - SPARE_BUFFERS : 0;
        g_low_free = g_nfree - excess;
        g_window_start = now;
    }
    pthread_mutex_unlock(&g_lock);
    while (excess) {
        uint8_t *unmap[64];
        unsigned n = 0;
        pthread_mutex_lock(&g_lock);
        while (excess && n < sizeof unmap / sizeof unmap[0] && g_nfree) {
            unmap[n++] = g_free[--g_nfree];
            g_allocated--;
            g_trimmed++;
            excess--;
        }
        if (g_nfree < g_low_free)
            g_low_free = g_nfree;
        pthread_mutex_unlock(&g_lock);
        for (unsigned i = 0; i < n; i++)
            munmap(unmap[i], g_size);
        if (!n)
            break;
    }

    for (;;) {
        pthread_mutex_lock(&g_lock);
        int need = g_nfree < SPARE_BUFFERS && g_allocated < g_max;
        if (need)
            note_allocated();
        pthread_mutex_unlock(&g_lock);
        if (!need)
            return;
        uint8_t *b = map_buffer();
        pthread_mutex_lock(&g_lock);
        if (b)
            g_free[g_nfree++] = b;
        else
            g_allocated--;
        pthread_mutex_unlock(&g_lock);
        if (!b)
            return;
    }
}

void wl_pool_wait(unsigned timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&g_lock);
    while (!g_wake) {
        if (pthread_cond_timedwait(&g_cond, &g_lock, &ts) != 0)
            break;
    }
    g_wake = 0;
    pthread_mutex_unlock(&g_lock);
}

void wl_pool_wake(void)
{
    pthread_mutex_lock(&g_lock);
    g_wake = 1;
    pthread_cond_signal(&g_cond);
    pthread_mutex_unlock(&g_lock);
}

wl_pool_stats wl_pool_get_stats(void)
{
    pthread_mutex_lock(&g_lock);
    wl_pool_stats s = {g_requests, g_completed, g_refused, g_allocated, g_peak, g_peak_allocated,
                       g_on_demand, g_trimmed, g_size};
    pthread_mutex_unlock(&g_lock);
    return s;
}
