/* A background writer for an exporter's output: full buffers are handed to a thread that writes
 * them in order while the exporter fills the next one, so the output's way to the file overlaps
 * encoding instead of stalling it. At most OUT_PIPE_DEPTH buffers wait; the exporter blocks when
 * the writer falls that far behind, so memory stays bounded by a few buffers (4 of 4 MiB, plus a
 * 1 MiB staging buffer when writing directly).
 *
 * Where the output is a regular file at a block-aligned offset, the writer bypasses the page cache
 * (O_DIRECT): on a small machine the copy into the page cache, and the eviction it forces once the
 * cache is full, cost more CPU than encoding the trace (a 10 M-kernel session's 11 GiB of JSON:
 * 7.7-24 s of system time written through the cache, bench/results/export.txt). Direct writes need
 * block-aligned memory, lengths and offsets: buffers handed back by the pipe are aligned,
 * wl_out_pipe_push_some queues whole blocks only, and anything else goes through the staging
 * buffer. A file system that refuses direct writes (EINVAL) is written through the cache from
 * there on; so is every file when WARPLENS_DIRECT_IO=0. The FILE's position is brought up to date
 * when the pipe closes. perfetto_export.c, chrome_json_export.c and jfr_chunk.c use it. */
#ifndef WARPLENS_EXPORT_OUT_PIPE_H
#define WARPLENS_EXPORT_OUT_PIPE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "export/pb_encode.h"

typedef struct wl_out_pipe wl_out_pipe;

/* Starts the writer thread for fp (flushed here; the caller must not touch it until
 * wl_out_pipe_close); NULL when it cannot (the caller then writes directly). */
wl_out_pipe *wl_out_pipe_open(FILE *fp);
/* The same, never bypassing the page cache (tests compare both ways). */
wl_out_pipe *wl_out_pipe_open_cached(FILE *fp);
/* 1 when the pipe writes around the page cache (so far). */
int wl_out_pipe_direct(wl_out_pipe *p);
/* Queues all of b's bytes and gives b an empty buffer to fill next (b->len = 0). Returns -1 when
 * an earlier write failed or memory ran out (nothing is queued then). */
int wl_out_pipe_push(wl_out_pipe *p, wl_pb_buf *b);
/* The same, but may queue only a leading part of b (whole blocks, when writing directly): the rest
 * (under 4 KiB) is at the start of the buffer b is given, b->len its length; append after it. */
int wl_out_pipe_push_some(wl_out_pipe *p, wl_pb_buf *b);
/* Moves b's bytes into a buffer of the pipe's own (aligned, so direct writes need no staging copy)
 * for b to fill on; -1 when out of memory (b is unchanged then). */
int wl_out_pipe_take(wl_out_pipe *p, wl_pb_buf *b);
/* Writes what is queued, then rest's bytes (rest may be NULL; its buffer is kept, emptied), stops
 * the thread, brings fp's position to the end of what was written and frees the pipe; -1 when any
 * write failed. */
int wl_out_pipe_close(wl_out_pipe *p, wl_pb_buf *rest);

/* Tests: the write(2) every pipe uses from now on (NULL: the real one), so a test can act as a file
 * system that refuses direct writes or writes short. */
void wl_out_pipe_set_write(ssize_t (*fn)(int fd, const void *buf, size_t n));

#endif
