/* Kernel identity: operation, shape, tier, application thread (see session_identity.h). */
#include "store/session_identity.h"
#include "common/fnv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "store/kernel_config.h"
#include "store/row_pack.h"
#include "store/session_internal.h"
#include "store/sql_util.h"
#include "store/torch_range.h"

#define MAX_STACK 1024 /* open ranges per thread (deeper ones do not name operations) */
#define OP_CACHE 4096

static const struct {
    const char *table, *column, *type;
} COLUMNS[] = {
    {"kernel", "op_id", "INTEGER"},     {"kernel", "tier", "TEXT"},
    {"nvtx_range", "op_id", "INTEGER"}, {"scope", "op_id", "INTEGER"},
    {"scope", "app_thread_id", "INTEGER"},
};

static int fail(sqlite3 *db, char *err, size_t n, const char *what)
{
    snprintf(err, n, "%s: %s", what, sqlite3_errmsg(db));
    return -1;
}

static int exec(sqlite3 *db, const char *sql, char *err, size_t n)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    snprintf(err, n, "identity: %s", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

int wl_identity_ensure_schema(sqlite3 *db, char *err, size_t err_size)
{
    if (exec(db,
             "CREATE TABLE IF NOT EXISTS op (id INTEGER PRIMARY KEY, source TEXT NOT NULL, name TEXT NOT NULL,"
             " shape TEXT NOT NULL DEFAULT '', UNIQUE (source, name, shape));"
             "CREATE TABLE IF NOT EXISTS tier_change (pid INTEGER NOT NULL, tid INTEGER NOT NULL,"
             " ts_ns INTEGER NOT NULL, tier TEXT);"
             "CREATE INDEX IF NOT EXISTS tier_change_by_thread ON tier_change(pid, tid, ts_ns);",
             err, err_size))
        return -1;
    for (size_t i = 0; i < sizeof COLUMNS / sizeof COLUMNS[0]; i++) {
        if (!wl_sql_has_table(db, COLUMNS[i].table) || wl_sql_has_column(db, COLUMNS[i].table, COLUMNS[i].column))
            continue;
        char sql[160];
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", COLUMNS[i].table, COLUMNS[i].column,
                 COLUMNS[i].type);
        if (exec(db, sql, err, err_size))
            return -1;
    }
    return 0;
}

/* ---- op rows ------------------------------------------------------------------------------- */

typedef struct op_slot {
    char *key;                 /* source \0 name \0 shape */
    size_t len;
    int64_t id;
} op_slot;

typedef struct op_table {
    sqlite3_stmt *add, *find;
    op_slot slot[OP_CACHE];    /* direct-mapped: a miss costs two statements */
} op_table;

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = wl_fnv1a(WL_FNV_OFFSET, s, n);
    return h ^ (h >> 29);
}

/* The op id of (source, name, shape), added when new; -1 on failure. */
static int64_t op_id(op_table *t, const char *source, const char *name, size_t name_len, const char *shape,
                     size_t shape_len)
{
    size_t sl = strlen(source), len = sl + 1 + name_len + 1 + shape_len;
    char stack[512], *key = len <= sizeof stack ? stack : malloc(len);
    if (!key)
        return -1;
    memcpy(key, source, sl + 1);
    memcpy(key + sl + 1, name, name_len);
    key[sl + 1 + name_len] = 0;
    if (shape_len)
        memcpy(key + sl + 2 + name_len, shape, shape_len);
    op_slot *s = &t->slot[hash(key, len) & (OP_CACHE - 1)];
    int64_t id = -1;
    if (s->key && s->len == len && !memcmp(s->key, key, len)) {
        id = s->id;
    } else {
        sqlite3_stmt *q[2] = {t->add, t->find};
        for (int i = 0; i < 2; i++) {
            sqlite3_reset(q[i]);
            sqlite3_bind_text(q[i], 1, source, -1, SQLITE_STATIC);
            sqlite3_bind_text(q[i], 2, name, (int)name_len, SQLITE_STATIC);
            sqlite3_bind_text(q[i], 3, shape ? shape : "", (int)shape_len, SQLITE_STATIC);
            int rc = sqlite3_step(q[i]);
            if (i == 1 && rc == SQLITE_ROW)
                id = sqlite3_column_int64(q[i], 0);
            sqlite3_reset(q[i]); /* no statement may stay active: the pass drops a table at its end */
        }
        char *copy = malloc(len);
        if (copy) {
            memcpy(copy, key, len);
            free(s->key);
            *s = (op_slot){copy, len, id};
        }
    }
    if (key != stack)
        free(key);
    return id;
}

/* Gives every row of a range table its op: rows = "SELECT key, name", set = "UPDATE .. ?1 op ?2 key". */
static int assign_ops(sqlite3 *db, op_table *t, const char *rows, const char *set, const char *source)
{
    sqlite3_stmt *r = NULL, *u = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(db, rows, -1, &r, NULL) != SQLITE_OK || sqlite3_prepare_v2(db, set, -1, &u, NULL) != SQLITE_OK)
        goto done;
    int step;
    while ((step = sqlite3_step(r)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(r, 1);
        size_t len = (size_t)sqlite3_column_bytes(r, 1);
        if (!text)
            continue;
        len = strnlen(text, len); /* text with a NUL inside reads as far as the NUL */
        wl_torch_range tr;
        int64_t id = wl_torch_range_parse(text, len, &tr)
                         ? op_id(t, "torch", tr.name, tr.name_len, tr.shape, tr.shape ? tr.shape_len : 0)
                         : op_id(t, source, text, len, NULL, 0);
        if (id < 0)
            goto done;
        sqlite3_reset(u);
        sqlite3_bind_int64(u, 1, id);
        sqlite3_bind_int64(u, 2, sqlite3_column_int64(r, 0));
        if (sqlite3_step(u) != SQLITE_DONE)
            goto done;
    }
    rc = step == SQLITE_DONE ? 0 : -1;
done:
    sqlite3_finalize(r);
    sqlite3_finalize(u);
    return rc;
}

/* ---- launches: the innermost range open on their thread ---------------------------------- */

typedef struct open_range {
    int64_t end, op;
    int torch;
} open_range;

typedef struct source {
    sqlite3_stmt *st;
    int ready;                 /* a row is loaded */
    int64_t pid, tid, start;
} source;

static int advance(source *s)
{
    int rc = sqlite3_step(s->st);
    s->ready = rc == SQLITE_ROW;
    if (s->ready) {
        s->pid = sqlite3_column_int64(s->st, 0);
        s->tid = sqlite3_column_int64(s->st, 1);
        s->start = sqlite3_column_int64(s->st, 2);
    }
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int before(const source *a, const source *b)
{
    if (a->pid != b->pid)
        return a->pid < b->pid;
    if (a->tid != b->tid)
        return a->tid < b->tid;
    return a->start < b->start; /* equal: the earlier source (ranges before launches) */
}

/* Fills temp.api_op with each launch call's operation. */
static int sweep(sqlite3 *db, char *err, size_t n)
{
    int end_tid = wl_sql_has_column(db, "nvtx_range", "end_tid");
    char nvtx[512];
    snprintf(nvtx, sizeof nvtx,
             "SELECT r.pid, r.tid, r.start_ns, coalesce(r.end_ns, 9223372036854775807), r.op_id, o.source = 'torch'"
             " FROM nvtx_range r JOIN op o ON o.id = r.op_id WHERE r.tid IS NOT NULL %s ORDER BY r.pid, r.tid, r.start_ns",
             end_tid ? "AND (r.end_tid IS NULL OR r.end_tid = r.tid)" : "");
    const char *sql[3] = {
        nvtx,
        "SELECT pid, tid, start_ns, coalesce(end_ns, 9223372036854775807), op_id, 0 FROM scope"
        " WHERE op_id IS NOT NULL ORDER BY pid, tid, start_ns",
        "SELECT pid, tid, start_ns, id FROM api_call WHERE category IN ('launch', 'graph_launch')"
        " ORDER BY pid, tid, start_ns, id",
    };
    source src[3];
    memset(src, 0, sizeof src);
    sqlite3_stmt *ins = NULL;
    open_range *stack = malloc(MAX_STACK * sizeof *stack);
    int depth = 0, rc = -1;
    int64_t cur_pid = -1, cur_tid = -1;
    if (!stack || sqlite3_prepare_v2(db, "INSERT INTO temp.api_op (api_id, op_id) VALUES (?, ?)", -1, &ins, NULL))
        goto done;
    for (int i = 0; i < 3; i++)
        if (sqlite3_prepare_v2(db, sql[i], -1, &src[i].st, NULL) != SQLITE_OK || advance(&src[i]))
            goto done;
    for (;;) {
        int best = -1;
        for (int i = 0; i < 3; i++)
            if (src[i].ready && (best < 0 || before(&src[i], &src[best])))
                best = i;
        if (best < 0)
            break;
        source *s = &src[best];
        if (s->pid != cur_pid || s->tid != cur_tid) {
            cur_pid = s->pid, cur_tid = s->tid;
            depth = 0;
        }
        while (depth && stack[depth - 1].end <= s->start)
            depth--;
        if (best < 2) {
            if (depth < MAX_STACK)
                stack[depth++] = (open_range){sqlite3_column_int64(s->st, 3), sqlite3_column_int64(s->st, 4),
                                              sqlite3_column_int(s->st, 5)};
        } else {
            int64_t op = -1;
            for (int i = depth - 1; i >= 0; i--) { /* innermost operator range, else innermost range */
                if (stack[i].end <= s->start)
                    continue;
                if (op < 0)
                    op = stack[i].op;
                if (stack[i].torch) {
                    op = stack[i].op;
                    break;
                }
            }
            if (op >= 0) {
                sqlite3_reset(ins);
                sqlite3_bind_int64(ins, 1, sqlite3_column_int64(s->st, 3));
                sqlite3_bind_int64(ins, 2, op);
                if (sqlite3_step(ins) != SQLITE_DONE)
                    goto done;
            }
        }
        if (advance(s))
            goto done;
    }
    rc = 0;
done:
    if (rc)
        fail(db, err, n, "identity of launches");
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(src[i].st);
    sqlite3_finalize(ins);
    free(stack);
    return rc;
}

int wl_identity_derive(sqlite3 *db, char *err, size_t err_size)
{
    /* derived again from scratch (an upgrade of an upgraded session) */
    if (wl_sql_scalar_u64(db, "SELECT count(*) FROM op") &&
        exec(db, "UPDATE kernel SET op_id = NULL; UPDATE nvtx_range SET op_id = NULL; UPDATE scope SET op_id = NULL;"
                 " DELETE FROM op;", err, err_size))
        return -1;
    if (exec(db, "CREATE INDEX IF NOT EXISTS nvtx_by_thread ON nvtx_range(pid, tid, start_ns);"
                 "CREATE INDEX IF NOT EXISTS scope_by_thread ON scope(pid, tid, start_ns);"
                 "CREATE TEMP TABLE api_op (api_id INTEGER PRIMARY KEY, op_id INTEGER);", err, err_size))
        return -1;
    /* scopes without an application thread id take their parent's (nesting is at most 64 deep) */
    for (int i = 0; i < 64; i++) {
        if (exec(db, "UPDATE scope SET app_thread_id = (SELECT p.app_thread_id FROM scope p WHERE p.pid = scope.pid"
                     " AND p.scope_id = scope.parent_id) WHERE app_thread_id IS NULL AND parent_id IS NOT NULL"
                     " AND (SELECT p.app_thread_id FROM scope p WHERE p.pid = scope.pid"
                     " AND p.scope_id = scope.parent_id) IS NOT NULL", err, err_size))
            return -1;
        if (sqlite3_changes(db) == 0)
            break;
    }
    op_table *t = calloc(1, sizeof *t);
    int rc = -1;
    if (!t)
        return fail(db, err, err_size, "identity: out of memory");
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO op (source, name, shape) VALUES (?1, ?2, ?3)", -1, &t->add,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT id FROM op WHERE source = ?1 AND name = ?2 AND shape = ?3", -1, &t->find,
                           NULL) != SQLITE_OK ||
        assign_ops(db, t, "SELECT id, name FROM nvtx_range", "UPDATE nvtx_range SET op_id = ?1 WHERE id = ?2",
                   "nvtx") ||
        assign_ops(db, t, "SELECT rowid, name FROM scope", "UPDATE scope SET op_id = ?1 WHERE rowid = ?2", "scope"))
        fail(db, err, err_size, "identity of ranges");
    else if (sweep(db, err, err_size) == 0 &&
             exec(db,
                  "UPDATE kernel SET op_id = t.op_id FROM temp.api_op t WHERE t.api_id = kernel.api_id;"
                  "UPDATE kernel SET op_id = (SELECT s.op_id FROM scope s WHERE s.pid = kernel.pid"
                  "  AND s.scope_id = kernel.scope_id) WHERE op_id IS NULL AND api_id IS NULL AND scope_id IS NOT NULL;"
                  "DROP TABLE temp.api_op;",
                  err, err_size) == 0)
        rc = 0;
    sqlite3_finalize(t->add);
    sqlite3_finalize(t->find);
    for (int i = 0; i < OP_CACHE; i++)
        free(t->slot[i].key);
    free(t);
    if (rc || !wl_sql_scalar_u64(db, "SELECT count(*) FROM tier_change"))
        return rc;
    /* the thread's own tier at its launch call, else the process default (thread 0) */
    return exec(db,
                "UPDATE kernel SET tier = coalesce("
                " (SELECT c.tier FROM tier_change c WHERE c.pid = kernel.pid AND c.tid = kernel.tid AND c.tid != 0"
                "   AND c.ts_ns <= coalesce((SELECT a.start_ns FROM api_call a WHERE a.id = kernel.api_id),"
                "   kernel.start_ns, 0) ORDER BY c.ts_ns DESC LIMIT 1),"
                " (SELECT c.tier FROM tier_change c WHERE c.pid = kernel.pid AND c.tid = 0"
                "   AND c.ts_ns <= coalesce((SELECT a.start_ns FROM api_call a WHERE a.id = kernel.api_id),"
                "   kernel.start_ns, 0) ORDER BY c.ts_ns DESC LIMIT 1))"
                " WHERE pid IN (SELECT pid FROM tier_change)",
                err, err_size);
}

int wl_session_upgrade(const char *path, char *err, size_t err_size)
{
    char why[256];
    wl_session *s = wl_session_open(path, why, sizeof why); /* checks that it is a session we read */
    if (!s) {
        snprintf(err, err_size, "%s", why);
        return -1;
    }
    wl_session_close(s);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        snprintf(err, err_size, "cannot open %s for writing: %s", path, db ? sqlite3_errmsg(db) : "?");
        sqlite3_close(db);
        return -1;
    }
    int rc = exec(db, "BEGIN IMMEDIATE", err, err_size) || wl_identity_ensure_schema(db, err, err_size) ||
                     wl_identity_derive(db, err, err_size) ||
                     (wl_kcfg_derive(db) && fail(db, err, err_size, "launch configurations")) ||
                     wl_pack_build(db, err, err_size) || exec(db, "COMMIT", err, err_size)
                 ? -1
                 : 0;
    if (rc)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------- */

int wl_session_has_identity(wl_session *s)
{
    return wl_sql_has_table(s->db, "op") && wl_sql_has_column(s->db, "kernel", "op_id");
}

int wl_session_op_summaries(wl_session *s, wl_op_summary **out)
{
    *out = NULL;
    if (!wl_session_has_identity(s))
        return -1;
    sqlite3_stmt *st;
    const char *sql =
        "WITH r AS (SELECT op_id, count(*) c, sum(coalesce(duration_ns, 0)) d FROM"
        "  (SELECT op_id, duration_ns FROM nvtx_range UNION ALL SELECT op_id, duration_ns FROM scope)"
        "  WHERE op_id IS NOT NULL GROUP BY op_id),"
        " k AS (SELECT op_id, count(*) c, sum(CASE WHEN has_timestamps THEN end_ns - start_ns ELSE 0 END) g"
        "  FROM kernel WHERE op_id IS NOT NULL GROUP BY op_id)"
        " SELECT o.id, o.source, o.name, o.shape, coalesce(r.c, 0), coalesce(r.d, 0), coalesce(k.c, 0),"
        "  coalesce(k.g, 0) FROM op o LEFT JOIN r ON r.op_id = o.id LEFT JOIN k ON k.op_id = o.id"
        " ORDER BY 8 DESC, 6 DESC, o.name, o.shape";
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t n = 0, cap = 0;
    wl_op_summary *v = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (wl_grow((void **)&v, &cap, n, sizeof *v, 64))
            break;
        wl_op_summary *o = &v[n++];
        memset(o, 0, sizeof *o);
        o->op_id = sqlite3_column_int64(st, 0);
        wl_sql_text_col(st, 1, o->source, sizeof o->source);
        wl_sql_text_col(st, 2, o->name, sizeof o->name);
        wl_sql_text_col(st, 3, o->shape, sizeof o->shape);
        o->calls = (uint64_t)sqlite3_column_int64(st, 4);
        o->cpu_ns = (uint64_t)sqlite3_column_int64(st, 5);
        o->kernels = (uint64_t)sqlite3_column_int64(st, 6);
        o->gpu_ns = (uint64_t)sqlite3_column_int64(st, 7);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        return -1;
    }
    *out = v;
    return (int)n;
}
