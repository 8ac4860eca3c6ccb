/* In-kernel buffer side files: writer helpers and the hostile-input reader (inkernel_file.h). */
#include "capfile/inkernel_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t err_size, const char *fmt, ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static uint64_t names_end(const wlik_header *h, uint64_t header_size)
{
    return header_size + (uint64_t)h->events_len + (uint64_t)h->groups_len;
}

uint64_t wlik_words_offset(const wlik_header *h)
{
    return (names_end(h, h->header_size) + 7u) & ~(uint64_t)7u;
}

int wlik_write_header(FILE *fp, const wlik_header *h, const char *events, const char *groups)
{
    static const char zeros[8];
    if (fwrite(h, sizeof *h, 1, fp) != 1)
        return -1;
    if (h->events_len && fwrite(events, 1, h->events_len, fp) != h->events_len)
        return -1;
    if (h->groups_len && fwrite(groups, 1, h->groups_len, fp) != h->groups_len)
        return -1;
    uint64_t pad = wlik_words_offset(h) - names_end(h, h->header_size);
    if (pad && fwrite(zeros, 1, (size_t)pad, fp) != pad)
        return -1;
    return 0;
}

static char *copy_names(const uint8_t *p, uint32_t len)
{
    char *s = malloc((size_t)len + 1);
    if (!s)
        return NULL;
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

/* Takes ownership of data (malloc'ed, size bytes) in every case. */
static int parse_owned(uint8_t *data, size_t size, wlik_file *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    wlik_header h;
    if (size < sizeof h) {
        free(data);
        return fail(err, err_size, "truncated in-kernel buffer file: %zu bytes, the header needs %zu (offset %zu)",
                    size, sizeof h, size);
    }
    memcpy(&h, data, sizeof h);
    if (memcmp(h.magic, WLIK_MAGIC, WLIK_MAGIC_LEN) != 0) {
        free(data);
        return fail(err, err_size, "not a warplens in-kernel buffer file (bad magic at offset 0)");
    }
    if (h.version != WLIK_VERSION) {
        free(data);
        return fail(err, err_size, "in-kernel buffer file version %u is not %u (offset 8)", h.version, WLIK_VERSION);
    }
    if (h.header_size < sizeof h || h.header_size > size) {
        free(data);
        return fail(err, err_size, "bad header size %u (offset 12; file has %zu bytes)", h.header_size, size);
    }
    if (h.events_len > WLIK_MAX_NAMES_LEN || h.groups_len > WLIK_MAX_NAMES_LEN) {
        free(data);
        return fail(err, err_size, "name lists of %u and %u bytes exceed %u (offset 92)", h.events_len,
                    h.groups_len, WLIK_MAX_NAMES_LEN);
    }
    uint64_t words_at = wlik_words_offset(&h);
    if (words_at > size) {
        free(data);
        return fail(err, err_size, "name lists end past the file (offset %llu, file has %zu bytes)",
                    (unsigned long long)names_end(&h, h.header_size), size);
    }
    if (h.n_words == 0 || h.n_words > WLIK_MAX_WORDS) {
        free(data);
        return fail(err, err_size, "bad word count %llu (offset 32)", (unsigned long long)h.n_words);
    }
    uint64_t have = (size - words_at) / 8;
    if (have != h.n_words || (size - words_at) % 8) {
        free(data);
        return fail(err, err_size, "%s: header says %llu words, the file holds %llu bytes of words from offset %llu",
                    have < h.n_words ? "truncated" : "trailing bytes", (unsigned long long)h.n_words,
                    (unsigned long long)(size - words_at), (unsigned long long)words_at);
    }
    out->events = copy_names(data + h.header_size, h.events_len);
    out->groups = copy_names(data + h.header_size + h.events_len, h.groups_len);
    if (!out->events || !out->groups) {
        free(out->events);
        free(out->groups);
        free(data);
        memset(out, 0, sizeof *out);
        return fail(err, err_size, "out of memory");
    }
    out->header = h;
    out->data = data;
    out->words = (const uint64_t *)(const void *)(data + words_at); /* malloc alignment + multiple of 8 */
    out->n_words = (size_t)h.n_words;
    return 0;
}

int wlik_parse(const void *bytes, size_t size, wlik_file *out, char *err, size_t err_size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) {
        memset(out, 0, sizeof *out);
        return fail(err, err_size, "out of memory");
    }
    if (size)
        memcpy(copy, bytes, size);
    return parse_owned(copy, size, out, err, err_size);
}

int wlik_read(const char *path, wlik_file *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return fail(err, err_size, "cannot open %s: %s", path, strerror(errno));
    if (fseek(fp, 0, SEEK_END) != 0) {
        fclose(fp);
        return fail(err, err_size, "cannot seek in %s", path);
    }
    long end = ftell(fp);
    if (end < 0 || (unsigned long long)end > WLIK_MAX_WORDS * 8ull + 2u * WLIK_MAX_NAMES_LEN + 4096u) {
        fclose(fp);
        return fail(err, err_size, "%s: unreasonable size", path);
    }
    rewind(fp);
    size_t size = (size_t)end;
    uint8_t *data = malloc(size ? size : 1);
    if (!data) {
        fclose(fp);
        return fail(err, err_size, "%s: out of memory for %zu bytes", path, size);
    }
    size_t got = fread(data, 1, size, fp);
    fclose(fp);
    if (got != size) {
        free(data);
        return fail(err, err_size, "%s: short read (%zu of %zu bytes)", path, got, size);
    }
    int rc = parse_owned(data, size, out, err, err_size);
    if (rc != 0 && err && err_size) {
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s: %s", path, err);
        snprintf(err, err_size, "%s", tmp);
    }
    return rc;
}

void wlik_file_free(wlik_file *f)
{
    if (!f)
        return;
    free(f->events);
    free(f->groups);
    free(f->data);
    memset(f, 0, sizeof *f);
}
