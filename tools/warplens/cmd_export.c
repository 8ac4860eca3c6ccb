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
#include "progress.h"
#include "verbs.h"

enum { O_FORMAT = 1, O_OUT, O_MAX_LANES, O_QUIET };

static const cli_opt OPTS[] = {
    {O_FORMAT, 0, "format", CLI_ARG_REQUIRED, "F",
     "perfetto (protobuf, open in ui.perfetto.dev), json (Chrome trace events,\n"
     "chrome://tracing) or jfr (Java Flight Recorder: JDK Mission Control, `jfr`);\n"
     "default: json when FILE ends in .json, jfr for .jfr, else perfetto", "perfetto json jfr", NULL},
    {O_OUT, 'o', "output", CLI_ARG_REQUIRED, "FILE", "output file, written atomically", NULL, NULL},
    {O_MAX_LANES, 0, "max-lanes", CLI_ARG_REQUIRED, "N",
     "overlap lanes per thread or stream before slices are dropped (default 32)", NULL, NULL},
    {O_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, "no progress line and no summary line", NULL, NULL},
    {0},
};
const cli_cmd CLI_EXPORT = {"export", "<session> [--format perfetto|json|jfr] -o FILE", NULL, OPTS, NULL, NULL, 0,
                            CLI_POS_SESSION, NULL};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int cmd_export(int argc, char **argv)
{
    const char *path = NULL, *out = NULL, *format = NULL;
    int quiet = 0;
    wl_tl_options opt = {0};
    cli_parser p;
    cli_init(&p, &CLI_EXPORT, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        long long v;
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_FORMAT: format = p.arg; break;
        case O_OUT: out = p.arg; break;
        case O_QUIET: quiet = 1; break;
        case O_MAX_LANES:
            if (cli_number(&p, 1, 4096, &v))
                return 2;
            opt.max_lanes = (int)v;
            break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path || !out)
        return cli_error(&CLI_EXPORT, "%s (usage: warplens export <session> [--format F] -o FILE)",
                         !path ? "no session given" : "no output file given (-o FILE)");
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
    cli_progress pl;
    cli_progress_init(&pl, "exporting", "records", quiet);
    opt.progress = cli_progress_sink(&pl);
    double t0 = now_s();
    wl_export_stats st;
    int rc = kind == JSON ? wl_export_chrome_json(s, f.fp, &opt, &st, err, sizeof err)
             : kind == JFR ? wl_export_jfr(s, f.fp, &opt, &st, err, sizeof err)
                           : wl_export_perfetto(s, f.fp, &opt, &st, err, sizeof err);
    cli_progress_end(&pl);
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
