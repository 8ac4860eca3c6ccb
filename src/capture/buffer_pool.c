/* CUPTI activity buffers: a bounded pool of zeroed buffers that CUPTI borrows on application
 * threads (a pointer pop under a short lock, never an allocation) and that the writer thread
 * drains, zeroes and returns. When every buffer is in use the request is refused: CUPTI then drops
 * records and counts them, and the refusal is counted here, so memory stays bounded and the loss
 * is visible. */
#include "capture/recorder.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_POOL 4096
#define SPARE_BUFFERS 4

typedef struct completed_buf {
    uint8_t *buf;
    size_t valid;
} completed_buf;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond;
static size_t g_size;
static unsigned g_max, g_allocated, g_in_use, g_peak;
static uint8_t *g_free[MAX_POOL];
static unsigned g_nfree;
static completed_buf g_done[MAX_POOL];
static unsigned g_done_head, g_done_count;
static uint64_t g_completed, g_refused;
static int g_wake;

static uint8_t *alloc_buffer(void)
{
    /* CUPTI requires 8-byte alignment; calloc gives 16 and hands out zeroed pages. */
    return calloc(1, g_size);
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
        uint8_t *b = alloc_buffer();
        if (!b)
            return i ? 0 : -1;
        g_free[g_nfree++] = b;
        g_allocated++;
    }
    return 0;
}

uint8_t *wl_pool_get(void)
{
    uint8_t *b = NULL;
    pthread_mutex_lock(&g_lock);
    if (g_nfree) {
        b = g_free[--g_nfree];
        if (++g_in_use > g_peak)
            g_peak = g_in_use;
    } else {
        g_refused++;
    }
    /* ask the writer to top the pool up before the next request */
    g_wake = 1;
    pthread_cond_signal(&g_cond);
    pthread_mutex_unlock(&g_lock);
    return b;
}

size_t wl_pool_get_buffer_size(void) { return g_size; }

void wl_pool_complete(uint8_t *buf, size_t valid)
{
    pthread_mutex_lock(&g_lock);
    if (g_done_count < MAX_POOL) {
        g_done[(g_done_head + g_done_count) % MAX_POOL] = (completed_buf){buf, valid};
        g_done_count++;
        g_completed++;
    }
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

void wl_pool_recycle(uint8_t *buf)
{
    memset(buf, 0, g_size); /* CUPTI is told the buffers come zeroed */
    pthread_mutex_lock(&g_lock);
    g_free[g_nfree++] = buf;
    g_in_use--;
    pthread_mutex_unlock(&g_lock);
}

void wl_pool_refill(void)
{
    /* keep spare buffers so a burst of requests is served before the writer's next turn: CUPTI asks
     * for several at once after a flush (one per queue it keeps) */
    for (;;) {
        pthread_mutex_lock(&g_lock);
        int need = g_nfree < SPARE_BUFFERS && g_allocated < g_max;
        if (need)
            g_allocated++;
        pthread_mutex_unlock(&g_lock);
        if (!need)
            return;
        uint8_t *b = alloc_buffer();
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
    wl_pool_stats s = {g_completed, g_refused, g_allocated, g_peak};
    pthread_mutex_unlock(&g_lock);
    return s;
}
