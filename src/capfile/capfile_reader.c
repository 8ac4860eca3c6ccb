/* Capture file reader (see capfile_reader.h): bounds-checked walk over typed records. */
#include "capfile/capfile_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(wlcap_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    return -1;
}

int wlcap_reader_open_memory(wlcap_reader *r, const void *data, size_t size)
{
    int mapped = r->mapped;
    memset(r, 0, sizeof *r);
    r->mapped = mapped;
    r->data = data;
    r->size = size;
    if (size < WLCAP_MAGIC_LEN || memcmp(data, WLCAP_MAGIC, WLCAP_MAGIC_LEN) != 0)
        return fail(r, "not a warplens capture file (bad magic at offset 0)");
    if (size < sizeof(wlcap_file_header))
        return fail(r, "capture file header truncated: %zu of %zu bytes", size,
                    sizeof(wlcap_file_header));
    memcpy(&r->header, data, sizeof r->header);
    if (r->header.version != WLCAP_VERSION)
        return fail(r, "capture file version %u is not supported (this warplens reads version %u)",
                    r->header.version, WLCAP_VERSION);
    if (r->header.header_size < sizeof(wlcap_file_header) || r->header.header_size > size)
        return fail(r, "bad capture header size %u at offset 12", r->header.header_size);
    r->pos = r->header.header_size;
    return 0;
}

int wlcap_reader_open_file(wlcap_reader *r, const char *path)
{
    memset(r, 0, sizeof *r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(r, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(r, "cannot stat %s: %s", path, strerror(e));
    }
    if (st.st_size == 0) {
        close(fd);
        return fail(r, "%s is empty (the recorder wrote nothing)", path);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return fail(r, "cannot map %s: %s", path, strerror(errno));
    r->mapped = 1;
    if (wlcap_reader_open_memory(r, p, (size_t)st.st_size) != 0) {
        char msg[sizeof r->error];
        memcpy(msg, r->error, sizeof msg);
        munmap(p, (size_t)st.st_size);
        r->data = NULL;
        r->mapped = 0;
        return fail(r, "%.120s: %.130s", path, msg);
    }
    return 0;
}

void wlcap_reader_close(wlcap_reader *r)
{
    if (r->mapped && r->data)
        munmap((void *)r->data, r->size);
    r->data = NULL;
    r->mapped = 0;
}

int wlcap_reader_next(wlcap_reader *r, uint16_t *type, const uint8_t **payload, uint32_t *size)
{
    for (;;) {
        if (r->pos == r->size)
            return 0;
        if (r->size - r->pos < sizeof(wlcap_record_header)) {
            r->truncated_tail = 1;
            return 0;
        }
        wlcap_record_header h;
        memcpy(&h, r->data + r->pos, sizeof h);
        size_t at = r->pos;
        if (h.size > WLCAP_MAX_PAYLOAD)
            return fail(r, "record at offset %zu claims %u payload bytes (limit %u)", at, h.size,
                        WLCAP_MAX_PAYLOAD);
        if (r->size - r->pos - sizeof h < h.size) {
            r->truncated_tail = 1;
            return 0;
        }
        const uint8_t *p = r->data + r->pos + sizeof h;
        r->pos += sizeof h + h.size;
        if (h.type == 0)
            return fail(r, "record at offset %zu has type 0", at);
        /* unknown: beyond this reader, or a number reserved for records it does not know */
        if (h.type >= WLCAP_TYPE_COUNT || (h.type != WLCAP_STRING && wlcap_payload_size(h.type) == 0)) {
            r->unknown_records++;
            continue;
        }
        if (h.type == WLCAP_STRING) {
            wlcap_string s;
            if (h.size < sizeof s)
                return fail(r, "string record at offset %zu is %u bytes, shorter than its header", at,
                            h.size);
            memcpy(&s, p, sizeof s);
            if (s.len > h.size - sizeof s)
                return fail(r, "string record at offset %zu: length %u exceeds its record (%u bytes)",
                            at, s.len, h.size - (uint32_t)sizeof s);
            if (s.id == 0)
                return fail(r, "string record at offset %zu uses the reserved id 0", at);
        } else if (h.size < wlcap_payload_size(h.type)) {
            return fail(r, "%s record at offset %zu is %u bytes, expected at least %u",
                        wlcap_type_name(h.type), at, h.size, wlcap_payload_size(h.type));
        }
        *type = h.type;
        *payload = p;
        *size = h.size;
        return 1;
    }
}
