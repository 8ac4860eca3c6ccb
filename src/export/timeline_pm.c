/* PM sample series (`warplens run --pm-sampling`) as counter tracks under their GPU, one per
 * metric: "PM <label>" (docs/formats.md). Each window's value is set at the window's start and
 * holds until the next window. Metrics that add up over time (bytes, cycles) are drawn as rates,
 * since a per-window count depends on the interval: bytes as GB/s (bytes per ns), others per
 * second; levels (percentages) as they are, in CUPTI's unit ("percent", never a bare "%", which
 * the HTML report reads as GPU fill). Written after the main walk like the NVML series: each
 * track is in time order by itself. Without PM samples nothing is emitted and no track id is
 * used, so such sessions export exactly as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/pm_metric_spec.h"
#include "export/timeline_internal.h"
#include "store/session_pm.h"

typedef struct pm_track {
    wl_tl_track t;
    char name[160], unit[48];
} pm_track;

static int make_track(pm_track *p, const wl_pm_metric_row *m, int multi_pid, const wl_tl_track *gpu,
                      uint64_t *next_uuid, const wl_tl_sink *sink, wl_tl_stats *st)
{
    const char *label = wl_pm_metric_label(m->name);
    if (multi_pid)
        snprintf(p->name, sizeof p->name, "PM %s (pid %u)", label, m->pid);
    else
        snprintf(p->name, sizeof p->name, "PM %s", label);
    if (m->additive && !strcmp(m->unit, "byte"))
        snprintf(p->unit, sizeof p->unit, "GB/s");
    else if (m->additive)
        snprintf(p->unit, sizeof p->unit, "%s/s", m->unit[0] ? m->unit : "count");
    else
        snprintf(p->unit, sizeof p->unit, "%s", m->unit);
    p->t = (wl_tl_track){.uuid = ++*next_uuid, .parent_uuid = gpu->uuid, .type = WL_TL_COUNTER, .pid = gpu->pid,
                         .name = p->name, .sort_index = 16 + (int)m->metric_index, .unit = p->unit, .stream_id = -1};
    st->tracks++;
    return sink->track && sink->track(sink->ctx, &p->t) ? -1 : 0;
}

int tl_pm_walk(wl_session *s, const wl_tl_sink *sink, wl_tl_stats *st, uint64_t *next_uuid, tl_gpu_fn gpu, void *ctx)
{
    if (!wl_session_has_pm_samples(s))
        return 0;
    wl_pm_metric_row *metrics;
    int n = wl_session_pm_metrics(s, &metrics);
    if (n <= 0)
        return n;
    int multi_pid = 0;
    for (int i = 1; i < n; i++)
        multi_pid |= metrics[i].pid != metrics[0].pid;
    pm_track *tracks = calloc((size_t)n, sizeof *tracks);
    wl_pm_cursor *c = tracks ? wl_pm_cursor_open(s, -1, 0, 0, 0) : NULL;
    int rc = c ? 0 : -1, r;
    wl_pm_sample_row row;
    int group = 0; /* first metric row of the window's (pid, device) */
    while (rc == 0 && (r = wl_pm_cursor_next(c, &row)) != 0) {
        if (r < 0) {
            rc = -1;
            break;
        }
        if (row.start_ns < st->origin_ns)
            continue; /* times are written relative to the origin */
        if (metrics[group].pid != row.pid || metrics[group].device_id != row.device_id)
            for (group = 0; group < n && (metrics[group].pid != row.pid || metrics[group].device_id != row.device_id);)
                group++;
        if (group >= n) {
            group = 0;
            continue; /* samples without definitions: nothing to name them by */
        }
        double dur = (double)(row.end_ns > row.start_ns ? row.end_ns - row.start_ns : 1);
        for (int j = group; rc == 0 && j < n && metrics[j].pid == row.pid && metrics[j].device_id == row.device_id;
             j++) {
            uint32_t m = metrics[j].metric_index;
            if (m >= WL_PM_SAMPLE_METRICS || !(row.valid & (1ull << m)))
                continue;
            pm_track *p = &tracks[j];
            if (!p->t.uuid) {
                const wl_tl_track *g = gpu(ctx, row.device_id);
                if (!g || make_track(p, &metrics[j], multi_pid, g, next_uuid, sink, st)) {
                    rc = -1;
                    break;
                }
            }
            double v = row.values[m];
            if (metrics[j].additive)
                v = !strcmp(metrics[j].unit, "byte") ? v / dur : v / dur * 1e9;
            if (sink->counter && sink->counter(sink->ctx, &p->t, row.start_ns, v))
                rc = -1;
            st->counter_events++;
        }
    }
    wl_pm_cursor_close(c);
    free(tracks);
    free(metrics);
    return rc;
}
