/* The byte level of the Java Flight Recorder chunk format (what OpenJDK's jdk.jfr.consumer and JDK
 * Mission Control read), on top of the growable buffer of pb_encode.h:
 *  - integers (short, int, long, char) are JFR's compressed varints: 7 bits a byte, low groups
 *    first, high bit = more follow; the ninth byte of a long carries 8 bits, so any 64-bit value
 *    takes at most 9 bytes. An int is written zero-extended from 32 bits (at most 5 bytes).
 *  - float and double are raw big-endian IEEE bits; byte and boolean one raw byte;
 *  - a string is an encoding byte (0 null, 1 empty, 2 constant-pool key, 3 UTF-8 bytes with a
 *    length) and its payload;
 *  - an event (and the metadata and checkpoint records, which are events with type ids 0 and 1)
 *    starts with its own total size; it is written as a 4-byte padded varint so the size can be
 *    patched when the event is complete (the JDK writes it the same way), which bounds an event
 *    at 2^28 - 1 bytes;
 *  - the 68-byte chunk header: magic "FLR\0", version 2.0, then big-endian chunk size, offsets of
 *    the last checkpoint and of the metadata event, start (epoch ns), duration (ns), start ticks,
 *    ticks per second, and the state/flag bytes (finished; compressed integers; final chunk).
 * Errors stay sticky in the buffer (wl_pb_ok), as in pb_encode.h. */
#ifndef WARPLENS_EXPORT_JFR_ENCODE_H
#define WARPLENS_EXPORT_JFR_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "export/pb_encode.h"

#define WL_JFR_HEADER_SIZE 68
#define WL_JFR_EVENT_MAX ((1u << 28) - 1)
#define WL_JFR_METADATA_TYPE 0
#define WL_JFR_CHECKPOINT_TYPE 1

enum { WL_JFR_STR_NULL = 0, WL_JFR_STR_EMPTY = 1, WL_JFR_STR_POOL = 2, WL_JFR_STR_UTF8 = 3 };

void wl_jfr_long_slow(wl_pb_buf *b, uint64_t v);
/* Called for every field of every event: encoded in place when the buffer has room. */
static inline void wl_jfr_long(wl_pb_buf *b, uint64_t v)
{
    if (b->cap - b->len < 9) {
        wl_jfr_long_slow(b, v);
        return;
    }
    uint8_t *p = b->data + b->len;
    size_t n = 0;
    while (n < 8 && v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v; /* after eight groups of 7 bits, the last byte holds the top 8 */
    b->len += n;
}
static inline void wl_jfr_int(wl_pb_buf *b, int32_t v) { wl_jfr_long(b, (uint32_t)v); }
void wl_jfr_double(wl_pb_buf *b, double v);
static inline void wl_jfr_byte(wl_pb_buf *b, uint8_t v)
{
    if (b->len < b->cap)
        b->data[b->len++] = v;
    else
        wl_pb_put_raw(b, &v, 1);
}
/* s may be NULL (written as null); n bytes of it as UTF-8 (invalid sequences are the reader's to
 * replace: Java decodes them as U+FFFD). */
void wl_jfr_string(wl_pb_buf *b, const char *s, size_t n);
static inline void wl_jfr_cstring(wl_pb_buf *b, const char *s) { wl_jfr_string(b, s, s ? strlen(s) : 0); }
void wl_jfr_string_ref(wl_pb_buf *b, uint64_t key);

/* mark = wl_jfr_event_begin(b, type); ...fields...; wl_jfr_event_end(b, mark) patches the size.
 * Returns -1 (and fails the buffer) when the event is larger than WL_JFR_EVENT_MAX. */
size_t wl_jfr_event_begin(wl_pb_buf *b, uint64_t type);
int wl_jfr_event_end(wl_pb_buf *b, size_t mark);

typedef struct wl_jfr_header {
    uint64_t chunk_size;        /* header included */
    uint64_t checkpoint_offset; /* of the last checkpoint event, from the chunk's start */
    uint64_t metadata_offset;
    uint64_t start_ns;          /* epoch nanoseconds of start_ticks */
    uint64_t duration_ns;
    uint64_t start_ticks;
    uint64_t ticks_per_second;
    int final_chunk;
} wl_jfr_header;
/* Appends the 68 header bytes. */
void wl_jfr_write_header(wl_pb_buf *b, const wl_jfr_header *h);

#endif
