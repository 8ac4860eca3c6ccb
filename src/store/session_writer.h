/* Building a session database: create it under a temporary name, import one or more capture
 * files (one per profiled process), link GPU work to its API calls and scopes, then rename it
 * into place. Nothing is visible at the final path until wl_session_writer_finish succeeds. */
#ifndef WARPLENS_STORE_SESSION_WRITER_H
#define WARPLENS_STORE_SESSION_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "common/progress.h"

typedef struct wl_session_writer wl_session_writer;

/* API calls are written in runs of up to this many calls of one thread (session_import_api.c);
 * the synthetic sessions lay their calls out the same way (session_synth.c). */
#define WL_API_RUN 256

typedef struct wl_import_stats {
    uint64_t kernels, memcpys, memsets, api_calls, syncs, nvtx_ranges, nvtx_marks, scopes, threads;
    uint64_t lost;          /* records reported lost by the recorder */
    uint64_t unknown_records;
    int complete;           /* the capture ended with its END record */
    char incomplete_reason[160];
} wl_import_stats;

/* Returns NULL with err filled on failure. */
wl_session_writer *wl_session_writer_create(const char *path, char *err, size_t err_size);
int wl_session_writer_meta(wl_session_writer *w, const char *key, const char *value);
/* Where wl_session_writer_import reports how far it is in each capture file (bytes read of the
 * file's size); NULL: nowhere. */
void wl_session_writer_set_progress(wl_session_writer *w, const wl_progress *p);
/* Imports one capture file. A truncated capture is imported up to its last whole record and
 * marked incomplete; a malformed one fails with the offending offset in err. */
int wl_session_writer_import(wl_session_writer *w, const char *capture_path, wl_import_stats *stats,
                             char *err, size_t err_size);
/* Imports a timer side file (<pid>.wltimers from the timer API, docs/timer.md); *imported gets
 * the number of intervals. A malformed or truncated file fails with the line in err. */
int wl_session_writer_import_timers(wl_session_writer *w, const char *path, uint64_t *imported, char *err,
                                    size_t err_size);
/* Derives links (kernel -> API call, thread, scope), counts kernels without timestamps, commits
 * and renames into place. The writer is freed in every case. */
int wl_session_writer_finish(wl_session_writer *w, char *err, size_t err_size);
void wl_session_writer_abort(wl_session_writer *w);

#endif
