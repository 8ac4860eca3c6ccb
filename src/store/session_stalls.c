/* Reading warp stall samples (see session_stalls.h): the reason names, then one pass over
 * kernel_stall summed per (group, reason), each group's sums turned into a profile. */
#include "store/session_stalls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_internal.h"
#include "store/sorted_ids.h"
#include "store/sql_util.h"

static int read_reasons(sqlite3 *db, wl_stall_set *m)
{
    int n = (int)wl_sql_scalar_u64(db, "SELECT count(*) FROM stall_reason");
    if (n <= 0)
        return 0;
    m->reasons = calloc((size_t)n, sizeof *m->reasons);
    m->reason_ids = calloc((size_t)n, sizeof *m->reason_ids);
    if (!m->reasons || !m->reason_ids)
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id, name FROM stall_reason ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        return -1;
    while (m->nreasons < n && sqlite3_step(st) == SQLITE_ROW) {
        m->reason_ids[m->nreasons] = sqlite3_column_int64(st, 0);
        wl_sql_text_col(st, 1, m->reasons[m->nreasons], WL_STALL_NAME_MAX);
        m->nreasons++;
    }
    sqlite3_finalize(st);
    return 0;
}

static int reason_at(const wl_stall_set *m, int64_t id)
{
    return (int)wl_sorted_id_index(m->reason_ids, m->nreasons > 0 ? (size_t)m->nreasons : 0, id);
}

static void read_config(sqlite3 *db, wl_stall_set *m)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT count(*), min(period_log2), max(period_log2), (SELECT status FROM stall_config"
                               " WHERE status IS NOT NULL LIMIT 1) FROM stall_config", -1, &st, NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(st) == SQLITE_ROW) {
        m->recorded = sqlite3_column_int(st, 0) > 0;
        m->period_min = sqlite3_column_int(st, 1);
        m->period_max = sqlite3_column_int(st, 2);
        wl_sql_text_col(st, 3, m->status, sizeof m->status);
    }
    sqlite3_finalize(st);
}

/* Appends a group built from its (reason, samples) sums. */
static int add_group(wl_stall_set *m, int *cap, int64_t key, const char **names, const uint64_t *samples, int n)
{
    if (m->ngroups == *cap) {
        int nc = *cap ? *cap * 2 : 64;
        int64_t *k = realloc(m->keys, (size_t)nc * sizeof *k);
        if (!k)
            return -1;
        m->keys = k;
        wl_stall_profile *p = realloc(m->profiles, (size_t)nc * sizeof *p);
        if (!p)
            return -1;
        m->profiles = p;
        *cap = nc;
    }
    if (wl_stall_profile_build(names, samples, n, &m->profiles[m->ngroups]) != 0)
        return -1;
    m->keys[m->ngroups++] = key;
    return 0;
}

static int read_groups(sqlite3 *db, enum wl_stall_group_by by, int64_t key, wl_stall_set *m)
{
    const char *col = by == WL_STALLS_BY_NAME ? "k.name_id" : "ks.kernel_id";
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT %s, ks.reason_id, sum(ks.samples) FROM kernel_stall ks JOIN kernel k ON k.id = ks.kernel_id"
             "%s GROUP BY 1, 2 ORDER BY 1",
             col, key >= 0 ? (by == WL_STALLS_BY_NAME ? " WHERE k.name_id = ?1" : " WHERE ks.kernel_id = ?1") : "");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (key >= 0)
        sqlite3_bind_int64(st, 1, key);
    const char **names = calloc((size_t)m->nreasons + 1, sizeof *names);
    uint64_t *samples = calloc((size_t)m->nreasons + 1, sizeof *samples);
    int rc = names && samples ? 0 : -1, n = 0, cap = 0;
    int64_t cur = 0;
    int have = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        int64_t g = sqlite3_column_int64(st, 0);
        if (have && g != cur) {
            rc = add_group(m, &cap, cur, names, samples, n);
            n = 0;
        }
        cur = g, have = 1;
        int r = reason_at(m, sqlite3_column_int64(st, 1));
        sqlite3_int64 v = sqlite3_column_int64(st, 2);
        if (r < 0 || v <= 0 || n >= m->nreasons) /* unknown row or nothing to add */
            continue;
        names[n] = m->reasons[r];
        samples[n++] = (uint64_t)v;
    }
    if (rc == 0 && have)
        rc = add_group(m, &cap, cur, names, samples, n);
    sqlite3_finalize(st);
    free(names);
    free(samples);
    if (rc != 0)
        return rc;
    /* launches per group: added to the profiles (keys ascending in both) */
    snprintf(sql, sizeof sql,
             "SELECT %s, count(DISTINCT ks.kernel_id) FROM kernel_stall ks JOIN kernel k ON k.id = ks.kernel_id"
             "%s GROUP BY 1 ORDER BY 1",
             col, key >= 0 ? (by == WL_STALLS_BY_NAME ? " WHERE k.name_id = ?1" : " WHERE ks.kernel_id = ?1") : "");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (key >= 0)
        sqlite3_bind_int64(st, 1, key);
    int g = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(st, 0);
        while (g < m->ngroups && m->keys[g] < k)
            g++;
        if (g < m->ngroups && m->keys[g] == k)
            m->profiles[g].kernels = (uint64_t)sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return 0;
}

int wl_session_stalls(wl_session *s, enum wl_stall_group_by by, int64_t key, wl_stall_set *out)
{
    memset(out, 0, sizeof *out);
    if (!wl_sql_has_table(s->db, "kernel_stall") || !wl_sql_has_table(s->db, "stall_reason") ||
        !wl_sql_has_table(s->db, "stall_config"))
        return 0;
    read_config(s->db, out);
    if (read_reasons(s->db, out) != 0)
        return -1;
    if (!out->nreasons)
        return 0;
    out->unlinked_samples = wl_sql_scalar_u64(s->db, "SELECT coalesce(sum(samples), 0) FROM kernel_stall"
                                                     " WHERE kernel_id IS NULL");
    if (read_groups(s->db, by, key, out) != 0)
        return -1;
    for (int i = 0; i < out->ngroups; i++) {
        out->samples += out->profiles[i].samples;
        out->kernels += out->profiles[i].kernels;
    }
    return 0;
}

const wl_stall_profile *wl_stall_set_find(const wl_stall_set *m, int64_t key)
{
    long i = wl_sorted_id_index(m->keys, m->ngroups > 0 ? (size_t)m->ngroups : 0, key);
    return i < 0 ? NULL : &m->profiles[i];
}

void wl_stall_set_free(wl_stall_set *m)
{
    for (int i = 0; i < m->ngroups; i++)
        wl_stall_profile_free(&m->profiles[i]);
    free(m->profiles);
    free(m->keys);
    free(m->reasons);
    free(m->reason_ids);
    memset(m, 0, sizeof *m);
}
