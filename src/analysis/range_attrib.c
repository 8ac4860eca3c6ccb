/* Attributing kernels to user ranges (see range_attrib.h). Scopes walk each kernel's scope up the
 * parent chain; NVTX ranges look their launches up by binary search in the launches sorted by
 * (pid, tid, time) or (pid, time). The (range, kernel) pairs are then counted into offsets. */
#include "analysis/range_attrib.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SCOPE_DEPTH 64 /* warplens_scope_begin nests at most 64 deep */

typedef struct pair {
    uint32_t range, kernel;
} pair;

typedef struct pairs {
    pair *p;
    size_t n, cap;
} pairs;

static int push(pairs *v, size_t range, size_t kernel)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 1024;
        pair *p = realloc(v->p, nc * sizeof *p);
        if (!p)
            return -1;
        v->p = p;
        v->cap = nc;
    }
    v->p[v->n++] = (pair){(uint32_t)range, (uint32_t)kernel};
    return 0;
}

/* A launch keyed for look-ups: tid is 0 in the per-process order. */
typedef struct launch_key {
    uint32_t pid, tid;
    uint64_t t;
    uint32_t idx;
} launch_key;

static int cmp_key(const launch_key *a, const launch_key *b)
{
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static int cmp_key_q(const void *a, const void *b) { return cmp_key(a, b); }

/* First key not below (pid, tid, t). */
static size_t lower_bound(const launch_key *k, size_t n, uint32_t pid, uint32_t tid, uint64_t t)
{
    launch_key want = {pid, tid, t, 0};
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(&k[mid], &want) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int wl_range_is_thread_bound(const wl_user_range *r)
{
    return r->kind == WL_RANGE_SCOPE || (r->tid != 0 && (r->end_tid == 0 || r->end_tid == r->tid));
}

static int nvtx_pairs(const wl_user_range *ranges, size_t nr, const wl_kernel_launch *l, size_t nl, pairs *out)
{
    launch_key *by_thread = malloc((nl ? nl : 1) * sizeof *by_thread);
    launch_key *by_proc = malloc((nl ? nl : 1) * sizeof *by_proc);
    int rc = by_thread && by_proc ? 0 : -1;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < nl; i++) {
        if (!l[i].launch_ns)
            continue;
        by_thread[n] = (launch_key){l[i].pid, l[i].tid, l[i].launch_ns, (uint32_t)i};
        by_proc[n++] = (launch_key){l[i].pid, 0, l[i].launch_ns, (uint32_t)i};
    }
    if (rc == 0 && n > 1) {
        qsort(by_thread, n, sizeof *by_thread, cmp_key_q);
        qsort(by_proc, n, sizeof *by_proc, cmp_key_q);
    }
    for (size_t r = 0; rc == 0 && r < nr; r++) {
        const wl_user_range *u = &ranges[r];
        if (u->kind != WL_RANGE_NVTX)
            continue;
        uint32_t tid = wl_range_is_thread_bound(u) ? u->tid : 0;
        const launch_key *k = tid ? by_thread : by_proc;
        for (size_t i = lower_bound(k, n, u->pid, tid, u->start_ns);
             rc == 0 && i < n && k[i].pid == u->pid && k[i].tid == tid && k[i].t < u->end_ns; i++)
            rc = push(out, r, k[i].idx);
    }
    free(by_thread);
    free(by_proc);
    return rc;
}

/* A scope by (pid, scope id), as an index into ranges; sorted keys for binary search. */
typedef struct scope_key {
    uint32_t pid;
    int64_t id;
    size_t range;
} scope_key;

static int cmp_scope(const void *pa, const void *pb)
{
    const scope_key *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static long find_scope(const scope_key *k, size_t n, uint32_t pid, int64_t id)
{
    size_t lo = 0, hi = n;
    scope_key want = {pid, id, 0};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_scope(&k[mid], &want);
        if (c == 0)
            return (long)k[mid].range;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int scope_pairs(const wl_user_range *ranges, size_t nr, const wl_kernel_launch *l, size_t nl, pairs *out)
{
    size_t ns = 0;
    for (size_t r = 0; r < nr; r++)
        ns += ranges[r].kind == WL_RANGE_SCOPE;
    if (!ns)
        return 0;
    scope_key *k = malloc(ns * sizeof *k);
    if (!k)
        return -1;
    ns = 0;
    for (size_t r = 0; r < nr; r++)
        if (ranges[r].kind == WL_RANGE_SCOPE)
            k[ns++] = (scope_key){ranges[r].pid, ranges[r].id, r};
    qsort(k, ns, sizeof *k, cmp_scope);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nl; i++) {
        if (l[i].scope_id < 0)
            continue;
        /* the innermost scope and every enclosing one, once each even if the chain loops */
        long seen[MAX_SCOPE_DEPTH];
        int depth = 0;
        for (long r = find_scope(k, ns, l[i].pid, l[i].scope_id); rc == 0 && r >= 0 && depth < MAX_SCOPE_DEPTH;) {
            for (int d = 0; d < depth; d++)
                if (seen[d] == r)
                    r = -1;
            if (r < 0)
                break;
            seen[depth++] = r;
            rc = push(out, (size_t)r, i);
            int64_t parent = ranges[r].parent_id;
            r = parent >= 0 ? find_scope(k, ns, l[i].pid, parent) : -1;
        }
    }
    free(k);
    return rc;
}

int wl_range_attribute(const wl_user_range *ranges, size_t nr, const wl_kernel_launch *l, size_t nl,
                       wl_range_members *out)
{
    memset(out, 0, sizeof *out);
    pairs v = {0};
    int rc = nvtx_pairs(ranges, nr, l, nl, &v);
    if (rc == 0)
        rc = scope_pairs(ranges, nr, l, nl, &v);
    out->first = calloc(nr + 1, sizeof *out->first);
    out->kernel = malloc((v.n ? v.n : 1) * sizeof *out->kernel);
    if (rc || !out->first || !out->kernel) {
        free(v.p);
        wl_range_members_free(out);
        return -1;
    }
    /* counting sort by range; within a range the pairs keep their order */
    for (size_t i = 0; i < v.n; i++)
        out->first[v.p[i].range + 1]++;
    for (size_t r = 0; r < nr; r++)
        out->first[r + 1] += out->first[r];
    size_t *fill = malloc((nr ? nr : 1) * sizeof *fill);
    if (!fill) {
        free(v.p);
        wl_range_members_free(out);
        return -1;
    }
    memcpy(fill, out->first, nr * sizeof *fill);
    for (size_t i = 0; i < v.n; i++)
        out->kernel[fill[v.p[i].range]++] = v.p[i].kernel;
    free(fill);
    free(v.p);
    return 0;
}

void wl_range_members_free(wl_range_members *m)
{
    free(m->first);
    free(m->kernel);
    m->first = NULL;
    m->kernel = NULL;
}
