/* Background readers for the timeline model (see timeline_internal.h): one thread per cursor
 * steps its SQLite statements (the GPU one walks them through wl_gpu_cursor_each, which may fold
 * the kernels in table order) and decodes rows into a ring of a few fixed batches while the
 * model lays out and encodes the rows already read, so reading and writing overlap on two cores.
 * The ring holds NBATCH x BATCH items whatever the session size; the producer waits when every
 * batch is full, the consumer when none is, and they meet once per batch (one mutex round trip
 * per BATCH rows). */
#include "export/timeline_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/cpus.h"

/* 2,048 items a reader (GPU items are ~10 KiB, mostly the untouched tail of a name buffer): ~4 ms
 * of rows at 10 M-kernel rates, so a reader keeps a core busy through a scheduler's time slice
 * while the model waits on the other reader. JFR at 10 M kernels, side by side: 4 batches
 * 0.91-0.92 M events/s, 8 batches 1.00-1.06, 16 batches 0.95-0.97 (more memory touched). */
#define NBATCH 8
#define BATCH 256
/* A sleeping side is woken only when half the ring is ready for it (the consumer: half the
 * batches full; the producer: half of them free), so on one core each thread runs for several
 * batches between switches instead of one, and on two the futex calls drop too. */
#define WAKE (NBATCH / 2)

typedef struct host_slot {     /* a host item and its own copy of the flow ids */
    wl_host_item it;
    uint64_t *flows;
    size_t cap;
} host_slot;

struct tl_reader {
    int gpu;                   /* 0: host items, 1: GPU items */
    int direct;                /* no thread: the model steps the cursor into one slot itself */
    wl_host_cursor *host;
    wl_gpu_cursor *gpuc;
    host_slot *hs;             /* NBATCH * BATCH slots of one kind */
    wl_gpu_item *gs;
    pthread_t thread;
    int started, has_thread;    /* mutex and condition ready; thread running */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t count[NBATCH];      /* items in each produced batch */
    uint64_t produced, consumed; /* batches, monotonic */
    int done, failed, stop;    /* failed: the cursor's error (-1, WL_CUR_RESTART) */
    int producer_waits, consumer_waits; /* a side sleeps on cv (hysteresis, below) */
    /* consumer side, touched by the consumer only */
    uint64_t cur;              /* batch being read */
    size_t pos;
    int holding;
};

/* Slots a reader holds: the ring's, or one for a direct reader. */
static size_t slots(const tl_reader *r) { return r->direct ? 1 : NBATCH * BATCH; }

/* Reads one host row into slot i; 1 read, 0 end, -1 error. */
static int fill(tl_reader *r, size_t i)
{
    host_slot *s = &r->hs[i];
    int rc = wl_host_cursor_next(r->host, &s->it);
    if (rc <= 0 || s->it.n_flows == 0)
        return rc;
    if (s->it.n_flows > s->cap) { /* the cursor's flow list lives until its next row: copy it */
        uint64_t *f = realloc(s->flows, s->it.n_flows * sizeof *f);
        if (!f)
            return -1;
        s->flows = f;
        s->cap = s->it.n_flows;
    }
    memcpy(s->flows, s->it.flows, s->it.n_flows * sizeof *s->flows);
    s->it.flows = s->flows;
    return 1;
}

/* The producer's side of the ring: the batch being filled, one row at a time. */
typedef struct filler {
    tl_reader *r;
    uint64_t seq;              /* batch being filled */
    size_t n;                  /* its rows so far */
    int held;                  /* its room was granted */
} filler;

/* The ring index of the next row, waiting for room when a new batch starts; -1 when the
 * consumer asked the reader to stop. */
static long room(filler *f)
{
    tl_reader *r = f->r;
    if (!f->held) {
        pthread_mutex_lock(&r->mu);
        while (f->seq - r->consumed >= NBATCH && !r->stop) {
            r->producer_waits = 1;
            pthread_cond_wait(&r->cv, &r->mu);
        }
        r->producer_waits = 0;
        int stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop)
            return -1;
        f->held = 1;
    }
    return (long)((f->seq % NBATCH) * BATCH + f->n);
}

/* Hands the batch being filled to the consumer, with the end (done) and its cause. */
static void publish(filler *f, int done, int failed)
{
    tl_reader *r = f->r;
    pthread_mutex_lock(&r->mu);
    r->count[f->seq % NBATCH] = f->n;
    r->produced = f->seq + 1;
    if (done) {
        r->done = 1;
        r->failed = failed;
    }
    if (r->consumer_waits && (done || r->produced - r->cur >= WAKE))
        pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* The row at room()'s index is filled: a full batch goes to the consumer. */
static int emit(void *arg)
{
    filler *f = arg;
    if (++f->n == BATCH) {
        publish(f, 0, 0);
        f->seq++;
        f->n = 0;
        f->held = 0;
    }
    return 0;
}

/* The last batch (maybe empty) with the reader's end: rc 0, or the cursor's error. */
static void *finish(filler *f, int rc)
{
    if (room(f) >= 0) /* the last batch needs its room too, unless the consumer left */
        publish(f, 1, rc < 0 ? rc : 0);
    return NULL;
}

/* The host reader: rows stepped from the cursor. */
static void *produce(void *arg)
{
    filler f = {arg, 0, 0, 0};
    for (;;) {
        long i = room(&f);
        if (i < 0)
            return NULL;
        int rc = fill(f.r, (size_t)i);
        if (rc <= 0)
            return finish(&f, rc);
        emit(&f);
    }
}

/* The GPU reader through wl_gpu_cursor_each (which may read the kernels in table order): the
 * same batches, filled slot by slot from inside the cursor's walk. */
static wl_gpu_item *gpu_slot(void *arg)
{
    filler *f = arg;
    long i = room(f);
    return i < 0 ? NULL : &f->r->gs[i];
}

static void *produce_gpu(void *arg)
{
    filler f = {arg, 0, 0, 0};
    return finish(&f, wl_gpu_cursor_each(f.r->gpuc, gpu_slot, emit, &f));
}

static tl_reader *start(tl_reader *r)
{
    if (pthread_mutex_init(&r->mu, NULL))
        goto fail;
    if (pthread_cond_init(&r->cv, NULL)) {
        pthread_mutex_destroy(&r->mu);
        goto fail;
    }
    r->started = 1;
    if (pthread_create(&r->thread, NULL, r->gpu ? produce_gpu : produce, r) == 0) {
        r->has_thread = 1;
        return r;
    }
    r->done = 1; /* no thread: reads nothing and reports the failure */
    r->failed = -1;
    return r;
fail:
    tl_reader_close(r);
    return NULL;
}

tl_reader *tl_reader_host(wl_session *s, uint64_t open_end_ns, char *err, size_t err_size)
{
    tl_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->direct = wl_cpus_usable() < 2;
    if (!(r->hs = calloc(slots(r), sizeof *r->hs)) ||
        !(r->host = wl_host_cursor_open_by_start(s, open_end_ns, err, err_size))) {
        tl_reader_close(r);
        return NULL;
    }
    return r->direct ? r : start(r);
}

tl_reader *tl_reader_gpu(wl_session *s, int flags, char *err, size_t err_size)
{
    tl_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->gpu = 1;
    if (!(r->gpuc = wl_gpu_cursor_open_unlinked(s, flags, err, err_size))) {
        tl_reader_close(r);
        return NULL;
    }
    /* kernels read in table order come through wl_gpu_cursor_each's walk: a thread of their own */
    r->direct = wl_cpus_usable() < 2 && !wl_gpu_cursor_table_order(r->gpuc);
    if (!(r->gs = malloc(slots(r) * sizeof *r->gs))) {
        tl_reader_close(r);
        return NULL;
    }
    for (size_t i = 0; i < slots(r); i++)
        r->gs[i].name_cursor = NULL; /* holds no name yet (a slot keeps it from row to row) */
    return r->direct ? r : start(r);
}

/* Index of the next item, or -1 at the end (*failed tells an error from the end). */
static long next_index(tl_reader *r, int *failed)
{
    if (r->holding && r->pos < r->count[r->cur % NBATCH])
        return (long)((r->cur % NBATCH) * BATCH + r->pos++);
    pthread_mutex_lock(&r->mu);
    if (r->holding) { /* hand the finished batch back */
        r->holding = 0;
        r->consumed = ++r->cur;
        if (r->producer_waits && r->produced - r->consumed <= NBATCH - WAKE)
            pthread_cond_broadcast(&r->cv);
    }
    while (r->produced <= r->cur && !r->done) {
        r->consumer_waits = 1;
        pthread_cond_wait(&r->cv, &r->mu);
    }
    r->consumer_waits = 0;
    int have = r->produced > r->cur && r->count[r->cur % NBATCH] > 0;
    *failed = have ? 0 : r->failed;
    pthread_mutex_unlock(&r->mu);
    if (!have)
        return -1;
    r->holding = 1;
    r->pos = 1;
    return (long)((r->cur % NBATCH) * BATCH);
}

/* The items were written by the reader's thread on the other core: the cache lines the model
 * reads of the next item in the batch are fetched while it lays out this one (a GPU item is
 * ~10 KiB, its lines on three pages). */
#define PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 3)

/* The batch being read holds an item after the one just handed out. */
static int more_in_batch(const tl_reader *r) { return r->pos < r->count[r->cur % NBATCH]; }

/* A direct reader's next row: 1, or 0 at the end with *failed set (0 or the cursor's error). */
static int step_direct(tl_reader *r, int *failed)
{
    int rc = r->done ? 0 : r->gpu ? wl_gpu_cursor_next(r->gpuc, &r->gs[0]) : fill(r, 0);
    if (rc > 0) {
        *failed = 0;
        return 1;
    }
    if (!r->done)
        r->done = 1, r->failed = rc < 0 ? -1 : 0;
    *failed = r->failed;
    return 0;
}

const wl_host_item *tl_reader_next_host(tl_reader *r, int *failed)
{
    if (r->direct)
        return step_direct(r, failed) ? &r->hs[0].it : NULL;
    long i = next_index(r, failed);
    if (i < 0)
        return NULL;
    if (more_in_batch(r)) {
        const wl_host_item *n = &r->hs[i + 1].it;
        PREFETCH(n);
        PREFETCH(n->name);
        PREFETCH(n->name + 64);
        PREFETCH(n->group);
        PREFETCH(n->scope);
        PREFETCH(&n->correlation_id);
    }
    return &r->hs[i].it;
}

const wl_gpu_item *tl_reader_next_gpu(tl_reader *r, int *failed)
{
    if (r->direct)
        return step_direct(r, failed) ? &r->gs[0] : NULL;
    long i = next_index(r, failed);
    if (i < 0)
        return NULL;
    if (more_in_batch(r)) {
        const wl_gpu_item *n = &r->gs[i + 1];
        PREFETCH(n);
        PREFETCH((const char *)n + 64);
        PREFETCH(n->scope);
        PREFETCH(&n->name_id);
        PREFETCH(&n->queue_delay_ns);
        PREFETCH(n->op);
        PREFETCH(n->shape);
        PREFETCH(n->tier);
        PREFETCH(n->copy_kind);
        PREFETCH(&n->name_cursor);
        PREFETCH(n->name);
        PREFETCH(n->name + 64);
    }
    return &r->gs[i];
}

int64_t tl_reader_untimed(tl_reader *r)
{
    if (r->gpu && r->direct)
        return r->done && !r->failed ? wl_gpu_cursor_untimed(r->gpuc) : -1;
    if (!r->gpu || !r->started)
        return -1;
    pthread_mutex_lock(&r->mu); /* the cursor's count is written before the reader says done */
    int64_t n = r->done && !r->failed ? wl_gpu_cursor_untimed(r->gpuc) : -1;
    pthread_mutex_unlock(&r->mu);
    return n;
}

void tl_reader_close(tl_reader *r)
{
    if (!r)
        return;
    if (r->started) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (r->has_thread)
            pthread_join(r->thread, NULL);
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
    }
    wl_host_cursor_close(r->host);
    wl_gpu_cursor_close(r->gpuc);
    for (size_t i = 0; r->hs && i < slots(r); i++)
        free(r->hs[i].flows);
    free(r->hs);
    free(r->gs);
    free(r);
}
