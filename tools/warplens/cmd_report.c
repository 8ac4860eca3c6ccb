/* `warplens report <session> -o report.html`: one self-contained HTML page (no network, inline CSS
 * and JavaScript, data embedded) with the overview, timeline, kernels, GPU fill chart and
 * summaries (see src/export/html_report.h). Written atomically. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "export/html_report.h"
#include "cli_session.h"
#include "progress.h"
#include "verbs.h"

enum { O_OUT = 1, O_MAX_SLICES, O_TITLE, O_QUIET };

static const cli_opt OPTS[] = {
    {O_OUT, 'o', "output", CLI_ARG_REQUIRED, "FILE", "the page, written atomically", NULL, NULL},
    {O_MAX_SLICES, 0, "max-slices", CLI_ARG_REQUIRED, "N",
     "timeline intervals embedded (default 50000); larger sessions embed a\n"
     "leading time window and the page says so", NULL, NULL},
    {O_TITLE, 0, "title", CLI_ARG_REQUIRED, "TEXT", "page heading (default: the program's command line)", NULL, NULL},
    {O_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, "no progress line and no summary line", NULL, NULL},
    {0},
};
const cli_cmd CLI_REPORT = {"report", "<session> -o FILE.html [--max-slices N] [--title TEXT]", NULL, OPTS, NULL, NULL, 0,
                            CLI_POS_SESSION, NULL};

int cmd_report(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    int quiet = 0;
    wl_report_options o = {0, NULL, NULL};
    cli_parser p;
    cli_init(&p, &CLI_REPORT, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        long long v;
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_OUT: out = p.arg; break;
        case O_TITLE: o.title = p.arg; break;
        case O_QUIET: quiet = 1; break;
        case O_MAX_SLICES:
            if (cli_number(&p, 100, LLONG_MAX, &v))
                return 2;
            o.max_slices = (uint64_t)v;
            break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path || !out)
        return cli_error(&CLI_REPORT, "%s (usage: warplens report <session> -o FILE.html)",
                         !path ? "no session given" : "no output file given (-o FILE)");
    char err[512];
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    wl_atomic_file f;
    if (wl_atomic_file_open(&f, out)) {
        fprintf(stderr, "warplens report: cannot write %s: %m\n", out);
        return cli_session_close(s, 1);
    }
    cli_progress pl;
    cli_progress_init(&pl, "report", "records", quiet);
    wl_tl_options tl = {0};
    tl.progress = cli_progress_sink(&pl);
    o.tl = &tl;
    wl_report_stats st;
    int rc = wl_report_html(s, f.fp, &o, &st, err, sizeof err);
    cli_progress_end(&pl);
    if (rc)
        cli_read_error(s, "warplens report: %s\n", err);
    if (cli_session_close(s, rc ? 1 : 0)) {
        wl_atomic_file_abort(&f);
        return 1;
    }
    if (wl_atomic_file_commit(&f)) {
        fprintf(stderr, "warplens report: cannot finish %s: %m\n", out);
        return 1;
    }
    if (!quiet)
        printf("wrote %s: %llu of %llu intervals on the timeline, %llu flows, %llu GPU fill points%s\n", out,
               (unsigned long long)st.slices_embedded, (unsigned long long)st.slices_total,
               (unsigned long long)st.flows_embedded, (unsigned long long)st.fill_points,
               st.capped ? " (large session: a leading time window is embedded)" : "");
    return 0;
}
