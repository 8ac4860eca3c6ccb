/* The progress line of `warplens run --metrics` (see run_progress.h). */
#include "run_progress.h"

#include "progress.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void run_progress_init(run_progress *p, const char *capture_dir, int on)
{
    memset(p, 0, sizeof *p);
    snprintf(p->dir, sizeof p->dir, "%s", capture_dir);
    const char *force = getenv("WARPLENS_PROGRESS");
    p->on = force && *force ? strcmp(force, "0") != 0 : on;
    p->start_ns = cli_progress_now_ns();
}

int run_progress_read(const char *dir, wlcap_progress *sum)
{
    memset(sum, 0, sizeof *sum);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 12 || strcmp(e->d_name + len - 11, ".wlprogress") != 0)
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        wlcap_progress one;
        ssize_t got = read(fd, &one, sizeof one);
        close(fd);
        if (got != (ssize_t)sizeof one || one.magic != WLCAP_PROGRESS_MAGIC || one.size != sizeof one)
            continue; /* torn or foreign: no news from this one */
        sum->calls_seen += one.calls_seen;
        sum->calls_done += one.calls_done;
        sum->ranges += one.ranges;
        sum->kernels += one.kernels;
        sum->copies += one.copies;
        sum->sets += one.sets;
        sum->graphs += one.graphs;
        sum->unknown += one.unknown;
        sum->left_out += one.left_out;
        if (one.passes > sum->passes)
            sum->passes = one.passes;
        if (one.replay == WLCAP_METRIC_REPLAY_KERNEL || !sum->replay)
            sum->replay = one.replay;
        n++;
    }
    closedir(d);
    return n;
}

void run_progress_format(const wlcap_progress *p, double elapsed_s, double rate, char *out, size_t n)
{
    char a[32], b[32], c[32];
    size_t o = 0;
#define ADD(...) (o += (size_t)snprintf(out + o, o < n ? n - o : 0, __VA_ARGS__), o = o < n ? o : n)
    ADD("metrics: %s calls profiled", cli_progress_count(p->calls_done, a, sizeof a));
    if (p->passes)
        ADD(" (%u pass%s, %s)", p->passes, p->passes == 1 ? "" : "es",
            p->replay == WLCAP_METRIC_REPLAY_KERNEL ? "kernel replay" : "no replay");
    uint64_t waiting = p->calls_seen > p->calls_done ? p->calls_seen - p->calls_done : 0;
    if (rate > 0) {
        ADD(", %.3g/s", rate);
        if (waiting)
            ADD(", %s waiting ~%s", cli_progress_count(waiting, a, sizeof a),
                cli_progress_duration((double)waiting / rate, b, sizeof b));
    } else if (waiting) {
        ADD(", %s waiting", cli_progress_count(waiting, a, sizeof a));
    }
    ADD(" | ranges: %s kernels", cli_progress_count(p->kernels, a, sizeof a));
    if (p->copies || p->sets)
        ADD(", %s copies, %s sets", cli_progress_count(p->copies, b, sizeof b),
            cli_progress_count(p->sets, c, sizeof c));
    if (p->graphs)
        ADD(", %s graph launches", cli_progress_count(p->graphs, a, sizeof a));
    if (p->unknown)
        ADD(", %s untied", cli_progress_count(p->unknown, a, sizeof a));
    if (p->left_out)
        ADD(" | %s launches left out by filters", cli_progress_count(p->left_out, a, sizeof a));
    ADD(" | %s", cli_progress_duration(elapsed_s, a, sizeof a));
#undef ADD
}

void run_progress_tick(run_progress *p)
{
    if (!p->on)
        return;
    wlcap_progress sum;
    if (!run_progress_read(p->dir, &sum))
        return;
    uint64_t t = cli_progress_now_ns();
    /* the rate since the oldest of the last RUN_PROGRESS_WINDOW ticks, read before its slot is reused */
    unsigned slot = p->ticks % RUN_PROGRESS_WINDOW, oldest = p->ticks >= RUN_PROGRESS_WINDOW ? slot : 0;
    double rate = 0;
    if (p->ticks > 0 && t > p->at[oldest] && sum.calls_done >= p->done[oldest])
        rate = (double)(sum.calls_done - p->done[oldest]) / ((double)(t - p->at[oldest]) / 1e9);
    p->done[slot] = sum.calls_done;
    p->at[slot] = t;
    p->ticks++;
    char line[400];
    run_progress_format(&sum, (double)(t - p->start_ns) / 1e9, rate, line, sizeof line);
    cli_progress_show(line);
    p->shown = 1;
}

void run_progress_end(run_progress *p)
{
    if (p->shown)
        cli_progress_show("");
    p->shown = 0;
}
