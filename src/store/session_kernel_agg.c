/* The per-name kernel summaries and launch configurations from one read of the kernel table (see
 * session_kernels.h). SQL's GROUP BY would sort every kernel row once per grouping (four sorts of
 * the whole table for `stats`); here each row is read once, in rowid order, and folded into hash
 * tables keyed by the grouping columns, so the cost is one sequential scan. The duration
 * percentiles are exact: the durations of timed kernels are kept (8 bytes per kernel) and the
 * ranks selected by radix selection (common/rank_select.h).
 * Results, order and NULL handling are those of the SQL it replaces: a NULL in a grouping column
 * is its own group and reads as 0, aggregates leave NULLs out. */
#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/rank_select.h"
#include "store/gpu_busy.h"
#include "store/kernel_config.h"
#include "store/session_cursors_internal.h"
#include "store/session_internal.h"
#include "store/session_scan.h"
#include "store/session_kernels.h"
#include "store/sql_util.h"

/* ---- a hash of fixed-width integer keys (values plus a NULL mask) with two counters each --- */

#define NCFG 18 /* the widest key: (name_id, pid, device_id, launch configuration) */
#define NPAIR 7 /* (name_id, grid, block) */
typedef struct key_entry {
    int64_t k[NCFG + 1]; /* k[nk]: bit i set when value i is NULL */
    uint64_t calls, total;
    int used;
} key_entry;

typedef struct key_hash {
    int nk;
    key_entry *e;
    size_t cap, n;
} key_hash;

static uint64_t key_hash_of(const int64_t *k, int n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)k[i]) * 0xff51afd7ed558ccdull, h ^= h >> 29;
    return h;
}

static uint64_t entry_hash(const void *e, const void *t)
{
    return key_hash_of(((const key_entry *)e)->k, ((const key_hash *)t)->nk + 1);
}

static key_entry *key_find(key_hash *t, const int64_t *k)
{
    int w = t->nk + 1;
    if (wl_grow_hash((void **)&t->e, &t->cap, t->n, sizeof *t->e, 256, offsetof(key_entry, used), entry_hash, t))
        return NULL;
    size_t j = key_hash_of(k, w) & (t->cap - 1);
    while (t->e[j].used) {
        if (!memcmp(t->e[j].k, k, (size_t)w * sizeof *k))
            return &t->e[j];
        j = (j + 1) & (t->cap - 1);
    }
    key_entry *e = &t->e[j];
    memcpy(e->k, k, (size_t)w * sizeof *k);
    e->used = 1;
    t->n++;
    return e;
}

/* SQLite's order of grouping keys: NULL first, then by value, column by column. */
static int key_cmp(const int64_t *a, const int64_t *b, int nk)
{
    for (int i = 0; i < nk; i++) {
        int na = (int)(a[nk] >> i & 1), nb = (int)(b[nk] >> i & 1);
        if (na != nb)
            return na ? -1 : 1;
        if (!na && a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    }
    return 0;
}

/* ---- the pass ------------------------------------------------------------------------------- */

typedef struct name_acc {
    int64_t name_id;
    uint64_t calls, timed, total, dur_n, min, max;
    int64_t regs, smem_static, smem_dynamic;
    int has_regs, has_static, has_dynamic;
    int64_t queue_sum, submit_sum, launch_sum;
    uint64_t queue_n, submit_n, launch_n;
    uint64_t *dur;             /* durations of the timed calls, for the percentiles */
    size_t n_dur, cap_dur;
    uint64_t configs;          /* distinct (grid, block) without NULLs */
    const key_entry *top;      /* most frequent (grid, block) */
    size_t last_cfg, last_cap; /* index + 1 of its last row's configuration, in a table of last_cap */
} name_acc;

typedef struct agg {
    wl_kernel_overview ov;     /* the overview's figures of the rows read */
    name_acc *names;
    size_t n_names, cap_names;
    key_hash name_ix;          /* name_id -> index in names */
    key_hash cfg;              /* (name_id, pid, device, launch configuration), counted per row */
    key_hash pair;             /* (name_id, grid, block), made from cfg once every row is in */
    wl_busy *busy;             /* when asked: the timed kernels' busy time (gpu_busy.h) */
    int narrow;                /* NARROW_COLS, the configurations from cfgs */
    wl_kcfg_cache cfgs;
} agg;

static name_acc *find_name(agg *a, int64_t id)
{
    int64_t k[2] = {id, 0};
    key_entry *e = key_find(&a->name_ix, k);
    if (!e)
        return NULL;
    if (!e->calls) { /* a new name: the entry's count holds its index + 1 */
        if (wl_grow((void **)&a->names, &a->cap_names, a->n_names, sizeof *a->names, 64))
            return NULL;
        name_acc *n = &a->names[a->n_names];
        memset(n, 0, sizeof *n);
        n->name_id = id;
        n->min = UINT64_MAX;
        e->calls = ++a->n_names;
    }
    return &a->names[e->calls - 1];
}

/* Columns: 0 name_id, 1 pid, 2 device_id, 3-5 grid, 6-8 block, 9-11 cluster, 12 registers,
 * 13 static smem, 14 dynamic smem, 15 smem_limit_config, 16 carveout_requested,
 * 17 cache_config_requested, 18 has_timestamps, 19 duration, 20 queue delay, 21 submit delay,
 * 22 the API call's duration, 23 start, 24 end. */
#define COLS                                                                                              \
    "k.name_id, k.pid, k.device_id, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,"      \
    " k.cluster_x, k.cluster_y, k.cluster_z, k.registers_per_thread, k.static_smem, k.dynamic_smem,"     \
    " k.smem_limit_config, k.carveout_requested, k.cache_config_requested, k.has_timestamps,"            \
    " k.duration_ns, k.queue_delay_ns, k.submit_delay_ns, a.duration_ns, k.start_ns, k.end_ns"

/* Sessions with kernel.config_id (kernel_config.h): columns 0-2 as COLS, 3 config id, 4 id, then
 * COLS' 18-24 from 5 on; the configuration cells come from the agg's cache. */
#define NARROW_COLS                                                                                       \
    "k.name_id, k.pid, k.device_id, k.config_id, k.id, k.has_timestamps, k.duration_ns, k.queue_delay_ns," \
    " k.submit_delay_ns, a.duration_ns, k.start_ns, k.end_ns"
#define WIDE_TAIL 18   /* COLS' column of has_timestamps */
#define NARROW_TAIL 5  /* ... NARROW_COLS' */
/* The key's configuration values (3-17) from kernel_config.h's cells, in its order. */
static const int KEY_OF_CELL[WL_KCFG_COLS] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, -1, 17, 16};

/* The overview's kernel figures (as SQL's count, min and max read them, NULLs left out). */
static void overview_row(agg *a, sqlite3_value **v, int timed)
{
    wl_kernel_overview *o = &a->ov;
    o->kernels++;
    o->no_timestamp += !timed;
    wl_fold_min_val(&o->first_ns, &o->has_first, v[5]);
    wl_fold_max_val(&o->last_ns, &o->has_last, v[6]);
}

/* Key value i (k[NCFG]'s bit i: NULL) into *m when larger. */
static void take_max(int64_t *m, int *has, const int64_t *k, int i)
{
    if (k[NCFG] >> i & 1)
        return;
    if (!*has || k[i] > *m)
        *m = k[i], *has = 1;
}

/* The row's key (name_id, pid, device_id, launch configuration) into k; the column of
 * has_timestamps, or -1 when the configuration cannot be read. */
static int row_key(agg *a, sqlite3_value **v, int64_t *k)
{
    int n = a->narrow ? 3 : NCFG;
    for (int i = 0; i < n; i++) {
        if (sqlite3_value_type(v[i]) == SQLITE_NULL)
            k[NCFG] |= 1ll << i;
        else
            k[i] = sqlite3_value_int64(v[i]);
    }
    if (!a->narrow)
        return WIDE_TAIL;
    const wl_kcfg *c = wl_kcfg_get(&a->cfgs, sqlite3_value_int64(v[3]), sqlite3_value_type(v[3]) != SQLITE_NULL,
                                   sqlite3_value_int64(v[4]));
    if (!c)
        return -1;
    for (int i = 0; i < WL_KCFG_COLS; i++)
        if (KEY_OF_CELL[i] >= 0) {
            k[KEY_OF_CELL[i]] = c->v[i];
            k[NCFG] |= (int64_t)(c->null_mask >> i & 1) << KEY_OF_CELL[i];
        }
    return NARROW_TAIL;
}

static void take_mean(int64_t *sum, uint64_t *n, sqlite3_value *v)
{
    if (sqlite3_value_type(v) == SQLITE_NULL)
        return;
    *sum = (int64_t)((uint64_t)*sum + (uint64_t)sqlite3_value_int64(v)); /* (wraps, as no real session does) */
    (*n)++;
}

/* One row's columns (COLS) folded into the agg at arg (wl_sql_fold). */
static int row(void *arg, sqlite3_value **v)
{
    agg *a = arg;
    int64_t k[NCFG + 1] = {0};
    int t = row_key(a, v, k);
    name_acc *n = t < 0 ? NULL : find_name(a, k[0]);
    if (!n)
        return -1;
    v += t; /* 0 has_timestamps, 1 duration, 2 queue delay, 3 submit delay, 4 the call's duration, 5 start, 6 end */
    int64_t timed = sqlite3_value_int64(v[0]);
    overview_row(a, v, timed != 0);
    int has_dur = sqlite3_value_type(v[1]) != SQLITE_NULL;
    uint64_t dur = (uint64_t)sqlite3_value_int64(v[1]);
    n->calls++;
    n->timed += (uint64_t)timed;
    if (has_dur) {
        n->total += dur;
        n->dur_n++;
        n->min = dur < n->min ? dur : n->min;
        n->max = dur > n->max ? dur : n->max;
    }
    take_max(&n->regs, &n->has_regs, k, 12);
    take_max(&n->smem_static, &n->has_static, k, 13);
    take_max(&n->smem_dynamic, &n->has_dynamic, k, 14);
    take_mean(&n->queue_sum, &n->queue_n, v[2]);
    take_mean(&n->submit_sum, &n->submit_n, v[3]);
    take_mean(&n->launch_sum, &n->launch_n, v[4]);
    if (timed) {
        if (wl_grow((void **)&n->dur, &n->cap_dur, n->n_dur, sizeof *n->dur, 64))
            return -1;
        n->dur[n->n_dur++] = dur; /* (a NULL duration ranks as 0, as it read before) */
        if (a->busy)
            wl_busy_kernel(a->busy, k[1], k[2], (uint64_t)sqlite3_value_int64(v[5]),
                           (uint64_t)sqlite3_value_int64(v[6]));
    }
    /* (name, pid, device, configuration): the configuration table. A name's launches mostly repeat
     * its last configuration: that entry is compared before the key is hashed (the index holds
     * while the table has not grown, which moves every entry) */
    key_entry *c = NULL;
    if (n->last_cfg && n->last_cap == a->cfg.cap && !memcmp(a->cfg.e[n->last_cfg - 1].k, k, sizeof k))
        c = &a->cfg.e[n->last_cfg - 1];
    else if ((c = key_find(&a->cfg, k)) != NULL)
        n->last_cfg = (size_t)(c - a->cfg.e) + 1, n->last_cap = a->cfg.cap;
    if (!c)
        return -1;
    c->calls++;
    c->total += has_dur ? dur : 0;
    return 0;
}

static int by_total(const void *x, const void *y)
{
    const wl_kernel_summary *a = x, *b = y;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    if (a->calls != b->calls)
        return a->calls > b->calls ? -1 : 1;
    return (a->name_id > b->name_id) - (a->name_id < b->name_id);
}

static int cfg_order(const void *x, const void *y)
{
    const key_entry *a = *(const key_entry *const *)x, *b = *(const key_entry *const *)y;
    if (a->k[0] != b->k[0])
        return a->k[0] < b->k[0] ? -1 : 1;
    if (a->calls != b->calls)
        return a->calls > b->calls ? -1 : 1;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return key_cmp(a->k, b->k, NCFG);
}

static double mean(int64_t sum, uint64_t n) { return n ? (double)sum / (double)n : 0.0; }

/* (name, grid, block) from the configurations: each configuration's calls counted once. */
static int make_pairs(agg *a)
{
    for (size_t i = 0; i < a->cfg.cap; i++) {
        const key_entry *c = &a->cfg.e[i];
        if (!c->used)
            continue;
        const int64_t *k = c->k;
        int64_t p[NCFG + 1] = {k[0], k[3], k[4], k[5], k[6], k[7], k[8]};
        p[NPAIR] = (k[NCFG] & 1) | (k[NCFG] >> 3 & 0x3f) << 1;
        key_entry *g = key_find(&a->pair, p);
        if (!g)
            return -1;
        g->calls += c->calls;
    }
    return 0;
}

/* The summaries of the names kernel_name knows, most GPU time first. */
static int summaries(sqlite3 *db, agg *a, wl_kernel_aggregate *out)
{
    if (make_pairs(a))
        return -1;
    for (size_t i = 0; i < a->pair.cap; i++) {
        const key_entry *e = &a->pair.e[i];
        name_acc *n = e->used ? find_name(a, e->k[0]) : NULL;
        if (!n)
            continue;
        n->configs += (e->k[NPAIR] & 0x7e) == 0;
        if (!n->top || e->calls > n->top->calls || (e->calls == n->top->calls && key_cmp(e->k, n->top->k, NPAIR) < 0))
            n->top = e;
    }
    uint32_t *hist = malloc(WL_RANK_HIST * sizeof *hist);
    out->sums = calloc(a->n_names ? a->n_names : 1, sizeof *out->sums);
    sqlite3_stmt *st = NULL;
    if (!hist || !out->sums ||
        sqlite3_prepare_v2(db, "SELECT demangled, short_name FROM kernel_name WHERE id = ?", -1, &st, NULL) != SQLITE_OK) {
        free(hist);
        return -1;
    }
    for (size_t i = 0; i < a->n_names; i++) {
        name_acc *n = &a->names[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, n->name_id);
        if (sqlite3_step(st) != SQLITE_ROW)
            continue; /* (a kernel of no known name is in no summary, as with the join before) */
        wl_kernel_summary *r = &out->sums[out->n_sums++];
        r->name_id = n->name_id;
        wl_sql_text_col(st, 0, r->name, sizeof r->name);
        wl_sql_text_col(st, 1, r->short_name, sizeof r->short_name);
        r->calls = n->calls;
        r->timed_calls = n->timed;
        r->total_ns = n->total;
        r->min_ns = n->dur_n ? n->min : 0;
        r->max_ns = n->dur_n ? n->max : 0;
        r->mean_ns = mean((int64_t)n->total, n->dur_n);
        r->configs = (int)n->configs;
        r->registers = (int)n->regs;
        r->static_smem = (int)n->smem_static;
        r->dynamic_smem = (int)n->smem_dynamic;
        r->mean_queue_ns = mean(n->queue_sum, n->queue_n);
        r->mean_submit_ns = mean(n->submit_sum, n->submit_n);
        r->mean_launch_ns = mean(n->launch_sum, n->launch_n);
        for (int d = 0; n->top && d < 3; d++) {
            r->grid[d] = (int)n->top->k[1 + d];
            r->block[d] = (int)n->top->k[4 + d];
        }
        r->p50_ns = wl_nearest_rank(n->dur, n->n_dur, 50, n->max, hist);
        r->p99_ns = wl_nearest_rank(n->dur, n->n_dur, 99, n->max, hist);
    }
    sqlite3_finalize(st);
    free(hist);
    qsort(out->sums, (size_t)out->n_sums, sizeof *out->sums, by_total);
    return 0;
}

static int configs(agg *a, wl_kernel_aggregate *out)
{
    const key_entry **order = malloc((a->cfg.n ? a->cfg.n : 1) * sizeof *order);
    out->configs = calloc(a->cfg.n ? a->cfg.n : 1, sizeof *out->configs);
    if (!order || !out->configs) {
        free(order);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < a->cfg.cap; i++)
        if (a->cfg.e[i].used)
            order[n++] = &a->cfg.e[i];
    qsort(order, n, sizeof *order, cfg_order);
    for (size_t i = 0; i < n; i++) {
        const int64_t *k = order[i]->k;
        wl_kernel_config *c = &out->configs[i];
        c->name_id = k[0];
        c->pid = (uint32_t)k[1];
        c->device_id = (uint32_t)k[2];
        for (int d = 0; d < 3; d++) {
            c->grid[d] = (int)k[3 + d];
            c->block[d] = (int)k[6 + d];
            c->cluster[d] = (int)k[9 + d];
        }
        c->registers_per_thread = (int)k[12];
        c->static_smem = k[13];
        c->dynamic_smem = k[14];
        c->smem_limit_config = (int)k[15];
        c->carveout_requested = k[NCFG] >> 16 & 1 ? -1 : (int)k[16];
        c->cache_config_requested = (int)k[17];
        c->calls = order[i]->calls;
        c->total_ns = order[i]->total;
    }
    out->n_configs = n;
    free(order);
    return 0;
}

/* ---- the read, in two halves on two connections ------------------------------------------ */

static void agg_init(agg *a)
{
    memset(a, 0, sizeof *a);
    a->name_ix.nk = 1;
    a->cfg.nk = NCFG;
    a->pair.nk = NPAIR;
}

static void agg_free(agg *a)
{
    for (size_t i = 0; i < a->n_names; i++)
        free(a->names[i].dur);
    free(a->names);
    free(a->name_ix.e);
    free(a->cfg.e);
    free(a->pair.e);
}

/* The rows with rowid in [lo, hi] (all rows when !ranged) folded into a. 0 or -1. */
static int read_rows(sqlite3 *db, agg *a, int ranged, int64_t lo, int64_t hi)
{
#define ROWS_SQL(cols, where) "SELECT wl_fold(?1, " cols ") FROM kernel k LEFT JOIN api_call a ON a.id = k.api_id" where
    static const char *const SQL[2][2] = {
        {ROWS_SQL(COLS, ""), ROWS_SQL(COLS, " WHERE k.rowid BETWEEN ?2 AND ?3")},
        {ROWS_SQL(NARROW_COLS, ""), ROWS_SQL(NARROW_COLS, " WHERE k.rowid BETWEEN ?2 AND ?3")}};
    sqlite3_stmt *st;
    a->narrow = wl_sql_has_column(db, "kernel", "config_id");
    if ((a->narrow && wl_kcfg_cache_open(&a->cfgs, db)) ||
        sqlite3_prepare_v2(db, SQL[a->narrow][ranged != 0], -1, &st, NULL) != SQLITE_OK) {
        wl_kcfg_cache_close(&a->cfgs);
        return -1;
    }
    sqlite3_bind_int64(st, 2, lo);
    sqlite3_bind_int64(st, 3, hi);
    int rc = wl_sql_fold(st, row, a);
    sqlite3_finalize(st);
    wl_kcfg_cache_close(&a->cfgs); /* (its statement is on db) */
    return rc;
}

static void max_into(int64_t *to, int *to_has, int64_t v, int has)
{
    if (has && (!*to_has || v > *to))
        *to = v, *to_has = 1;
}

/* from's rows folded into to, as if to had read them (the percentiles' durations appended). */
static int merge_agg(agg *to, const agg *from)
{
    for (size_t i = 0; i < from->n_names; i++) {
        const name_acc *f = &from->names[i];
        name_acc *n = find_name(to, f->name_id);
        if (!n)
            return -1;
        n->calls += f->calls, n->timed += f->timed, n->total += f->total, n->dur_n += f->dur_n;
        n->min = f->min < n->min ? f->min : n->min;
        n->max = f->max > n->max ? f->max : n->max;
        max_into(&n->regs, &n->has_regs, f->regs, f->has_regs);
        max_into(&n->smem_static, &n->has_static, f->smem_static, f->has_static);
        max_into(&n->smem_dynamic, &n->has_dynamic, f->smem_dynamic, f->has_dynamic);
        n->queue_sum = (int64_t)((uint64_t)n->queue_sum + (uint64_t)f->queue_sum), n->queue_n += f->queue_n;
        n->submit_sum = (int64_t)((uint64_t)n->submit_sum + (uint64_t)f->submit_sum), n->submit_n += f->submit_n;
        n->launch_sum = (int64_t)((uint64_t)n->launch_sum + (uint64_t)f->launch_sum), n->launch_n += f->launch_n;
        if (f->n_dur && n->n_dur + f->n_dur > n->cap_dur) { /* the other half's durations in one piece */
            uint64_t *d = realloc(n->dur, (n->n_dur + f->n_dur) * sizeof *d);
            if (!d)
                return -1;
            n->dur = d;
            n->cap_dur = n->n_dur + f->n_dur;
        }
        if (f->n_dur)
            memcpy(n->dur + n->n_dur, f->dur, f->n_dur * sizeof *f->dur);
        n->n_dur += f->n_dur;
    }
    for (size_t i = 0; i < from->cfg.cap; i++) {
        const key_entry *e = &from->cfg.e[i];
        key_entry *t = e->used ? key_find(&to->cfg, e->k) : NULL;
        if (e->used && !t)
            return -1;
        if (t)
            t->calls += e->calls, t->total += e->total;
    }
    wl_kernel_overview *o = &to->ov;
    const wl_kernel_overview *x = &from->ov;
    o->kernels += x->kernels;
    o->no_timestamp += x->no_timestamp;
    wl_fold_min(&o->first_ns, &o->has_first, x->has_first, x->first_ns);
    wl_fold_max(&o->last_ns, &o->has_last, x->has_last, x->last_ns);
    return 0;
}

typedef struct half {
    sqlite3 *db;
    agg a;
    int64_t lo, hi;
    int rc;
} half;

static void *half_thread(void *arg)
{
    half *h = arg;
    h->rc = read_rows(h->db, &h->a, 1, h->lo, h->hi);
    return NULL;
}

#define SPLIT_ROWS 131072 /* smaller tables are read in one piece */
/* Segments of the busy-time union each half may keep (16 bytes each): a GPU idle between most of
 * 10 M kernels needs more, and its busy time is then read again on its own (session_scan.c) */
#define BUSY_SEGMENTS (1u << 20)

int wl_kernel_pass(wl_session *s, wl_kernel_aggregate *out, wl_kernel_overview *ov, uint64_t *busy_ns, int *busy_ok)
{
    memset(out, 0, sizeof *out);
    if (busy_ok)
        *busy_ok = 0;
    agg a;
    agg_init(&a);
    int64_t lo = 0, hi = -1;
    sqlite3_stmt *st;
    /* (two subqueries: min() and max() in one SELECT scan the whole table, each alone is a seek) */
    if (sqlite3_prepare_v2(s->db, "SELECT (SELECT min(rowid) FROM kernel), (SELECT max(rowid) FROM kernel)", -1, &st,
                           NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
            lo = sqlite3_column_int64(st, 0), hi = sqlite3_column_int64(st, 1);
        sqlite3_finalize(st);
    }
    /* the second half of the rowids on a second connection, in a second thread */
    half h = {.rc = -1};
    pthread_t th;
    int split = 0;
    if (hi > lo && (uint64_t)hi - (uint64_t)lo >= SPLIT_ROWS && s->read_threads > 1 &&
        (h.db = wl_cur_db_scan(s)) != NULL) {
        agg_init(&h.a);
        h.lo = lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2) + 1;
        h.hi = hi;
        if (busy_ok && (h.a.busy = wl_busy_open(h.db)) != NULL)
            wl_busy_keep(h.a.busy, BUSY_SEGMENTS);
        split = pthread_create(&th, NULL, half_thread, &h) == 0;
        if (!split) {
            uint64_t ignored;
            wl_busy_close(h.a.busy, &ignored);
            h.a.busy = NULL;
        }
    }
    if (busy_ok && (a.busy = wl_busy_open(s->db)) != NULL && split)
        wl_busy_keep(a.busy, BUSY_SEGMENTS);
    int rc = split ? read_rows(s->db, &a, 1, lo, h.lo - 1) : read_rows(s->db, &a, 0, 0, 0);
    uint64_t busy = 0;
    int busy_rc = -1;
    if (split) {
        pthread_join(th, NULL);
        rc = rc || h.rc || merge_agg(&a, &h.a) ? -1 : 0;
        busy_rc = a.busy && h.a.busy ? wl_busy_close_pair(a.busy, h.a.busy, &busy) : -1;
        if (!a.busy || !h.a.busy) {
            uint64_t ignored;
            wl_busy_close(a.busy, &ignored);
            wl_busy_close(h.a.busy, &ignored);
        }
        a.busy = h.a.busy = NULL;
        agg_free(&h.a);
    } else if (a.busy) {
        busy_rc = wl_busy_close(a.busy, &busy);
        a.busy = NULL;
    }
    if (busy_ok && rc == 0 && busy_rc == 0)
        *busy_ns = busy, *busy_ok = 1;
    sqlite3_close(h.db);
    if (rc == 0 && summaries(s->db, &a, out) == 0 && configs(&a, out) == 0) {
        if (ov)
            *ov = a.ov;
    } else {
        rc = -1;
    }
    agg_free(&a);
    if (rc)
        wl_kernel_aggregate_free(out);
    return rc;
}

int wl_session_kernel_aggregate(wl_session *s, wl_kernel_aggregate *out)
{
    const wl_kernel_aggregate *k = wl_scan_kernels(s, 0);
    return k ? wl_kernel_aggregate_copy(k, out) : -1;
}

int wl_kernel_aggregate_copy(const wl_kernel_aggregate *from, wl_kernel_aggregate *to)
{
    memset(to, 0, sizeof *to);
    to->sums = malloc(((size_t)from->n_sums ? (size_t)from->n_sums : 1) * sizeof *to->sums);
    to->configs = malloc((from->n_configs ? from->n_configs : 1) * sizeof *to->configs);
    if (!to->sums || !to->configs) {
        wl_kernel_aggregate_free(to);
        return -1;
    }
    memcpy(to->sums, from->sums, (size_t)from->n_sums * sizeof *to->sums);
    memcpy(to->configs, from->configs, from->n_configs * sizeof *to->configs);
    to->n_sums = from->n_sums;
    to->n_configs = from->n_configs;
    return 0;
}

void wl_kernel_aggregate_free(wl_kernel_aggregate *a)
{
    free(a->sums);
    free(a->configs);
    memset(a, 0, sizeof *a);
}
