/* `warplens samples <session> [--csv] [--kernel ID] [--limit N] [--nvml|--pm] [--windows]`: the
 * device-wide samples of a session, NVML's (`warplens run --nvml-interval`) and CUPTI PM sampling's
 * (`warplens run --pm-sampling`), each window attributed to the kernels that ran in it: exact when
 * one kernel ran, shared (an upper bound for each) when several overlapped, idle. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_print.h"
#include "samples_print.h"
#include "store/session_pm.h"
#include "store/session_cursors.h"
#include "cli_session.h"
#include "verbs.h"

typedef struct ctx {
    uint64_t origin;
    long limit, rows;
    int csv;
} ctx;

static int on_sample(const wl_sample_attribution *a, void *arg)
{
    ctx *c = arg;
    samples_print_row(a, c->origin, c->csv);
    return c->limit > 0 && ++c->rows >= c->limit;
}


enum { O_CSV = 1, O_KERNEL, O_LIMIT, O_NVML, O_PM, O_WINDOWS };

static const cli_opt OPTS[] = {
    {O_CSV, 0, "csv", CLI_ARG_NONE, NULL, "comma-separated values (PM tables in long form: one line per value)", NULL, NULL},
    {O_KERNEL, 0, "kernel", CLI_ARG_REQUIRED, "ID", "only the samples whose window overlaps kernel ID (see warplens kernel)",
     NULL, NULL},
    {O_LIMIT, 0, "limit", CLI_ARG_REQUIRED, "N", "print at most N samples (N kernels / windows per PM table)", NULL, NULL},
    {O_NVML, 0, "nvml", CLI_ARG_NONE, NULL, "only NVML device samples", NULL, NULL},
    {O_PM, 0, "pm", CLI_ARG_NONE, NULL, "only PM samples", NULL, NULL},
    {O_WINDOWS, 0, "windows", CLI_ARG_NONE, NULL, "PM: every window with its attribution instead of the per-kernel table",
     NULL, NULL},
    {0},
};
const cli_cmd CLI_SAMPLES = {
    "samples", "<session> [--csv] [--kernel ID] [--limit N] [--nvml|--pm] [--windows]",
    "  Device-wide samples attributed to kernels by time overlap: NVML device samples (warplens run\n"
    "  --nvml-interval) and CUPTI PM samples (warplens run --pm-sampling). exact = one kernel ran in\n"
    "  the sample's window; shared = several did, and the value is an upper bound for each; idle =\n"
    "  none. busy % = share of the window the kernels covered.\n"
    "  PM: the recorder's status and a summary per metric (min/median/max/total), then the values\n"
    "  attributed to each kernel launch (counters summed over its windows, levels time-weighted).\n",
    OPTS, NULL, NULL, 0, CLI_POS_SESSION, NULL};

int cmd_samples(int argc, char **argv)
{
    const char *path = NULL;
    ctx c = {0, 0, 0, 0};
    long long kernel = -1;
    int only_nvml = 0, only_pm = 0, windows = 0;
    cli_parser p;
    cli_init(&p, &CLI_SAMPLES, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        long long v;
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_CSV: c.csv = 1; break;
        case O_NVML: only_nvml = 1; break;
        case O_PM: only_pm = 1; break;
        case O_WINDOWS: windows = 1; break;
        case O_KERNEL:
            if (cli_number(&p, 0, LLONG_MAX, &kernel))
                return 2;
            break;
        case O_LIMIT:
            if (cli_number(&p, 1, LONG_MAX, &v))
                return 2;
            c.limit = (long)v;
            break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path)
        return cli_error(&CLI_SAMPLES, "no session given (usage: warplens samples <session> [options])");
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    if (only_nvml && only_pm) {
        fprintf(stderr, "warplens samples: --nvml and --pm exclude each other\n");
        return cli_session_close(s, 2);
    }
    int nvml = !only_pm && wl_session_has_device_samples(s);
    int pm = !only_nvml && wl_session_has_pm_samples(s);
    if (!nvml && !pm) {
        const char *what = only_pm ? "PM samples" : only_nvml ? "device samples (NVML)" : "device samples (NVML or PM)";
        wl_pm_config_row *cfg;
        int nc = only_nvml ? 0 : wl_session_pm_configs(s, &cfg);
        if (nc <= 0)
            cli_read_error(s, "warplens: no %s in this session (record with `warplens run --nvml-interval MS` or"
                            " `--pm-sampling`; the recorder says why when sampling is not available)\n", what);
        else /* PM sampling was asked for: the recorder's status lines say what happened, in one line */
            {
            char line[4096];
            cli_read_error(s, "warplens: no %s in this session; PM sampling was asked for: %s\n", what,
                    pm_status_line(cfg, nc, line, sizeof line));
        }
        if (nc > 0)
            free(cfg);
        return cli_session_close(s, 1);
    }
    wl_session_span span;
    wl_session_get_span(s, &span);
    c.origin = span.origin_ns;
    int rc = 0;
    if (nvml) {
        if (c.csv && pm)
            printf("# nvml\n");
        samples_print_header(c.csv);
        int n = kernel >= 0 ? wl_kernel_device_samples(s, kernel, on_sample, &c)
                            : wl_device_samples_attribute(s, on_sample, &c);
        if (n < 0) {
            if (kernel >= 0)
                cli_no_row(s, "kernel", kernel, "warplens: no kernel with that id and timestamps in this session\n");
            else
                cli_read_error(s, "warplens: reading the device samples failed\n");
            rc = 1;
        }
    }
    if (pm && rc == 0) {
        if (c.csv && nvml)
            printf("\n");
        pm_print_options po = {c.csv, windows, c.limit, kernel, span.origin_ns, c.csv}; /* CSV: several tables, each named */
        if (pm_print(s, &po) != 0)
            rc = 1;
    }
    return cli_session_close(s, rc);
}
