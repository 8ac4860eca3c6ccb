/* Hardware metrics in the HTML report (sessions recorded with `warplens run --metrics` only):
 * the "metrics" object of a kernel-name row and the "range_metrics" table of NVTX range and scope
 * names, each with the friendly summary (metric_agg.h) and every recorded metric. */
#ifndef WARPLENS_EXPORT_REPORT_METRICS_H
#define WARPLENS_EXPORT_REPORT_METRICS_H

#include "store/metric_agg.h"
#include "export/json_out.h"
#include "store/session.h"

/* ,"metrics":{"measured":N,"passes":P,"summary":{...},"raw":{...}} */
void wl_report_metric_object(wl_json_out *j, const wl_metric_acc *a, int passes);
/* ,"range_metrics":[...] when a range holds a measured kernel; nothing otherwise. -1 on a read
 * failure (err set). */
int wl_report_range_metrics(wl_json_out *j, wl_session *s, char *err, size_t err_size);

#endif
