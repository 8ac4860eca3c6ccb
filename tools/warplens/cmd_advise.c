/* `warplens advise SESSION [--json] [--range NAME] [--min-gain PCT] [--top N]`: why the recorded
 * program is slow, as findings ranked by the time they could win back (analysis/advise.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise_print.h"
#include "cli_session.h"
#include "verbs.h"

static const char USAGE[] = "usage: warplens advise <session> [--json] [--range NAME] [--min-gain PCT] [--top N]\n";

static int usage_error(const char *why)
{
    fprintf(stderr, "warplens advise: %s\n%s", why, USAGE);
    return 2;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || v < 0 || v > 100)
        return -1;
    *out = v;
    return 0;
}

int cmd_advise(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0, top = 0;
    wl_advise_opts o = {NULL, 1.0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s"
                   "  Findings about why the program is slow, ranked by the time they could win back: GPU idle\n"
                   "  waiting for launches or behind synchronisations, pageable and small copies, low occupancy\n"
                   "  (with the block size that lifts it), tail effects and underfilled grids, streams that never\n"
                   "  overlap, the roofline (with --metrics) and what the data could not show. Each finding has\n"
                   "  the quantity measured, its threshold, the estimated gain and how it was estimated, the\n"
                   "  evidence (ids, names, the step) and the fix. Rules and thresholds: docs/advise.md.\n"
                   "  --json            one object {\"findings\": [...]}, best first\n"
                   "  --range NAME      only GPU work inside NVTX ranges or scopes named NAME (gains in %% of them)\n"
                   "  --min-gain PCT    leave out findings estimated below PCT %% of the span (default 1)\n"
                   "  --top N           only the first N findings\n",
                   USAGE);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--range") || !strcmp(a, "--min-gain") || !strcmp(a, "--top")) {
            if (i + 1 >= argc)
                return usage_error("an option needs a value");
            const char *v = argv[++i];
            if (!strcmp(a, "--range"))
                o.range = v;
            else if (!strcmp(a, "--min-gain") && parse_double(v, &o.min_gain_pct) != 0)
                return usage_error("--min-gain takes a percentage from 0 to 100");
            else if (!strcmp(a, "--top") && ((top = atoi(v)) <= 0))
                return usage_error("--top takes a positive count");
        } else if (a[0] == '-' || path) {
            char why[128];
            snprintf(why, sizeof why, a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
            return usage_error(why);
        } else {
            path = a;
        }
    }
    if (!path)
        return usage_error("no session given");
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    wl_advise_result r;
    char err[256];
    if (wl_advise(s, &o, &r, err, sizeof err) != 0) {
        cli_read_error(s, "warplens advise: %s\n", err);
        return cli_session_close(s, 1);
    }
    if (json)
        advise_print_json(stdout, &r, top);
    else
        advise_print_text(stdout, &r, top);
    wl_advise_free(&r);
    return cli_session_close(s, 0);
}
