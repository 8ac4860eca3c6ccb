/* Hardware metrics in the HTML report (see report_metrics.h). */
#include "export/report_metrics.h"

#include <stdio.h>
#include <stdlib.h>

#include "analysis/range_view.h"
#include "store/session_metrics.h"

void wl_report_metric_object(wl_json_out *j, const wl_metric_acc *a, int passes)
{
    wl_metric_summary s;
    double f[WL_METRIC_SUMMARY_FIELDS];
    wl_metric_acc_summary(a, &s);
    wl_metric_summary_values(&s, f);
    wl_json_lit(j, ",\"metrics\":{\"measured\":");
    wl_json_u64(j, a->kernels);
    wl_json_key(j, "passes"), wl_json_i64(j, passes);
    wl_json_lit(j, ",\"summary\":{");
    for (int i = 0; i < WL_METRIC_SUMMARY_FIELDS; i++) {
        if (i)
            wl_json_lit(j, ",");
        wl_json_str(j, WL_METRIC_SUMMARY_KEYS[i]);
        wl_json_lit(j, ":");
        wl_json_double_exact(j, f[i]); /* null when not collected */
    }
    wl_json_lit(j, "},\"raw\":{");
    for (int i = 0; i < a->n; i++) {
        if (i)
            wl_json_lit(j, ",");
        wl_json_str(j, a->names[i]);
        wl_json_lit(j, ":");
        wl_json_double_exact(j, wl_metric_acc_value(a, i));
    }
    wl_json_lit(j, "}}");
}

int wl_report_range_metrics(wl_json_out *j, wl_session *s, char *err, size_t err_size)
{
    if (!wl_session_has_metrics(s))
        return 0;
    wl_range_view v;
    wl_metric_acc *acc = malloc(sizeof *acc);
    if (!acc || wl_range_view_open(s, 1, &v, err, err_size)) {
        if (!acc)
            snprintf(err, err_size, "out of memory");
        free(acc);
        return -1;
    }
    int rows = 0;
    for (size_t g = 0; g < v.r.n_names; g++) {
        wl_range_totals t;
        wl_range_view_name(&v, g, &t, acc);
        if (!t.measured)
            continue;
        const wl_range_name *n = &v.r.names[g];
        wl_json_lit(j, rows++ ? ",\n{\"kind\":" : ",\"range_metrics\":[\n{\"kind\":");
        wl_json_str(j, n->kind == WL_RANGE_NVTX ? "nvtx" : "scope");
        wl_json_key(j, "domain"), wl_json_str(j, n->domain);
        wl_json_key(j, "name"), wl_json_str(j, n->name);
        wl_json_key(j, "count"), wl_json_u64(j, t.ranges);
        wl_report_metric_object(j, acc, v.metrics.max_passes);
        wl_json_lit(j, "}");
    }
    if (rows)
        wl_json_lit(j, "]");
    free(acc);
    wl_range_view_close(&v);
    return 0;
}
