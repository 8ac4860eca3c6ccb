/* Host clock offsets from matched collectives (see clock_align.h). */
#include "analysis/clock_align.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/collective_match.h"
#include "store/session.h"
#include "store/session_ranks.h"

typedef struct slot {
    uint64_t key;
    int64_t sum; /* of end - the host's base */
    int64_t count;
} slot;

typedef struct host {
    wl_merge_clock c;
    int min_rank;
    int64_t base;  /* the first collective end seen on the host */
    slot *slots;   /* WL_CLOCK_MAX_KEYS * 2, open addressing; NULL until a collective is seen */
    int used;
} host;

typedef struct reader {
    host *h;
    wl_coll_keyer kr;
    char first_host[128];
    int min_rank;
} reader;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdu;
    x ^= x >> 33;
    return x;
}

static void add(host *h, uint64_t key, int64_t end)
{
    if (!h->slots && !(h->slots = calloc(WL_CLOCK_MAX_KEYS * 2, sizeof *h->slots)))
        return;
    if (!h->used && !h->base)
        h->base = end;
    size_t cap = WL_CLOCK_MAX_KEYS * 2, i = mix(key) & (cap - 1);
    while (h->slots[i].count && h->slots[i].key != key)
        i = (i + 1) & (cap - 1);
    if (!h->slots[i].count) {
        if (h->used >= WL_CLOCK_MAX_KEYS)
            return;
        h->used++;
        h->slots[i].key = key;
    }
    h->slots[i].sum += end - h->base;
    h->slots[i].count++;
}

static void on_collective(const wl_collective *c, void *arg)
{
    reader *r = arg;
    uint64_t key = wl_coll_key(&r->kr, c);
    /* the first collectives of each stream */
    if (wl_coll_keyer_index(&r->kr) < WL_CLOCK_MAX_PER_STREAM)
        add(r->h, key, (int64_t)c->end_ns);
}

static void on_process(const wl_process_row *p, void *arg)
{
    reader *r = arg;
    if (!r->first_host[0])
        snprintf(r->first_host, sizeof r->first_host, "%s", p->hostname[0] ? p->hostname : "(unknown)");
    if (p->rank >= 0 && (r->min_rank < 0 || p->rank < r->min_rank))
        r->min_rank = p->rank;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* h's offset against the reference ref. */
static void estimate(host *h, const host *ref)
{
    int64_t *d = malloc(WL_CLOCK_MAX_KEYS * sizeof *d);
    int n = 0;
    size_t cap = WL_CLOCK_MAX_KEYS * 2;
    for (size_t i = 0; d && h->slots && ref->slots && i < cap; i++) {
        const slot *s = &h->slots[i];
        if (!s->count)
            continue;
        size_t j = mix(s->key) & (cap - 1);
        while (ref->slots[j].count && ref->slots[j].key != s->key)
            j = (j + 1) & (cap - 1);
        const slot *r = &ref->slots[j];
        if (!r->count)
            continue;
        /* (ref mean end) - (host mean end), from each one's base */
        d[n++] = (ref->base - h->base) + r->sum / r->count - s->sum / s->count;
    }
    if (n == 0) {
        snprintf(h->c.source, sizeof h->c.source, "none");
    } else {
        int64_t off = median(d, n);
        for (int i = 0; i < n; i++)
            d[i] = d[i] > off ? d[i] - off : off - d[i];
        h->c.offset_ns = off;
        h->c.residual_ns = median(d, n);
        h->c.collectives = n;
        snprintf(h->c.source, sizeof h->c.source, "estimated");
    }
    free(d);
}

struct wl_clock_align {
    host *hosts; /* at most one per input */
    int *input_host;
    int n, nh;
};

wl_clock_align *wl_clock_align_new(int ninputs)
{
    wl_clock_align *a = calloc(1, sizeof *a);
    int n = ninputs > 0 ? ninputs : 1;
    if (!a || !(a->hosts = calloc((size_t)n, sizeof *a->hosts)) || !(a->input_host = calloc((size_t)n, sizeof(int)))) {
        wl_clock_align_free(a);
        return NULL;
    }
    a->n = ninputs;
    return a;
}

void wl_clock_align_free(wl_clock_align *a)
{
    if (!a)
        return;
    for (int h = 0; a->hosts && h < a->nh; h++)
        free(a->hosts[h].slots);
    free(a->hosts);
    free(a->input_host);
    free(a);
}

int wl_clock_align_add(wl_clock_align *a, wl_session *s, int input, char *err, size_t err_size)
{
    if (input < 0 || input >= a->n) {
        snprintf(err, err_size, "input %d out of range", input);
        return -1;
    }
    reader r;
    memset(&r, 0, sizeof r);
    r.min_rank = -1;
    wl_session_each_process(s, on_process, &r);
    int h = 0;
    while (h < a->nh && strcmp(a->hosts[h].c.host, r.first_host))
        h++;
    if (h == a->nh) {
        snprintf(a->hosts[h].c.host, sizeof a->hosts[h].c.host, "%s", r.first_host);
        a->hosts[h].min_rank = -1;
        a->nh++;
    }
    host *hp = &a->hosts[h];
    if (r.min_rank >= 0 && (hp->min_rank < 0 || r.min_rank < hp->min_rank))
        hp->min_rank = r.min_rank;
    a->input_host[input] = h;
    r.h = hp;
    if (wl_session_each_collective(s, on_collective, &r) < 0) {
        snprintf(err, err_size, "cannot read its kernels");
        return -1;
    }
    return 0;
}

int wl_clock_align_finish(wl_clock_align *a, wl_merge_clock **hosts_out, int *nhosts, int *input_host, char *err,
                          size_t err_size)
{
    host *hosts = a->hosts;
    int nh = a->nh, ref = 0;
    for (int h = 0; h < nh; h++)
        if (hosts[h].min_rank >= 0 && (hosts[ref].min_rank < 0 || hosts[h].min_rank < hosts[ref].min_rank))
            ref = h;
    *hosts_out = malloc((size_t)(nh > 0 ? nh : 1) * sizeof **hosts_out);
    if (!*hosts_out) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    for (int h = 0; h < nh; h++) {
        if (h == ref) {
            snprintf(hosts[h].c.source, sizeof hosts[h].c.source, "reference");
        } else {
            estimate(&hosts[h], &hosts[ref]);
        }
        (*hosts_out)[h] = hosts[h].c;
    }
    memcpy(input_host, a->input_host, (size_t)a->n * sizeof *input_host);
    *nhosts = nh;
    return 0;
}
