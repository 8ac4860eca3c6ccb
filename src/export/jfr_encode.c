/* JFR chunk bytes (see jfr_encode.h). */
#include "export/jfr_encode.h"

#include <string.h>

void wl_jfr_long_slow(wl_pb_buf *b, uint64_t v)
{
    uint8_t out[9];
    size_t n = 0;
    while (n < 8 && v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v; /* after eight groups of 7 bits, the last byte holds the top 8 */
    wl_pb_put_raw(b, out, n);
}

static void put_be(wl_pb_buf *b, uint64_t v, int bytes)
{
    uint8_t out[8];
    for (int i = 0; i < bytes; i++)
        out[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
    wl_pb_put_raw(b, out, (size_t)bytes);
}

void wl_jfr_double(wl_pb_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_be(b, bits, 8);
}

void wl_jfr_string(wl_pb_buf *b, const char *s, size_t n)
{
    if (!s) {
        wl_jfr_byte(b, WL_JFR_STR_NULL);
    } else if (n == 0) {
        wl_jfr_byte(b, WL_JFR_STR_EMPTY);
    } else {
        wl_jfr_byte(b, WL_JFR_STR_UTF8);
        wl_jfr_long(b, n > INT32_MAX ? INT32_MAX : n);
        wl_pb_put_raw(b, s, n > INT32_MAX ? INT32_MAX : n);
    }
}

void wl_jfr_string_ref(wl_pb_buf *b, uint64_t key)
{
    wl_jfr_byte(b, WL_JFR_STR_POOL);
    wl_jfr_long(b, key);
}

size_t wl_jfr_event_begin(wl_pb_buf *b, uint64_t type)
{
    size_t mark = b->len;
    static const uint8_t pad[4] = {0x80, 0x80, 0x80, 0};
    wl_pb_put_raw(b, pad, sizeof pad);
    wl_jfr_long(b, type);
    return mark;
}

int wl_jfr_event_end(wl_pb_buf *b, size_t mark)
{
    if (!wl_pb_ok(b))
        return -1;
    size_t size = b->len - mark;
    if (size > WL_JFR_EVENT_MAX) {
        b->failed = 1;
        return -1;
    }
    uint8_t *p = b->data + mark;
    p[0] = (uint8_t)(size | 0x80);
    p[1] = (uint8_t)((size >> 7) | 0x80);
    p[2] = (uint8_t)((size >> 14) | 0x80);
    p[3] = (uint8_t)((size >> 21) & 0x7f);
    return 0;
}

void wl_jfr_write_header(wl_pb_buf *b, const wl_jfr_header *h)
{
    static const uint8_t magic[4] = {'F', 'L', 'R', 0};
    wl_pb_put_raw(b, magic, 4);
    put_be(b, 2, 2); /* major */
    put_be(b, 0, 2); /* minor */
    put_be(b, h->chunk_size, 8);
    put_be(b, h->checkpoint_offset, 8);
    put_be(b, h->metadata_offset, 8);
    put_be(b, h->start_ns, 8);
    put_be(b, h->duration_ns, 8);
    put_be(b, h->start_ticks, 8);
    put_be(b, h->ticks_per_second, 8);
    /* state 0: finished (not being written); flags: bit 0 compressed integers, bit 1 final chunk.
     * Read as one big-endian int (the 2.0 readers' "features"), bit 0 is the same flag. */
    const uint8_t tail[4] = {0, 0, 0, (uint8_t)(1u | (h->final_chunk ? 2u : 0u))};
    wl_pb_put_raw(b, tail, 4);
}
