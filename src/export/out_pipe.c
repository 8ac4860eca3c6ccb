/* Background output writer (see out_pipe.h): a queue of full buffers, written by one thread in
 * the order they were pushed, and a list of written buffers handed back for reuse. */
#include "export/out_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_PIPE_DEPTH 3          /* buffers queued or being written; with the one being filled, 4 in all */
#define OUT_PIPE_BLOCK 4096u      /* alignment of direct writes: every block size Linux file systems use */
#define OUT_PIPE_BUF (4u << 20)   /* buffers the pipe hands out (the Perfetto writer hands over at 2 MiB): few and
                                   * large writes, each a system call and one or more requests to the disk */
#define OUT_PIPE_STAGE (1u << 20) /* bytes that are not aligned in memory gather here (direct writes) */

typedef struct chunk {
    uint8_t *data;
    size_t len, cap;
} chunk;

struct wl_out_pipe {
    FILE *fp;
    int fd;     /* >= 0: written with write(2), -1: with fwrite to fp */
    int direct; /* fd has O_DIRECT (changed by the writer thread, under mu) */
    uint8_t *stage;
    size_t staged;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk queue[OUT_PIPE_DEPTH]; /* ring: queue[head .. head + n) waits, queue[head] being written */
    size_t head, n;
    chunk spare[OUT_PIPE_DEPTH]; /* written, for reuse */
    size_t n_spare;
    int failed, closing;
};

static ssize_t (*pipe_write)(int, const void *, size_t) = write;

void wl_out_pipe_set_write(ssize_t (*fn)(int fd, const void *buf, size_t n)) { pipe_write = fn ? fn : write; }

static int aligned(const void *d) { return ((uintptr_t)d & (OUT_PIPE_BLOCK - 1)) == 0; }

#ifndef O_DIRECT /* a libc without it: the pipe writes through the page cache */
#define O_DIRECT 0
#endif

static int set_direct(wl_out_pipe *p, int on)
{
    if (!O_DIRECT)
        return on ? -1 : 0;
    int flags = fcntl(p->fd, F_GETFL);
    if (flags < 0)
        return -1;
    int want = on ? flags | O_DIRECT : flags & ~O_DIRECT;
    return want == flags ? 0 : fcntl(p->fd, F_SETFL, want);
}

static void direct_off(wl_out_pipe *p)
{
    if (p->direct)
        set_direct(p, 0);
    pthread_mutex_lock(&p->mu);
    p->direct = 0;
    pthread_mutex_unlock(&p->mu);
}

/* n bytes at d to the file descriptor. A direct write the file system refuses (EINVAL: another
 * alignment, or no direct I/O after all) is made again through the page cache, and so is the rest
 * of the file. */
static int write_fd(wl_out_pipe *p, const uint8_t *d, size_t n)
{
    while (n) {
        if (p->direct && (n & (OUT_PIPE_BLOCK - 1)))
            direct_off(p);
        ssize_t w = pipe_write(p->fd, d, n);
        if (w > 0) {
            d += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EINVAL && p->direct) {
            direct_off(p);
        } else {
            return -1;
        }
    }
    return 0;
}

/* n bytes after everything before them: aligned runs go straight to the file, the rest through the
 * staging buffer, so every direct write starts at a block boundary of the file. */
static int out_bytes(wl_out_pipe *p, const uint8_t *d, size_t n)
{
    if (p->fd < 0)
        return n && fwrite(d, 1, n, p->fp) != n ? -1 : 0;
    while (n) {
        /* aligned bytes after whole staged blocks: those blocks, then these bytes without a copy */
        if (!(p->staged & (OUT_PIPE_BLOCK - 1)) && aligned(d) && n >= OUT_PIPE_BLOCK) {
            size_t k = n - (n & (OUT_PIPE_BLOCK - 1));
            if ((p->staged && write_fd(p, p->stage, p->staged)) || write_fd(p, d, k))
                return -1;
            p->staged = 0;
            d += k;
            n -= k;
            continue;
        }
        if (!p->stage && !(p->stage = aligned_alloc(OUT_PIPE_BLOCK, OUT_PIPE_STAGE)))
            return -1;
        size_t c = OUT_PIPE_STAGE - p->staged < n ? OUT_PIPE_STAGE - p->staged : n;
        memcpy(p->stage + p->staged, d, c);
        p->staged += c;
        d += c;
        n -= c;
        if (p->staged == OUT_PIPE_STAGE) {
            if (write_fd(p, p->stage, OUT_PIPE_STAGE))
                return -1;
            p->staged = 0;
        }
    }
    return 0;
}

/* The staged bytes, the last partial block through the page cache; O_DIRECT taken off the file. */
static int out_finish(wl_out_pipe *p)
{
    if (p->fd < 0)
        return 0;
    size_t whole = p->staged - (p->staged & (OUT_PIPE_BLOCK - 1));
    int rc = write_fd(p, p->stage, whole);
    direct_off(p);
    if (rc == 0)
        rc = write_fd(p, p->stage + whole, p->staged - whole);
    p->staged = 0;
    return rc;
}

static void *writer(void *arg)
{
    wl_out_pipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->n == 0 && !p->closing)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->n == 0)
            break;
        chunk c = p->queue[p->head];
        int failed = p->failed;
        pthread_mutex_unlock(&p->mu);
        if (!failed && out_bytes(p, c.data, c.len))
            failed = 1;
        pthread_mutex_lock(&p->mu);
        p->failed |= failed;
        p->head = (p->head + 1) % OUT_PIPE_DEPTH;
        p->n--;
        c.len = 0;
        /* while writing directly, only aligned buffers are worth handing out again */
        if (p->n_spare < OUT_PIPE_DEPTH && (!p->direct || aligned(c.data)))
            p->spare[p->n_spare++] = c;
        else
            free(c.data);
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Direct writes where the file allows them: a regular file at a block-aligned offset, not turned off. */
static void try_direct(wl_out_pipe *p)
{
    const char *env = getenv("WARPLENS_DIRECT_IO");
    struct stat sb;
    int fd = fileno(p->fp);
    if ((env && !strcmp(env, "0")) || fd < 0 || fstat(fd, &sb) || !S_ISREG(sb.st_mode))
        return;
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at < 0 || (at & (OUT_PIPE_BLOCK - 1)))
        return;
    p->fd = fd;
    if (set_direct(p, 1) == 0)
        p->direct = 1;
    else
        p->fd = -1;
}

static wl_out_pipe *pipe_open(FILE *fp, int cached)
{
    if (fflush(fp))
        return NULL;
    wl_out_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fp = fp;
    p->fd = -1;
    if (pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->cv, NULL)) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    if (!cached)
        try_direct(p);
    if (pthread_create(&p->thread, NULL, writer, p)) {
        if (p->direct)
            set_direct(p, 0);
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

wl_out_pipe *wl_out_pipe_open(FILE *fp) { return pipe_open(fp, 0); }

wl_out_pipe *wl_out_pipe_open_cached(FILE *fp) { return pipe_open(fp, 1); }

int wl_out_pipe_direct(wl_out_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    int d = p->direct;
    pthread_mutex_unlock(&p->mu);
    return d;
}

/* A buffer to fill next (under mu): a spare, or a new aligned one of at least need bytes. */
static chunk next_buffer(wl_out_pipe *p, size_t need)
{
    chunk c = {0};
    while (p->n_spare) {
        c = p->spare[--p->n_spare];
        if (c.cap >= need)
            return c;
        free(c.data);
        c = (chunk){0};
    }
    size_t cap = need > OUT_PIPE_BUF ? need + OUT_PIPE_BLOCK - 1 - (need - 1) % OUT_PIPE_BLOCK : OUT_PIPE_BUF;
    /* aligned to its own size, a buffer of the pipe's is mapped by itself and given back to the
     * system when freed: with glibc, buffers aligned to a block only came from its heap after the
     * first was freed, and stayed there (the JFR export's peak RSS at 1 M kernels: 50 MiB against
     * 97 MiB) */
    if ((c.data = aligned_alloc(cap == OUT_PIPE_BUF ? OUT_PIPE_BUF : OUT_PIPE_BLOCK, cap)))
        c.cap = cap;
    return c;
}

static int push(wl_out_pipe *p, wl_pb_buf *b, int some)
{
    pthread_mutex_lock(&p->mu);
    while (p->n == OUT_PIPE_DEPTH && !p->failed)
        pthread_cond_wait(&p->cv, &p->mu);
    if (p->failed || b->failed) {
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    size_t keep = some && p->direct ? b->len & (OUT_PIPE_BLOCK - 1) : 0, len = b->len - keep;
    if (!len) { /* under a block: it stays where it is */
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    chunk next = next_buffer(p, keep);
    if (!next.data) {
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    if (keep)
        memcpy(next.data, b->data + len, keep);
    p->queue[(p->head + p->n) % OUT_PIPE_DEPTH] = (chunk){b->data, len, b->cap};
    p->n++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    b->data = next.data;
    b->cap = next.cap;
    b->len = keep;
    return 0;
}

int wl_out_pipe_push(wl_out_pipe *p, wl_pb_buf *b) { return push(p, b, 0); }

int wl_out_pipe_push_some(wl_out_pipe *p, wl_pb_buf *b) { return push(p, b, 1); }

int wl_out_pipe_take(wl_out_pipe *p, wl_pb_buf *b)
{
    pthread_mutex_lock(&p->mu);
    chunk c = next_buffer(p, b->len > OUT_PIPE_BUF ? b->len : OUT_PIPE_BUF);
    pthread_mutex_unlock(&p->mu);
    if (!c.data)
        return -1;
    if (b->len)
        memcpy(c.data, b->data, b->len);
    free(b->data);
    b->data = c.data;
    b->cap = c.cap;
    return 0;
}

int wl_out_pipe_close(wl_out_pipe *p, wl_pb_buf *rest)
{
    if (!p)
        return 0;
    pthread_mutex_lock(&p->mu);
    p->closing = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    int rc = p->failed ? -1 : 0;
    if (rest) {
        if (rc == 0 && (rest->failed || out_bytes(p, rest->data, rest->len)))
            rc = -1;
        rest->len = 0;
    }
    if (out_finish(p))
        rc = -1;
    /* the FILE caches its offset: tell it where the descriptor's writes ended */
    if (p->fd >= 0) {
        off_t end = lseek(p->fd, 0, SEEK_CUR);
        if (end < 0 || fseeko(p->fp, end, SEEK_SET))
            rc = -1;
    }
    for (size_t i = 0; i < p->n_spare; i++)
        free(p->spare[i].data);
    free(p->stage);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return rc;
}
