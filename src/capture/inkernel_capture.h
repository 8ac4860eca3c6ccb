/* In-kernel buffers registered through warplens.h (warplens_inkernel_next_launch / _collect):
 * remembered for the next launch of the registering thread, copied to the host and written as
 * <capture dir>/<pid>.<correlation id>.wlik side files when the program collects them. The
 * importer decodes them under their kernel (src/analysis/inkernel_session.c). */
#ifndef WARPLENS_CAPTURE_INKERNEL_CAPTURE_H
#define WARPLENS_CAPTURE_INKERNEL_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "common/recorder_bridge.h"

/* Where side files go (the capture file's folder). */
void wl_inkernel_init(const char *capture_path);
/* Bridge entry points (see warplens.h). */
int wl_inkernel_next_launch(const wl_bridge_inkernel_buffer *b);
int wl_inkernel_collect(void);
int wl_inkernel_next_graph_launch(const wl_bridge_inkernel_buffer *b, void *graph_node);
/* Launch callback, application thread: binds this thread's pending registration to the launch.
 * One thread-local load when nothing is pending. */
void wl_inkernel_on_launch(uint32_t correlation_id, void *context);
/* The same for a graph launch (cuGraphLaunch's executable graph): binds a pending graph
 * registration, resolving its node to the node CUPTI reports for that executable graph. */
void wl_inkernel_on_graph_launch(uint32_t correlation_id, void *context, void *graph_exec);
/* Resource callback (graph instantiation, any thread): node `clone_id` of executable graph
 * `graph_exec` is a copy of node `original_id`; kernel records of graph launches carry the copy's. */
void wl_inkernel_on_node_cloned(uint64_t original_id, uint64_t clone_id, void *graph_exec);
/* Writer thread: buffers lost since the last call (refused, failed copies, never collected). */
uint64_t wl_inkernel_take_lost(void);
/* At shutdown: counts registrations that were never collected and says so once. */
void wl_inkernel_shutdown(void);

/* clock_calibration.c: realtime - %globaltimer in the current context by a host<->GPU ping-pong
 * (the fallback). 0, or -1 with why. */
int wl_calibrate_globaltimer(int64_t *offset_ns, uint64_t *uncertainty_ns, char *why, size_t why_size);
/* clock_calibration_cupti.c: CUPTI's clock - %globaltimer in the current context, from the
 * recorder's own probe kernels' CUPTI records (common/clock_fit.h). */
typedef struct wl_cupti_calibration {
    int64_t offset_ns;
    uint64_t uncertainty_ns; /* a bound: half the intersection's width */
    uint64_t at_ns;          /* the CUPTI time it was measured at */
    uint32_t samples;        /* probes whose records were used */
    int floors;              /* the GPU model's measured gap floors tightened it */
} wl_cupti_calibration;
/* At collect: the main batch (48 probes; waits at most ~1 s for the records), and the early batch
 * of the first registration since the previous collect when there was one (*has_early). 0, or -1
 * with why. */
int wl_calibrate_cupti(wl_cupti_calibration *out, wl_cupti_calibration *early, int *has_early, char *why,
                       size_t why_size);
/* At registration (the program's thread, before its launch): launches the early batch (16 probes)
 * when none is pending for the current context, without waiting for anything (the first one in a
 * context also loads the probe module); skipped while a collect holds the calibration. */
void wl_calibrate_cupti_early(void);
/* Resource callback: the context is being destroyed; its probe module and stream go with it. */
void wl_calib_context_destroyed(void *context);
/* Writer thread: a CUPTI kernel record of one of the recorder's own launches. */
void wl_calib_note(uint32_t correlation_id, uint64_t start_ns, uint64_t end_ns);

/* Calls the recorder makes itself (calibration kernel, copies) raise wl_tls.internal_calls so the
 * API callbacks skip them and remember their correlation ids; activity records with those ids are
 * dropped. */
void wl_internal_corr_add(uint32_t correlation_id);
int wl_internal_corr_is(uint32_t correlation_id);

#endif
