/* API call records into api_call, in runs of one thread's calls (session_writer_internal.h).
 *
 * Why runs: the capture hands over the calls of all threads in the order they returned, so in a
 * session written as they came the next call of one thread is rows away from the last. The
 * readers that walk each thread's calls (the exports' host reader, through api_by_thread) then
 * make SQLite seek the table from its root for every call; written in runs of WL_API_RUN calls of
 * one thread, the next call is the next row, a step (a fifth of the host reader's CPU with four
 * launching threads, bench/results/export.txt). Nothing reads api_call before the import ends
 * (the links to kernels, copies and sets are made by SQL afterwards, by correlation id), and each
 * thread's calls keep their order: only the ids the calls get change.
 * A held call keeps its record, not its name: the name is looked up when the run is written, and
 * a name record flushes every held call first, so a call is written with the name it had.
 * Memory: 10 KiB a thread with calls held (WL_API_RUN records of 40 bytes), at most API_RUN_THREADS
 * threads (2.5 MiB); past them, the run holding the most calls is written to make room. */
#include <stdio.h>
#include <stdlib.h>

#include "store/cupti_enums.h"
#include "store/session_writer_internal.h"

#define API_RUN_THREADS 256

typedef struct api_run {
    uint32_t pid, tid, n;
    wlcap_api calls[WL_API_RUN];
} api_run;

struct wl_imp_api_runs {
    api_run *run[API_RUN_THREADS];
    int nruns;
    int last; /* the run of the last call (a thread often calls several times in a row) */
};

static int insert(import_ctx *c, uint32_t pid, const wlcap_api *a)
{
    char fallback[32];
    const char *name = (a->domain <= 2 && a->cbid < 1024) ? c->api_names[a->domain][a->cbid] : NULL;
    if (!name) {
        snprintf(fallback, sizeof fallback, "cbid_%u", a->cbid);
        name = fallback;
    }
    sqlite3_stmt *s = wl_imp_begin(c, S_API);
    wl_imp_bind_u64(s, 1, pid);
    wl_imp_bind_u64(s, 2, a->tid);
    sqlite3_bind_text(s, 3, a->domain == WLCAP_API_RUNTIME ? "runtime" : "driver", -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 4, a->cbid);
    sqlite3_bind_text(s, 5, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 6, wl_api_category(name), -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 7, a->correlation_id);
    wl_imp_bind_u64(s, 8, a->start);
    wl_imp_bind_u64(s, 9, a->end);
    wl_imp_bind_u64(s, 10, a->end >= a->start ? a->end - a->start : 0);
    wl_imp_bind_u64(s, 11, a->return_value);
    return wl_imp_step(c, s);
}

static int write_run(import_ctx *c, api_run *r)
{
    int rc = 0;
    for (uint32_t i = 0; i < r->n && rc == 0; i++)
        rc = insert(c, r->pid, &r->calls[i]);
    r->n = 0;
    return rc;
}

/* The run of (pid, tid): found, started, or taken over from the fullest. NULL: out of memory. */
static api_run *run_of(import_ctx *c, wl_imp_api_runs *h, uint32_t tid)
{
    if (h->last < h->nruns && h->run[h->last]->tid == tid && h->run[h->last]->pid == c->pid)
        return h->run[h->last];
    for (int i = 0; i < h->nruns; i++)
        if (h->run[i]->tid == tid && h->run[i]->pid == c->pid)
            return h->run[h->last = i];
    api_run *r;
    if (h->nruns < API_RUN_THREADS) {
        if (!(r = malloc(sizeof *r)))
            return NULL;
        h->last = h->nruns;
        h->run[h->nruns++] = r;
    } else {
        int f = 0;
        for (int i = 1; i < h->nruns; i++)
            if (h->run[i]->n > h->run[f]->n)
                f = i;
        r = h->run[h->last = f];
        if (write_run(c, r))
            return NULL;
    }
    r->pid = c->pid, r->tid = tid, r->n = 0;
    return r;
}

int wl_imp_api_call(import_ctx *c, const wlcap_api *a)
{
    wl_imp_api_runs *h = c->api_runs;
    if (!h && !(h = c->api_runs = calloc(1, sizeof *h)))
        return wl_store_set_err(c->err, c->err_size, "out of memory");
    api_run *r = run_of(c, h, a->tid);
    if (!r)
        return c->err[0] ? -1 : wl_store_set_err(c->err, c->err_size, "out of memory");
    r->calls[r->n++] = *a;
    return r->n == WL_API_RUN ? write_run(c, r) : 0;
}

int wl_imp_api_flush(import_ctx *c)
{
    wl_imp_api_runs *h = c->api_runs;
    for (int i = 0; h && i < h->nruns; i++)
        if (write_run(c, h->run[i]))
            return -1;
    return 0;
}

void wl_imp_api_free(import_ctx *c)
{
    wl_imp_api_runs *h = c->api_runs;
    for (int i = 0; h && i < h->nruns; i++)
        free(h->run[i]);
    free(h);
    c->api_runs = NULL;
}
