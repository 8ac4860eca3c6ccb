/* "Did you mean" for a metric name the GPU does not know: the closest of the chip's own base
 * metrics (CUPTI profiler host API), so the suggestion is valid on the GPU at hand. Base metrics
 * come as "<unit>__<counter>", some with a collection prefix ("TPC.TriageCompute.sm__...") that is
 * cut off; the requested name's submetric suffix (".sum", ".avg.pct_of_...") is put back. */
#include "capture/profiler_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/metric_spec.h"

#define MAX_BASE 8192

void wl_host_close_metric_names(void *host, const char *name, char *out, size_t n)
{
    if (n)
        out[0] = 0;
    const char **all = calloc(MAX_BASE, sizeof *all);
    if (!all)
        return;
    size_t nall = 0;
    for (int t = 0; t < (int)CUPTI_METRIC_TYPE__COUNT; t++) {
        CUpti_Profiler_Host_GetBaseMetrics_Params bp;
        memset(&bp, 0, sizeof bp);
        bp.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
        bp.pHostObject = host;
        bp.metricType = (CUpti_MetricType)t;
        if (cuptiProfilerHostGetBaseMetrics(&bp) != CUPTI_SUCCESS)
            continue;
        for (size_t k = 0; k < bp.numMetrics && nall < MAX_BASE; k++) {
            const char *s = bp.ppMetricNames[k], *u = strstr(s, "__");
            while (u && u > s && u[-1] != '.')
                u--;
            all[nall++] = u ? u : s;
        }
    }
    char base[WL_METRIC_NAME_MAX];
    snprintf(base, sizeof base, "%s", name);
    char *dot = strchr(base, '.');
    const char *suffix = dot ? name + (dot - base) : "";
    if (dot)
        *dot = 0;
    size_t close[8];
    int nc = wl_close_names(base, all, nall, close, 8), shown = 0;
    for (int k = 0; k < nc && n && shown < 3; k++) {
        int dup = 0; /* a counter listed with and without its collection prefix */
        for (int j = 0; j < k; j++)
            dup |= strcmp(all[close[j]], all[close[k]]) == 0;
        if (dup)
            continue;
        size_t used = strlen(out);
        snprintf(out + used, n - used, "%s%s%s", shown++ ? ", " : "", all[close[k]], suffix);
    }
    free(all);
}
