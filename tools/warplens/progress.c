/* The CLI's progress line (see progress.h). */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_NS 200000000ull /* at most five lines a second */

uint64_t cli_progress_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *cli_progress_count(uint64_t v, char *b, size_t n)
{
    char raw[32];
    int len = snprintf(raw, sizeof raw, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            b[o++] = ',';
        b[o++] = raw[i];
    }
    b[o] = 0;
    return b;
}

const char *cli_progress_duration(double s, char *b, size_t n)
{
    long t = s < 0 ? 0 : (long)(s + 0.5);
    if (t >= 3600)
        snprintf(b, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(b, n, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(b, n, "%lds", t);
    return b;
}

void cli_progress_show(const char *line)
{
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
}

void cli_progress_init(cli_progress *p, const char *what, const char *unit, int quiet)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->unit = unit;
    const char *force = getenv("WARPLENS_PROGRESS");
    p->on = !quiet && (force && *force ? strcmp(force, "0") != 0 : isatty(STDERR_FILENO));
    const char *after = getenv("WARPLENS_PROGRESS_AFTER_MS");
    long ms = after && *after ? strtol(after, NULL, 10) : 2000;
    p->after_ns = (uint64_t)(ms < 0 ? 0 : ms) * 1000000ull;
    p->start_ns = cli_progress_now_ns();
}

static void sink_update(void *ctx, uint64_t done, uint64_t total) { cli_progress_update(ctx, done, total); }

wl_progress cli_progress_sink(cli_progress *p) { return (wl_progress){p->on ? sink_update : NULL, p}; }

void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total)
{
    if (!p->on)
        return;
    uint64_t t = cli_progress_now_ns();
    done += p->base;
    if (p->total)
        total = p->total;
    int last = total && done >= total; /* always drawn: the line ends at 100% */
    if (t - p->start_ns < p->after_ns || (p->shown && !last && t - p->last_ns < REDRAW_NS))
        return;
    p->last_ns = t;
    double elapsed = (double)(t - p->start_ns) / 1e9, rate = elapsed > 0 ? (double)done / elapsed : 0;
    char a[32], b[32], c[32], line[256];
    size_t o = 0, n = sizeof line;
#define ADD(...) (o += (size_t)snprintf(line + o, o < n ? n - o : 0, __VA_ARGS__), o = o < n ? o : n)
    ADD("%s: ", p->what);
    if (total)
        ADD("%3.0f%% ", done >= total ? 100.0 : 100.0 * (double)done / (double)total);
    ADD("%s", cli_progress_count(done, a, sizeof a));
    if (total)
        ADD(" of %s", cli_progress_count(total, b, sizeof b));
    ADD(" %s", p->unit);
    if (rate > 0) {
        ADD(rate >= 1e6 ? ", %.1fM/s" : rate >= 1e3 ? ", %.1fk/s" : ", %.0f/s",
            rate >= 1e6 ? rate / 1e6 : rate >= 1e3 ? rate / 1e3 : rate);
        if (total > done)
            ADD(", ~%s left", cli_progress_duration((double)(total - done) / rate, c, sizeof c));
    }
    ADD(" | %s", cli_progress_duration(elapsed, c, sizeof c));
#undef ADD
    cli_progress_show(line);
    p->shown = 1;
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown)
        cli_progress_show("");
    p->shown = 0;
}
