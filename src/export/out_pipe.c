/* Background output writer (see out_pipe.h): a queue of full buffers, written by one thread in
 * the order they were pushed, and a list of written buffers handed back for reuse. */
#include "export/out_pipe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define OUT_PIPE_DEPTH 3 /* buffers queued or being written; with the one being filled, 4 in all */

typedef struct chunk {
    uint8_t *data;
    size_t len, cap;
} chunk;

struct wl_out_pipe {
    FILE *fp;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk queue[OUT_PIPE_DEPTH]; /* ring: queue[head .. head + n) waits, queue[head] being written */
    size_t head, n;
    chunk spare[OUT_PIPE_DEPTH]; /* written, for reuse */
    size_t n_spare;
    int failed, closing;
};

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
        if (!failed && c.len && fwrite(c.data, 1, c.len, p->fp) != c.len)
            failed = 1;
        pthread_mutex_lock(&p->mu);
        p->failed |= failed;
        p->head = (p->head + 1) % OUT_PIPE_DEPTH;
        p->n--;
        c.len = 0;
        if (p->n_spare < OUT_PIPE_DEPTH)
            p->spare[p->n_spare++] = c;
        else
            free(c.data);
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

wl_out_pipe *wl_out_pipe_open(FILE *fp)
{
    wl_out_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fp = fp;
    if (pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->cv, NULL)) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    if (pthread_create(&p->thread, NULL, writer, p)) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

int wl_out_pipe_push(wl_out_pipe *p, wl_pb_buf *b)
{
    pthread_mutex_lock(&p->mu);
    while (p->n == OUT_PIPE_DEPTH && !p->failed)
        pthread_cond_wait(&p->cv, &p->mu);
    if (p->failed || b->failed) {
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    p->queue[(p->head + p->n) % OUT_PIPE_DEPTH] = (chunk){b->data, b->len, b->cap};
    p->n++;
    chunk next = {0};
    if (p->n_spare)
        next = p->spare[--p->n_spare];
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    b->data = next.data; /* NULL: the encoder allocates on its next write */
    b->cap = next.cap;
    b->len = 0;
    return 0;
}

int wl_out_pipe_close(wl_out_pipe *p)
{
    if (!p)
        return 0;
    pthread_mutex_lock(&p->mu);
    p->closing = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    int rc = p->failed ? -1 : 0;
    for (size_t i = 0; i < p->n_spare; i++)
        free(p->spare[i].data);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return rc;
}
