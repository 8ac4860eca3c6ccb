/* A background writer for an exporter's output: full buffers are handed to a thread that
 * fwrite()s them in order while the exporter fills the next one, so the copy into the page cache
 * (a second or more for a few hundred MiB on a small VM) overlaps encoding instead of stalling it.
 * At most OUT_PIPE_DEPTH buffers wait; the exporter blocks when the writer falls that far behind,
 * so memory stays bounded by a few buffers. perfetto_export.c plugs it into the Perfetto writer
 * (wl_pf_set_output). */
#ifndef WARPLENS_EXPORT_OUT_PIPE_H
#define WARPLENS_EXPORT_OUT_PIPE_H

#include <stdio.h>

#include "export/pb_encode.h"

typedef struct wl_out_pipe wl_out_pipe;

/* Starts the writer thread for fp (which the caller must not touch until wl_out_pipe_close);
 * NULL when it cannot (the caller then writes directly). */
wl_out_pipe *wl_out_pipe_open(FILE *fp);
/* Queues b's bytes and gives b an empty buffer to fill next (b->len = 0). Returns -1 when an
 * earlier write failed or memory ran out (nothing is queued then). */
int wl_out_pipe_push(wl_out_pipe *p, wl_pb_buf *b);
/* Writes what is queued, stops the thread and frees the pipe; -1 when any write failed. */
int wl_out_pipe_close(wl_out_pipe *p);

#endif
