/* Buffered JSON writer (see json_out.h). */
#include "export/json_out.h"
#include "export/out_pipe.h"
#include "export/utf8.h"

#include <math.h>
#include <string.h>

void wl_json_init(wl_json_out *j, FILE *fp)
{
    j->fp = fp;
    j->buf = j->own;
    j->cap = sizeof j->own;
    j->n = 0;
    j->bytes = 0;
    j->failed = 0;
    j->pipe = NULL;
    wl_pb_init(&j->pb);
}

void wl_json_init_piped(wl_json_out *j, FILE *fp)
{
    wl_json_init(j, fp);
    if (!(j->pipe = wl_out_pipe_open(fp)))
        return;
    if (wl_out_pipe_take(j->pipe, &j->pb)) {
        wl_out_pipe_close(j->pipe, NULL);
        j->pipe = NULL;
        return;
    }
    j->buf = (char *)j->pb.data;
    j->cap = j->pb.cap;
}

/* Makes room: the buffer goes to the file, or to the background writer, which may hand back its
 * last few bytes at the start of the next buffer (wl_out_pipe_push_some). */
static void drain(wl_json_out *j)
{
    if (j->pipe) {
        j->pb.len = j->n;
        if (j->failed || wl_out_pipe_push_some(j->pipe, &j->pb))
            j->failed = 1, j->pb.len = 0;
        j->buf = (char *)j->pb.data; /* a push that failed leaves the buffer as it was */
        j->cap = j->pb.cap;
        j->n = j->pb.len;
        return;
    }
    if (j->n && !j->failed && fwrite(j->buf, 1, j->n, j->fp) != j->n)
        j->failed = 1;
    j->n = 0;
}

int wl_json_flush(wl_json_out *j)
{
    if (j->pipe) {
        j->pb.len = j->n;
        if (wl_out_pipe_close(j->pipe, &j->pb))
            j->failed = 1;
        j->pipe = NULL;
        wl_pb_free(&j->pb);
        j->buf = j->own;
        j->cap = sizeof j->own;
        j->n = 0;
    }
    drain(j);
    if (!j->failed && fflush(j->fp) != 0)
        j->failed = 1;
    return j->failed ? -1 : 0;
}

void wl_json_raw_slow(wl_json_out *j, const char *s, size_t n)
{
    j->bytes += n;
    while (n) {
        if (j->n == j->cap) {
            drain(j);
            if (j->n == j->cap) { /* no room made */
                j->failed = 1;
                return;
            }
        }
        size_t c = j->cap - j->n < n ? j->cap - j->n : n;
        memcpy(j->buf + j->n, s, c);
        j->n += c;
        s += c;
        n -= c;
    }
}

static inline void put(wl_json_out *j, char c)
{
    if (j->n == j->cap)
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

static const char PAIRS[201] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";

/* Decimal digits of v (1 for 0). */
static inline int digits10(uint64_t v)
{
    static const uint64_t p10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
                                     100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
                                     1000000000000ull, 10000000000000ull, 100000000000000ull,
                                     1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
                                     1000000000000000000ull, 10000000000000000000ull};
    int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12; /* log10 from log2, at most one short */
    return t + (v >= p10[t]) + (v == 0);
}

/* v's digits ending at o (two a division; 32-bit divisions while v fits). */
static inline void digits_back(char *o, uint64_t v)
{
    while (v >= ((uint64_t)1 << 32)) {
        const unsigned r = (unsigned)(v % 100);
        v /= 100;
        o -= 2;
        memcpy(o, PAIRS + 2 * r, 2);
    }
    uint32_t w = (uint32_t)v;
    while (w >= 100) {
        const unsigned r = w % 100;
        w /= 100;
        o -= 2;
        memcpy(o, PAIRS + 2 * r, 2);
    }
    if (w >= 10)
        memcpy(o - 2, PAIRS + 2 * w, 2);
    else
        o[-1] = (char)('0' + w);
}

void wl_json_u64(wl_json_out *j, uint64_t v)
{
    int n = digits10(v);
    if ((size_t)n <= j->cap - j->n) { /* straight into the buffer */
        digits_back(j->buf + j->n + n, v);
        j->n += (size_t)n;
        j->bytes += (uint64_t)n;
        return;
    }
    char b[24];
    digits_back(b + n, v);
    wl_json_raw(j, b, (size_t)n);
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

/* What printf("%.6g") writes for 1e-4 <= |v| < 1e6 (fixed notation: six significant digits, trailing
 * zeros dropped), without printf: |v| scaled by an exact power of ten to [1e5, 1e6) is off the
 * exact product by at most 2^-53 of it (1.2e-10), so rounding it to a whole number decides as
 * printf's exact rounding does unless its fraction is within 1e-9 of one half. That case, values
 * next to a power of ten and everything outside the range return 0: printf writes them. */
static int g6(char *b, double v)
{
    static const double p10[11] = {1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
    static const double scale[10] = {1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 1e2, 1e1, 1e0};
    double a = v < 0 ? -v : v;
    if (!(a >= 1e-4 && a < 1e6))
        return 0;
    int e = -4; /* the largest e in [-4, 5] with a >= 10^e */
    while (e < 5 && a >= p10[e + 5])
        e++;
    double m = a * scale[e + 4], whole = floor(m), frac = m - whole;
    if (!(m >= 100000.0 && m < 999999.5) || (frac > 0.5 - 1e-9 && frac < 0.5 + 1e-9))
        return 0;
    unsigned r = (unsigned)whole + (frac > 0.5);
    char d[6];
    for (int i = 5; i >= 0; i--, r /= 10)
        d[i] = (char)('0' + r % 10);
    char *p = b;
    if (v < 0)
        *p++ = '-';
    int used = 0; /* digits before the point */
    if (e >= 0) {
        memcpy(p, d, (size_t)e + 1);
        p += e + 1;
        used = e + 1;
    } else {
        *p++ = '0';
    }
    int last = 5; /* the fraction ends at the last non-zero digit */
    while (last >= used && d[last] == '0')
        last--;
    if (last >= used) {
        *p++ = '.';
        for (int z = 0; z < -e - 1; z++)
            *p++ = '0';
        memcpy(p, d + used, (size_t)(last - used + 1));
        p += last - used + 1;
    }
    return (int)(p - b);
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
    int n = g6(b, v);
    if (!n)
        n = snprintf(b, sizeof b, "%.6g", v);
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
