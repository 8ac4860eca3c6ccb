/* A small protobuf encoder (wire format only, no schema): varint, fixed64, double, bytes/strings
 * and nested messages into a growable buffer. Nested lengths are back-patched when the message
 * ends (the content is moved when the length needs more than one byte), so callers never compute
 * sizes. Errors are sticky: after an allocation failure every call is a no-op and wl_pb_ok()
 * returns 0, so a writer checks once per message. Used by perfetto_packets.c. */
#ifndef WARPLENS_EXPORT_PB_ENCODE_H
#define WARPLENS_EXPORT_PB_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { WL_PB_VARINT = 0, WL_PB_FIXED64 = 1, WL_PB_LEN = 2, WL_PB_FIXED32 = 5 };

typedef struct wl_pb_buf {
    uint8_t *data;
    size_t len, cap;
    int failed;     /* sticky allocation failure */
    int depth;      /* open nested messages (for checking balance) */
} wl_pb_buf;

void wl_pb_init(wl_pb_buf *b);
void wl_pb_free(wl_pb_buf *b);
/* Empties the buffer, keeping its memory (and clearing a failure). */
void wl_pb_reset(wl_pb_buf *b);
static inline int wl_pb_ok(const wl_pb_buf *b) { return !b->failed; }

/* Bytes a varint of v takes (1..10). */
size_t wl_pb_varint_size(uint64_t v);

/* Raw pieces (no tag). */
void wl_pb_put_varint(wl_pb_buf *b, uint64_t v);
void wl_pb_put_raw(wl_pb_buf *b, const void *p, size_t n);
void wl_pb_put_tag(wl_pb_buf *b, uint32_t field, int wire_type);

/* Tagged fields. Negative int64 take 10 bytes on the wire: prefer unsigned fields. */
void wl_pb_uint64(wl_pb_buf *b, uint32_t field, uint64_t v);
void wl_pb_int64(wl_pb_buf *b, uint32_t field, int64_t v);
void wl_pb_bool(wl_pb_buf *b, uint32_t field, int v);
void wl_pb_fixed64(wl_pb_buf *b, uint32_t field, uint64_t v);
void wl_pb_double(wl_pb_buf *b, uint32_t field, double v);
void wl_pb_bytes(wl_pb_buf *b, uint32_t field, const void *p, size_t n);
void wl_pb_string(wl_pb_buf *b, uint32_t field, const char *s);

/* Nested message: mark = wl_pb_begin(b, field); ...fields...; wl_pb_end(b, mark). */
size_t wl_pb_begin(wl_pb_buf *b, uint32_t field);
void wl_pb_end(wl_pb_buf *b, size_t mark);

/* Writes `msg` to fp as one length-delimited field (tag, length, bytes): how a streaming writer
 * emits `repeated Message field = N` of an outer message without holding the outer message.
 * Returns 0, or -1 if msg failed or the write failed. */
int wl_pb_write_delimited(FILE *fp, uint32_t field, const wl_pb_buf *msg);

#ifdef __cplusplus
}
#endif

#endif
