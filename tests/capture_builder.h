/* Builds capture files (.wlcap) in memory for tests: the same layout the recorder writes, with
 * helpers for strings and each record type, so store tests need no GPU. */
#ifndef WARPLENS_TEST_CAPTURE_BUILDER_H
#define WARPLENS_TEST_CAPTURE_BUILDER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile.h"

typedef struct capbuf {
    unsigned char *data;
    size_t len, cap;
    uint32_t next_string;
} capbuf;

static inline void cb_put(capbuf *b, const void *p, size_t n)
{
    if (!n)
        return;
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 4096;
        b->data = realloc(b->data, b->cap);
        if (!b->data)
            abort();
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void cb_init(capbuf *b, uint64_t pid, uint64_t start_ns)
{
    memset(b, 0, sizeof *b);
    b->next_string = 1;
    wlcap_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, WLCAP_MAGIC, WLCAP_MAGIC_LEN);
    h.version = WLCAP_VERSION;
    h.header_size = sizeof h;
    h.pid = pid;
    h.start_ns = start_ns;
    cb_put(b, &h, sizeof h);
}

static inline void cb_record(capbuf *b, uint16_t type, const void *payload, uint32_t size)
{
    wlcap_record_header h = {type, 0, size};
    cb_put(b, &h, sizeof h);
    cb_put(b, payload, size);
}

static inline uint32_t cb_string(capbuf *b, const char *s)
{
    wlcap_string h = {b->next_string++, (uint32_t)strlen(s)};
    wlcap_record_header rh = {WLCAP_STRING, 0, (uint32_t)(sizeof h + h.len)};
    cb_put(b, &rh, sizeof rh);
    cb_put(b, &h, sizeof h);
    cb_put(b, s, h.len);
    return h.id;
}

static inline int cb_write(const capbuf *b, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = !b->len || fwrite(b->data, 1, b->len, f) == b->len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

#endif
