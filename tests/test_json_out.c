/* Unit tests of the JSON text writer (src/export/json_out.h) against references written the
 * plain way: integers against printf("%llu"/"%lld"), doubles against printf("%.6g" / "%.17g"),
 * strings against a byte-at-a-time escaper of the same rules. The writer's fast paths (runs of
 * plain bytes, two digits a division, whole numbers without printf, literals inlined) must give
 * the same bytes for every input, including long strings that cross its buffer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/json_out.h"
#include "export/utf8.h"
#include "test.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) { return test_rand(&rng); }

/* Writes through the writer into memory and returns the text (static buffer, NUL-terminated). */
typedef void (*emit_fn)(wl_json_out *j, const void *arg);

static const char *emit(emit_fn f, const void *arg, size_t *len_out)
{
    static char *text;
    static size_t cap;
    char *mem = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&mem, &len);
    if (!fp)
        return "";
    static wl_json_out j; /* 64 KiB buffer: not on the stack */
    wl_json_init(&j, fp);
    f(&j, arg);
    int rc = wl_json_flush(&j);
    fclose(fp);
    CHECK(rc == 0);
    CHECK(j.bytes == len);
    if (len + 1 > cap) {
        free(text);
        cap = len + 1;
        text = malloc(cap);
    }
    if (!text)
        return "";
    memcpy(text, mem, len);
    text[len] = 0;
    free(mem);
    if (len_out)
        *len_out = len;
    return text;
}

static void emit_u64(wl_json_out *j, const void *a) { wl_json_u64(j, *(const uint64_t *)a); }
static void emit_i64(wl_json_out *j, const void *a) { wl_json_i64(j, *(const int64_t *)a); }
static void emit_double(wl_json_out *j, const void *a) { wl_json_double(j, *(const double *)a); }
static void emit_double_exact(wl_json_out *j, const void *a)
{
    wl_json_double_exact(j, *(const double *)a);
}
static void emit_str(wl_json_out *j, const void *a) { wl_json_str(j, (const char *)a); }
static void emit_us(wl_json_out *j, const void *a) { wl_json_us(j, *(const int64_t *)a); }

/* The escaping rules, one byte at a time (what json_out.c did before its fast path). */
static size_t ref_str(const char *s, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    out[n++] = '"';
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c < 0x80) {
            out[n++] = (char)c;
            p++;
        } else if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
            p++;
        } else if (c == '<') {
            memcpy(out + n, "\\u003c", 6);
            n += 6;
            p++;
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            memcpy(out + n, e, 6);
            n += 6;
            p++;
        } else {
            int k = wl_utf8_len(p);
            if (k == 0) {
                memcpy(out + n, "\\ufffd", 6);
                n += 6;
                p++;
            } else {
                memcpy(out + n, p, (size_t)k);
                n += (size_t)k;
                p += k;
            }
        }
    }
    out[n++] = '"';
    out[n] = 0;
    return n;
}

static void test_integers(void)
{
    char want[32];
    int bad = 0;
    static const uint64_t edges[] = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 99999,
                                     100000, 4294967295u, 4294967296u, UINT64_MAX - 1, UINT64_MAX};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0] + 200000; k++) {
        uint64_t v = k < sizeof edges / sizeof edges[0] ? edges[k] : rnd() >> (rnd() % 64);
        snprintf(want, sizeof want, "%llu", (unsigned long long)v);
        bad += strcmp(emit(emit_u64, &v, NULL), want) != 0;
        int64_t sv = (int64_t)v;
        snprintf(want, sizeof want, "%lld", (long long)sv);
        bad += strcmp(emit(emit_i64, &sv, NULL), want) != 0;
    }
    /* each power of ten and its neighbours (the digit count's boundaries) */
    uint64_t p = 1;
    for (int i = 0; i < 20; i++, p *= 10)
        for (uint64_t v = p - 1; v != p + 2; v++) {
            snprintf(want, sizeof want, "%llu", (unsigned long long)v);
            bad += strcmp(emit(emit_u64, &v, NULL), want) != 0;
        }
    CHECK_EQ_INT(bad, 0);
    int64_t ns = -1234567;
    CHECK_EQ_STR(emit(emit_us, &ns, NULL), "-1234.567");
    ns = 5000;
    CHECK_EQ_STR(emit(emit_us, &ns, NULL), "5");
}

static void test_doubles(void)
{
    char want[48];
    int bad = 0;
    static const double edges[] = {0.0, -0.0, 1.0, -1.0, 25.0, 0.5, 0.0118371, 999999.0, -999999.0,
                                   1e6, -1e6, 999999.5, 123456.7, 1e-7, 3.0e15, 9007199254740993.0,
                                   1e300, -1e-300, 5e-324};
    static const double p10[] = {1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0] + 600000; k++) {
        double v;
        if (k < sizeof edges / sizeof edges[0])
            v = edges[k];
        else if (k % 6 == 0) /* whole numbers around the fast path's bounds */
            v = (double)((int64_t)(rnd() % 4000000) - 2000000);
        else if (k % 6 == 1)
            v = ((double)(rnd() % 2000000) - 1e6) / (double)(1 + rnd() % 1000);
        else if (k % 6 == 2) /* fractions over the fixed-notation range, log-uniform */
            v = (rnd() % 2 ? -1 : 1) * pow(10.0, -5.0 + 12.0 * (double)(rnd() >> 11) / 9007199254740992.0);
        else if (k % 6 == 3) { /* six digits and a half, and their neighbours: the rounding decisions */
            double t = ((double)(100000 + rnd() % 900000) + 0.5) * pow(10.0, (double)((int)(rnd() % 11) - 10));
            int s = (int)(rnd() % 5) - 2;
            for (; s < 0; s++)
                t = nextafter(t, 0);
            for (; s > 0; s--)
                t = nextafter(t, INFINITY);
            v = t;
        } else if (k % 6 == 4) { /* next to a power of ten, and 999999.5 of it */
            double t = p10[rnd() % (sizeof p10 / sizeof p10[0])] * (rnd() % 2 ? 1.0 : 0.9999995);
            for (int s = (int)(rnd() % 9) - 4; s; s += s < 0 ? 1 : -1)
                t = nextafter(t, s < 0 ? 0 : INFINITY);
            v = t;
        } else {
            uint64_t bits = rnd();
            memcpy(&v, &bits, sizeof v);
        }
        if (!isfinite(v))
            snprintf(want, sizeof want, "null");
        else
            snprintf(want, sizeof want, "%.6g", v);
        bad += strcmp(emit(emit_double, &v, NULL), want) != 0;
        if (isfinite(v))
            snprintf(want, sizeof want, "%.17g", v);
        bad += strcmp(emit(emit_double_exact, &v, NULL), want) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    double inf = INFINITY, nan_v = NAN;
    CHECK_EQ_STR(emit(emit_double, &inf, NULL), "null");
    CHECK_EQ_STR(emit(emit_double, &nan_v, NULL), "null");
}

static void test_strings(void)
{
    static const char *const fixed[] = {"", "plain", "quote\" back\\slash", "</script><!--",
                                        "tab\tnl\ncr\r\x01\x1f", "del\x7f", "caf\xc3\xa9",
                                        "\xe2\x82\xac euro", "\xf0\x9f\x98\x80", "bad \xc3 seq",
                                        "\xff\xfe", "over\xf5\x80\x80\x80", "trunc\xe2\x82"};
    char want[1 << 16];
    int bad = 0;
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
        ref_str(fixed[k], want);
        bad += strcmp(emit(emit_str, fixed[k], NULL), want) != 0;
    }
    /* random strings over an alphabet weighted to the special bytes, up to 10 KiB long */
    static const unsigned char alpha[] = {'a', 'b', 'Z', ' ', '0', '"', '\\', '<', '\n', 0x01, 0x7f,
                                          0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x80, 0xff};
    char s[10241];
    for (int k = 0; k < 3000; k++) {
        size_t n = rnd() % (k % 10 == 0 ? 10240 : 64);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)(rnd() % 4 ? 'a' + rnd() % 26 : alpha[rnd() % sizeof alpha]);
        s[n] = 0;
        ref_str(s, want);
        bad += strcmp(emit(emit_str, s, NULL), want) != 0;
    }
    /* every byte at every place of a 17-byte string (the 8-byte test, its tail, the bytes after) */
    for (int c = 1; c < 256; c++)
        for (int at = 0; at < 17; at++) {
            memset(s, 'q', 17);
            s[17] = 0;
            s[at] = (char)c;
            ref_str(s, want);
            bad += strcmp(emit(emit_str, s, NULL), want) != 0;
        }
    CHECK_EQ_INT(bad, 0);
}

/* Many small writes and one larger than the writer's buffer: the bytes and their count agree. */
static void emit_mix(wl_json_out *j, const void *a)
{
    (void)a;
    for (int i = 0; i < 20000; i++) {
        wl_json_lit(j, "{\"ph\":\"X\",\"name\":");
        wl_json_str(j, "kernel<float, 4>");
        wl_json_key(j, "ts");
        wl_json_u64(j, (uint64_t)i * 1000);
        wl_json_lit(j, "}\n");
    }
    static char big[100000];
    memset(big, 'x', sizeof big - 1);
    wl_json_raw(j, big, sizeof big - 1);
}

static void test_buffering(void)
{
    size_t len = 0;
    const char *t = emit(emit_mix, NULL, &len);
    size_t expect = 0;
    for (int i = 0; i < 20000; i++) {
        char line[128];
        expect += (size_t)snprintf(line, sizeof line,
                                   "{\"ph\":\"X\",\"name\":\"kernel\\u003cfloat, 4>\",\"ts\":%d}\n",
                                   i * 1000);
        if (i == 12345)
            CHECK(strstr(t, line) != NULL);
    }
    CHECK_EQ_INT(len, expect + 99999);
    CHECK(t[len - 1] == 'x' && t[len - 99999] == 'x' && t[len - 100000] == '\n');
}

int main(void)
{
    test_integers();
    test_doubles();
    test_strings();
    test_buffering();
    return test_report("json_out");
}
