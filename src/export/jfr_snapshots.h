/* When the JFR export writes a GpuOccupancyEvent (jfr_export.c writes what it holds): for each
 * device, at every change of its running kernels (the timeline's gpu_state), but at most one
 * snapshot per 100 us - a change that comes inside that gap is written at the gap's end, with the
 * state then, which still holds - and at every NVML sample of the device, with the kernel state in
 * effect at the sample's time. States arrive in time order per device (not across devices), so
 * each device keeps its own place in the session's samples, which are loaded once (a few per second
 * of the run). */
#ifndef WARPLENS_EXPORT_JFR_SNAPSHOTS_H
#define WARPLENS_EXPORT_JFR_SNAPSHOTS_H

#include <stdint.h>

#include "export/timeline_model.h"
#include "store/session.h"

typedef struct jfr_nvml {      /* an NVML sample: its utilisations, -1 when NVML gave none */
    uint64_t ts;
    uint32_t pid, device;
    int64_t gpu, mem;
} jfr_nvml;

/* Writes one snapshot: the device state g at time ts, from an NVML sample (nv) or a change of the
 * running kernels (nv NULL). Non-zero stops the export. */
typedef int (*jfr_snapshot_fn)(void *ctx, const wl_tl_gpu_state *g, uint64_t ts, const jfr_nvml *nv);

typedef struct jfr_snapshots jfr_snapshots;
/* NULL when out of memory or the samples cannot be read. */
jfr_snapshots *jfr_snapshots_open(wl_session *s, jfr_snapshot_fn write, void *ctx);
/* A device's running kernels changed (the timeline sink's gpu_state). */
int jfr_snapshots_state(jfr_snapshots *j, const wl_tl_gpu_state *g);
/* After the walk: what is still deferred, and the samples after the last change. */
int jfr_snapshots_finish(jfr_snapshots *j);
void jfr_snapshots_close(jfr_snapshots *j);

#endif
