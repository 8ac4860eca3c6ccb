/* Terminal formatting helpers (see format.h). */
#include "format.h"

#include <stdio.h>
#include <string.h>

const char *fmt_ns(double ns, char *buf, size_t n)
{
    if (ns < 1e3)
        snprintf(buf, n, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, n, "%.2f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, n, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, n, "%.2f s", ns / 1e9);
    return buf;
}

const char *fmt_bytes(double b, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024.0 && u < 4) {
        b /= 1024.0;
        u++;
    }

    if (u == 0)
        snprintf(buf, n, "%.0f B", b);
    else
        snprintf(buf, n, "%.2f %s", b, unit[u]);
    return buf;
}

const char *fmt_bytes_exact(int64_t b, char *buf, size_t n)
{
    if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, n, "%lld KiB", (long long)(b / 1024));
    else if (b >= 1024)
        snprintf(buf, n, "%lld B (%.1f KiB)", (long long)b, (double)b / 1024.0);
    else
        snprintf(buf, n, "%lld B", (long long)b);
    return buf;
}

const char *fmt_middle(const char *s, size_t width, char *buf, size_t n)
{
    size_t len = strlen(s);
    if (width + 1 > n)
        width = n - 1;
    if (len <= width) {
        snprintf(buf, n, "%s", s);
        return buf;
    }
    if (width < 5) {
        snprintf(buf, n, "%.*s", (int)width, s);
        return buf;
    }
    size_t head = (width - 3) / 2, tail = width - 3 - head;
    snprintf(buf, n, "%.*s...%s", (int)head, s, s + len - tail);
    return buf;
}

void print_title(const char *title, int width)
{
    printf("\n%s\n", title);
    for (int i = 0; i < width; i++)
        putchar('-');
    putchar('\n');
}
