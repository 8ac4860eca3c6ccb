/* Writing a JFR recording as a sequence of self-contained chunks (what the JVM itself does when
 * it rotates a recording): events are appended to an in-memory chunk; when it holds chunk_bytes
 * of events it is written out as
 *     header | events | checkpoint (constant pools) | metadata
 * and the next chunk starts with empty pools. So memory is bounded by one chunk whatever the
 * session size, and no byte is ever rewritten (the output can be a pipe).
 *
 * Constant pools: strings are written as references into the chunk's String pool (found by a
 * hash of their bytes, or by a caller's key for strings it can name, such as kernel names by
 * their kernel_name id); threads (java.lang.Thread) and processes (jdk.types.ThreadGroup) have
 * keys that stay the same in every chunk and are declared in each chunk that uses them. A key
 * never names two different values in one file: the JDK's reader keeps a key's value from one
 * chunk to the next (the JVM's keys are global), so string keys keep counting across chunks.
 * Times: ticks are nanoseconds since the session's origin (1e9 ticks per second), so a chunk's
 * header ties them to epoch nanoseconds exactly. */
#ifndef WARPLENS_EXPORT_JFR_CHUNK_H
#define WARPLENS_EXPORT_JFR_CHUNK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/pb_encode.h"

typedef struct wl_jfr_chunk wl_jfr_chunk;

/* NULL when out of memory. fp belongs to the writer until wl_jfr_chunk_close. */
wl_jfr_chunk *wl_jfr_chunk_open(FILE *fp, uint64_t origin_ns, size_t chunk_bytes);
/* Writes the last chunk (marked final; also when it holds no event, so the file always has one
 * chunk with the metadata), stops the writer and frees everything. Returns 0, or -1 when any
 * write failed; *bytes gets the bytes written. */
int wl_jfr_chunk_close(wl_jfr_chunk *c, uint64_t *bytes, uint64_t *chunks);

/* The buffer events are appended to (wl_jfr_write_event), and the ticks of a session time. */
wl_pb_buf *wl_jfr_chunk_events(wl_jfr_chunk *c);
uint64_t wl_jfr_chunk_ticks(const wl_jfr_chunk *c, uint64_t ns);
/* After each event: widens the chunk's time span and writes the chunk out when it is full.
 * Returns -1 when the buffer failed or the write did. */
int wl_jfr_chunk_commit(wl_jfr_chunk *c, uint64_t start_ns, uint64_t end_ns);

/* A string field as a pool reference (a wl_jfr_string_fn; ctx = the chunk). NULL stays null and
 * "" empty, inline. */
void wl_jfr_chunk_string(void *ctx, wl_pb_buf *b, const char *s, size_t n);
/* The same for a string the caller names by a non-zero key (kernel names by id): the bytes are
 * hashed only the first time in each chunk. */
void wl_jfr_chunk_keyed_string(wl_jfr_chunk *c, wl_pb_buf *b, uint64_t key, const char *s, size_t n);

/* Threads and processes: names are given once (later calls rename); the key of (pid, tid) is
 * valid in every chunk and declared in each chunk it is used in. 0 when out of memory. */
int wl_jfr_chunk_name_process(wl_jfr_chunk *c, uint32_t pid, const char *name);
int wl_jfr_chunk_name_thread(wl_jfr_chunk *c, uint32_t pid, uint32_t tid, const char *name);
uint64_t wl_jfr_chunk_thread(wl_jfr_chunk *c, uint32_t pid, uint32_t tid);

#endif
