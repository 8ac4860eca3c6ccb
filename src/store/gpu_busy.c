/* GPU busy time without sorting the kernel table (see gpu_busy.h). Per device: a min-heap of up
 * to REORDER kernels by start; when it is full the earliest leaves it, after the copies and sets
 * that start no later, and joins the device's running union. A kernel that starts before one
 * already taken into the union breaks the order: the result is refused. */
#include "store/gpu_busy.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define REORDER 8192 /* kernels held per device: far more than can run at once on any GPU */

typedef struct span {
    uint64_t s, e;
} span;

typedef struct copy {
    int64_t pid, dev;
    uint64_t s, e;
} copy;

typedef struct dev_state {
    int64_t pid, dev;
    span *heap;
    size_t n;
    size_t copy_next, copy_end; /* this device's copies and sets: copies[copy_next, copy_end) */
    uint64_t last;              /* start of the last interval taken into the union */
    uint64_t cur_s, cur_e, busy;
    int open;
} dev_state;

struct wl_busy {
    dev_state *d;
    size_t nd, capd, hit;
    copy *copies;
    size_t ncopies, capcopies;
    int failed;
};

static void take(dev_state *d, uint64_t s, uint64_t e, int *failed)
{
    if (s < d->last) {
        *failed = 1;
        return;
    }
    d->last = s;
    if (!d->open) {
        d->cur_s = s, d->cur_e = e, d->open = 1;
    } else if (s > d->cur_e) {
        d->busy += d->cur_e - d->cur_s;
        d->cur_s = s, d->cur_e = e;
    } else if (e > d->cur_e) {
        d->cur_e = e;
    }
}

/* A kernel leaves the window: the copies that start no later go first. */
static void take_kernel(wl_busy *b, dev_state *d, span k)
{
    while (d->copy_next < d->copy_end && b->copies[d->copy_next].s <= k.s) {
        const copy *c = &b->copies[d->copy_next++];
        take(d, c->s, c->e, &b->failed);
    }
    take(d, k.s, k.e, &b->failed);
}

static span heap_pop(dev_state *d)
{
    span top = d->heap[0], x = d->heap[--d->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= d->n)
            break;
        if (c + 1 < d->n && d->heap[c + 1].s < d->heap[c].s)
            c++;
        if (d->heap[c].s >= x.s)
            break;
        d->heap[i] = d->heap[c];
        i = c;
    }
    if (d->n)
        d->heap[i] = x;
    return top;
}

static void heap_push(dev_state *d, span x)
{
    size_t i = d->n++;
    while (i && d->heap[(i - 1) / 2].s > x.s) {
        d->heap[i] = d->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    d->heap[i] = x;
}

static int copy_before(const copy *c, int64_t pid, int64_t dev)
{
    return c->pid < pid || (c->pid == pid && c->dev < dev);
}

static dev_state *device(wl_busy *b, int64_t pid, int64_t dev)
{
    if (b->hit < b->nd && b->d[b->hit].pid == pid && b->d[b->hit].dev == dev)
        return &b->d[b->hit];
    for (size_t i = 0; i < b->nd; i++)
        if (b->d[i].pid == pid && b->d[i].dev == dev)
            return &b->d[b->hit = i];
    if (wl_grow((void **)&b->d, &b->capd, b->nd, sizeof *b->d, 8))
        return NULL;
    dev_state *d = &b->d[b->hit = b->nd++];
    memset(d, 0, sizeof *d);
    d->pid = pid, d->dev = dev;
    size_t lo = 0, hi = b->ncopies; /* the device's copies: a run of the sorted list */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (copy_before(&b->copies[mid], pid, dev))
            lo = mid + 1;
        else
            hi = mid;
    }
    d->copy_next = d->copy_end = lo;
    while (d->copy_end < b->ncopies && b->copies[d->copy_end].pid == pid && b->copies[d->copy_end].dev == dev)
        d->copy_end++;
    return d;
}

wl_busy *wl_busy_open(sqlite3 *db)
{
    wl_busy *b = calloc(1, sizeof *b);
    sqlite3_stmt *st;
    if (!b || sqlite3_prepare_v2(db,
                                 "SELECT pid, device_id, start_ns, end_ns FROM memcpy WHERE start_ns IS NOT NULL AND"
                                 " end_ns >= start_ns UNION ALL SELECT pid, device_id, start_ns, end_ns FROM memset"
                                 " WHERE start_ns IS NOT NULL AND end_ns >= start_ns ORDER BY 1, 2, 3",
                                 -1, &st, NULL) != SQLITE_OK) {
        free(b);
        return NULL;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (wl_grow((void **)&b->copies, &b->capcopies, b->ncopies, sizeof *b->copies, 256)) {
            rc = SQLITE_NOMEM;
            break;
        }
        b->copies[b->ncopies++] = (copy){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                          (uint64_t)sqlite3_column_int64(st, 2), (uint64_t)sqlite3_column_int64(st, 3)};
    }
    sqlite3_finalize(st);
    /* every device with copies has its state from the start: those without kernels count too */
    for (size_t i = 0; rc == SQLITE_DONE && i < b->ncopies; i++)
        if ((i == 0 || b->copies[i].pid != b->copies[i - 1].pid || b->copies[i].dev != b->copies[i - 1].dev) &&
            !device(b, b->copies[i].pid, b->copies[i].dev))
            rc = SQLITE_NOMEM;
    if (rc != SQLITE_DONE) {
        uint64_t ignored;
        wl_busy_close(b, &ignored);
        return NULL;
    }
    return b;
}

void wl_busy_kernel(wl_busy *b, int64_t pid, int64_t device_id, uint64_t start, uint64_t end)
{
    if (b->failed)
        return;
    dev_state *d = device(b, pid, device_id);
    if (!d || (!d->heap && !(d->heap = malloc(REORDER * sizeof *d->heap)))) {
        b->failed = 1;
        return;
    }
    if (start < d->last) { /* earlier than one already in the union: beyond the window */
        b->failed = 1;
        return;
    }
    if (d->n == REORDER)
        take_kernel(b, d, heap_pop(d));
    heap_push(d, (span){start, end});
}

int wl_busy_close(wl_busy *b, uint64_t *ns)
{
    *ns = 0;
    if (!b)
        return -1;
    uint64_t busy = 0;
    for (size_t i = 0; i < b->nd; i++) {
        dev_state *d = &b->d[i];
        while (!b->failed && d->n)
            take_kernel(b, d, heap_pop(d));
        while (!b->failed && d->copy_next < d->copy_end) {
            const copy *c = &b->copies[d->copy_next++];
            take(d, c->s, c->e, &b->failed);
        }
        busy += d->busy + (d->open ? d->cur_e - d->cur_s : 0);
        free(d->heap);
    }
    int failed = b->failed;
    free(b->d);
    free(b->copies);
    free(b);
    if (failed)
        return -1;
    *ns = busy;
    return 0;
}
