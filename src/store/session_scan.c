/* One read of each large table per open session (see session_scan.h): the reads kept on the
 * handle, and the API-call table's per-name fold. Names are grouped in a hash table instead of
 * SQL's GROUP BY, which sorts every row; order and NULL handling are those of the SQL it replaces
 * (sum/min/max/avg leave NULL durations out; a NULL name is its own group; most time first, then
 * by name as the grouping ordered them). */
#include "store/session_scan.h"
#include "common/fnv.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "store/gpu_busy.h"
#include "store/session_cursors_internal.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

/* Kept on a handle, or shared by two handles of one file (wl_session_share_scan): the reads are
 * made under the lock by the first thread that needs them, on its own handle's connection, and
 * never change once made (the kernel read always makes the overview's figures too, so it is
 * never made again). */
struct wl_session_scan {
    pthread_mutex_t lock;
    int refs;
    wl_kernel_aggregate k;
    wl_kernel_overview ov;
    int have_k;
    wl_api_scan api;
    int have_api;
    uint64_t busy_ns;
    int have_busy;              /* 1 made, -1 a read error */
    wl_interval_summary *ranges[WL_SCAN_RANGE_KINDS];
    int n_ranges[WL_SCAN_RANGE_KINDS], have_ranges[WL_SCAN_RANGE_KINDS];
};

/* ---- the API-call table ------------------------------------------------------------------- */

typedef struct api_acc {
    char *name;               /* NULL: the rows whose name is NULL */
    int len, used, type;      /* SQLite's type of the name: 5 and '5' are two groups, as in SQL */
    uint64_t hash;
    char group[64];           /* the first row's category */
    uint64_t count, total, min, max, n_dur;
} api_acc;

typedef struct api_hash {
    api_acc *e;
    size_t cap, n;
} api_hash;

static uint64_t hash_bytes(const unsigned char *p, int n, int type)
{
    return wl_fnv1a(WL_FNV_OFFSET ^ (uint64_t)type, p, (size_t)n);
}

static uint64_t acc_hash(const void *e, const void *arg)
{
    (void)arg;
    return ((const api_acc *)e)->hash;
}

static api_acc *api_find(api_hash *t, const unsigned char *name, int len, int type, uint64_t h)
{
    if (wl_grow_hash((void **)&t->e, &t->cap, t->n, sizeof *t->e, 64, offsetof(api_acc, used), acc_hash, NULL))
        return NULL;
    size_t j = h & (t->cap - 1);
    for (; t->e[j].used; j = (j + 1) & (t->cap - 1)) {
        api_acc *e = &t->e[j];
        if (e->hash == h && e->type == type && (e->name == NULL) == (name == NULL) && e->len == len &&
            (!len || !memcmp(e->name, name, (size_t)len)))
            return e;
    }
    api_acc *e = &t->e[j];
    memset(e, 0, sizeof *e);
    if (name && !(e->name = malloc((size_t)len + 1)))
        return NULL;
    if (name) {
        memcpy(e->name, name, (size_t)len);
        e->name[len] = 0;
    }
    e->len = len;
    e->type = type;
    e->hash = h;
    e->used = 1;
    e->min = UINT64_MAX;
    t->n++;
    return e;
}

static int api_order(const void *x, const void *y)
{
    const api_acc *a = *(const api_acc *const *)x, *b = *(const api_acc *const *)y;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    if (!a->name || !b->name)
        return (a->name != NULL) - (b->name != NULL);
    int n = a->len < b->len ? a->len : b->len, c = memcmp(a->name, b->name, (size_t)n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

typedef struct api_fold {
    api_hash t;
    wl_api_scan *out;
} api_fold;

/* One row (wl_sql_fold). Columns: 0 name, 1 category, 2 duration, 3 start, 4 end. */
static int api_row(void *arg, sqlite3_value **v)
{
    api_fold *f = arg;
    wl_api_scan *out = f->out;
    int type = sqlite3_value_type(v[0]);
    const unsigned char *name = sqlite3_value_text(v[0]);
    int len = name ? sqlite3_value_bytes(v[0]) : 0;
    api_acc *e = api_find(&f->t, name, len, type, hash_bytes(name, len, type));
    if (!e)
        return -1;
    if (!e->count++) {
        const unsigned char *g = sqlite3_value_text(v[1]);
        snprintf(e->group, sizeof e->group, "%s", g ? (const char *)g : "");
    }
    if (sqlite3_value_type(v[2]) != SQLITE_NULL) {
        uint64_t d = (uint64_t)sqlite3_value_int64(v[2]);
        e->total += d;
        e->n_dur++;
        e->min = d < e->min ? d : e->min;
        e->max = d > e->max ? d : e->max;
    }
    out->calls++;
    wl_fold_min_val(&out->first_ns, &out->has_first, v[3]);
    wl_fold_max_val(&out->last_ns, &out->has_last, v[4]);
    return 0;
}

static int api_pass(sqlite3 *db, wl_api_scan *out)
{
    memset(out, 0, sizeof *out);
    api_fold f = {{0}, out};
    api_hash t;
    sqlite3_stmt *st;
    int rc = -1;
    if (sqlite3_prepare_v2(db, "SELECT wl_fold(?1, name, category, duration_ns, start_ns, end_ns) FROM api_call", -1,
                           &st, NULL) == SQLITE_OK) {
        rc = wl_sql_fold(st, api_row, &f);
        sqlite3_finalize(st);
    }
    t = f.t;
    const api_acc **order = rc ? NULL : malloc((t.n ? t.n : 1) * sizeof *order);
    out->sums = order ? calloc(t.n ? t.n : 1, sizeof *out->sums) : NULL;
    if (!out->sums)
        rc = -1;
    if (rc == 0) {
        size_t n = 0;
        for (size_t i = 0; i < t.cap; i++)
            if (t.e[i].used)
                order[n++] = &t.e[i];
        qsort(order, n, sizeof *order, api_order);
        for (size_t i = 0; i < n; i++) {
            const api_acc *e = order[i];
            wl_interval_summary *r = &out->sums[i];
            snprintf(r->name, sizeof r->name, "%s", e->name ? e->name : "");
            memcpy(r->group, e->group, sizeof r->group);
            r->count = e->count;
            r->total_ns = e->total;
            r->min_ns = e->n_dur ? e->min : 0;
            r->max_ns = e->n_dur ? e->max : 0;
            r->mean_ns = e->n_dur ? (double)e->total / (double)e->n_dur : 0.0;
        }
        out->n_sums = (int)n;
    }
    free(order);
    for (size_t i = 0; i < t.cap; i++)
        free(t.e[i].name);
    free(t.e);
    if (rc) {
        free(out->sums);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

/* ---- NVTX range and scope summaries -------------------------------------------------------- */

static const char *const RANGE_SQL[WL_SCAN_RANGE_KINDS] = {
    "SELECT name, coalesce(domain, 'default'), count(*), coalesce(sum(duration_ns), 0), min(duration_ns),"
    " max(duration_ns), avg(duration_ns) FROM nvtx_range GROUP BY name, domain ORDER BY 4 DESC",
    "SELECT name, '', count(*), coalesce(sum(duration_ns), 0), min(duration_ns), max(duration_ns),"
    " avg(duration_ns) FROM scope GROUP BY name ORDER BY 4 DESC",
};

int wl_interval_rows(sqlite3 *db, const char *sql, wl_interval_summary **out)
{
    *out = NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    wl_interval_summary *rows = NULL;
    size_t n = 0, cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < INT32_MAX) {
        if (wl_grow((void **)&rows, &cap, n, sizeof *rows, 64))
            break;
        wl_interval_summary *r = &rows[n++];
        memset(r, 0, sizeof *r);
        wl_sql_text_col(st, 0, r->name, sizeof r->name);
        wl_sql_text_col(st, 1, r->group, sizeof r->group);
        r->count = (uint64_t)sqlite3_column_int64(st, 2);
        r->total_ns = (uint64_t)sqlite3_column_int64(st, 3);
        r->min_ns = (uint64_t)sqlite3_column_int64(st, 4);
        r->max_ns = (uint64_t)sqlite3_column_int64(st, 5);
        r->mean_ns = sqlite3_column_double(st, 6);
    }
    sqlite3_finalize(st);
    *out = rows;
    return (int)n;
}

/* ---- GPU busy time ------------------------------------------------------------------------ */

/* The timed kernels' times through gpu_busy.h: in table order (a plain scan), or in start order
 * through kernel_by_start (a table seek per kernel) when the table's order is too far from it. */
static int busy_row(void *b, sqlite3_value **v)
{
    wl_busy_kernel(b, sqlite3_value_int64(v[0]), sqlite3_value_int64(v[1]), (uint64_t)sqlite3_value_int64(v[2]),
                   (uint64_t)sqlite3_value_int64(v[3]));
    return 0;
}

/* (a fold over a subquery's ORDER BY is not sure to see its rows in that order: the fallback
 * steps its rows) */
static int busy_pass(sqlite3 *db, int by_start, uint64_t *ns)
{
    wl_busy *b = wl_busy_open(db);
    sqlite3_stmt *st;
    if (!b || sqlite3_prepare_v2(db,
                                 by_start ? "SELECT pid, device_id, start_ns, end_ns FROM kernel WHERE has_timestamps"
                                            " ORDER BY start_ns"
                                          : "SELECT wl_fold(?1, pid, device_id, start_ns, end_ns) FROM kernel"
                                            " WHERE has_timestamps",
                                 -1, &st, NULL) != SQLITE_OK) {
        wl_busy_close(b, ns);
        return -1;
    }
    int frc = 0, step;
    if (!by_start)
        frc = wl_sql_fold(st, busy_row, b);
    else {
        while ((step = sqlite3_step(st)) == SQLITE_ROW)
            wl_busy_kernel(b, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                           (uint64_t)sqlite3_column_int64(st, 2), (uint64_t)sqlite3_column_int64(st, 3));
        frc = step == SQLITE_DONE ? 0 : -1;
    }
    sqlite3_finalize(st);
    int rc = wl_busy_close(b, ns);
    return frc == 0 ? rc : -1;
}

static int busy_read(sqlite3 *db, uint64_t *ns) { return busy_pass(db, 0, ns) == 0 || busy_pass(db, 1, ns) == 0 ? 0 : -1; }

/* ---- kept on the handle ------------------------------------------------------------------- */

static struct wl_session_scan *scan_of(wl_session *s)
{
    if (!s->scan && (s->scan = calloc(1, sizeof *s->scan)) != NULL) {
        if (pthread_mutex_init(&s->scan->lock, NULL)) {
            free(s->scan);
            s->scan = NULL;
        } else {
            s->scan->refs = 1;
        }
    }
    return s->scan;
}

/* with_busy: the busy time folded in the same read (kept when it could be had there) */
static const wl_kernel_aggregate *scan_kernels(wl_session *s, const wl_kernel_overview **ov, int with_busy)
{
    struct wl_session_scan *sc = scan_of(s);
    if (!sc)
        return NULL;
    pthread_mutex_lock(&sc->lock);
    if (!sc->have_k) {
        uint64_t busy = 0;
        int busy_ok = 0;
        with_busy = with_busy && !sc->have_busy;
        sc->have_k = wl_kernel_pass(s, &sc->k, &sc->ov, with_busy ? &busy : NULL, with_busy ? &busy_ok : NULL) == 0;
        if (busy_ok)
            sc->busy_ns = busy, sc->have_busy = 1;
    }
    int have = sc->have_k;
    pthread_mutex_unlock(&sc->lock);
    if (!have)
        return NULL;
    if (ov)
        *ov = &sc->ov;
    return &sc->k;
}

const wl_kernel_aggregate *wl_scan_kernels(wl_session *s, const wl_kernel_overview **ov)
{
    return scan_kernels(s, ov, 0);
}

const wl_api_scan *wl_scan_api(wl_session *s)
{
    struct wl_session_scan *sc = scan_of(s);
    if (!sc)
        return NULL;
    pthread_mutex_lock(&sc->lock);
    if (!sc->have_api)
        sc->have_api = api_pass(s->db, &sc->api) == 0;
    int have = sc->have_api;
    pthread_mutex_unlock(&sc->lock);
    return have ? &sc->api : NULL;
}

int wl_scan_busy(wl_session *s, uint64_t *ns)
{
    struct wl_session_scan *sc = scan_of(s);
    *ns = 0;
    if (!sc)
        return -1;
    pthread_mutex_lock(&sc->lock);
    if (!sc->have_busy)
        sc->have_busy = busy_read(s->db, &sc->busy_ns) == 0 ? 1 : -1;
    int have = sc->have_busy;
    *ns = sc->busy_ns;
    pthread_mutex_unlock(&sc->lock);
    return have == 1 ? 0 : -1;
}

int wl_scan_ranges(wl_session *s, int kind, wl_interval_summary **out)
{
    *out = NULL;
    struct wl_session_scan *sc = scan_of(s);
    if (!sc || kind < 0 || kind >= WL_SCAN_RANGE_KINDS)
        return -1;
    pthread_mutex_lock(&sc->lock);
    if (!sc->have_ranges[kind]) {
        sc->n_ranges[kind] = wl_interval_rows(s->db, RANGE_SQL[kind], &sc->ranges[kind]);
        sc->have_ranges[kind] = 1;
    }
    int n = sc->n_ranges[kind];
    if (n >= 0 && (*out = malloc((size_t)(n ? n : 1) * sizeof **out)) != NULL && n > 0)
        memcpy(*out, sc->ranges[kind], (size_t)n * sizeof **out);
    pthread_mutex_unlock(&sc->lock);
    return n < 0 || *out ? n : -1;
}

void wl_session_set_read_threads(wl_session *s, int n) { s->read_threads = n < 1 ? 1 : n; }

int wl_session_share_scan(wl_session *from, wl_session *to)
{
    struct wl_session_scan *sc = scan_of(from);
    if (!sc || to->scan)
        return -1;
    pthread_mutex_lock(&sc->lock);
    sc->refs++;
    pthread_mutex_unlock(&sc->lock);
    to->scan = sc;
    return 0;
}

typedef struct api_job {
    sqlite3 *db;
    wl_api_scan out;
    int rc;
    wl_interval_summary *ranges[WL_SCAN_RANGE_KINDS];
    int n_ranges[WL_SCAN_RANGE_KINDS];
} api_job;

/* The API calls, then the range summaries: done while the kernels' two halves are still read */
static void *api_thread(void *arg)
{
    api_job *j = arg;
    j->rc = api_pass(j->db, &j->out);
    for (int k = 0; k < WL_SCAN_RANGE_KINDS; k++)
        j->n_ranges[k] = wl_interval_rows(j->db, RANGE_SQL[k], &j->ranges[k]);
    return NULL;
}

int wl_scan_all(wl_session *s)
{
    struct wl_session_scan *sc = scan_of(s);
    if (!sc)
        return -1;
    pthread_mutex_lock(&sc->lock);
    int want_api = !sc->have_api, want_k = !sc->have_k;
    pthread_mutex_unlock(&sc->lock);
    api_job job = {.rc = -1};
    pthread_t th;
    int threaded = 0;
    if (want_api && want_k && s->read_threads > 1 && (job.db = wl_cur_db_scan(s)) != NULL)
        threaded = pthread_create(&th, NULL, api_thread, &job) == 0;
    /* the busy time in the kernels' read; when it cannot be had there, wl_scan_busy reads it */
    int rc = scan_kernels(s, NULL, 1) ? 0 : -1;
    if (threaded) {
        pthread_join(th, NULL);
        pthread_mutex_lock(&sc->lock);
        if (job.rc == 0 && !sc->have_api) {
            sc->api = job.out;
            sc->have_api = 1;
        } else if (job.rc == 0) {
            free(job.out.sums);
        }
        for (int k = 0; k < WL_SCAN_RANGE_KINDS; k++) {
            if (job.n_ranges[k] >= 0 && !sc->have_ranges[k]) {
                sc->ranges[k] = job.ranges[k];
                sc->n_ranges[k] = job.n_ranges[k];
                sc->have_ranges[k] = 1;
            } else {
                free(job.ranges[k]);
            }
        }
        pthread_mutex_unlock(&sc->lock);
    }
    sqlite3_close(job.db);
    return wl_scan_api(s) && rc == 0 ? 0 : -1;
}

void wl_scan_free(struct wl_session_scan *sc)
{
    if (!sc)
        return;
    pthread_mutex_lock(&sc->lock);
    int last = --sc->refs == 0;
    pthread_mutex_unlock(&sc->lock);
    if (!last)
        return;
    pthread_mutex_destroy(&sc->lock);
    wl_kernel_aggregate_free(&sc->k);
    free(sc->api.sums);
    for (int k = 0; k < WL_SCAN_RANGE_KINDS; k++)
        free(sc->ranges[k]);
    free(sc);
}
