/* Reading hardware metrics (see session_metrics.h): one pass over kernel_metric ordered by group
 * and kernel, each kernel's values gathered into a vector and added to its group's accumulator. */
#include "store/session_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_internal.h"
#include "store/sql_util.h"

static int add_group(wl_metric_set *m, int64_t key, const char *const *names, int *cap)
{
    if (m->ngroups == *cap) {
        int nc = *cap ? *cap * 2 : 64;
        int64_t *k = realloc(m->keys, (size_t)nc * sizeof *k);
        if (!k)
            return -1;
        m->keys = k;
        wl_metric_acc *a = realloc(m->accs, (size_t)nc * sizeof *a);
        if (!a)
            return -1;
        m->accs = a;
        *cap = nc;
    }
    m->keys[m->ngroups] = key;
    wl_metric_acc_init(&m->accs[m->ngroups], names, m->n);
    m->ngroups++;
    return 0;
}

int wl_session_metrics(wl_session *s, enum wl_metric_group_by by, wl_metric_set *m)
{
    memset(m, 0, sizeof *m);
    if (!wl_sql_has_table(s->db, "kernel_metric") || !wl_sql_has_table(s->db, "metric"))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT max(num_passes), (SELECT status FROM metric_config WHERE status IS NOT NULL"
                                  " LIMIT 1) FROM metric_config", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            m->max_passes = sqlite3_column_int(st, 0);
            const unsigned char *t = sqlite3_column_text(st, 1);
            if (t)
                snprintf(m->status, sizeof m->status, "%s", (const char *)t);
        }
        sqlite3_finalize(st);
    }
    m->kernel_replay = !wl_sql_has_column(s->db, "metric_config", "replay") ||
                       wl_sql_scalar_u64(s->db, "SELECT count(*) FROM metric_config WHERE status IS NULL AND"
                                                " coalesce(replay, 'kernel') = 'kernel'") > 0;
    /* metric ids are the metric table's rows; index them densely in id order */
    int64_t ids[WL_METRICS_MAX];
    if (sqlite3_prepare_v2(s->db, "SELECT id, name FROM metric ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW && m->n < WL_METRICS_MAX) {
        ids[m->n] = sqlite3_column_int64(st, 0);
        snprintf(m->names[m->n], WL_METRIC_NAME_MAX, "%s", (const char *)sqlite3_column_text(st, 1));
        m->n++;
    }
    sqlite3_finalize(st);
    if (!m->n)
        return 0;
    m->ranges = wl_sql_scalar_u64(s->db, "SELECT count(DISTINCT pid || ':' || device_id || ':' || range_index)"
                                         " FROM kernel_metric");
    m->unlinked = wl_sql_scalar_u64(s->db, "SELECT count(DISTINCT pid || ':' || device_id || ':' || range_index)"
                                           " FROM kernel_metric WHERE kernel_id IS NULL");
    const char *key = by == WL_METRICS_BY_NAME ? "k.name_id" : by == WL_METRICS_BY_SCOPE ? "k.scope_id" : "k.id";
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT %s, km.kernel_id, km.metric_id, km.value FROM kernel_metric km JOIN kernel k ON k.id = km.kernel_id"
             " WHERE %s IS NOT NULL ORDER BY 1, 2",
             key, key);
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    const char *names[WL_METRICS_MAX];
    for (int i = 0; i < m->n; i++)
        names[i] = m->names[i];
    double v[WL_METRICS_MAX];
    int64_t cur_kernel = -1;
    int cap = 0, rc = 0;
    for (int i = 0; i < m->n; i++)
        v[i] = NAN;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t g = sqlite3_column_int64(st, 0), kid = sqlite3_column_int64(st, 1), mid = sqlite3_column_int64(st, 2);
        if (kid != cur_kernel) {
            if (cur_kernel >= 0)
                wl_metric_acc_add(&m->accs[m->ngroups - 1], v);
            for (int i = 0; i < m->n; i++)
                v[i] = NAN;
            cur_kernel = kid;
            if ((!m->ngroups || m->keys[m->ngroups - 1] != g) && add_group(m, g, names, &cap) != 0) {
                rc = -1;
                break;
            }
        }
        for (int i = 0; i < m->n; i++)
            if (ids[i] == mid && sqlite3_column_type(st, 3) != SQLITE_NULL)
                v[i] = sqlite3_column_double(st, 3);
    }
    if (rc == 0 && cur_kernel >= 0)
        wl_metric_acc_add(&m->accs[m->ngroups - 1], v);
    sqlite3_finalize(st);
    /* the accumulators point at m->names: valid while m lives */
    return rc;
}

const wl_metric_acc *wl_metric_set_find(const wl_metric_set *m, int64_t key)
{
    int lo = 0, hi = m->ngroups - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (m->keys[mid] == key)
            return &m->accs[mid];
        if (m->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

void wl_metric_set_free(wl_metric_set *m)
{
    free(m->keys);
    free(m->accs);
    m->keys = NULL;
    m->accs = NULL;
    m->ngroups = 0;
}
