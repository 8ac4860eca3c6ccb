/* In-kernel buffer side files (.wlik, written by warplens_inkernel_collect under `warplens run`)
 * into the session: read (hostile-safe), decoded, placed on the session clock inside their kernel
 * with the recorded calibration (wl_ik_place), stored as inkernel_* rows. Runs after the captures
 * of the session were imported, so the kernels are there to be found. */
#ifndef WARPLENS_ANALYSIS_INKERNEL_SESSION_H
#define WARPLENS_ANALYSIS_INKERNEL_SESSION_H

#include <stddef.h>

#include "store/inkernel_store.h"
#include "store/session_writer.h"

/* Imports one side file. Returns 0 when a buffer row was stored — *row says how it went (an
 * undecodable buffer or one without its kernel is stored with row->error set and no events) — or
 * -1 when the file itself could not be read or the session write failed (err says why). */
int wl_inkernel_import_file(wl_session_writer *w, const char *path, wl_iks_buffer *row, char *err, size_t err_size);

#endif
