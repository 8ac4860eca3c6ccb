/* Protobuf wire encoder (see pb_encode.h). */
#include "export/pb_encode.h"
#include "export/utf8.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

void wl_pb_init(wl_pb_buf *b) { memset(b, 0, sizeof *b); }

void wl_pb_free(wl_pb_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void wl_pb_reset(wl_pb_buf *b)
{
    b->len = 0;
    b->failed = 0;
    b->depth = 0;
}

static int reserve(wl_pb_buf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (extra > SIZE_MAX - b->len) {
        b->failed = 1;
        return -1;
    }
    if (wl_reserve((void **)&b->data, &b->cap, b->len + extra, 256)) {
        b->failed = 1;
        return -1;
    }
    return 0;
}

size_t wl_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t encode_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

void wl_pb_put_varint(wl_pb_buf *b, uint64_t v)
{
    if (reserve(b, 10))
        return;
    b->len += encode_varint(b->data + b->len, v);
}

void wl_pb_put_raw(wl_pb_buf *b, const void *p, size_t n)
{
    if (n == 0 || reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void wl_pb_put_tag(wl_pb_buf *b, uint32_t field, int wire_type)
{
    wl_pb_put_varint(b, ((uint64_t)field << 3) | (uint64_t)(wire_type & 7));
}

void wl_pb_uint64(wl_pb_buf *b, uint32_t field, uint64_t v)
{
    wl_pb_put_tag(b, field, WL_PB_VARINT);
    wl_pb_put_varint(b, v);
}

void wl_pb_int64(wl_pb_buf *b, uint32_t field, int64_t v)
{
    wl_pb_uint64(b, field, (uint64_t)v); /* two's complement, as protobuf int64 specifies */
}

void wl_pb_bool(wl_pb_buf *b, uint32_t field, int v) { wl_pb_uint64(b, field, v ? 1 : 0); }

void wl_pb_fixed64(wl_pb_buf *b, uint32_t field, uint64_t v)
{
    wl_pb_put_tag(b, field, WL_PB_FIXED64);
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    wl_pb_put_raw(b, le, sizeof le);
}

void wl_pb_double(wl_pb_buf *b, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    wl_pb_fixed64(b, field, bits);
}

void wl_pb_bytes(wl_pb_buf *b, uint32_t field, const void *p, size_t n)
{
    wl_pb_put_tag(b, field, WL_PB_LEN);
    wl_pb_put_varint(b, n);
    wl_pb_put_raw(b, p, n);
}

void wl_pb_string(wl_pb_buf *b, uint32_t field, const char *s)
{
    if (!s)
        s = "";
    /* protobuf strings are UTF-8: bytes that are not (session text is user data) become U+FFFD */
    size_t n = 0, bad = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int k = wl_utf8_len(p);
        bad += !k;
        n += k ? (size_t)k : 1;
        p += k ? k : 1;
    }
    if (!bad) {
        wl_pb_bytes(b, field, s, n);
        return;
    }
    char *fixed = malloc(n + 2 * bad);
    if (!fixed) {
        wl_pb_bytes(b, field, "", 0); /* (out of memory: an empty name rather than an invalid one) */
        return;
    }
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int k = wl_utf8_len(p);
        if (k)
            memcpy(fixed + o, p, (size_t)k), o += (size_t)k, p += k;
        else
            memcpy(fixed + o, "\xef\xbf\xbd", 3), o += 3, p++;
    }
    wl_pb_bytes(b, field, fixed, o);
    free(fixed);
}

size_t wl_pb_begin(wl_pb_buf *b, uint32_t field)
{
    wl_pb_put_tag(b, field, WL_PB_LEN);
    if (reserve(b, 1))
        return 0;
    size_t mark = b->len;
    b->data[b->len++] = 0; /* one-byte length placeholder, widened in wl_pb_end if needed */
    b->depth++;
    return mark;
}

void wl_pb_end(wl_pb_buf *b, size_t mark)
{
    if (b->failed)
        return;
    if (mark >= b->len || b->depth <= 0) { /* unbalanced: a programming error, fail loudly */
        b->failed = 1;
        return;
    }
    b->depth--;
    size_t body = b->len - mark - 1;
    size_t vs = wl_pb_varint_size(body);
    if (vs > 1) {
        if (reserve(b, vs - 1))
            return;
        memmove(b->data + mark + vs, b->data + mark + 1, body);
        b->len += vs - 1;
    }
    encode_varint(b->data + mark, body);
}

int wl_pb_write_delimited(FILE *fp, uint32_t field, const wl_pb_buf *msg)
{
    if (msg->failed || msg->depth != 0)
        return -1;
    uint8_t hdr[20];
    size_t n = encode_varint(hdr, ((uint64_t)field << 3) | WL_PB_LEN);
    n += encode_varint(hdr + n, msg->len);
    if (fwrite(hdr, 1, n, fp) != n)
        return -1;
    if (msg->len && fwrite(msg->data, 1, msg->len, fp) != msg->len)
        return -1;
    return 0;
}
