/* Output helpers for the kernel verbs (see kernel_format.h). */
#include "kernel_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void kf_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

void kf_csv_str(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

const char *kf_dim3(const int d[3], int compact, char *buf, size_t n)
{
    if (compact && d[2] <= 1 && d[1] <= 1)
        snprintf(buf, n, "%d", d[0]);
    else if (compact && d[2] <= 1)
        snprintf(buf, n, "%dx%d", d[0], d[1]);
    else
        snprintf(buf, n, "%dx%dx%d", d[0], d[1], d[2]);
    return buf;
}

void kf_bar(FILE *out, double frac, int width)
{
    if (!(frac > 0))
        frac = 0;
    if (frac > 1)
        frac = 1;
    int n = (int)(frac * width + 0.5);
    fputc('[', out);
    for (int i = 0; i < width; i++)
        fputc(i < n ? '#' : '.', out);
    fputc(']', out);
}

const char *kf_display_name(const char *demangled)
{
    return strncmp(demangled, "void ", 5) == 0 ? demangled + 5 : demangled;
}

int kf_parse_count(const char *s, long long *out)
{
    if (!s || !*s || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno || v < 1)
        return -1;
    *out = v;
    return 0;
}

const char *kf_shorten(const char *s, size_t width, char *buf, size_t n)
{
    size_t len = strlen(s);
    if (width + 1 > n)
        width = n - 1;
    if (len <= width || width < 8) {
        snprintf(buf, n, "%.*s", (int)width, s);
        return buf;
    }
    size_t head = (width - 3) * 2 / 3, tail = width - 3 - head;
    snprintf(buf, n, "%.*s...%s", (int)head, s, s + len - tail);
    return buf;
}
