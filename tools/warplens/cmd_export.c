/* `warplens export <session> --format perfetto|json|jfr -o FILE`: the session's timeline as a native
 * Perfetto trace, Chrome Trace Event JSON or a Java Flight Recorder recording (layout:
 * docs/formats.md). The file is written under a temporary name and renamed into place when
 * complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "export/session_export.h"
#include "cli_session.h"
#include "verbs.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: warplens export <session> [--format perfetto|json|jfr] -o FILE\n"
                 "  --format F    perfetto (protobuf, open in ui.perfetto.dev), json (Chrome trace events,\n"
                 "                chrome://tracing) or jfr (Java Flight Recorder: JDK Mission Control, `jfr`);\n"
                 "                default: json when FILE ends in .json, jfr for .jfr, else perfetto\n"
                 "  -o FILE       output file, written atomically\n"
                 "  --max-lanes N overlap lanes per thread or stream before slices are dropped (default 32)\n"
                 "  --quiet       no summary line\n");
}

typedef struct progress_state {
    double last;
    int shown;
} progress_state;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Shown only on a terminal, at most four times a second. */
static void progress(uint64_t done, uint64_t total, void *arg)
{
    progress_state *p = arg;
    double t = now_s();
    if (done < total && t - p->last < 0.25)
        return;
    p->last = t;
    p->shown = 1;
    fprintf(stderr, "\rexporting: %3.0f%% (%llu of %llu records)", total ? 100.0 * (double)done / (double)total : 100.0,
            (unsigned long long)done, (unsigned long long)total);
    fflush(stderr);
}

int cmd_export(int argc, char **argv)
{
    const char *path = NULL, *out = NULL, *format = NULL;
    int quiet = 0;
    wl_tl_options opt = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            format = argv[++i];
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--max-lanes") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 4096) {
                fprintf(stderr, "warplens export: --max-lanes needs a number from 1 to 4096, got '%s'\n", argv[i]);
                return 2;
            }
            opt.max_lanes = (int)v;
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "warplens export: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "warplens export: one session at a time ('%s' is extra)\n", argv[i]);
            return 2;
        }
    }
    if (!path || !out) {
        fprintf(stderr, "warplens export: %s\n", !path ? "no session given" : "no output file given (-o FILE)");
        usage(stderr);
        return 2;
    }
    if (!format) {
        size_t n = strlen(out);
        format = n > 5 && !strcmp(out + n - 5, ".json") ? "json" : n > 4 && !strcmp(out + n - 4, ".jfr") ? "jfr"
                                                                                                          : "perfetto";
    }
    enum { PERFETTO, JSON, JFR } kind;
    if (!strcmp(format, "json") || !strcmp(format, "chrome"))
        kind = JSON;
    else if (!strcmp(format, "jfr"))
        kind = JFR;
    else if (!strcmp(format, "perfetto") || !strcmp(format, "protobuf"))
        kind = PERFETTO;
    else {
        fprintf(stderr, "warplens export: unknown format '%s' (perfetto, json or jfr)\n", format);
        return 2;
    }
    char err[512];
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    wl_atomic_file f;
    if (wl_atomic_file_open(&f, out)) {
        fprintf(stderr, "warplens export: cannot write %s: %m\n", out);
        return cli_session_close(s, 1);
    }
    static char iobuf[1 << 20];
    setvbuf(f.fp, iobuf, _IOFBF, sizeof iobuf);
    progress_state ps = {0, 0};
    if (isatty(STDERR_FILENO) && !quiet) {
        opt.progress = progress;
        opt.progress_arg = &ps;
    }
    double t0 = now_s();
    wl_export_stats st;
    int rc = kind == JSON ? wl_export_chrome_json(s, f.fp, &opt, &st, err, sizeof err)
             : kind == JFR ? wl_export_jfr(s, f.fp, &opt, &st, err, sizeof err)
                           : wl_export_perfetto(s, f.fp, &opt, &st, err, sizeof err);
    if (ps.shown)
        fputc('\n', stderr);
    if (rc)
        cli_read_error(s, "warplens export: %s\n", err);
    if (cli_session_close(s, rc ? 1 : 0)) {
        wl_atomic_file_abort(&f);
        return 1;
    }
    if (wl_atomic_file_commit(&f)) {
        fprintf(stderr, "warplens export: cannot finish %s: %m\n", out);
        return 1;
    }
    if (!quiet && kind == JFR) {
        const uint64_t *n = st.jfr;
        printf("wrote %s (JFR): %llu events: %llu kernels, %llu copies, %llu sets, %llu occupancy snapshots, %llu API"
               " calls, %llu NVTX ranges, %llu scopes, %llu timers; %llu chunk%s, %.1f MiB in %.2f s\n",
               out, (unsigned long long)st.events, (unsigned long long)n[WL_JFR_KERNEL],
               (unsigned long long)n[WL_JFR_MEMCPY], (unsigned long long)n[WL_JFR_MEMSET],
               (unsigned long long)n[WL_JFR_OCCUPANCY], (unsigned long long)n[WL_JFR_API],
               (unsigned long long)n[WL_JFR_NVTX], (unsigned long long)n[WL_JFR_SCOPE],
               (unsigned long long)n[WL_JFR_TIMER], (unsigned long long)st.chunks, st.chunks == 1 ? "" : "s",
               (double)st.bytes / (1024.0 * 1024.0), now_s() - t0);
    } else if (!quiet) {
        double dt = now_s() - t0;
        printf("wrote %s (%s): %llu slices, %llu flows, %llu counter values, %llu tracks, %.1f MiB in %.2f s\n", out,
               kind == JSON ? "Chrome JSON" : "Perfetto", (unsigned long long)st.tl.slices,
               (unsigned long long)st.tl.flows, (unsigned long long)st.tl.counter_events,
               (unsigned long long)st.tl.tracks, (double)st.bytes / (1024.0 * 1024.0), dt);
        if (st.tl.slices_dropped)
            printf("warning: %llu slices overlapped more than --max-lanes allows and were left out\n",
                   (unsigned long long)st.tl.slices_dropped);
    }
    return 0;
}
