/* Writing decoded in-kernel lanes (analysis/inkernel_decode.h) as Chrome JSON or Perfetto
 * protobuf. The Perfetto emitter only adds tracks and events to a caller's writer, so a session
 * exporter can hang the lanes under a kernel's stream track after wl_ik_place + wl_ik_shift. */
#ifndef WARPLENS_EXPORT_INKERNEL_EXPORT_H
#define WARPLENS_EXPORT_INKERNEL_EXPORT_H

#include <stdio.h>

#include "analysis/inkernel_decode.h"
#include "common/progress.h"
#include "export/perfetto_packets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Chrome Trace Event JSON: pid = block, tid = group (crossed slices on tid num_groups + group),
 * ts/dur in microseconds rebased to the earliest event; progress (may be NULL) hears of the
 * events written. Returns 0 or -1 (write error). */
int wl_ik_write_chrome_json(FILE *fp, const wl_ik_result *r, const wl_ik_names *names, const wl_progress *progress);

typedef struct wl_ik_perfetto_opts {
    uint64_t parent_uuid;   /* track to hang the container under; 0 = top level */
    uint64_t uuid_base;     /* uuids used: uuid_base + [0, 2^22); must not clash with others */
    int64_t ts_add_ns;      /* added to every decoded timestamp (e.g. -min_ts to rebase) */
    uint32_t max_lanes;     /* lanes shown (lowest lane ids first); 0 = 1024 */
    const char *title;      /* container track name; NULL = "in-kernel" */
    const wl_progress *progress; /* hears of the events written (NULL: nobody) */
} wl_ik_perfetto_opts;

/* Emits a container track, one track per block, one per lane (plus an "overlapping" track for
 * crossed slices) and the lanes' slices/instants. *lanes_omitted gets the lanes over the cap.
 * Returns 0 or -1. */
int wl_ik_emit_perfetto(wl_pf_writer *w, const wl_ik_result *r, const wl_ik_names *names,
                        const wl_ik_perfetto_opts *opts, uint64_t *lanes_omitted);

#ifdef __cplusplus
}
#endif

#endif
