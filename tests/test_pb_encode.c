/* Unit tests of the protobuf encoder (src/export/pb_encode.h) and the Perfetto packet writer's
 * framing and interning (src/export/perfetto_packets.h), byte by byte. */
#include <stdlib.h>

#include "export/out_pipe.h"
#include "export/pb_encode.h"
#include "export/perfetto_packets.h"
#include "test.h"

static int bytes_eq(const wl_pb_buf *b, const uint8_t *want, size_t n)
{
    return b->len == n && memcmp(b->data, want, n) == 0;
}

static void test_scalars(void)
{
    wl_pb_buf b;
    wl_pb_init(&b);
    wl_pb_uint64(&b, 1, 0);
    wl_pb_uint64(&b, 1, 150);
    const uint8_t a[] = {0x08, 0x00, 0x08, 0x96, 0x01};
    CHECK(bytes_eq(&b, a, sizeof a));
    wl_pb_reset(&b);
    wl_pb_uint64(&b, 2, UINT64_MAX);
    CHECK_EQ_INT(b.len, 11);
    CHECK(b.data[10] == 0x01);
    wl_pb_reset(&b);
    wl_pb_int64(&b, 1, -1);
    CHECK_EQ_INT(b.len, 11); /* negative int64: ten-byte varint, as protobuf specifies */
    wl_pb_reset(&b);
    wl_pb_fixed64(&b, 47, 0x0102030405060708ull);
    const uint8_t f[] = {0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
    CHECK(bytes_eq(&b, f, sizeof f));
    wl_pb_reset(&b);
    wl_pb_double(&b, 44, 1.0);
    const uint8_t d[] = {0xe1, 0x02, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    CHECK(bytes_eq(&b, d, sizeof d));
    wl_pb_reset(&b);
    wl_pb_string(&b, 2, "hi");
    const uint8_t s[] = {0x12, 0x02, 'h', 'i'};
    CHECK(bytes_eq(&b, s, sizeof s));
    /* strings are UTF-8 on the wire: valid sequences kept, other bytes become U+FFFD */
    wl_pb_reset(&b);
    wl_pb_string(&b, 2, "\xc3\xa9\xff" "a\xe2\x82");
    /* (each byte that starts no valid sequence is one U+FFFD: the cut \xe2\x82 is two) */
    const uint8_t u[] = {0x12, 0x0c, 0xc3, 0xa9, 0xef, 0xbf, 0xbd, 'a', 0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd};
    CHECK(bytes_eq(&b, u, sizeof u));
    CHECK_EQ_INT(wl_pb_varint_size(127), 1);
    CHECK_EQ_INT(wl_pb_varint_size(128), 2);
    CHECK_EQ_INT(wl_pb_varint_size(UINT64_MAX), 10);
    wl_pb_free(&b);
}

static void test_nested(void)
{
    wl_pb_buf b;
    wl_pb_init(&b);
    size_t outer = wl_pb_begin(&b, 1);
    size_t inner = wl_pb_begin(&b, 2);
    char big[300];
    memset(big, 'x', sizeof big);
    wl_pb_bytes(&b, 3, big, sizeof big); /* 1 + 2 + 300 = 303 bytes */
    wl_pb_end(&b, inner);                /* inner length 303 needs two bytes */
    wl_pb_uint64(&b, 4, 1);
    wl_pb_end(&b, outer);
    CHECK(wl_pb_ok(&b));
    CHECK_EQ_INT(b.depth, 0);
    /* outer: tag 0x0a, len = 1 + 2 + 303 + 2 = 308 (0xb4 0x02) */
    CHECK(b.len == 3 + 308);
    CHECK(b.data[0] == 0x0a && b.data[1] == 0xb4 && b.data[2] == 0x02);
    CHECK(b.data[3] == 0x12 && b.data[4] == 0xaf && b.data[5] == 0x02); /* 303 */
    CHECK(b.data[6] == 0x1a && b.data[7] == 0xac && b.data[8] == 0x02); /* 300 */
    CHECK(b.data[9] == 'x' && b.data[308] == 'x');
    CHECK(b.data[309] == 0x20 && b.data[310] == 0x01);
    /* unbalanced end fails sticky */
    wl_pb_end(&b, 0);
    CHECK(!wl_pb_ok(&b));
    wl_pb_free(&b);
}

/* Walks Trace.packet framing: every byte must belong to a field-1 LEN record. */
static int framing_ok(const uint8_t *p, size_t n, size_t *packets)
{
    size_t i = 0;
    *packets = 0;
    while (i < n) {
        if (p[i++] != 0x0a)
            return 0;
        uint64_t len = 0;
        int shift = 0;
        while (i < n && (p[i] & 0x80)) {
            len |= (uint64_t)(p[i++] & 0x7f) << shift;
            shift += 7;
        }
        if (i >= n)
            return 0;
        len |= (uint64_t)p[i++] << shift;
        if (len > n - i)
            return 0;
        i += len;
        (*packets)++;
    }
    return 1;
}

static size_t count_sub(const uint8_t *p, size_t n, const char *s)
{
    size_t k = strlen(s), c = 0;
    for (size_t i = 0; i + k <= n; i++)
        c += memcmp(p + i, s, k) == 0;
    return c;
}

static void test_perfetto_writer(void)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    wl_pf_writer w;
    CHECK_EQ_INT(wl_pf_init(&w, fp, 7, 0), 0);
    wl_pf_track t = {.uuid = 10, .name = "lane", .has_process = 1, .pid = 0x10000000,
                     .process_name = "GPU 0"};
    CHECK_EQ_INT(wl_pf_write_track(&w, &t), 0);
    uint64_t flow = 0x55;
    wl_pf_arg arg = {.name = "bytes", .kind = WL_PF_ARG_UINT, .u = 4096};
    wl_pf_event e = {.type = WL_PF_SLICE_BEGIN, .ts = 100, .track_uuid = 10,
                     .name = "unique_name_x", .category = "cat", .flow_ids = &flow,
                     .n_flow_ids = 1, .args = &arg, .n_args = 1};
    CHECK_EQ_INT(wl_pf_write_event(&w, &e), 0);
    e.type = WL_PF_SLICE_END;
    e.name = NULL;
    e.ts = 200;
    e.n_flow_ids = 0;
    CHECK_EQ_INT(wl_pf_write_event(&w, &e), 0);
    e.type = WL_PF_SLICE_BEGIN;
    e.name = "unique_name_x"; /* interned already: not repeated */
    e.ts = 300;
    CHECK_EQ_INT(wl_pf_write_event(&w, &e), 0);
    e.track_uuid = 0;
    CHECK_EQ_INT(wl_pf_write_event(&w, &e), -1); /* no track: refused */
    w.failed = 0;
    CHECK_EQ_INT(wl_pf_finish(&w), 0);
    fclose(fp);
    size_t packets;
    CHECK(framing_ok((const uint8_t *)buf, size, &packets));
    CHECK_EQ_INT(packets, 4);
    CHECK_EQ_INT(count_sub((const uint8_t *)buf, size, "unique_name_x"), 1);
    CHECK_EQ_INT(count_sub((const uint8_t *)buf, size, "bytes"), 1);
    free(buf);
}

/* Writes the same END and COUNTER events through wl_pf_write_event (fast = 0) or the direct
 * wl_pf_write_end / wl_pf_write_counter (fast = 1); returns the bytes. */
static char *plain_events(int fast, uint32_t clock_id, int first_plain, size_t *size)
{
    char *buf = NULL;
    FILE *fp = open_memstream(&buf, size);
    wl_pf_writer w;
    CHECK_EQ_INT(wl_pf_init(&w, fp, 3, clock_id), 0);
    if (!first_plain) {
        wl_pf_event b = {.type = WL_PF_SLICE_BEGIN, .ts = 5, .track_uuid = 9, .name = "k", .category = "c"};
        CHECK_EQ_INT(wl_pf_write_event(&w, &b), 0);
    }
    const struct { int type; uint64_t ts, uuid; double v; } ev[] = {
        {WL_PF_COUNTER, 0, 1, 12.5},      {WL_PF_SLICE_END, 7, 9, 0},
        {WL_PF_SLICE_END, UINT64_C(1) << 40, UINT64_C(1) << 62, 0},
        {WL_PF_COUNTER, 300, UINT64_C(0x4000000000000123), -3.25}, {WL_PF_COUNTER, 301, 2, 0}};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        if (fast)
            CHECK_EQ_INT(ev[i].type == WL_PF_SLICE_END ? wl_pf_write_end(&w, ev[i].ts, ev[i].uuid)
                                                       : wl_pf_write_counter(&w, ev[i].ts, ev[i].uuid, ev[i].v),
                         0);
        else {
            wl_pf_event e = {.type = ev[i].type, .ts = ev[i].ts, .track_uuid = ev[i].uuid,
                             .has_double_value = ev[i].type == WL_PF_COUNTER, .double_value = ev[i].v};
            CHECK_EQ_INT(wl_pf_write_event(&w, &e), 0);
        }
    }
    CHECK_EQ_INT(fast ? wl_pf_write_end(&w, 1, 0) : -1, -1); /* no track: refused */
    w.failed = 0;
    CHECK_EQ_INT(wl_pf_finish(&w), 0);
    fclose(fp);
    return buf;
}

static void test_plain_events_match(void)
{
    for (int variant = 0; variant < 4; variant++) {
        uint32_t clock = variant & 1 ? WL_PF_CLOCK_SEQUENCE_0 : 0;
        size_t na = 0, nb = 0, packets = 0;
        char *a = plain_events(0, clock, variant >> 1, &na), *b = plain_events(1, clock, variant >> 1, &nb);
        CHECK(na > 0);
        CHECK_EQ_INT(na, nb);
        CHECK(na == nb && memcmp(a, b, na) == 0);
        CHECK(framing_ok((const uint8_t *)b, nb, &packets));
        CHECK_EQ_INT(packets, variant >> 1 ? 5 : 6);
        free(a);
        free(b);
    }
}

static int pipe_out(void *ctx, wl_pb_buf *out, int last)
{
    return last ? wl_out_pipe_close(ctx, out) : wl_out_pipe_push_some(ctx, out);
}

/* Several MiB of events written synchronously or through the background writer (async); the
 * bytes must be the same, and a failing file must fail wl_pf_finish. */
static int many_events(FILE *fp, int async)
{
    wl_pf_writer w;
    if (wl_pf_init(&w, fp, 1, WL_PF_CLOCK_SEQUENCE_0))
        return -1;
    wl_out_pipe *pipe = async ? wl_out_pipe_open(fp) : NULL;
    CHECK(!async || pipe);
    CHECK_EQ_INT(pipe ? wl_pf_set_output(&w, pipe_out, pipe) : 0, 0);
    char name[32];
    int rc = 0;
    for (uint64_t i = 0; i < 400000 && rc == 0; i++) {
        snprintf(name, sizeof name, "slice-%u", (unsigned)(i % 1000));
        wl_pf_event e = {.type = WL_PF_SLICE_BEGIN, .ts = i * 10, .track_uuid = 1 + i % 7, .name = name};
        rc = wl_pf_write_event(&w, &e) || wl_pf_write_counter(&w, i * 10 + 1, 9, (double)i) ||
             wl_pf_write_end(&w, i * 10 + 5, 1 + i % 7);
    }
    return wl_pf_finish(&w) || rc ? -1 : 0;
}

static void test_async_output(void)
{
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    FILE *fa = open_memstream(&a, &na), *fb = open_memstream(&b, &nb);
    CHECK_EQ_INT(many_events(fa, 0), 0);
    CHECK_EQ_INT(many_events(fb, 1), 0);
    fclose(fa);
    fclose(fb);
    CHECK(na > (4u << 20));
    CHECK(na == nb && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    FILE *full = fopen("/dev/full", "wb");
    if (full) { /* every write fails: ENOSPC */
        CHECK_EQ_INT(many_events(full, 1), -1);
        fclose(full);
    }
}

int main(void)
{
    test_scalars();
    test_nested();
    test_perfetto_writer();
    test_plain_events_match();
    test_async_output();
    return test_report("pb_encode");
}
