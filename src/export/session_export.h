/* Exporting a whole session: native Perfetto protobuf (perfetto_export.c), Chrome Trace Event JSON
 * (chrome_json_export.c) or a JFR recording (jfr_export.c), all from the timeline model
 * (timeline_model.h), so they carry the same slices, flows and counters. Layout: docs/formats.md. */
#ifndef WARPLENS_EXPORT_SESSION_EXPORT_H
#define WARPLENS_EXPORT_SESSION_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/jfr_types.h"
#include "export/timeline_model.h"
#include "store/session.h"

typedef struct wl_export_stats {
    wl_tl_stats tl;
    uint64_t events;   /* trace events written (Perfetto TrackEvents / JSON events / JFR events,
                          metadata excluded) */
    uint64_t bytes;
    uint64_t jfr[WL_JFR_EVENT_TYPES]; /* JFR: events of each type */
    uint64_t chunks;                   /* JFR: chunks written */
    int restarted;     /* the export started over: it read the kernels in the table's own order
                          (a regular file's export does, export_rerun.h) and they were too far from
                          start order; what it had written was cut back */
} wl_export_stats;

/* Both return 0, or -1 with err filled. fp must be open for writing. */
int wl_export_perfetto(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err,
                       size_t err_size);
int wl_export_chrome_json(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err,
                          size_t err_size);
/* Java Flight Recorder (jfr_export.c): GPU kernels, copies, sets, occupancy snapshots, API calls,
 * NVTX ranges, scopes and timers as JFR events for JDK Mission Control and jdk.jfr.consumer. */
int wl_export_jfr(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err,
                  size_t err_size);

#endif
