/* Matching collectives across ranks (see collective_match.h). The links: every collective read
 * once with its key, sorted by key to find each one's first and last arrival, then the ends kept
 * sorted by (pid, stream, start) for the exporters' lookups. */
#include "analysis/collective_match.h"
#include "common/fnv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdu;
    x ^= x >> 33;
    return x;
}

uint64_t wl_coll_key(wl_coll_keyer *kr, const wl_collective *c)
{
    if (!kr->started || c->pid != kr->pid) {
        kr->started = 1;
        kr->pid = c->pid;
        kr->stream_ord = -1;
        kr->stream = INT64_MIN;
    }
    if (c->stream_id != kr->stream) {
        kr->stream = c->stream_id;
        kr->stream_ord++;
        kr->k = 0;
    }
    uint64_t key = wl_fnv1a_str(c->name) ^ mix((uint64_t)kr->stream_ord << 32 | (uint32_t)kr->k);
    kr->k++;
    return key;
}

int wl_coll_keyer_index(const wl_coll_keyer *kr) { return kr->k - 1; }

typedef struct coll {
    uint64_t key, start;
    int64_t stream;
    uint32_t pid;
    uint32_t flow; /* 1-based link number, 0 none */
    int role;      /* 1 first, 2 last */
} coll;

struct wl_coll_links {
    coll *v; /* the ends of links, by pid, stream, start */
    size_t n, links;
};

typedef struct reader {
    coll *v;
    size_t n, cap;
    int oom;
    wl_coll_keyer kr;
} reader;

static void on_coll(const wl_collective *c, void *arg)
{
    reader *r = arg;
    uint64_t key = wl_coll_key(&r->kr, c);
    if (r->n == WL_COLL_MAX || r->oom)
        return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        coll *v = realloc(r->v, cap * sizeof *v);
        if (!v) {
            r->oom = 1;
            return;
        }
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (coll){key, c->start_ns, c->stream_id, c->pid, 0, 0};
}

static int by_key(const void *a, const void *b)
{
    const coll *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int by_place(const void *a, const void *b)
{
    const coll *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

wl_coll_links *wl_coll_links_build(wl_session *s, char *err, size_t err_size)
{
    err[0] = 0;
    reader r;
    memset(&r, 0, sizeof r);
    if (wl_session_each_collective(s, on_coll, &r) < 0 || r.oom) {
        snprintf(err, err_size, r.oom ? "out of memory" : "cannot read the collectives");
        free(r.v);
        return NULL;
    }
    qsort(r.v, r.n, sizeof *r.v, by_key);
    /* each key's run: its first and last arrival, when two processes ran it */
    size_t kept = 0, links = 0;
    for (size_t i = 0, j; i < r.n; i = j) {
        int many = 0;
        for (j = i + 1; j < r.n && r.v[j].key == r.v[i].key; j++)
            many |= r.v[j].pid != r.v[i].pid;
        if (!many)
            continue;
        coll first = r.v[i], last = r.v[j - 1];
        links++;
        first.flow = last.flow = (uint32_t)links;
        first.role = 1, last.role = 2;
        r.v[kept++] = first; /* kept <= i: the run is read before it is overwritten */
        r.v[kept++] = last;
    }
    if (!links) {
        free(r.v);
        return NULL;
    }
    qsort(r.v, kept, sizeof *r.v, by_place);
    wl_coll_links *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, err_size, "out of memory");
        free(r.v);
        return NULL;
    }
    l->v = r.v;
    l->n = kept;
    l->links = links;
    return l;
}

void wl_coll_links_get(const wl_coll_links *l, uint32_t pid, int64_t stream, uint64_t start_ns, uint64_t *out,
                       uint64_t *in)
{
    *out = *in = 0;
    if (!l)
        return;
    coll k = {.pid = pid, .stream = stream, .start = start_ns};
    size_t lo = 0, hi = l->n;
    while (lo < hi) { /* the first entry not before k */
        size_t mid = lo + (hi - lo) / 2;
        if (by_place(&l->v[mid], &k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* one kernel may be both ends only of a collective no other rank ran: never kept */
    for (; lo < l->n && !by_place(&l->v[lo], &k); lo++) {
        uint64_t id = WL_COLL_FLOW_BASE + l->v[lo].flow;
        if (l->v[lo].role == 1)
            *out = id;
        else
            *in = id;
    }
}

size_t wl_coll_links_count(const wl_coll_links *l) { return l ? l->links : 0; }

void wl_coll_links_free(wl_coll_links *l)
{
    if (!l)
        return;
    free(l->v);
    free(l);
}
