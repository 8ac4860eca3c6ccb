/* `warplens samples <session> [--csv] [--kernel ID] [--limit N]`: the NVML device samples of a
 * session (`warplens run --nvml-interval`), each attributed to the kernels that ran in its window:
 * exact when one kernel ran, shared (an upper bound for each) when several overlapped, idle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples_print.h"
#include "store/session_cursors.h"
#include "verbs.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: warplens samples <session> [--csv] [--kernel ID] [--limit N]\n"
                 "  NVML device samples (warplens run --nvml-interval) attributed to kernels by time overlap:\n"
                 "  exact = one kernel ran in the sample's window; shared = several did, and the value is an\n"
                 "  upper bound for each; idle = none. busy %% = share of the window the kernels covered.\n"
                 "  --csv        comma-separated values\n"
                 "  --kernel ID  only the samples whose window overlaps kernel ID (see warplens kernel)\n"
                 "  --limit N    print at most N samples\n");
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
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--csv")) {
            c.csv = 1;
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
    char err[512];
    wl_session *s = wl_session_open(path, err, sizeof err);
    if (!s) {
        fprintf(stderr, "warplens: %s\n", err);
        return 1;
    }
    if (!wl_session_has_device_samples(s)) {
        fprintf(stderr, "warplens: no device samples in this session (record with `warplens run --nvml-interval MS`;"
                        " the recorder says why when NVML is not available)\n");
        wl_session_close(s);
        return 1;
    }
    wl_session_span span;
    wl_session_get_span(s, &span);
    c.origin = span.origin_ns;
    samples_print_header(c.csv);
    int n = kernel >= 0 ? wl_kernel_device_samples(s, kernel, on_sample, &c)
                        : wl_device_samples_attribute(s, on_sample, &c);
    wl_session_close(s);
    if (n < 0) {
        fprintf(stderr, "warplens: %s\n", kernel >= 0 ? "no kernel with that id and timestamps in this session"
                                                      : "reading the device samples failed");
        return 1;
    }
    return 0;
}
