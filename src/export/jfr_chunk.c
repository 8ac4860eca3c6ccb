/* JFR chunks with their constant pools (see jfr_chunk.h). */
#include "export/jfr_chunk.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "export/jfr_encode.h"
#include "export/jfr_types.h"
#include "export/out_pipe.h"

typedef struct str_slot {      /* a string of this chunk's pool */
    uint64_t hash;             /* 0: empty slot */
    uint64_t key;
    uint32_t len;
    size_t at;                 /* where its bytes sit in the pool buffer */
} str_slot;

typedef struct key_slot {      /* a caller-keyed string: its pool key, declared in chunk `gen` */
    uint64_t key;              /* 0: empty slot */
    uint64_t pool_key;
    uint32_t gen;
} key_slot;

typedef struct jfr_proc {
    uint32_t pid, gen;         /* gen: the chunk that last declared it */
    char *name;
} jfr_proc;

typedef struct jfr_thread {
    uint32_t pid, tid, gen, proc; /* proc: index in procs */
    char *name;
} jfr_thread;

struct wl_jfr_chunk {
    FILE *fp;
    wl_out_pipe *pipe;
    int failed;
    uint64_t origin, bytes, chunks;
    size_t limit;
    uint32_t gen;              /* chunk number, from 1 */
    wl_pb_buf events, strings, threads, groups, out;
    uint32_t n_strings, n_threads, n_groups; /* entries of this chunk's pools */
    uint64_t next_key;         /* string keys are never reused for another string in the file: a
                                  reader keeps what a key meant in the previous chunk */
    uint64_t start_ns, end_ns; /* span of the chunk's events */
    int has_span;
    str_slot *str;             /* hash of the chunk's strings */
    size_t str_cap;
    key_slot *keyed;           /* caller key -> pool key, across chunks (gen says which) */
    size_t keyed_n, keyed_cap;
    jfr_proc *procs;
    size_t n_procs, cap_procs;
    jfr_thread *thr;           /* thread key = index + 1 */
    size_t n_thr, cap_thr;
    size_t *thr_hash;          /* (pid, tid) -> index + 1, open addressing */
    size_t thr_hash_cap;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001b3u;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3u;
    h ^= h >> 32;
    return h ? h : 1;
}

static uint64_t mix(uint64_t v)
{
    v *= 0x9e3779b97f4a7c15u;
    return v ^ (v >> 31);
}

wl_jfr_chunk *wl_jfr_chunk_open(FILE *fp, uint64_t origin_ns, size_t chunk_bytes)
{
    wl_jfr_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fp = fp;
    c->origin = origin_ns;
    c->limit = chunk_bytes;
    c->gen = 1;
    wl_pb_init(&c->events);
    wl_pb_init(&c->strings);
    wl_pb_init(&c->threads);
    wl_pb_init(&c->groups);
    wl_pb_init(&c->out);
    c->pipe = wl_out_pipe_open(fp); /* NULL: written directly */
    return c;
}

wl_pb_buf *wl_jfr_chunk_events(wl_jfr_chunk *c) { return &c->events; }

uint64_t wl_jfr_chunk_ticks(const wl_jfr_chunk *c, uint64_t ns) { return ns - c->origin; }

/* ---- strings ------------------------------------------------------------------------------- */

static int str_grow(wl_jfr_chunk *c)
{
    size_t ncap = c->str_cap ? c->str_cap * 2 : 4096;
    str_slot *n = calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < c->str_cap; i++) {
        if (!c->str[i].hash)
            continue;
        size_t j = c->str[i].hash & (ncap - 1);
        while (n[j].hash)
            j = (j + 1) & (ncap - 1);
        n[j] = c->str[i];
    }
    free(c->str);
    c->str = n;
    c->str_cap = ncap;
    return 0;
}

/* Adds a String pool entry to this chunk; returns where its bytes start, or SIZE_MAX. */
static size_t declare_string(wl_jfr_chunk *c, uint64_t key, const char *s, size_t n)
{
    wl_jfr_long(&c->strings, key);
    wl_jfr_byte(&c->strings, WL_JFR_STR_UTF8);
    wl_jfr_long(&c->strings, n);
    size_t at = c->strings.len;
    wl_pb_put_raw(&c->strings, s, n);
    c->n_strings++;
    return wl_pb_ok(&c->strings) ? at : SIZE_MAX;
}

/* The pool key of s in this chunk, a new key when s is new to the chunk; 0 on failure. */
static uint64_t pool_key(wl_jfr_chunk *c, const char *s, size_t n, uint64_t h)
{
    if ((c->n_strings + 1) * 2 > c->str_cap && str_grow(c))
        return 0;
    size_t mask = c->str_cap - 1, j = h & mask;
    for (; c->str[j].hash; j = (j + 1) & mask)
        if (c->str[j].hash == h && c->str[j].len == n && !memcmp(c->strings.data + c->str[j].at, s, n))
            return c->str[j].key;
    uint64_t key = ++c->next_key;
    size_t at = declare_string(c, key, s, n);
    if (at == SIZE_MAX)
        return 0;
    c->str[j] = (str_slot){h, key, (uint32_t)n, at};
    return key;
}

void wl_jfr_chunk_string(void *ctx, wl_pb_buf *b, const char *s, size_t n)
{
    wl_jfr_chunk *c = ctx;
    if (!s || n == 0 || n > UINT32_MAX) {
        wl_jfr_string(b, s, n);
        return;
    }
    uint64_t key = pool_key(c, s, n, hash_bytes(s, n));
    if (key)
        wl_jfr_string_ref(b, key);
    else
        c->failed = 1;
}

void wl_jfr_chunk_keyed_string(wl_jfr_chunk *c, wl_pb_buf *b, uint64_t key, const char *s, size_t n)
{
    if (!s || n == 0 || n > UINT32_MAX || !key) {
        wl_jfr_chunk_string(c, b, s, n);
        return;
    }
    if ((c->keyed_n + 1) * 2 > c->keyed_cap) {
        size_t ncap = c->keyed_cap ? c->keyed_cap * 2 : 1024;
        key_slot *k = calloc(ncap, sizeof *k);
        if (!k) {
            c->failed = 1;
            return;
        }
        for (size_t i = 0; i < c->keyed_cap; i++) {
            if (!c->keyed[i].key)
                continue;
            size_t j = mix(c->keyed[i].key) & (ncap - 1);
            while (k[j].key)
                j = (j + 1) & (ncap - 1);
            k[j] = c->keyed[i];
        }
        free(c->keyed);
        c->keyed = k;
        c->keyed_cap = ncap;
    }
    size_t mask = c->keyed_cap - 1, j = mix(key) & mask;
    while (c->keyed[j].key && c->keyed[j].key != key)
        j = (j + 1) & mask;
    key_slot *sl = &c->keyed[j];
    if (!sl->key) {
        sl->key = key;
        sl->gen = 0;
        sl->pool_key = ++c->next_key; /* the same key in every chunk, for the same string */
        c->keyed_n++;
    }
    if (sl->gen != c->gen) {
        if (declare_string(c, sl->pool_key, s, n) == SIZE_MAX) {
            c->failed = 1;
            return;
        }
        sl->gen = c->gen;
    }
    wl_jfr_string_ref(b, sl->pool_key);
}

/* ---- threads and processes ---------------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s ? s : "");
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s ? s : "", n + 1);
    return d;
}

static size_t find_proc(wl_jfr_chunk *c, uint32_t pid, int add)
{
    for (size_t i = 0; i < c->n_procs; i++)
        if (c->procs[i].pid == pid)
            return i;
    if (!add)
        return SIZE_MAX;
    if (wl_grow((void **)&c->procs, &c->cap_procs, c->n_procs, sizeof *c->procs, 8))
        return SIZE_MAX;
    char name[64];
    snprintf(name, sizeof name, "process %u", pid);
    c->procs[c->n_procs] = (jfr_proc){pid, 0, dup_str(name)};
    if (!c->procs[c->n_procs].name)
        return SIZE_MAX;
    return c->n_procs++;
}

int wl_jfr_chunk_name_process(wl_jfr_chunk *c, uint32_t pid, const char *name)
{
    size_t i = find_proc(c, pid, 1);
    if (i == SIZE_MAX)
        return -1;
    char label[256];
    snprintf(label, sizeof label, "%s (pid %u)", name && name[0] ? name : "process", pid);
    char *d = dup_str(label);
    if (!d)
        return -1;
    free(c->procs[i].name);
    c->procs[i].name = d;
    return 0;
}

static size_t *thr_slot(wl_jfr_chunk *c, uint32_t pid, uint32_t tid)
{
    size_t mask = c->thr_hash_cap - 1, j = mix(((uint64_t)pid << 32) | tid) & mask;
    while (c->thr_hash[j]) {
        const jfr_thread *t = &c->thr[c->thr_hash[j] - 1];
        if (t->pid == pid && t->tid == tid)
            break;
        j = (j + 1) & mask;
    }
    return &c->thr_hash[j];
}

/* The index of (pid, tid), added when new; SIZE_MAX on failure. */
static size_t find_thread(wl_jfr_chunk *c, uint32_t pid, uint32_t tid)
{
    if ((c->n_thr + 1) * 2 > c->thr_hash_cap) {
        size_t ncap = c->thr_hash_cap ? c->thr_hash_cap * 2 : 256;
        size_t *h = calloc(ncap, sizeof *h);
        if (!h)
            return SIZE_MAX;
        free(c->thr_hash);
        c->thr_hash = h;
        c->thr_hash_cap = ncap;
        for (size_t i = 0; i < c->n_thr; i++)
            *thr_slot(c, c->thr[i].pid, c->thr[i].tid) = i + 1;
    }
    size_t *sl = thr_slot(c, pid, tid);
    if (*sl)
        return *sl - 1;
    size_t proc = find_proc(c, pid, 1);
    if (proc == SIZE_MAX)
        return SIZE_MAX;
    if (wl_grow((void **)&c->thr, &c->cap_thr, c->n_thr, sizeof *c->thr, 64))
        return SIZE_MAX;
    char name[64];
    snprintf(name, sizeof name, tid ? "thread %u" : "unknown thread", tid);
    c->thr[c->n_thr] = (jfr_thread){pid, tid, 0, (uint32_t)proc, dup_str(name)};
    if (!c->thr[c->n_thr].name)
        return SIZE_MAX;
    *sl = ++c->n_thr;
    return c->n_thr - 1;
}

int wl_jfr_chunk_name_thread(wl_jfr_chunk *c, uint32_t pid, uint32_t tid, const char *name)
{
    size_t i = find_thread(c, pid, tid);
    if (i == SIZE_MAX)
        return -1;
    if (!name || !name[0])
        return 0;
    char *d = dup_str(name);
    if (!d)
        return -1;
    free(c->thr[i].name);
    c->thr[i].name = d;
    return 0;
}

uint64_t wl_jfr_chunk_thread(wl_jfr_chunk *c, uint32_t pid, uint32_t tid)
{
    size_t i = find_thread(c, pid, tid);
    if (i == SIZE_MAX) {
        c->failed = 1;
        return 0;
    }
    jfr_thread *t = &c->thr[i];
    if (t->gen != c->gen) { /* first use in this chunk: declare it (and its process) */
        t->gen = c->gen;
        jfr_proc *p = &c->procs[t->proc];
        if (p->gen != c->gen) {
            p->gen = c->gen;
            wl_jfr_long(&c->groups, t->proc + 1);
            wl_jfr_long(&c->groups, 0); /* no parent */
            wl_jfr_cstring(&c->groups, p->name);
            c->n_groups++;
        }
        wl_jfr_long(&c->threads, i + 1);
        wl_jfr_cstring(&c->threads, t->name);   /* osName */
        wl_jfr_long(&c->threads, t->tid);       /* osThreadId */
        wl_jfr_cstring(&c->threads, t->name);   /* javaName */
        wl_jfr_long(&c->threads, 0);            /* javaThreadId: not a Java thread id (unknown) */
        wl_jfr_long(&c->threads, t->proc + 1);  /* group: its process */
        c->n_threads++;
    }
    return i + 1;
}

/* ---- writing chunks ------------------------------------------------------------------------ */

static int emit(wl_jfr_chunk *c, wl_pb_buf *b)
{
    if (c->failed || !wl_pb_ok(b))
        return -1;
    c->bytes += b->len;
    if (c->pipe)
        return wl_out_pipe_push(c->pipe, b);
    int rc = b->len && fwrite(b->data, 1, b->len, c->fp) != b->len ? -1 : 0;
    b->len = 0;
    return rc;
}

static void pool(wl_pb_buf *out, uint64_t type, uint32_t count, const wl_pb_buf *entries)
{
    if (!count)
        return;
    wl_jfr_long(out, type);
    wl_jfr_long(out, count);
    wl_pb_put_raw(out, entries->data, entries->len);
}

static int write_chunk(wl_jfr_chunk *c, int final)
{
    if (c->failed || !wl_pb_ok(&c->events))
        return -1;
    if (!c->has_span)
        c->start_ns = c->end_ns = c->origin;
    uint64_t start_ticks = wl_jfr_chunk_ticks(c, c->start_ns);
    /* trailer: one checkpoint with every pool, then the metadata */
    wl_pb_buf *t = &c->out;
    wl_pb_reset(t);
    size_t cp = wl_jfr_event_begin(t, WL_JFR_CHECKPOINT_TYPE);
    wl_jfr_long(t, start_ticks);
    wl_jfr_long(t, 0); /* duration */
    wl_jfr_long(t, 0); /* delta to the previous checkpoint: none */
    wl_jfr_byte(t, 0); /* a plain checkpoint (not a flush) */
    wl_jfr_long(t, (c->n_strings > 0) + (c->n_threads > 0) + (c->n_groups > 0));
    pool(t, WL_JFR_TYPE_STRING, c->n_strings, &c->strings);
    pool(t, WL_JFR_TYPE_THREAD, c->n_threads, &c->threads);
    pool(t, WL_JFR_TYPE_THREAD_GROUP, c->n_groups, &c->groups);
    if (wl_jfr_event_end(t, cp))
        return -1;
    size_t cp_len = t->len;
    if (wl_jfr_write_metadata(t, start_ticks))
        return -1;
    wl_jfr_header h = {.chunk_size = WL_JFR_HEADER_SIZE + c->events.len + t->len,
                       .checkpoint_offset = WL_JFR_HEADER_SIZE + c->events.len,
                       .metadata_offset = WL_JFR_HEADER_SIZE + c->events.len + cp_len,
                       .start_ns = c->start_ns,
                       .duration_ns = c->end_ns - c->start_ns,
                       .start_ticks = start_ticks,
                       .ticks_per_second = 1000000000u,
                       .final_chunk = final};
    wl_pb_buf head;
    wl_pb_init(&head);
    wl_jfr_write_header(&head, &h);
    int rc = emit(c, &head) || emit(c, &c->events) || emit(c, t) ? -1 : 0;
    wl_pb_free(&head);
    /* the next chunk starts empty */
    c->chunks++;
    c->gen++;
    wl_pb_reset(&c->events);
    wl_pb_reset(&c->strings);
    wl_pb_reset(&c->threads);
    wl_pb_reset(&c->groups);
    c->n_strings = c->n_threads = c->n_groups = 0;
    c->has_span = 0;
    if (c->str)
        memset(c->str, 0, c->str_cap * sizeof *c->str);
    return rc;
}

int wl_jfr_chunk_commit(wl_jfr_chunk *c, uint64_t start_ns, uint64_t end_ns)
{
    if (c->failed || !wl_pb_ok(&c->events) || !wl_pb_ok(&c->strings) || !wl_pb_ok(&c->threads) ||
        !wl_pb_ok(&c->groups))
        return -1;
    if (end_ns < start_ns)
        end_ns = start_ns;
    if (!c->has_span || start_ns < c->start_ns)
        c->start_ns = start_ns;
    if (!c->has_span || end_ns > c->end_ns)
        c->end_ns = end_ns;
    c->has_span = 1;
    /* leave room for the event that crosses the limit: the buffers then never grow past it */
    if (c->events.len + c->strings.len + (64u << 10) < c->limit)
        return 0;
    if (write_chunk(c, 0)) {
        c->failed = 1;
        return -1;
    }
    return 0;
}

int wl_jfr_chunk_close(wl_jfr_chunk *c, uint64_t *bytes, uint64_t *chunks)
{
    int rc = c->failed ? -1 : write_chunk(c, 1);
    if (c->pipe && wl_out_pipe_close(c->pipe, NULL))
        rc = -1;
    if (bytes)
        *bytes = c->bytes;
    if (chunks)
        *chunks = c->chunks;
    wl_pb_free(&c->events);
    wl_pb_free(&c->strings);
    wl_pb_free(&c->threads);
    wl_pb_free(&c->groups);
    wl_pb_free(&c->out);
    for (size_t i = 0; i < c->n_procs; i++)
        free(c->procs[i].name);
    for (size_t i = 0; i < c->n_thr; i++)
        free(c->thr[i].name);
    free(c->procs);
    free(c->thr);
    free(c->thr_hash);
    free(c->str);
    free(c->keyed);
    free(c);
    return rc;
}
