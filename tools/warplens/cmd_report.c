/* `warplens report <session> -o report.html`: one self-contained HTML page (no network, inline CSS
 * and JavaScript, data embedded) with the overview, timeline, kernels, GPU fill chart and
 * summaries (see src/export/html_report.h). Written atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic_file.h"
#include "export/html_report.h"
#include "cli_session.h"
#include "verbs.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: warplens report <session> -o FILE.html [--max-slices N] [--title TEXT]\n"
                 "  -o FILE         the page, written atomically\n"
                 "  --max-slices N  timeline intervals embedded (default 50000); larger sessions embed a\n"
                 "                  leading time window and the page says so\n"
                 "  --title TEXT    page heading (default: the program's command line)\n");
}

int cmd_report(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    wl_report_options o = {0, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--title") && i + 1 < argc) {
            o.title = argv[++i];
        } else if (!strcmp(argv[i], "--max-slices") && i + 1 < argc) {
            char *end;
            long long v = strtoll(argv[++i], &end, 10);
            if (*end || v < 100) {
                fprintf(stderr, "warplens report: --max-slices needs a number >= 100, got '%s'\n", argv[i]);
                return 2;
            }
            o.max_slices = (uint64_t)v;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "warplens report: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "warplens report: one session at a time ('%s' is extra)\n", argv[i]);
            return 2;
        }
    }
    if (!path || !out) {
        fprintf(stderr, "warplens report: %s\n", !path ? "no session given" : "no output file given (-o FILE)");
        usage(stderr);
        return 2;
    }
    char err[512];
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    wl_atomic_file f;
    if (wl_atomic_file_open(&f, out)) {
        fprintf(stderr, "warplens report: cannot write %s: %m\n", out);
        return cli_session_close(s, 1);
    }
    wl_report_stats st;
    int rc = wl_report_html(s, f.fp, &o, &st, err, sizeof err);
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
    printf("wrote %s: %llu of %llu intervals on the timeline, %llu flows, %llu GPU fill points%s\n", out,
           (unsigned long long)st.slices_embedded, (unsigned long long)st.slices_total,
           (unsigned long long)st.flows_embedded, (unsigned long long)st.fill_points,
           st.capped ? " (large session: a leading time window is embedded)" : "");
    return 0;
}
