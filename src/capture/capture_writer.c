/* The capture file as the writer thread produces it: records appended to a 1 MiB buffer and
 * written with write(2) when it fills or on flush, strings interned so a kernel name is stored
 * once. Only the writer thread calls these functions (and the exit path after it has stopped). */
#include "capture/recorder.h"
#include "common/fnv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

#define OUT_BUF (1u << 20)
#define STR_TABLE_BITS 16
#define STR_TABLE_SIZE (1u << STR_TABLE_BITS)

typedef struct str_entry {
    uint64_t hash;
    uint32_t id;
    uint32_t len;
    char *text;
} str_entry;

static int g_fd = -1;
static uint8_t *g_buf;
static size_t g_used;
static uint64_t g_records, g_bytes;
static str_entry *g_strings;
static uint32_t g_next_string = 1, g_string_count;
static int g_write_failed;

static void write_all(const uint8_t *p, size_t n)
{
    while (n && !g_write_failed) {
        ssize_t w = write(g_fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            g_write_failed = 1;
            wl_log("cannot write the capture file: %s; recording stops here", strerror(errno));
            return;
        }
        p += w;
        n -= (size_t)w;
        g_bytes += (uint64_t)w;
    }
}

int wl_capw_open(const char *path, uint64_t pid, uint64_t start_ns)
{
    g_buf = malloc(OUT_BUF);
    g_strings = calloc(STR_TABLE_SIZE, sizeof *g_strings);
    if (!g_buf || !g_strings) {
        wl_log("out of memory for the capture writer; this process is not recorded");
        return -1;
    }
    g_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (g_fd < 0) {
        wl_log("cannot create capture file %s: %s; this process is not recorded", path, strerror(errno));
        return -1;
    }
    wlcap_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, WLCAP_MAGIC, WLCAP_MAGIC_LEN);
    h.version = WLCAP_VERSION;
    h.header_size = sizeof h;
    h.pid = pid;
    h.start_ns = start_ns;
    write_all((const uint8_t *)&h, sizeof h);
    return g_write_failed ? -1 : 0;
}

static void append(const void *p, size_t n)
{
    if (g_used + n > OUT_BUF) {
        write_all(g_buf, g_used);
        g_used = 0;
    }
    memcpy(g_buf + g_used, p, n);
    g_used += n;
}

void wl_capw_record(uint16_t type, const void *payload, uint32_t size)
{
    if (g_fd < 0 || g_write_failed)
        return;
    wlcap_record_header h = {type, 0, size};
    append(&h, sizeof h);
    append(payload, size);
    g_records++;
}

static uint32_t emit_string(const char *s, uint32_t len)
{
    uint32_t id = g_next_string++;
    wlcap_string hdr = {id, len};
    if (g_fd >= 0 && !g_write_failed) {
        wlcap_record_header h = {WLCAP_STRING, 0, (uint32_t)sizeof hdr + len};
        append(&h, sizeof h);
        append(&hdr, sizeof hdr);
        /* strings longer than the buffer go straight to the file */
        if (len > OUT_BUF / 2) {
            write_all(g_buf, g_used);
            g_used = 0;
            write_all((const uint8_t *)s, len);
        } else {
            append(s, len);
        }
        g_records++;
    }
    return id;
}

uint32_t wl_capw_string_n(const char *s, size_t n)
{
    if (!s)
        return 0;
    if (n > WLCAP_MAX_PAYLOAD - sizeof(wlcap_string))
        n = WLCAP_MAX_PAYLOAD - sizeof(wlcap_string);
    uint64_t h = wl_fnv1a(WL_FNV_OFFSET, s, n);
    /* open addressing; once the table is 3/4 full new strings are written without interning */
    uint32_t i = (uint32_t)(h & (STR_TABLE_SIZE - 1));
    for (uint32_t probe = 0; probe < STR_TABLE_SIZE; probe++, i = (i + 1) & (STR_TABLE_SIZE - 1)) {
        str_entry *e = &g_strings[i];
        if (!e->text)
            break;
        if (e->hash == h && e->len == n && memcmp(e->text, s, n) == 0)
            return e->id;
    }
    uint32_t id = emit_string(s, (uint32_t)n);
    if (g_string_count < STR_TABLE_SIZE / 4 * 3 && !g_strings[i].text) {
        char *copy = malloc(n + 1);
        if (copy) {
            memcpy(copy, s, n);
            copy[n] = 0;
            g_strings[i] = (str_entry){h, id, (uint32_t)n, copy};
            g_string_count++;
        }
    }
    return id;
}

uint32_t wl_capw_string(const char *s) { return s ? wl_capw_string_n(s, strlen(s)) : 0; }

void wl_capw_flush(void)
{
    if (g_fd < 0)
        return;
    if (g_used)
        write_all(g_buf, g_used);
    g_used = 0;
}

int wl_capw_close(void)
{
    if (g_fd < 0)
        return -1;
    wl_capw_flush();
    int rc = g_write_failed ? -1 : 0;
    if (fsync(g_fd) != 0 && errno != EINVAL)
        rc = -1;
    if (close(g_fd) != 0)
        rc = -1;
    g_fd = -1;
    return rc;
}

uint64_t wl_capw_records(void) { return g_records; }
uint64_t wl_capw_bytes(void) { return g_bytes + g_used; }
