/* `warplens stats <session> [--csv] [--top N] [--only TABLE]`: the summary tables of a session. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_print.h"
#include "range_print.h"
#include "samples_print.h"
#include "stats_print.h"
#include "store/session_metrics.h"
#include "cli_session.h"
#include "verbs.h"

enum { O_CSV = 1, O_TOP, O_ONLY };

static const cli_opt OPTS[] = {
    {O_CSV, 0, "csv", CLI_ARG_NONE, NULL, "comma-separated values instead of tables (with --only: one table)", NULL, NULL},
    {O_TOP, 0, "top", CLI_ARG_REQUIRED, "N", "show the N kernels with the most GPU time (default: all)", NULL, NULL},
    {O_ONLY, 0, "only", CLI_ARG_REQUIRED, "TABLE",
     "one of: overview, kernels, copies, api, nvtx, scopes, sync, timers, lost, samples",
     "overview kernels copies api nvtx scopes sync timers lost samples", NULL},
    {0},
};
const cli_cmd CLI_STATS = {"stats", "<session> [--csv] [--top N] [--only TABLE]", NULL, OPTS, NULL, NULL, 0,
                           CLI_POS_SESSION, NULL};

int cmd_stats(int argc, char **argv)
{
    const char *path = NULL, *only = NULL;
    stats_options opt = {0, 0};
    cli_parser p;
    cli_init(&p, &CLI_STATS, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        long long v;
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_CSV: opt.csv = 1; break;
        case O_TOP:
            if (cli_number(&p, 1, INT_MAX, &v))
                return 2;
            opt.kernel_limit = (int)v;
            break;
        case O_ONLY: only = p.arg; break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path)
        return cli_error(&CLI_STATS, "no session given (usage: warplens stats <session> [options])");
    static const char *const tables[] = {"overview", "kernels", "copies", "api", "nvtx",
                                         "scopes",   "sync",    "timers", "lost", "samples"};
    enum { NTABLES = 10, COPIES = 2, NVTX = 4, SCOPES = 5, TIMERS = 7, SAMPLES = 9 };
    int which = -1;
    if (only) {
        for (int i = 0; i < NTABLES; i++)
            if (!strcmp(only, tables[i]))
                which = i;
        if (which < 0) {
            fprintf(stderr, "warplens stats: unknown table '%s' (overview, kernels, copies, api, nvtx, scopes, sync,"
                            " timers, lost, samples)\n", only);
            return 2;
        }
    }
    char err[512];
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    /* sessions recorded with --metrics: the NVTX and scope tables are followed by their metrics */
    wl_range_view ranges;
    int has_ranges = 0;
    if (!opt.csv && (which < 0 || which == NVTX || which == SCOPES) && wl_session_has_metrics(s)) {
        has_ranges = wl_range_view_open(s, 1, &ranges, err, sizeof err) == 0;
        if (!has_ranges)
            cli_read_error(s, "warplens stats: hardware metrics per range: %s\n", err);
    }
    void (*printers[NTABLES])(wl_session *, const stats_options *) = {
        NULL, print_kernel_table, print_copy_table, print_api_table, print_nvtx_table,
        print_scope_table, print_sync_table, NULL, print_lost_table, NULL};
    for (int i = 0; i < NTABLES; i++) {
        if (which >= 0 && i != which)
            continue;
        if (i == TIMERS) {
            /* only sessions of programs that used the timer API have this table */
            wl_interval_summary *t;
            int nt = wl_session_timer_summaries(s, &t);
            free(t);
            if (nt > 0) {
                if (opt.csv && which < 0)
                    printf("\n# %s\n", tables[i]);
                print_timer_table(s, &opt);
            }
            continue;
        }
        if (i == SAMPLES) {
            /* only sessions recorded with NVML sampling have device samples */
            if (wl_session_has_device_samples(s)) {
                if (opt.csv && which < 0)
                    printf("\n# %s\n", tables[i]);
                print_device_sample_table(s, &opt);
            }
            continue;
        }
        if (i == 0) {
            if (!opt.csv)
                print_overview(s);
        } else {
            if (opt.csv && which < 0)
                printf("%s# %s\n", i > 1 ? "\n" : "", tables[i]);
            printers[i](s, &opt);
            if (i == COPIES && !opt.csv)
                print_copy_metric_table(s); /* --metrics: the copies' and sets' own ranges */
            if (has_ranges && (i == NVTX || i == SCOPES))
                print_range_metric_table(&ranges, i == NVTX ? WL_RANGE_NVTX : WL_RANGE_SCOPE);
        }
    }
    if (has_ranges)
        wl_range_view_close(&ranges);
    return cli_session_close(s, 0);
}
