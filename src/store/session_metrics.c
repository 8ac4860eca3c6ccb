/* Reading hardware metrics (see session_metrics.h): one pass over kernel_metric ordered by group
 * and kernel, each kernel's values gathered into a vector and added to its group's accumulator. */
#include "store/session_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/session_internal.h"
#include "store/sorted_ids.h"
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

/* The metric definitions (id order) and the configurations' passes and status. Returns the number
 * of metrics (0: the session has no metric tables or none defined), -1 on a database error. */
static int read_defs(sqlite3 *db, int64_t *ids, char (*names)[WL_METRIC_NAME_MAX], int *max_passes, char *status,
                     size_t status_size)
{
    if (!wl_sql_has_table(db, "kernel_metric") || !wl_sql_has_table(db, "metric"))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT max(num_passes), (SELECT status FROM metric_config WHERE status IS NOT NULL"
                               " LIMIT 1) FROM metric_config", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            *max_passes = sqlite3_column_int(st, 0);
            const unsigned char *t = sqlite3_column_text(st, 1);
            if (t && status)
                snprintf(status, status_size, "%s", (const char *)t);
        }
        sqlite3_finalize(st);
    }
    /* metric ids are the metric table's rows; index them densely in id order */
    if (sqlite3_prepare_v2(db, "SELECT id, name FROM metric ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < WL_METRICS_MAX) {
        ids[n] = sqlite3_column_int64(st, 0);
        snprintf(names[n], WL_METRIC_NAME_MAX, "%s", (const char *)sqlite3_column_text(st, 1));
        n++;
    }
    sqlite3_finalize(st);
    return n;
}

int wl_session_has_metrics(wl_session *s)
{
    return wl_sql_has_table(s->db, "kernel_metric") && wl_sql_has_table(s->db, "metric") &&
           wl_sql_scalar_u64(s->db, "SELECT 1 FROM kernel_metric WHERE kernel_id IS NOT NULL LIMIT 1") == 1;
}

/* Adds one value vector per item to its group's accumulator. st's rows: group key, item key,
 * metric id, value, ordered by group and item (an item is a kernel, or a range of a copy or set). */
static int accumulate(sqlite3_stmt *st, wl_metric_set *m, const int64_t *ids)
{
    const char *names[WL_METRICS_MAX];
    for (int i = 0; i < m->n; i++)
        names[i] = m->names[i];
    double v[WL_METRICS_MAX];
    int64_t cur_item = -1, cur_group = 0;
    int cap = 0;
    for (int i = 0; i < m->n; i++)
        v[i] = NAN;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t g = sqlite3_column_int64(st, 0), item = sqlite3_column_int64(st, 1), mid = sqlite3_column_int64(st, 2);
        if (item != cur_item || (m->ngroups && g != cur_group)) {
            if (cur_item >= 0)
                wl_metric_acc_add(&m->accs[m->ngroups - 1], v);
            for (int i = 0; i < m->n; i++)
                v[i] = NAN;
            cur_item = item;
            if ((!m->ngroups || m->keys[m->ngroups - 1] != g) && add_group(m, g, names, &cap) != 0)
                return -1;
            cur_group = g;
        }
        for (int i = 0; i < m->n; i++)
            if (ids[i] == mid && sqlite3_column_type(st, 3) != SQLITE_NULL)
                v[i] = sqlite3_column_double(st, 3);
    }
    if (cur_item >= 0)
        wl_metric_acc_add(&m->accs[m->ngroups - 1], v);
    /* the accumulators point at m->names: valid while m lives */
    return 0;
}

/* A range is tied when it names its activity: a kernel (a graph node's kernel, copy or set
 * included), or a call: a copy or set call (split into several records or not), a whole graph
 * launch, the driver's work inside a launch call. */
#define RANGE_TIED "(kernel_id IS NOT NULL OR memcpy_id IS NOT NULL OR memset_id IS NOT NULL OR coalesce(kind, '') IN" \
                   " ('memcpy', 'memset', 'graph_launch', 'internal'))"

/* An empty set with the session's metric definitions: the number of metrics (0: none, -1: a
 * database error; m->n is then 0). */
static int begin_set(wl_session *s, wl_metric_set *m, int64_t *ids)
{
    memset(m, 0, sizeof *m);
    int n = read_defs(s->db, ids, m->names, &m->max_passes, m->status, sizeof m->status);
    m->n = n > 0 ? n : 0;
    return n;
}

int wl_session_metrics(wl_session *s, enum wl_metric_group_by by, wl_metric_set *m)
{
    int64_t ids[WL_METRICS_MAX];
    int n = begin_set(s, m, ids);
    if (n <= 0)
        return n;
    m->kernel_replay = !wl_sql_has_column(s->db, "metric_config", "replay") ||
                       wl_sql_scalar_u64(s->db, "SELECT count(*) FROM metric_config WHERE status IS NULL AND"
                                                " coalesce(replay, 'kernel') = 'kernel'") > 0;
    if (wl_sql_has_table(s->db, "metric_range")) {
        m->ranges = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM metric_range");
        m->unlinked = wl_sql_scalar_u64(s->db, "SELECT count(*) FROM metric_range WHERE NOT " RANGE_TIED);
    } else { /* sessions made before metric_range */
        m->ranges = wl_sql_scalar_u64(s->db, "SELECT count(DISTINCT pid || ':' || device_id || ':' || range_index)"
                                             " FROM kernel_metric");
        m->unlinked = wl_sql_scalar_u64(s->db, "SELECT count(DISTINCT pid || ':' || device_id || ':' || range_index)"
                                               " FROM kernel_metric WHERE kernel_id IS NULL");
    }
    const char *key = by == WL_METRICS_BY_NAME ? "k.name_id" : "k.id";
    char sql[512];
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql,
             "SELECT %s, km.kernel_id, km.metric_id, km.value FROM kernel_metric km JOIN kernel k ON k.id = km.kernel_id"
             " WHERE %s IS NOT NULL ORDER BY 1, 2",
             key, key);
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = accumulate(st, m, ids);
    sqlite3_finalize(st);
    return rc;
}

int wl_session_copy_metrics(wl_session *s, wl_metric_set *m, char (*labels)[32], int max_labels)
{
    int64_t ids[WL_METRICS_MAX];
    int n = begin_set(s, m, ids);
    if (n <= 0 || !wl_sql_has_table(s->db, "metric_range"))
        return n < 0 ? n : 0;
    /* one group per label ("memcpy DtoD", "memset device"; a call split into several records: its
     * API call's name); one item per call, its ranges' counters summed */
#define COPY_LABEL                                                                                               \
    "CASE WHEN r.kind = 'memcpy' THEN 'memcpy ' || coalesce(c.kind, a.name, '?') ELSE 'memset ' ||"             \
    " coalesce(z.memory_kind, a.name, '?') END"
#define COPY_FROM                                                                                                \
    " FROM metric_range r LEFT JOIN memcpy c ON c.id = r.memcpy_id LEFT JOIN memset z ON z.id = r.memset_id"    \
    " LEFT JOIN api_call a ON a.id = r.api_id WHERE r.kind IN ('memcpy', 'memset')"
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT DISTINCT " COPY_LABEL COPY_FROM " ORDER BY 1", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int nl = 0;
    while (sqlite3_step(st) == SQLITE_ROW && nl < max_labels)
        snprintf(labels[nl++], 32, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (!nl)
        return 0;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT t.g, t.item, km.metric_id, sum(km.value) FROM (SELECT dense_rank() OVER (ORDER BY "
                           COPY_LABEL ") - 1 AS g, r.pid * 4294967296 + r.correlation_id AS item, r.pid, r.device_id,"
                           " r.range_index" COPY_FROM ") t JOIN kernel_metric km ON km.pid = t.pid AND km.device_id ="
                           " t.device_id AND km.range_index = t.range_index WHERE t.g < ? GROUP BY 1, 2, 3 ORDER BY 1, 2",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(st, 1, nl);
    int rc = accumulate(st, m, ids);
    sqlite3_finalize(st);
    return rc;
}

int wl_session_metric_ranges(wl_session *s, wl_metric_ranges *out)
{
    memset(out, 0, sizeof *out);
    if (!wl_sql_has_table(s->db, "metric_range"))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT count(*), sum(kind = 'kernel' AND kernel_id IS NOT NULL), sum(kind = 'graph_node' AND"
                           " " RANGE_TIED "), sum(kind = 'memcpy'), sum(kind = 'memset'), sum(kind = 'graph_launch'),"
                           " sum(kind = 'internal'), sum(NOT " RANGE_TIED "), sum(matched = 'order'),"
                           " sum(matched = 'isolated'), sum(matched = 'signature') FROM metric_range",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        uint64_t *f[] = {&out->ranges,  &out->kernels,  &out->graph_nodes, &out->copies,
                         &out->sets,    &out->graph_launches, &out->internal, &out->untied,
                         &out->by_order, &out->isolated, &out->by_signature};
        for (int i = 0; i < 11; i++)
            *f[i] = (uint64_t)sqlite3_column_int64(st, i);
    }
    sqlite3_finalize(st);
    out->launches_without = wl_sql_scalar_u64(s->db, "SELECT coalesce(sum(count), 0) FROM lost WHERE source ="
                                                     " 'metric_no_range'");
    return 0;
}

const wl_metric_acc *wl_metric_set_find(const wl_metric_set *m, int64_t key)
{
    long i = wl_sorted_id_index(m->keys, m->ngroups > 0 ? (size_t)m->ngroups : 0, key);
    return i < 0 ? NULL : &m->accs[i];
}

void wl_metric_set_free(wl_metric_set *m)
{
    free(m->keys);
    free(m->accs);
    m->keys = NULL;
    m->accs = NULL;
    m->ngroups = 0;
}

int wl_session_kernel_metrics(wl_session *s, wl_kernel_metrics *km)
{
    memset(km, 0, sizeof *km);
    int64_t ids[WL_METRICS_MAX];
    km->n = read_defs(s->db, ids, km->names, &km->max_passes, NULL, 0);
    if (km->n <= 0) {
        int rc = km->n;
        km->n = 0;
        return rc;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT kernel_id, metric_id, value FROM kernel_metric WHERE kernel_id IS NOT NULL"
                                  " ORDER BY kernel_id", -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t cap = 0, n = (size_t)km->n;
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t kid = sqlite3_column_int64(st, 0), mid = sqlite3_column_int64(st, 1);
        if (!km->count || km->kernel_ids[km->count - 1] != kid) {
            if (km->count == cap) {
                size_t nc = cap ? cap * 2 : 256;
                int64_t *k = realloc(km->kernel_ids, nc * sizeof *k);
                double *v = k ? realloc(km->values, nc * n * sizeof *v) : NULL;
                if (k)
                    km->kernel_ids = k;
                if (!v) {
                    rc = -1;
                    break;
                }
                km->values = v;
                cap = nc;
            }
            km->kernel_ids[km->count] = kid;
            for (size_t i = 0; i < n; i++)
                km->values[km->count * n + i] = NAN;
            km->count++;
        }
        if (sqlite3_column_type(st, 2) == SQLITE_NULL)
            continue;
        for (size_t i = 0; i < n; i++)
            if (ids[i] == mid)
                km->values[(km->count - 1) * n + i] = sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    if (rc)
        wl_kernel_metrics_free(km);
    return rc;
}

const double *wl_kernel_metrics_find(const wl_kernel_metrics *km, int64_t kernel_id)
{
    long i = wl_sorted_id_index(km->kernel_ids, km->count, kernel_id);
    return i < 0 ? NULL : km->values + (size_t)i * (size_t)km->n;
}

void wl_kernel_metrics_free(wl_kernel_metrics *km)
{
    free(km->kernel_ids);
    free(km->values);
    km->kernel_ids = NULL;
    km->values = NULL;
    km->count = 0;
}
