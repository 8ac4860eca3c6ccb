/* `warplens advise SESSION [--json] [--range NAME] [--min-gain PCT] [--top N]`: why the recorded
 * program is slow, as findings ranked by the time they could win back (analysis/advise.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise_print.h"
#include "cli_session.h"
#include "options.h"
#include "verbs.h"

enum { O_JSON = 1, O_RANGE, O_MIN_GAIN, O_TOP };

static const cli_opt OPTS[] = {
    {O_JSON, 0, "json", CLI_ARG_NONE, NULL, "one object {\"findings\": [...]}, best first", NULL, NULL},
    {O_RANGE, 0, "range", CLI_ARG_REQUIRED, "NAME",
     "only GPU work inside NVTX ranges or scopes named NAME (gains in % of them)", NULL, NULL},
    {O_MIN_GAIN, 0, "min-gain", CLI_ARG_REQUIRED, "PCT",
     "leave out findings estimated below PCT % of the span (default 1)", NULL, NULL},
    {O_TOP, 0, "top", CLI_ARG_REQUIRED, "N", "only the first N findings", NULL, NULL},
    {0},
};
const cli_cmd CLI_ADVISE = {
    "advise", "<session> [--json] [--range NAME] [--min-gain PCT] [--top N]",
    "  Findings about why the program is slow, ranked by the time they could win back: GPU idle\n"
    "  waiting for launches, for host work or behind synchronisations, pageable and small copies,\n"
    "  low occupancy (with the block size that lifts it), tail effects and underfilled grids,\n"
    "  streams that never overlap, the roofline (with --metrics) and what the data could not show.\n"
    "  Each finding has the quantity measured, its threshold, the estimated gain and how it was\n"
    "  estimated, the evidence (ids, names, the step) and the fix. Rules: docs/advise.md.\n",
    OPTS, NULL, NULL, 0, CLI_POS_SESSION, NULL};

int cmd_advise(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    long long top = 0;
    wl_advise_opts o = {NULL, 1.0};
    cli_parser p;
    cli_init(&p, &CLI_ADVISE, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_JSON: json = 1; break;
        case O_RANGE: o.range = p.arg; break;
        case O_MIN_GAIN: {
            char *end;
            double v = strtod(p.arg, &end);
            if (end == p.arg || *end || v < 0 || v > 100)
                return cli_error(&CLI_ADVISE, "--min-gain takes a percentage from 0 to 100, not '%s'", p.arg);
            o.min_gain_pct = v;
            break;
        }
        case O_TOP:
            if (cli_number(&p, 1, 1000000, &top))
                return 2;
            break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path)
        return cli_error(&CLI_ADVISE, "no session given (usage: warplens advise <session> [--json])");
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
        advise_print_json(stdout, &r, (int)top);
    else
        advise_print_text(stdout, &r, (int)top);
    wl_advise_free(&r);
    return cli_session_close(s, 0);
}
