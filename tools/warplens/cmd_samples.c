/* `warplens samples <session> [--csv] [--kernel ID] [--limit N] [--nvml|--pm] [--windows]`: the
 * device-wide samples of a session, NVML's (`warplens run --nvml-interval`) and CUPTI PM sampling's
 * (`warplens run --pm-sampling`), each window attributed to the kernels that ran in it: exact when
 * one kernel ran, shared (an upper bound for each) when several overlapped, idle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_print.h"
#include "samples_print.h"
#include "store/session_pm.h"
#include "store/session_cursors.h"
#include "cli_session.h"
#include "verbs.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: warplens samples <session> [--csv] [--kernel ID] [--limit N] [--nvml|--pm] [--windows]\n"
                 "  Device-wide samples attributed to kernels by time overlap: NVML device samples (warplens run\n"
                 "  --nvml-interval) and CUPTI PM samples (warplens run --pm-sampling). exact = one kernel ran in\n"
                 "  the sample's window; shared = several did, and the value is an upper bound for each; idle =\n"
                 "  none. busy %% = share of the window the kernels covered.\n"
                 "  PM: the recorder's status and a summary per metric (min/median/max/total), then the values\n"
                 "  attributed to each kernel launch (counters summed over its windows, levels time-weighted).\n"
                 "  --csv        comma-separated values (PM tables in long form: one line per value)\n"
                 "  --kernel ID  only the samples whose window overlaps kernel ID (see warplens kernel)\n"
                 "  --limit N    print at most N samples (N kernels / windows per PM table)\n"
                 "  --nvml, --pm only NVML device samples / only PM samples\n"
                 "  --windows    PM: every window with its attribution instead of the per-kernel table\n");
}

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

int cmd_samples(int argc, char **argv)
{
    const char *path = NULL;
    ctx c = {0, 0, 0, 0};
    long long kernel = -1;
    int only_nvml = 0, only_pm = 0, windows = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--csv")) {
            c.csv = 1;
        } else if (!strcmp(argv[i], "--nvml")) {
            only_nvml = 1;
        } else if (!strcmp(argv[i], "--pm")) {
            only_pm = 1;
        } else if (!strcmp(argv[i], "--windows")) {
            windows = 1;
        } else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
            kernel = strtoll(argv[++i], &end, 10);
            if (*end || kernel < 0) {
                fprintf(stderr, "warplens samples: --kernel needs a kernel id, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            c.limit = strtol(argv[++i], &end, 10);
            if (*end || c.limit < 1) {
                fprintf(stderr, "warplens samples: --limit needs a positive number, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (argv[i][0] == '-' || path) {
            usage(stderr);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
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
