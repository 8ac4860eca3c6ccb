/* Diagnostics: formatted into a stack buffer and written with one write(2) so lines from
 * different threads never interleave. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_int g_quiet;

void wl_log_set_quiet(int quiet) { atomic_store(&g_quiet, quiet); }

static void vlog(const char *fmt, va_list ap)
{
    if (atomic_load(&g_quiet))
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "warplens: ");
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void wl_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void wl_log_once(atomic_flag *flag, const char *fmt, ...)
{
    if (atomic_flag_test_and_set(flag))
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}
