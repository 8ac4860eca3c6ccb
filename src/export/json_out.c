/* Buffered JSON writer (see json_out.h). */
#include "export/json_out.h"
#include "export/utf8.h"

#include <math.h>
#include <string.h>

void wl_json_init(wl_json_out *j, FILE *fp)
{
    j->fp = fp;
    j->n = 0;
    j->bytes = 0;
    j->failed = 0;
}

static void drain(wl_json_out *j)
{
    if (j->n && !j->failed && fwrite(j->buf, 1, j->n, j->fp) != j->n)
        j->failed = 1;
    j->n = 0;
}

int wl_json_flush(wl_json_out *j)
{
    drain(j);
    if (!j->failed && fflush(j->fp) != 0)
        j->failed = 1;
    return j->failed ? -1 : 0;
}

void wl_json_raw_slow(wl_json_out *j, const char *s, size_t n)
{
    j->bytes += n;
    if (n > sizeof j->buf - j->n) {
        drain(j);
        if (n > sizeof j->buf) {
            if (!j->failed && fwrite(s, 1, n, j->fp) != n)
                j->failed = 1;
            return;
        }
    }
    memcpy(j->buf + j->n, s, n);
    j->n += n;
}

static inline void put(wl_json_out *j, char c)
{
    if (j->n == sizeof j->buf)
        drain(j);
    j->buf[j->n++] = c;
    j->bytes++;
}


/* Bytes a JSON string holds as they are: printable ASCII but '"', '\\' and '<'. */
static const unsigned char plain[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(0), R16(0), /* controls */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20: '"' */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x30: '<' */
    R16(1),
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50: '\\' */
    R16(1), R16(1),
    R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0) /* UTF-8: checked */
#undef R16
};

void wl_json_str(wl_json_out *j, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    put(j, '"');
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    for (;;) {
        /* a run of bytes written as they are, copied at once */
        const unsigned char *q = p;
        while (plain[*q])
            q++;
        if (q != p)
            wl_json_raw(j, (const char *)p, (size_t)(q - p));
        p = q;
        const unsigned char c = *p;
        if (c == 0)
            break;
        if (c == '"' || c == '\\') {
            put(j, '\\');
            put(j, (char)c);
            p++;
        } else if (c == '<') { /* keeps "</script>" and "<!--" inert when embedded in HTML */
            wl_json_raw(j, "\\u003c", 6);
            p++;
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            wl_json_raw(j, e, 6);
            p++;
        } else {
            int n = wl_utf8_len(p);
            if (n == 0) {
                wl_json_raw(j, "\\ufffd", 6);
                p++;
            } else {
                wl_json_raw(j, (const char *)p, (size_t)n);
                p += n;
            }
        }
    }
    put(j, '"');
}

void wl_json_key(wl_json_out *j, const char *k)
{
    put(j, ',');
    wl_json_str(j, k);
    put(j, ':');
}

void wl_json_u64(wl_json_out *j, uint64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    char b[24];
    int i = 24;
    while (v >= 100) { /* two digits a division */
        const unsigned r = (unsigned)(v % 100);
        v /= 100;
        b[--i] = pairs[2 * r + 1];
        b[--i] = pairs[2 * r];
    }
    if (v >= 10) {
        b[--i] = pairs[2 * v + 1];
        b[--i] = pairs[2 * v];
    } else {
        b[--i] = (char)('0' + v);
    }
    wl_json_raw(j, b + i, (size_t)(24 - i));
}

void wl_json_i64(wl_json_out *j, int64_t v)
{
    if (v < 0) {
        put(j, '-');
        wl_json_u64(j, (uint64_t)0 - (uint64_t)v);
    } else {
        wl_json_u64(j, (uint64_t)v);
    }
}

void wl_json_double(wl_json_out *j, double v)
{
    if (!isfinite(v)) {
        wl_json_lit(j, "null");
        return;
    }
    /* whole numbers below 10^6 (most counters): "%.6g" prints them as integers; -0 keeps its sign */
    if (v > -1e6 && v < 1e6 && v == (double)(int64_t)v && !(v == 0 && signbit(v))) {
        wl_json_i64(j, (int64_t)v);
        return;
    }
    char b[40];
    int n = snprintf(b, sizeof b, "%.6g", v);
    wl_json_raw(j, b, (size_t)n);
}

void wl_json_double_exact(wl_json_out *j, double v)
{
    if (!isfinite(v)) {
        wl_json_lit(j, "null");
        return;
    }
    char b[40];
    int n = snprintf(b, sizeof b, "%.17g", v);
    wl_json_raw(j, b, (size_t)n);
}

void wl_json_us(wl_json_out *j, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        put(j, '-');
    wl_json_u64(j, a / 1000);
    unsigned f = (unsigned)(a % 1000);
    if (f) {
        char d[4] = {'.', (char)('0' + f / 100), (char)('0' + f / 10 % 10), (char)('0' + f % 10)};
        wl_json_raw(j, d, 4);
    }
}
