/* Cross-rank reads (see session_ranks.h). */
#include "store/session_ranks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "store/session_internal.h"
#include "store/sql_util.h"

#define IS_NCCL(n) "(" n " LIKE 'ncclDevKernel!_%' ESCAPE '!' OR " n " LIKE 'ncclKernel!_%' ESCAPE '!')"

int wl_session_each_collective(wl_session *s, void (*fn)(const wl_collective *, void *), void *arg)
{
    sqlite3_stmt *st;
    /* names first, then their kernels through kernel_by_name: collectives are a small part of a
     * session's kernels (merge reads every input's) */
    const char *sql = "SELECT k.pid, k.stream_id, n.short_name, k.start_ns, k.end_ns FROM kernel_name n"
                      " CROSS JOIN kernel k ON k.name_id = n.id WHERE k.has_timestamps AND"
                      " (" IS_NCCL("n.short_name") " OR " IS_NCCL("n.demangled") ")"
                      " ORDER BY k.pid, k.stream_id, k.start_ns, k.id";
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int n = 0, rc;
    wl_collective c;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        c.pid = (uint32_t)sqlite3_column_int64(st, 0);
        c.stream_id = sqlite3_column_int64(st, 1);
        wl_sql_text_col(st, 2, c.name, sizeof c.name);
        c.start_ns = (uint64_t)sqlite3_column_int64(st, 3);
        c.end_ns = (uint64_t)sqlite3_column_int64(st, 4);
        fn(&c, arg);
        n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? n : -1;
}

typedef struct name_count {
    char name[256];
    uint64_t count;
} name_count;

int wl_session_top_range_name(wl_session *s, char *out, size_t n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT pid, tid, start_ns, coalesce(end_ns, start_ns), name FROM nvtx_range"
                                  " WHERE tid IS NOT NULL ORDER BY pid, tid, start_ns, end_ns DESC", -1, &st, NULL))
        return -1;
    /* a thread's ranges by start: a range is top-level when it starts at or after the end of the
     * last top-level one */
    name_count *v = NULL;
    size_t nv = 0, cap = 0;
    int64_t pid = -1, tid = -1, top_end = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t p = sqlite3_column_int64(st, 0), t = sqlite3_column_int64(st, 1);
        int64_t b = sqlite3_column_int64(st, 2), e = sqlite3_column_int64(st, 3);
        if (p != pid || t != tid) {
            pid = p, tid = t;
            top_end = INT64_MIN;
        }
        if (b < top_end)
            continue;
        top_end = e;
        char name[256];
        wl_sql_text_col(st, 4, name, sizeof name);
        size_t i = 0;
        while (i < nv && strcmp(v[i].name, name))
            i++;
        if (i == nv) {
            if (nv >= 4096 || wl_grow((void **)&v, &cap, nv, sizeof *v, 16)) /* distinct names kept: bounded */
                continue;
            memset(&v[nv], 0, sizeof *v);
            memcpy(v[nv].name, name, sizeof name);
            nv++;
        }
        v[i].count++;
    }
    sqlite3_finalize(st);
    size_t best = 0;
    for (size_t i = 1; i < nv; i++)
        if (v[i].count > v[best].count)
            best = i;
    int found = rc == SQLITE_DONE && nv > 0;
    if (found)
        snprintf(out, n, "%s", v[best].name);
    free(v);
    return found ? 0 : -1;
}

int wl_session_each_named_range(wl_session *s, const char *name,
                                void (*fn)(uint32_t pid, uint64_t start_ns, uint64_t end_ns, void *), void *arg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT pid, start_ns, end_ns FROM nvtx_range WHERE name = ?1 AND end_ns IS NOT"
                                  " NULL UNION ALL SELECT pid, start_ns, end_ns FROM scope WHERE name = ?1 AND"
                                  " end_ns IS NOT NULL ORDER BY 1, 2", -1, &st, NULL))
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fn((uint32_t)sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
           (uint64_t)sqlite3_column_int64(st, 2), arg);
        n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? n : -1;
}

typedef struct span_visit {
    void (*fn)(const wl_gpu_span *, void *);
    void *arg;
} span_visit;

static int span_row(int which, sqlite3_stmt *q, void *arg)
{
    const span_visit *v = arg;
    wl_gpu_span g = {(uint32_t)sqlite3_column_int64(q, 0), which + 1, sqlite3_column_int(q, 4),
                     (uint64_t)sqlite3_column_int64(q, 1), (uint64_t)sqlite3_column_int64(q, 2),
                     (uint64_t)sqlite3_column_int64(q, 3)};
    v->fn(&g, v->arg);
    return 0;
}

int wl_session_each_gpu_span(wl_session *s, void (*fn)(const wl_gpu_span *, void *), void *arg)
{
    static const char *const SQL[3] = {
        "SELECT k.pid, k.start_ns, k.end_ns, 0, " IS_NCCL("n.short_name") " OR " IS_NCCL("n.demangled")
        " FROM kernel k JOIN kernel_name n ON n.id = k.name_id WHERE k.has_timestamps ORDER BY k.start_ns",
        "SELECT pid, start_ns, end_ns, bytes, 0 FROM memcpy WHERE end_ns >= start_ns ORDER BY start_ns",
        "SELECT pid, start_ns, end_ns, bytes, 0 FROM memset WHERE end_ns >= start_ns ORDER BY start_ns",
    };
    sqlite3_stmt *st[3] = {NULL, NULL, NULL};
    long rc = -1;
    int prepared = 1;
    for (int i = 0; i < 3; i++)
        prepared &= sqlite3_prepare_v2(s->db, SQL[i], -1, &st[i], NULL) == SQLITE_OK;
    span_visit v = {fn, arg};
    if (prepared) /* the three tables merged by start (column 1) */
        rc = wl_sql_merge_ordered(st, 3, 1, span_row, &v);
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(st[i]);
    return (int)rc;
}
