/* Per-name kernel rows with occupancy (see kernel_table.h). */
#include "analysis/kernel_table.h"

#include <stdlib.h>
#include <string.h>

typedef struct table_ctx {
    wl_kernel_table_row *rows;
    int n;
} table_ctx;

static wl_kernel_table_row *find(table_ctx *t, int64_t name_id)
{
    for (int i = 0; i < t->n; i++)
        if (t->rows[i].sum.name_id == name_id)
            return &t->rows[i];
    return NULL;
}

static void take_config(const wl_kernel_config *c, void *arg)
{
    wl_kernel_table_row *r = find(arg, c->name_id);
    if (!r)
        return;
    r->configs++;
    if (!r->has_config) { /* configurations of a name arrive most calls first */
        r->top = *c;
        r->has_config = 1;
    }
}

int wl_kernel_table(wl_session *s, wl_occ_cache *cache, wl_kernel_table_row **out)
{
    *out = NULL;
    wl_kernel_aggregate a; /* the summaries and the configurations from one read of the kernels */
    if (wl_session_kernel_aggregate(s, &a))
        return -1;
    wl_kernel_summary *sums = a.sums;
    int n = a.n_sums;
    wl_kernel_table_row *rows = calloc(n ? (size_t)n : 1, sizeof *rows);
    if (!rows) {
        wl_kernel_aggregate_free(&a);
        return -1;
    }
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += sums[i].total_ns;
    for (int i = 0; i < n; i++) {
        rows[i].sum = sums[i];
        rows[i].time_pct = total ? 100.0 * (double)sums[i].total_ns / (double)total : 0.0;
        if (wl_session_kernel_name(s, sums[i].name_id, &rows[i].name, &rows[i].short_name, &rows[i].mangled) != 0) {
            rows[i].name = strdup(sums[i].name);
            rows[i].short_name = strdup(sums[i].short_name);
            rows[i].mangled = strdup("");
        }
    }
    table_ctx t = {rows, n};
    for (size_t i = 0; i < a.n_configs; i++)
        take_config(&a.configs[i], &t);
    wl_kernel_aggregate_free(&a);
    wl_occ_cache *own = cache ? NULL : wl_occ_cache_new(s);
    for (int i = 0; i < n && (cache || own); i++) {
        if (!rows[i].has_config)
            continue;
        wl_kernel_launch l;
        wl_kernel_launch_from_config(&rows[i].top, &l);
        wl_occ_cache_launch(cache ? cache : own, &l, &rows[i].occ);
    }
    wl_occ_cache_free(own);
    *out = rows;
    return n;
}

void wl_kernel_table_free(wl_kernel_table_row *rows, int n)
{
    if (!rows)
        return;
    for (int i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].short_name);
        free(rows[i].mangled);
    }
    free(rows);
}
