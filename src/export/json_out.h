/* A small buffered JSON text writer for the Chrome trace exporter and the HTML report: escaped
 * strings (invalid UTF-8 replaced, so the output always parses), integers and microsecond
 * timestamps without printf on the hot path. Errors are sticky; check once at the end. */
#ifndef WARPLENS_EXPORT_JSON_OUT_H
#define WARPLENS_EXPORT_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "export/pb_encode.h"

struct wl_out_pipe;
typedef struct wl_json_out {
    FILE *fp;
    char *buf;        /* own, or the background writer's buffer */
    size_t n, cap;
    uint64_t bytes;   /* written so far, including the buffer */
    int failed;
    struct wl_out_pipe *pipe; /* wl_json_init_piped: full buffers go to a writer thread */
    wl_pb_buf pb;             /* the buffer being filled, as the pipe knows it */
    char own[1 << 16];
} wl_json_out;

void wl_json_init(wl_json_out *j, FILE *fp);
/* The same, written by a background writer (out_pipe.h: around the page cache where it can), for
 * outputs of many MiB; falls back to wl_json_init's way when it cannot start one. */
void wl_json_init_piped(wl_json_out *j, FILE *fp);
/* Flushes (and stops the background writer); returns 0 if every write succeeded. */
int wl_json_flush(wl_json_out *j);

void wl_json_raw_slow(wl_json_out *j, const char *s, size_t n);
/* n bytes as they are; inline so that a literal's length is known where it is written */
static inline void wl_json_raw(wl_json_out *j, const char *s, size_t n)
{
    if (n <= j->cap - j->n) {
        memcpy(j->buf + j->n, s, n);
        j->n += n;
        j->bytes += n;
    } else {
        wl_json_raw_slow(j, s, n);
    }
}
/* unescaped literal text (the compiler folds strlen of a string constant) */
static inline void wl_json_lit(wl_json_out *j, const char *s) { wl_json_raw(j, s, strlen(s)); }
/* "escaped string"; '<' is written as \u003c so the text can sit inside an HTML <script>. */
void wl_json_str(wl_json_out *j, const char *s);
void wl_json_key(wl_json_out *j, const char *k);          /* ,"k": (a member after the first) */
/* "k": for a name of n bytes known to need no escaping (a literal of ours), in one copy */
static inline void wl_json_plain_key(wl_json_out *j, const char *k, size_t n)
{
    if (n + 3 <= j->cap - j->n) {
        char *o = j->buf + j->n;
        o[0] = '"';
        memcpy(o + 1, k, n);
        o[n + 1] = '"';
        o[n + 2] = ':';
        j->n += n + 3;
        j->bytes += n + 3;
    } else {
        wl_json_raw(j, "\"", 1);
        wl_json_raw(j, k, n);
        wl_json_raw(j, "\":", 2);
    }
}
void wl_json_u64(wl_json_out *j, uint64_t v);
void wl_json_i64(wl_json_out *j, int64_t v);
void wl_json_double(wl_json_out *j, double v);            /* null when not finite; 6 digits */
void wl_json_double_exact(wl_json_out *j, double v);      /* the same with 17 digits (round-trips) */
/* ns as microseconds with three decimals: 1234567 -> 1234.567 */
void wl_json_us(wl_json_out *j, int64_t ns);

#endif
