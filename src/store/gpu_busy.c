/* GPU busy time without sorting the kernel table (see gpu_busy.h). Per device: a window of up
 * to REORDER kernels by start; when it is full the earliest leaves it, after the copies and sets
 * that start no later, and joins the device's running union. A kernel that starts before one
 * already taken into the union breaks the order: the result is refused. The window is reorder.h's. */
#include "store/gpu_busy.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "store/reorder.h"

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
    wl_reorder win;             /* kernels by start, val their end (allocated at the first) */
    size_t copy_next, copy_end; /* this device's copies and sets: copies[copy_next, copy_end) */
    uint64_t last;              /* start of the last interval taken into the union */
    uint64_t cur_s, cur_e, busy;
    int open;
    span *segs;                 /* with wl_busy_keep: the union's segments, in order */
    size_t nsegs, capsegs;
} dev_state;

struct wl_busy {
    dev_state *d;
    size_t nd, capd, hit;
    copy *copies;
    size_t ncopies, capcopies;
    size_t keep_max, kept;      /* segments kept (wl_busy_keep), over all devices */
    int failed;
};

/* A closed segment of the union, kept when asked; past keep_max the result is refused. */
static void keep(wl_busy *b, dev_state *d, uint64_t s, uint64_t e)
{
    if (!b->keep_max)
        return;
    if (b->kept == b->keep_max || wl_grow((void **)&d->segs, &d->capsegs, d->nsegs, sizeof *d->segs, 64)) {
        b->failed = 1;
        return;
    }
    d->segs[d->nsegs++] = (span){s, e};
    b->kept++;
}

static void take(wl_busy *b, dev_state *d, uint64_t s, uint64_t e)
{
    if (s < d->last) {
        b->failed = 1;
        return;
    }
    d->last = s;
    if (!d->open) {
        d->cur_s = s, d->cur_e = e, d->open = 1;
    } else if (s > d->cur_e) {
        d->busy += d->cur_e - d->cur_s;
        keep(b, d, d->cur_s, d->cur_e);
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
        take(b, d, c->s, c->e);
    }
    take(b, d, k.s, k.e);
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

/* The earliest kernel in the window leaves it (the window is not empty). */
static span window_pop(dev_state *d)
{
    wl_reorder_item it = {0, 0, 0};
    (void)wl_reorder_pop(&d->win, &it);
    return (span){it.key, it.val};
}

void wl_busy_kernel(wl_busy *b, int64_t pid, int64_t device_id, uint64_t start, uint64_t end)
{
    if (b->failed)
        return;
    dev_state *d = device(b, pid, device_id);
    if (!d || (!d->win.v && wl_reorder_init(&d->win, REORDER))) {
        b->failed = 1;
        return;
    }
    if (start < d->last) { /* earlier than one already in the union: beyond the window */
        b->failed = 1;
        return;
    }
    if (wl_reorder_full(&d->win))
        take_kernel(b, d, window_pop(d));
    wl_reorder_push(&d->win, start, end);
}

void wl_busy_keep(wl_busy *b, size_t max_segments)
{
    if (b)
        b->keep_max = max_segments;
}

/* Everything left in the windows and the copies taken into the unions (the open segments kept);
 * the summed busy time. */
static uint64_t finish(wl_busy *b)
{
    uint64_t busy = 0;
    for (size_t i = 0; i < b->nd; i++) {
        dev_state *d = &b->d[i];
        while (!b->failed && d->win.n)
            take_kernel(b, d, window_pop(d));
        while (!b->failed && d->copy_next < d->copy_end) {
            const copy *c = &b->copies[d->copy_next++];
            take(b, d, c->s, c->e);
        }
        if (d->open)
            keep(b, d, d->cur_s, d->cur_e);
        busy += d->busy + (d->open ? d->cur_e - d->cur_s : 0);
    }
    return busy;
}

static void release(wl_busy *b)
{
    for (size_t i = 0; i < b->nd; i++) {
        wl_reorder_free(&b->d[i].win);
        free(b->d[i].segs);
    }
    free(b->d);
    free(b->copies);
    free(b);
}

int wl_busy_close(wl_busy *b, uint64_t *ns)
{
    *ns = 0;
    if (!b)
        return -1;
    uint64_t busy = finish(b);
    int failed = b->failed;
    release(b);
    if (failed)
        return -1;
    *ns = busy;
    return 0;
}

/* The length of the union of two ordered lists of disjoint segments. */
static uint64_t union_of(const span *x, size_t nx, const span *y, size_t ny)
{
    uint64_t busy = 0, cs = 0, ce = 0;
    int open = 0;
    for (size_t i = 0, j = 0; i < nx || j < ny;) {
        span v = j == ny || (i < nx && x[i].s <= y[j].s) ? x[i++] : y[j++];
        if (!open || v.s > ce) {
            busy += open ? ce - cs : 0;
            cs = v.s, ce = v.e, open = 1;
        } else if (v.e > ce) {
            ce = v.e;
        }
    }
    return busy + (open ? ce - cs : 0);
}

int wl_busy_close_pair(wl_busy *a, wl_busy *b, uint64_t *ns)
{
    *ns = 0;
    if (!a || !b) {
        if (a)
            release(a);
        if (b)
            release(b);
        return -1;
    }
    uint64_t busy_b = finish(b);
    (void)finish(a);
    int failed = a->failed || b->failed;
    uint64_t busy = 0;
    for (size_t i = 0; !failed && i < a->nd; i++) {
        const dev_state *d = &a->d[i], *e = NULL;
        for (size_t j = 0; j < b->nd && !e; j++)
            if (b->d[j].pid == d->pid && b->d[j].dev == d->dev)
                e = &b->d[j];
        busy += union_of(d->segs, d->nsegs, e ? e->segs : NULL, e ? e->nsegs : 0);
        if (e)
            busy_b -= e->busy + (e->open ? e->cur_e - e->cur_s : 0); /* counted in the union */
    }
    release(a);
    release(b);
    if (failed)
        return -1;
    *ns = busy + busy_b; /* b's devices that a has not */
    return 0;
}
