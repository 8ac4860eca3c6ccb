/* Unit tests of the background output writer (src/export/out_pipe.h) and the JSON writer over it:
 * the file must hold exactly the bytes handed over, in order, whichever way they were written
 * (around the page cache, through it, or through a FILE without a descriptor), whatever the
 * buffers' lengths and alignment, with the FILE's position at the end afterwards; a failing file
 * must fail the close. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/json_out.h"
#include "export/out_pipe.h"
#include "test.h"
#include "test_files.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) { return test_rand(&rng); }

#define DATA_BYTES (13u << 20)
static uint8_t *data;

static void append(wl_pb_buf *b, const uint8_t *s, size_t n)
{
    if (b->cap - b->len < n) { /* as the encoders grow: realloc, which may lose the alignment */
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

enum { WAY_SOME, WAY_ALL, WAY_MIXED };
static int last_direct; /* the pipe still wrote directly when the last bytes were handed over */

/* Hands data[0, n) to a pipe on fp in pieces of random length; returns the close's result. */
static int feed(FILE *fp, int cached, int way, size_t n, int *direct)
{
    wl_out_pipe *p = cached ? wl_out_pipe_open_cached(fp) : wl_out_pipe_open(fp);
    CHECK(p != NULL);
    if (!p)
        return -1;
    *direct = wl_out_pipe_direct(p);
    wl_pb_buf b;
    wl_pb_init(&b);
    if (way != WAY_ALL)
        CHECK_EQ_INT(wl_out_pipe_take(p, &b), 0);
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0;) {
        size_t k = 1 + rnd() % (rnd() % 4 ? 70000 : 3000000);
        if (k > n - at)
            k = n - at;
        append(&b, data + at, k);
        at += k;
        int some = way == WAY_SOME || (way == WAY_MIXED && rnd() % 2);
        if (b.len >= (1u << 20) || rnd() % 8 == 0)
            rc = some ? wl_out_pipe_push_some(p, &b) : wl_out_pipe_push(p, &b);
    }
    last_direct = wl_out_pipe_direct(p);
    if (wl_out_pipe_close(p, &b))
        rc = -1;
    CHECK_EQ_INT(b.len, 0);
    wl_pb_free(&b);
    return rc;
}

/* A new empty file in $TMPDIR (or /tmp) opened for writing; NULL (a failed check) when it cannot be. */
static FILE *temp_file(char *path, size_t size)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/wl_out_pipe_XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return NULL;
    close(fd);
    FILE *fp = fopen(path, "wb");
    CHECK(fp != NULL);
    return fp;
}

/* A file with a header of head bytes written through the FILE, then the pipe's bytes, then a
 * trailer through the FILE again: all in order, and the pipe direct only at an aligned offset. */
static void file_case(int cached, int way, size_t head, size_t n)
{
    char path[4096];
    FILE *fp = temp_file(path, sizeof path);
    if (!fp)
        return;
    static const char trailer[] = "-- the end --";
    uint8_t *hb = malloc(head + 1);
    for (size_t i = 0; i < head; i++)
        hb[i] = (uint8_t)(rnd() >> 56);
    CHECK_EQ_INT(fwrite(hb, 1, head, fp), head);
    int direct = 0;
    CHECK_EQ_INT(feed(fp, cached, way, n, &direct), 0);
    if (cached || head % 4096)
        CHECK_EQ_INT(direct, 0);
    CHECK_EQ_INT(ftell(fp), (long)(head + n));
    CHECK_EQ_INT(fwrite(trailer, 1, sizeof trailer, fp), sizeof trailer);
    CHECK_EQ_INT(fclose(fp), 0);
    size_t got = 0;
    uint8_t *f = slurp(path, &got);
    CHECK_EQ_INT(got, head + n + sizeof trailer);
    CHECK(f && got == head + n + sizeof trailer && !memcmp(f, hb, head) && !memcmp(f + head, data, n) &&
          !memcmp(f + head + n, trailer, sizeof trailer));
    printf("  %s, way %d, header %zu, %zu bytes: %s\n", cached ? "cached" : "default", way, head, n,
           !direct ? "through the page cache" : last_direct ? "direct" : "direct, then through the page cache");
    free(f);
    free(hb);
    unlink(path);
}

static void memstream_case(int way, size_t n)
{
    char *mem = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&mem, &len);
    CHECK(fp != NULL);
    if (!fp)
        return;
    int direct = 1;
    CHECK_EQ_INT(feed(fp, 0, way, n, &direct), 0);
    CHECK_EQ_INT(direct, 0);
    fclose(fp);
    CHECK(len == n && !memcmp(mem, data, n));
    free(mem);
}

static void test_bytes(void)
{
    for (int way = WAY_SOME; way <= WAY_MIXED; way++) {
        file_case(0, way, 0, DATA_BYTES);
        file_case(0, way, 8192, DATA_BYTES - 5);
        file_case(0, way, 100, DATA_BYTES - 4096);
        file_case(1, way, 0, DATA_BYTES - 1);
        file_case(0, way, 0, 3000); /* under a block: only the final write */
        file_case(0, way, 0, 0);
        memstream_case(way, DATA_BYTES - 77);
    }
}

/* File systems as the pipe may meet them: one that refuses direct writes (at once, or after a few),
 * and one whose writes come back short. */
static int refuse_after = -1;
static ssize_t refusing_write(int fd, const void *b, size_t n)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_DIRECT) && refuse_after-- <= 0) {
        errno = EINVAL;
        return -1;
    }
    return write(fd, b, n);
}

static ssize_t short_write(int fd, const void *b, size_t n) { return write(fd, b, n > 5000 ? 5000 : n); }

static void test_other_file_systems(void)
{
    refuse_after = 0;
    wl_out_pipe_set_write(refusing_write);
    file_case(0, WAY_SOME, 0, DATA_BYTES);
    CHECK_EQ_INT(last_direct, 0);
    refuse_after = 3;
    file_case(0, WAY_MIXED, 0, DATA_BYTES - 3);
    CHECK_EQ_INT(last_direct, 0);
    wl_out_pipe_set_write(short_write);
    file_case(0, WAY_SOME, 0, 3u << 20);
    file_case(0, WAY_ALL, 4096, (3u << 20) + 7);
    wl_out_pipe_set_write(NULL);
}

static void test_failing_file(void)
{
    FILE *fp = fopen("/dev/full", "wb");
    if (!fp)
        return;
    int direct = 0;
    CHECK_EQ_INT(feed(fp, 0, WAY_SOME, 4u << 20, &direct), -1);
    fclose(fp);
}

/* The JSON writer over the pipe writes what it writes without one. */
static void json_text(wl_json_out *j)
{
    uint64_t r = 1;
    for (int i = 0; i < 400000; i++) {
        r = r * 6364136223846793005u + 1442695040888963407u;
        wl_json_lit(j, "{\"name\":");
        char s[40];
        snprintf(s, sizeof s, "kernel_%u<%u>", (unsigned)(r >> 40), (unsigned)i);
        wl_json_str(j, s);
        wl_json_key(j, "ts");
        wl_json_us(j, (int64_t)(r >> 20));
        wl_json_key(j, "v");
        wl_json_double(j, (double)(r >> 11) / 9007199254740992.0);
        wl_json_lit(j, "},\n");
        if (i % 50000 == 0) { /* a raw write longer than any buffer */
            char *big = malloc(5u << 20);
            memset(big, 'x', 5u << 20);
            wl_json_raw(j, big, 5u << 20);
            free(big);
        }
    }
}

static void test_json_piped(void)
{
    char *mem = NULL;
    size_t len = 0;
    FILE *ref = open_memstream(&mem, &len);
    static wl_json_out j; /* 64 KiB inside: not on the stack */
    wl_json_init(&j, ref);
    json_text(&j);
    CHECK_EQ_INT(wl_json_flush(&j), 0);
    uint64_t ref_bytes = j.bytes;
    fclose(ref);
    char path[4096];
    FILE *fp = temp_file(path, sizeof path);
    if (!fp)
        return;
    wl_json_init_piped(&j, fp);
    CHECK(j.pipe != NULL);
    json_text(&j);
    CHECK_EQ_INT(wl_json_flush(&j), 0);
    CHECK_EQ_INT(j.bytes, ref_bytes);
    CHECK_EQ_INT(ftell(fp), (long)len);
    fclose(fp);
    size_t got = 0;
    uint8_t *f = slurp(path, &got);
    CHECK(f && got == len && !memcmp(f, mem, len));
    free(f);
    free(mem);
    unlink(path);
}

int main(void)
{
    data = malloc(DATA_BYTES);
    for (size_t i = 0; i < DATA_BYTES; i += 8) {
        uint64_t v = rnd();
        memcpy(data + i, &v, 8);
    }
    test_bytes();
    test_other_file_systems();
    test_failing_file();
    test_json_piped();
    free(data);
    return test_report("test_out_pipe");
}
