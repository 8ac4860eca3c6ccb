/* A minimal protobuf reader for the trace tests: varints, fixed64 and length-delimited fields of
 * a Perfetto trace, without the protobuf library. A malformed input sets `bad` and stops. */
#ifndef WARPLENS_TEST_PB_READER_H
#define WARPLENS_TEST_PB_READER_H

#include <stdint.h>
#include <string.h>

typedef struct rd {
    const uint8_t *p, *end;
    int bad;
} rd;

static inline uint64_t varint(rd *r)
{
    uint64_t v = 0;
    for (int s = 0; s < 64; s += 7) {
        if (r->p >= r->end) {
            r->bad = 1;
            return 0;
        }
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

/* One field: returns 0 at the end; *sub gets LEN payloads (empty otherwise), *val varints/fixed64. */
static inline int field(rd *r, uint32_t *num, int *wt, uint64_t *val, rd *sub)
{
    memset(sub, 0, sizeof *sub);
    if (r->p >= r->end || r->bad)
        return 0;
    uint64_t tag = varint(r);
    *num = (uint32_t)(tag >> 3);
    *wt = (int)(tag & 7);
    if (*wt == 0) {
        *val = varint(r);
    } else if (*wt == 1) {
        if (r->end - r->p < 8) {
            r->bad = 1;
            return 0;
        }
        memcpy(val, r->p, 8);
        r->p += 8;
    } else if (*wt == 2) {
        uint64_t n = varint(r);
        if ((uint64_t)(r->end - r->p) < n) {
            r->bad = 1;
            return 0;
        }
        *sub = (rd){r->p, r->p + n, 0};
        r->p += n;
    } else {
        r->bad = 1;
        return 0;
    }
    return !r->bad;
}

#endif
