/* Per-rank, per-step figures and stragglers (see rank_steps.h). */
#include "analysis/rank_steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "store/session.h"
#include "store/session_ranks.h"

typedef struct acc {
    wl_rank_report *r;
    int first;            /* the first rank index of the session being read */
    size_t cap, *step_cap, *coll_cap;
    int oom;
    /* per rank of the session: the step a span is in, the union's end */
    int *cursor;
    uint64_t *union_end;
} acc;

static int rank_of_pid(acc *a, uint32_t pid)
{
    wl_rank_report *r = a->r;
    for (int i = a->first; i < r->nranks; i++)
        if (r->ranks[i].pid == pid)
            return i;
    return -1;
}

static void on_process(const wl_process_row *p, void *arg)
{
    acc *a = arg;
    wl_rank_report *r = a->r;
    if (wl_grow((void **)&r->ranks, &a->cap, (size_t)r->nranks, sizeof *r->ranks, 16)) {
        a->oom = 1;
        return;
    }
    wl_rank *k = &r->ranks[r->nranks++];
    memset(k, 0, sizeof *k);
    k->rank = p->rank;
    k->pid = p->pid;
    snprintf(k->host, sizeof k->host, "%s", p->hostname);
}

static void on_step(uint32_t pid, uint64_t start, uint64_t end, void *arg)
{
    acc *a = arg;
    int i = rank_of_pid(a, pid);
    if (i < 0)
        return;
    wl_rank *k = &a->r->ranks[i];
    if (wl_grow((void **)&k->steps, &a->step_cap[i], (size_t)k->nsteps, sizeof *k->steps, 64)) {
        a->oom = 1;
        return;
    }
    wl_rank_step *s = &k->steps[k->nsteps++];
    memset(s, 0, sizeof *s);
    s->start_ns = start;
    s->end_ns = end;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;
    return e > s ? e - s : 0;
}

static void on_span(const wl_gpu_span *g, void *arg)
{
    acc *a = arg;
    int i = rank_of_pid(a, g->pid);
    if (i < 0)
        return;
    wl_rank *k = &a->r->ranks[i];
    int *c = &a->cursor[i - a->first];
    while (*c < k->nsteps && k->steps[*c].end_ns <= g->start_ns)
        (*c)++;
    int in_step = *c < k->nsteps && g->start_ns >= k->steps[*c].start_ns;
    if (g->collective) {
        if (wl_grow((void **)&k->coll, &a->coll_cap[i], (size_t)k->ncoll, sizeof *k->coll, 256)) {
            a->oom = 1;
            return;
        }
        k->coll[k->ncoll++] = (wl_rank_collective){g->end_ns - g->start_ns, in_step ? *c : -1};
    }
    if (!in_step)
        return; /* outside every step */
    wl_rank_step *s = &k->steps[*c];
    uint64_t *u = &a->union_end[i - a->first];
    uint64_t from = g->start_ns > *u ? g->start_ns : *u;
    s->busy_ns += overlap(from, g->end_ns, s->start_ns, s->end_ns);
    if (g->end_ns > *u)
        *u = g->end_ns;
    if (g->collective)
        s->collective_ns += overlap(g->start_ns, g->end_ns, s->start_ns, s->end_ns);
    if (g->kind == 2) {
        s->copies++;
        s->copy_bytes += g->bytes;
        s->copy_ns += g->end_ns - g->start_ns;
    }
}

static int read_session(acc *a, const char *path, const char *step, char *err, size_t n)
{
    wl_session *s = wl_session_open(path, err, n);
    if (!s)
        return -1;
    wl_rank_report *r = a->r;
    int rc = -1;
    a->first = r->nranks;
    if (!r->step_name[0] && (step ? snprintf(r->step_name, sizeof r->step_name, "%s", step) < 0
                                  : wl_session_top_range_name(s, r->step_name, sizeof r->step_name) != 0)) {
        snprintf(err, n, "%s has no NVTX ranges: name the step with --step NAME (an NVTX range or scope)", path);
        goto done;
    }
    if (wl_session_each_process(s, on_process, a) < 0 || a->oom)
        goto read_failed;
    size_t nr = (size_t)r->nranks;
    size_t *sc = realloc(a->step_cap, nr * sizeof *sc), *cc = sc ? realloc(a->coll_cap, nr * sizeof *cc) : NULL;
    if (sc)
        a->step_cap = sc;
    if (cc)
        a->coll_cap = cc;
    int here = r->nranks - a->first;
    free(a->cursor);
    free(a->union_end);
    a->cursor = calloc((size_t)here + 1, sizeof *a->cursor);
    a->union_end = calloc((size_t)here + 1, sizeof *a->union_end);
    if (!sc || !cc || !a->cursor || !a->union_end)
        goto read_failed;
    for (int i = a->first; i < r->nranks; i++)
        a->step_cap[i] = a->coll_cap[i] = 0;
    if (wl_session_each_named_range(s, r->step_name, on_step, a) < 0 || a->oom ||
        wl_session_each_gpu_span(s, on_span, a) < 0 || a->oom)
        goto read_failed;
    rc = 0;
    goto done;
read_failed:
    snprintf(err, n, "%s: cannot read it%s", path, a->oom ? " (out of memory)" : "");
done:
    wl_session_close(s);
    return rc;
}

static int by_rank(const void *x, const void *y)
{
    const wl_rank *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < 0 ? 1 : b->rank < 0 ? -1 : (a->rank > b->rank) - (a->rank < b->rank);
    return (a->pid > b->pid) - (a->pid < b->pid);
}

/* waiting: each collective's duration minus the shortest duration of the collective in the
 * same place (the k-th) on any rank */
static int waits(wl_rank_report *r)
{
    uint64_t most = 0;
    for (int i = 0; i < r->nranks; i++)
        if (r->ranks[i].ncoll > most)
            most = r->ranks[i].ncoll;
    uint64_t *min = malloc((size_t)(most ? most : 1) * sizeof *min);
    if (!min)
        return -1;
    for (uint64_t k = 0; k < most; k++)
        min[k] = UINT64_MAX;
    for (int i = 0; i < r->nranks; i++)
        for (uint64_t k = 0; k < r->ranks[i].ncoll; k++)
            if (r->ranks[i].coll[k].ns < min[k])
                min[k] = r->ranks[i].coll[k].ns;
    for (int i = 0; i < r->nranks; i++) {
        wl_rank *x = &r->ranks[i];
        for (uint64_t k = 0; k < x->ncoll; k++)
            if (x->coll[k].step >= 0)
                x->steps[x->coll[k].step].wait_ns += x->coll[k].ns - min[k];
    }
    free(min);
    return 0;
}

int wl_rank_report_build(const char *const *paths, int n, const char *step, wl_rank_report *r, char *err,
                         size_t err_size)
{
    memset(r, 0, sizeof *r);
    acc a;
    memset(&a, 0, sizeof a);
    a.r = r;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = read_session(&a, paths[i], step, err, err_size);
    free(a.step_cap);
    free(a.coll_cap);
    free(a.cursor);
    free(a.union_end);
    if (rc) {
        wl_rank_report_free(r);
        return -1;
    }
    /* processes with no step (a launcher, a data loader) are no rank of the table */
    int kept = 0;
    for (int i = 0; i < r->nranks; i++) {
        if (r->ranks[i].nsteps) {
            r->ranks[kept++] = r->ranks[i];
        } else {
            free(r->ranks[i].steps);
            free(r->ranks[i].coll);
        }
    }
    r->nranks = kept;
    if (!kept) {
        snprintf(err, err_size, "no rank has a range named '%s' (choose the step with --step NAME)", r->step_name);
        wl_rank_report_free(r);
        return -1;
    }
    qsort(r->ranks, (size_t)kept, sizeof *r->ranks, by_rank);
    if (waits(r)) {
        snprintf(err, err_size, "out of memory");
        wl_rank_report_free(r);
        return -1;
    }
    r->nsteps = r->ranks[0].nsteps;
    for (int i = 1; i < kept; i++)
        if (r->ranks[i].nsteps < r->nsteps)
            r->nsteps = r->ranks[i].nsteps;
    r->steps = calloc((size_t)r->nsteps + 1, sizeof *r->steps);
    if (!r->steps) {
        snprintf(err, err_size, "out of memory");
        wl_rank_report_free(r);
        return -1;
    }
    for (int s = 0; s < r->nsteps; s++) {
        wl_step_summary *q = &r->steps[s];
        q->step = s;
        double sum = 0, most = -1, total = 0;
        for (int i = 0; i < kept; i++) {
            const wl_rank_step *x = &r->ranks[i].steps[s];
            uint64_t len = x->end_ns - x->start_ns, own = len > x->wait_ns ? len - x->wait_ns : 0;
            total += (double)len;
            if (len > q->max_ns)
                q->max_ns = len;
            sum += (double)own;
            if ((double)own > most) {
                most = (double)own;
                q->straggler = i;
            }
        }
        q->mean_ns = (uint64_t)(total / kept);
        double mean = sum / kept;
        q->imbalance_pct = mean > 0 ? (most / mean - 1.0) * 100.0 : 0;
    }
    return 0;
}

void wl_rank_report_free(wl_rank_report *r)
{
    for (int i = 0; i < r->nranks; i++) {
        free(r->ranks[i].steps);
        free(r->ranks[i].coll);
    }
    free(r->ranks);
    free(r->steps);
    memset(r, 0, sizeof *r);
}

void wl_rank_total_of(const wl_rank_report *r, int i, wl_rank_total *t)
{
    memset(t, 0, sizeof *t);
    const wl_rank *k = &r->ranks[i];
    for (int s = 0; s < k->nsteps; s++) {
        const wl_rank_step *x = &k->steps[s];
        t->time_ns += x->end_ns - x->start_ns;
        t->busy_ns += x->busy_ns;
        t->collective_ns += x->collective_ns;
        t->wait_ns += x->wait_ns;
        t->copies += x->copies;
    }
    for (int s = 0; s < r->nsteps; s++)
        t->straggler_steps += r->steps[s].straggler == i;
}
