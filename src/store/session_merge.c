/* Merging sessions (see session_merge.h): a survey of every input first (its structure checked,
 * its processes and collectives read), then one input at a time attached to the output and
 * copied while a thread of its own checks every input's rows in order (the census, which used to
 * hold the survey up: 90 % of it); a damaged input stops the copy and nothing is written. Each
 * input is copied table by table by one INSERT ... SELECT each, with its ids
 * offset, its times shifted, and its pids and dictionary ids mapped through joins on small
 * temporary tables. What to renumber is decided per column, from
 * the output's schema: a column whose name says it is an id and that no rule below covers stops
 * the merge rather than being copied wrong. */
#include "store/session_merge.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/kernel_config.h"
#include "store/merge_census.h"
#include "store/row_pack.h"
#include "store/session.h"
#include "store/session_contract.h"
#include "store/session_draft.h"
#include "store/sql_util.h"

#define PID_SPAN (UINT32_C(1) << 22) /* Linux's largest pid_max: renumbered pids start above it */
#define SQL_MAX 16384

/* Tables whose INTEGER PRIMARY KEY id is renumbered by the rows merged before. */
static const char *const ID_TABLES[] = {"api_call", "kernel",     "memcpy",     "memset",          "sync",
                                        "nvtx_range", "nvtx_mark", "capture_range", "annotation", "inkernel_buffer"};
#define N_ID_TABLES ((int)(sizeof ID_TABLES / sizeof ID_TABLES[0]))

/* Columns referring to those ids: (table or "*", column, id table). */
static const char *const ID_REFS[][3] = {
    {"*", "api_id", "api_call"},      {"*", "kernel_id", "kernel"},          {"*", "memcpy_id", "memcpy"},
    {"*", "memset_id", "memset"},     {"*", "buffer_id", "inkernel_buffer"},
};

/* Tables shared by value: their rows are added when new, references go through a map. */
typedef struct dict {
    const char *table, *ref, *key; /* ref: the referring column; key: the columns that identify a row */
    const char *cols;              /* the columns copied */
} dict;
static const dict DICTS[] = {
    {"kernel_name", "name_id", "mangled", "mangled, demangled, short_name"},
    {"op", "op_id", "source, name, shape", "source, name, shape"},
    {"metric", "metric_id", "name", "name, unit, metric_type"},
    {"stall_reason", "reason_id", "name", "name"},
};
#define N_DICTS ((int)(sizeof DICTS / sizeof DICTS[0]))

/* Ids that mean something only within their process (or device): copied as they are. */
static const char *const LOCAL_IDS[] = {"correlation_id", "device_id", "context_id", "stream_id", "scope_id",
                                        "parent_id", "graph_id", "graph_node_id", "grid_id", "event_id",
                                        "app_thread_id", "src_device", "dst_device", "pci_bus_id", NULL};

/* Tables whose "id" is their own, within a process or a buffer (keyed with pid or buffer_id). */
static const char *const LOCAL_ID_TABLES[] = {"timer_category", "inkernel_name", NULL};

typedef struct proc {
    uint32_t pid, out_pid;
    int input;
    char host[128];
} proc;

typedef struct merger {
    sqlite3 *db;
    proc *procs;
    int nprocs, cap, renumbered;
    const char *const *paths;
    int npaths;
    char *err;
    size_t err_size;
    wl_progress progress; /* inputs surveyed, then inputs copied: 2 x npaths steps */
} merger;

struct wl_merge {
    merger m;
};

static int fail(merger *m, const char *what)
{
    snprintf(m->err, m->err_size, "%s: %s", what, sqlite3_errmsg(m->db));
    return -1;
}

static int exec(merger *m, const char *sql, const char *what)
{
    return sqlite3_exec(m->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(m, what);
}

/* ---- the survey ----------------------------------------------------------------------------- */

typedef struct survey {
    merger *m;
    int input, oom;
} survey;

static void add_proc(const wl_process_row *p, void *arg)
{
    survey *s = arg;
    merger *m = s->m;
    if (m->nprocs == m->cap) {
        int cap = m->cap ? m->cap * 2 : 64;
        proc *v = realloc(m->procs, (size_t)cap * sizeof *v);
        if (!v) {
            s->oom = 1;
            return;
        }
        m->procs = v;
        m->cap = cap;
    }
    proc *q = &m->procs[m->nprocs++];
    q->pid = q->out_pid = p->pid;
    q->input = s->input;
    snprintf(q->host, sizeof q->host, "%s", p->hostname);
}

/* Opens each input without its row check (merge_census.c does that beside the copy), refuses a
 * damaged structure, lists its processes, lets visit read it. *opened: 0 when an open failed (its
 * message is the clear one), 1 when a later step did (a damaged input may be why). */
static int survey_inputs(merger *m, wl_merge_visit visit, void *arg, int *opened)
{
    *opened = 1;
    for (int i = 0; i < m->npaths; i++) {
        wl_progress_note(&m->progress, (uint64_t)i, 2 * (uint64_t)m->npaths);
        const char *path = m->paths[i];
        char why[512];
        /* the rows are checked while the inputs are copied (merge_census.h): what is read here
         * from a damaged input is only used if every input turns out sound */
        wl_session *s = wl_session_open_flags(path, WL_OPEN_NO_CENSUS, why, sizeof why);
        if (!s) {
            snprintf(m->err, m->err_size, "%s", why);
            *opened = 0; /* its own clear reason: not a session, newer, truncated, damaged structure */
            return -1;
        }
        int rc = 0;
        survey sv = {m, i, 0};
        if (wl_session_each_process(s, add_proc, &sv) < 0 || sv.oom) {
            snprintf(m->err, m->err_size, "%s: cannot read its processes", path);
            rc = -1;
        } else if (visit && visit(s, i, arg, why, sizeof why)) {
            snprintf(m->err, m->err_size, "%s: %s", path, why);
            rc = -1;
        }
        wl_session_close(s);
        if (rc)
            return -1;
    }
    return 0;
}

/* The survey read the inputs unchecked: where it failed after an open, a damaged input is the
 * likelier cause and the clearer message. */
static void explain_by_damage(merger *m)
{
    char why[1024];
    for (int i = 0; i < m->npaths; i++)
        if (wl_merge_check_input(m->paths[i], 0, why, sizeof why) != 0) {
            snprintf(m->err, m->err_size, "%s", why);
            return;
        }
}

static int pid_taken(const merger *m, int upto, uint32_t pid)
{
    for (int j = 0; j < upto; j++)
        if (m->procs[j].out_pid == pid)
            return 1;
    return 0;
}

/* Two inputs with one process (pid and host): refused. One pid on two hosts: the later one is
 * renumbered. Quadratic in the processes, which are few (one or a handful per rank). */
static int plan_pids(merger *m)
{
    const char *const *in = m->paths;
    m->renumbered = 0;
    for (int i = 0; i < m->nprocs; i++) {
        proc *p = &m->procs[i];
        for (int j = 0; j < i; j++) {
            proc *q = &m->procs[j];
            if (q->pid == p->pid && q->input != p->input && !strcmp(q->host, p->host)) {
                snprintf(m->err, m->err_size, "%s and %s both hold process %u on host %s (the same run given"
                         " twice?); not merged", in[q->input], in[p->input], p->pid,
                         p->host[0] ? p->host : "(unknown)");
                return -1;
            }
        }
        if (!pid_taken(m, i, p->pid))
            continue;
        uint32_t k = 1;
        while (pid_taken(m, i, p->pid % PID_SPAN + k * PID_SPAN))
            k++;
        p->out_pid = p->pid % PID_SPAN + k * PID_SPAN;
        m->renumbered++;
    }
    return 0;
}

/* ---- copying one input ---------------------------------------------------------------------- */

typedef struct plan {
    int input;
    int64_t offset;
    int64_t base[N_ID_TABLES];
    int map_pid;         /* some of its pids change (temp.map_pid says how) */
    char pid_case[640];  /* " WHEN old THEN new ..." when they are few (16 at most), else "" */
    int map_dict[N_DICTS]; /* some of its ids of that dictionary change (temp.map_<table>) */
} plan;

static int is_time(const char *table, const char *col)
{
    const wl_table_rule *t = wl_contract_table(table);
    for (int i = 0; t && i < t->ncols; i++)
        if (!strcmp(t->cols[i].name, col))
            return t->cols[i].kind == WL_COL_TIME;
    return 0;
}

static int id_table(const char *name)
{
    for (int i = 0; i < N_ID_TABLES; i++)
        if (!strcmp(ID_TABLES[i], name))
            return i;
    return -1;
}

static int looks_like_id(const char *col)
{
    size_t n = strlen(col);
    if (!strcmp(col, "id") || (n > 3 && !strcmp(col + n - 3, "_id")))
        for (int i = 0; LOCAL_IDS[i]; i++)
            if (!strcmp(LOCAL_IDS[i], col))
                return 0;
    return !strcmp(col, "id") || (n > 3 && !strcmp(col + n - 3, "_id"));
}

static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

/* The expression copying column col of table (as the output names it; the input's row is s),
 * with the joins it needs added to joins (a map joined as j<k>, k the column's position). -1 when
 * an id column has no rule. */
static int column_expr(merger *m, const plan *p, const char *table, const char *col, int k, char *out, size_t n,
                       char *joins, size_t jn)
{
    out[0] = 0;
    int t = id_table(table);
    if (!strcmp(table, "kernel") && !strcmp(col, "config_id")) { /* computed, not trusted (kernel_config.h) */
        snprintf(out, n, "wl_kernel_config_id(%s)", WL_KCFG_SQL_COLS("s."));
        return 0;
    }
    if (!strcmp(col, "pid") || (!strcmp(table, "process") && !strcmp(col, "ppid"))) {
        if (!p->map_pid) {
            snprintf(out, n, "s.\"%s\"", col);
        } else if (p->pid_case[0]) { /* a few pids: constants, no lookup per row */
            snprintf(out, n, "CASE s.\"%s\"%s ELSE s.\"%s\" END", col, p->pid_case, col);
        } else {
            snprintf(out, n, "coalesce(j%d.new, s.\"%s\")", k, col);
            cat(joins, jn, " LEFT JOIN temp.map_pid j%d ON j%d.old = s.\"%s\"", k, k, col);
        }
        return 0;
    }
    if (is_time(table, col)) {
        snprintf(out, n, p->offset ? "s.\"%s\" + %lld" : "s.\"%s\"", col, (long long)p->offset);
        return 0;
    }
    if (!strcmp(col, "id") && t >= 0) {
        snprintf(out, n, "s.id + %lld", (long long)p->base[t]);
        return 0;
    }
    for (size_t i = 0; i < sizeof ID_REFS / sizeof ID_REFS[0]; i++)
        if (!strcmp(ID_REFS[i][1], col) && (!strcmp(ID_REFS[i][0], "*") || !strcmp(ID_REFS[i][0], table))) {
            snprintf(out, n, "s.\"%s\" + %lld", col, (long long)p->base[id_table(ID_REFS[i][2])]);
            return 0;
        }
    for (int i = 0; i < N_DICTS; i++)
        if (!strcmp(DICTS[i].ref, col)) {
            if (!p->map_dict[i]) {
                snprintf(out, n, "s.\"%s\"", col);
            } else {
                /* the map holds only the ids that change: the others are kept */
                snprintf(out, n, "coalesce(j%d.new, s.\"%s\")", k, col);
                cat(joins, jn, " LEFT JOIN temp.map_%s j%d ON j%d.old = s.\"%s\"", DICTS[i].table, k, k, col);
            }
            return 0;
        }
    if (!strcmp(col, "flow_id")) { /* kernel, memcpy or memset id * 4 + 1, 2 or 3 */
        snprintf(out, n, "CASE WHEN s.flow_id IS NULL OR s.flow_id = 0 THEN s.flow_id WHEN s.flow_id %% 4 = 1"
                 " THEN s.flow_id + %lld WHEN s.flow_id %% 4 = 2 THEN s.flow_id + %lld ELSE s.flow_id + %lld END",
                 (long long)p->base[id_table("kernel")] * 4, (long long)p->base[id_table("memcpy")] * 4,
                 (long long)p->base[id_table("memset")] * 4);
        return 0;
    }
    int local = 0;
    for (int i = 0; LOCAL_ID_TABLES[i]; i++)
        local |= !strcmp(col, "id") && !strcmp(table, LOCAL_ID_TABLES[i]);
    if (!local && looks_like_id(col)) {
        snprintf(m->err, m->err_size, "table %s, column %s: merge does not know what this id refers to", table, col);
        return -1;
    }
    snprintf(out, n, "s.\"%s\"", col);
    return 0;
}

static int dict_table(const char *name)
{
    for (int i = 0; i < N_DICTS; i++)
        if (!strcmp(DICTS[i].table, name))
            return 1;
    return !strcmp(name, "meta") || !strcmp(name, "host_clock");
}

/* Copies src.table into main.table with the plan's expressions (the input's table is the outer loop of
 * the joins: its rows go in in their order). */
static int copy_table(merger *m, const plan *p, const char *table)
{
    char q[320], cols[SQL_MAX] = "", exprs[SQL_MAX] = "", joins[SQL_MAX] = "", e[1024];
    /* the columns both have; kernel.config_id also from inputs older than it */
    snprintf(q, sizeof q, "SELECT name FROM pragma_table_info('%s', 'main') WHERE name IN"
                          " (SELECT name FROM pragma_table_info('%s', 'src'))"
                          " OR ('%s' = 'kernel' AND name = 'config_id') ORDER BY cid", table, table, table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(m->db, q, -1, &st, NULL) != SQLITE_OK)
        return fail(m, table);
    int rc = 0;
    for (int k = 0; sqlite3_step(st) == SQLITE_ROW; k++) {
        const char *col = (const char *)sqlite3_column_text(st, 0);
        if ((rc = column_expr(m, p, table, col, k, e, sizeof e, joins, sizeof joins)) != 0)
            break;
        cat(cols, sizeof cols, "%s\"%s\"", cols[0] ? ", " : "", col);
        cat(exprs, sizeof exprs, "%s%s", exprs[0] ? ", " : "", e);
    }
    sqlite3_finalize(st);
    if (rc || !cols[0])
        return rc;
    char *sql = sqlite3_mprintf("INSERT INTO main.\"%w\" (%s) SELECT %s FROM src.\"%w\" s%s", table,
                                cols, exprs, table, joins);
    rc = sql ? exec(m, sql, table) : -1;
    sqlite3_free(sql);
    return rc;
}

static int src_has(merger *m, const char *table)
{
    char q[200];
    snprintf(q, sizeof q, "SELECT count(*) FROM src.sqlite_master WHERE type = 'table' AND name = '%s'", table);
    return wl_sql_scalar_u64(m->db, q) > 0;
}

/* Adds the input's new dictionary rows and maps its ids to the output's; p->map_dict[i] says
 * whether any id changes (most often none: the ranks of a job meet their names in one order). */
static int copy_dicts(merger *m, plan *p)
{
    for (int i = 0; i < N_DICTS; i++) {
        const dict *d = &DICTS[i];
        char *sql = sqlite3_mprintf("DELETE FROM temp.map_%s;", d->table);
        int rc = exec(m, sql, d->table);
        sqlite3_free(sql);
        if (rc || !src_has(m, d->table))
            continue;
        char on[256] = "";
        char keys[128];
        snprintf(keys, sizeof keys, "%s", d->key);
        for (char *k = strtok(keys, ", "); k; k = strtok(NULL, ", "))
            cat(on, sizeof on, "%so.%s IS s.%s", on[0] ? " AND " : "", k, k);
        sql = sqlite3_mprintf("INSERT OR IGNORE INTO main.%s (%s) SELECT %s FROM src.%s ORDER BY id;"
                              "INSERT INTO temp.map_%s SELECT s.id, o.id FROM src.%s s JOIN main.%s o ON %s"
                              " WHERE s.id IS NOT o.id;",
                              d->table, d->cols, d->cols, d->table, d->table, d->table, d->table, on);
        rc = exec(m, sql, d->table);
        sqlite3_free(sql);
        if (rc)
            return -1;
        sql = sqlite3_mprintf("SELECT count(*) FROM temp.map_%s", d->table);
        p->map_dict[i] = sql && wl_sql_scalar_u64(m->db, sql) > 0;
        sqlite3_free(sql);
    }
    return 0;
}

static int copy_input(merger *m, int input, int64_t offset, const char *const *tables, int ntables)
{
    const char *path = m->paths[input];
    plan p;
    memset(&p, 0, sizeof p);
    p.input = input;
    p.offset = offset;
    if (exec(m, "DELETE FROM temp.map_pid", "pids"))
        return -1;
    for (int i = 0; i < m->nprocs; i++) {
        const proc *q = &m->procs[i];
        if (q->input == input && q->out_pid != q->pid) {
            char sql[128];
            snprintf(sql, sizeof sql, "INSERT INTO temp.map_pid VALUES (%u, %u)", q->pid, q->out_pid);
            if (exec(m, sql, "pids"))
                return -1;
            p.map_pid++;
            cat(p.pid_case, sizeof p.pid_case, " WHEN %u THEN %u", q->pid, q->out_pid);
        }
    }
    if (p.map_pid > 16)
        p.pid_case[0] = 0;
    for (int t = 0; t < N_ID_TABLES; t++) {
        char q[128];
        snprintf(q, sizeof q, "SELECT coalesce(max(id), 0) FROM main.%s", ID_TABLES[t]);
        p.base[t] = (int64_t)wl_sql_scalar_u64(m->db, q);
    }
    sqlite3_stmt *at;
    if (sqlite3_prepare_v2(m->db, "ATTACH ?1 AS src", -1, &at, NULL) != SQLITE_OK)
        return fail(m, "attach");
    sqlite3_bind_text(at, 1, path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(at) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(at);
    if (rc) {
        snprintf(m->err, m->err_size, "%s: %s", path, sqlite3_errmsg(m->db));
        return -1;
    }
    /* a transaction per input: DETACH cannot happen inside one */
    rc = exec(m, "BEGIN", "begin") || copy_dicts(m, &p) ||
         exec(m, "INSERT OR IGNORE INTO main.meta SELECT key, value FROM src.meta", "meta");
    for (int i = 0; !rc && i < ntables; i++)
        if (src_has(m, tables[i]))
            rc = copy_table(m, &p, tables[i]);
    if (rc && !strstr(m->err, path)) {
        char e[512];
        snprintf(e, sizeof e, "%s", m->err);
        snprintf(m->err, m->err_size, "%s: %s", path, e);
    }
    if (!rc)
        rc = exec(m, "COMMIT", "commit");
    else
        sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
    if (exec(m, "DETACH src", "detach"))
        rc = -1;
    return rc ? -1 : 0;
}

/* ---- the output ----------------------------------------------------------------------------- */

/* The tables copied row by row (everything but the shared and special ones), and the indexes,
 * dropped while rows go in and built once at the end. */
static int list_schema(merger *m, char ***tables, int *nt, char ***indexes, int *ni)
{
    sqlite3_stmt *st;
    *nt = *ni = 0;
    *tables = *indexes = NULL;
    if (sqlite3_prepare_v2(m->db, "SELECT type, name, sql FROM main.sqlite_master WHERE type IN ('table', 'index')"
                                  " AND sql IS NOT NULL ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        return fail(m, "schema");
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        int is_table = !strcmp((const char *)sqlite3_column_text(st, 0), "table");
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (is_table && (dict_table(name) || !strcmp(name, "pack_block"))) /* derived: written again at the end */
            continue;
        char ***v = is_table ? tables : indexes;
        int *n = is_table ? nt : ni;
        char **nv = realloc(*v, (size_t)(*n + 1) * sizeof **v);
        if (!nv || !(nv[*n] = strdup((const char *)sqlite3_column_text(st, is_table ? 1 : 2)))) {
            if (nv)
                *v = nv;
            rc = -1;
            break;
        }
        *v = nv;
        (*n)++;
    }
    sqlite3_finalize(st);
    if (rc)
        snprintf(m->err, m->err_size, "out of memory");
    return rc;
}

static void free_strs(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int write_clocks(merger *m, const wl_merge_clock *c, int n, int ninputs)
{
    if (exec(m, "CREATE TABLE IF NOT EXISTS host_clock (hostname TEXT PRIMARY KEY, offset_ns INTEGER NOT NULL,"
                " residual_ns INTEGER, collectives INTEGER, source TEXT NOT NULL)", "host_clock"))
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(m->db, "INSERT OR REPLACE INTO host_clock VALUES (?, ?, ?, ?, ?)", -1, &st, NULL))
        return fail(m, "host_clock");
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(st, 1, c[i].host, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, c[i].offset_ns);
        sqlite3_bind_int64(st, 3, c[i].residual_ns);
        sqlite3_bind_int64(st, 4, c[i].collectives);
        sqlite3_bind_text(st, 5, c[i].source, -1, SQLITE_STATIC);
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT OR REPLACE INTO meta VALUES ('merged_inputs', '%d');"
             "INSERT OR REPLACE INTO meta VALUES ('complete', (SELECT CASE WHEN count(*) = sum(complete)"
             " THEN '1' ELSE '0' END FROM process));", ninputs);
    return exec(m, sql, "meta");
}

wl_merge *wl_merge_survey(const char *const *paths, int n, wl_merge_visit visit, void *arg,
                          const wl_progress *progress, char *err, size_t err_size)
{
    if (n < 1) {
        snprintf(err, err_size, "no sessions to merge");
        return NULL;
    }
    wl_merge *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    w->m.paths = paths;
    w->m.npaths = n;
    w->m.err = err;
    w->m.err_size = err_size;
    if (progress)
        w->m.progress = *progress;
    int opened = 0;
    if (survey_inputs(&w->m, visit, arg, &opened) || plan_pids(&w->m)) {
        if (opened)
            explain_by_damage(&w->m);
        wl_merge_free(w);
        return NULL;
    }
    return w;
}

void wl_merge_free(wl_merge *w)
{
    if (!w)
        return;
    free(w->m.procs);
    free(w);
}

/* Everything but the rows: the maps, the indexes dropped (listed in *indexes to build again). */
static int prepare_output(merger *m, char ***tables, int *nt, char ***indexes, int *ni)
{
    sqlite3_limit(m->db, SQLITE_LIMIT_ATTACHED, 2);
    if (exec(m, "PRAGMA cache_size=-65536; PRAGMA temp_store=FILE; PRAGMA threads=2", "output") ||
        list_schema(m, tables, nt, indexes, ni) ||
        exec(m, "CREATE TEMP TABLE map_pid (old INTEGER PRIMARY KEY, new INTEGER)", "maps"))
        return -1;
    for (int i = 0; i < N_DICTS; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "CREATE TEMP TABLE map_%s (old INTEGER PRIMARY KEY, new INTEGER)", DICTS[i].table);
        if (exec(m, sql, "maps"))
            return -1;
    }
    /* indexes led by a time: dropped while the rows go in, created again at the end from their SQL */
    int kept = 0;
    for (int i = 0; i < *ni; i++) {
        char name[128], table[128], col[128];
        if (sscanf((*indexes)[i], "CREATE INDEX %127s ON %127[^(](%127[^,)]", name, table, col) != 3 ||
            !is_time(table, col)) {
            free((*indexes)[i]); /* built as the rows go in */
            continue;
        }
        (*indexes)[kept++] = (*indexes)[i];
        char drop[300];
        snprintf(drop, sizeof drop, "DROP INDEX main.\"%s\"", name);
        if (exec(m, drop, "indexes")) {
            *ni = kept;
            return -1;
        }
    }
    *ni = kept;
    return 0;
}

int wl_merge_write(wl_merge *w, const char *out, const int64_t *offset_ns, const wl_merge_clock *clocks,
                   int nclocks, wl_merge_stats *stats, char *err, size_t err_size)
{
    merger *m = &w->m;
    m->err = err;
    m->err_size = err_size;
    memset(stats, 0, sizeof *stats);
    wl_session_draft d;
    if (wl_session_draft_open(&d, out, err, err_size))
        return -1;
    m->db = d.db;
    char **tables = NULL, **indexes = NULL;
    int nt = 0, ni = 0, ok = 0;
    wl_merge_census census;
    wl_merge_census_start(&census, m->paths, m->npaths);
    if (prepare_output(m, &tables, &nt, &indexes, &ni))
        goto done;
    for (int i = 0; i < m->npaths; i++) {
        wl_progress_note(&m->progress, (uint64_t)(m->npaths + i), 2 * (uint64_t)m->npaths);
        wl_merge_census_at(&census, i, 0);
        if (wl_merge_census_failed(&census) || copy_input(m, i, offset_ns[i], (const char *const *)tables, nt))
            goto done;
    }
    wl_merge_census_at(&census, m->npaths, 0); /* the rest, if it fell behind */
    if (wl_merge_census_wait(&census, err, err_size))
        goto done;
    if (exec(m, "BEGIN", "begin") || write_clocks(m, clocks, nclocks, m->npaths))
        goto done;
    for (int i = 0; i < ni; i++)
        if (exec(m, indexes[i], "indexes"))
            goto done;
    if (wl_pack_build(m->db, m->err, m->err_size) || exec(m, "COMMIT", "commit"))
        goto done;
    wl_progress_note(&m->progress, 2 * (uint64_t)m->npaths, 2 * (uint64_t)m->npaths);
    stats->inputs = m->npaths;
    stats->processes = m->nprocs;
    stats->renumbered_pids = m->renumbered;
    stats->kernels = wl_sql_scalar_u64(m->db, "SELECT count(*) FROM kernel");
    stats->hosts = (int)wl_sql_scalar_u64(m->db, "SELECT count(DISTINCT hostname) FROM process");
    ok = 1;
done:
    wl_merge_census_at(&census, m->npaths, !ok);
    if (wl_merge_census_wait(&census, err, err_size)) /* a damaged input is the likelier cause of a failed copy too */
        ok = 0;
    wl_merge_census_free(&census);
    free_strs(tables, nt);
    free_strs(indexes, ni);
    m->db = NULL;
    if (!ok)
        sqlite3_exec(d.db, "ROLLBACK", NULL, NULL, NULL);
    return wl_session_draft_close(&d, ok, err, err_size);
}
