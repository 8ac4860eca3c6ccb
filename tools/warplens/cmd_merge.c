/* `warplens merge -o ALL.wlsession S1 S2 ... | DIR | 'GLOB'`: one session from the sessions of a
 * job's ranks, hosts and processes, with the hosts' clocks aligned on their collectives (or as
 * --clock-offset says). Prints each host's offset, its residual and what it rests on. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/clock_align.h"
#include "progress.h"
#include "session_args.h"
#include "store/session_merge.h"
#include "verbs.h"

#define MAX_OVERRIDES 256

typedef struct override {
    const char *host;
    size_t host_len;
    int64_t ns;
    int used;
} override;

static int parse_override(const char *a, override *o)
{
    const char *eq = strrchr(a, '=');
    char *end;
    if (!eq || eq == a)
        return -1;
    errno = 0;
    long long v = strtoll(eq + 1, &end, 10);
    if (errno || end == eq + 1 || *end)
        return -1;
    *o = (override){a, (size_t)(eq - a), (int64_t)v, 0};
    return 0;
}


enum { O_OUT = 1, O_CLOCK_OFFSET, O_QUIET };

static const cli_opt OPTS[] = {
    {O_OUT, 'o', "output", CLI_ARG_REQUIRED, "FILE", "the merged session (required; written atomically)", NULL, NULL},
    {O_CLOCK_OFFSET, 0, "clock-offset", CLI_ARG_REQUIRED, "HOST=NS",
     "add NS nanoseconds (signed) to every time of HOST's sessions instead\n"
     "of the offset estimated from collectives (repeatable; HOST as in\n"
     "`warplens info`)", NULL, NULL},
    {O_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, "print nothing but errors", NULL, NULL},
    {0},
};
const cli_cmd CLI_MERGE = {
    "merge", "-o OUT.wlsession [options] SESSION... | DIR | 'GLOB'", NULL, OPTS,
    "Sessions of one host share its clock; across hosts each host's offset is estimated from the\n"
    "NCCL collectives every rank runs (the k-th of a kind on each collective stream ends within\n"
    "microseconds on every rank), against the host of rank 0.\n",
    NULL, 0, CLI_POS_SESSION, NULL};
static int visit_align(wl_session *s, int input, void *arg, char *err, size_t err_size)
{
    return wl_clock_align_add(arg, s, input, err, err_size);
}

int cmd_merge(int argc, char **argv)
{
    const char *output = NULL;
    int quiet = 0, nover = 0, nargs = 0;
    static override over[MAX_OVERRIDES];
    char **args = calloc((size_t)argc, sizeof *args);
    if (!args)
        return 2;
    cli_parser p;
    cli_init(&p, &CLI_MERGE, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: free(args); return 0;
        case CLI_ERROR: free(args); return 2;
        case O_OUT: output = p.arg; break;
        case O_QUIET: quiet = 1; break;
        case O_CLOCK_OFFSET:
            if (nover == MAX_OVERRIDES || parse_override(p.arg, &over[nover]) != 0) {
                free(args);
                return cli_error(&CLI_MERGE, "--clock-offset wants HOST=NS (signed nanoseconds), got '%s'", p.arg);
            }
            nover++;
            break;
        case CLI_POSITIONAL: args[nargs++] = (char *)p.arg; break;
        }
    }
    if (!output || !nargs) {
        free(args);
        return cli_error(&CLI_MERGE, "%s (usage: warplens merge -o OUT.wlsession SESSION...)",
                         !output ? "-o OUT.wlsession is required" : "no sessions given");
    }
    char **paths;
    int n = session_args_expand("merge", args, nargs, output, &paths);
    free(args);
    if (n < 0)
        return 2;
    int rc = 1, nhosts = 0;
    char err[1024];
    wl_merge_clock *hosts = NULL;
    int *input_host = calloc((size_t)n, sizeof *input_host);
    int64_t *offset = calloc((size_t)n, sizeof *offset);
    wl_clock_align *align = wl_clock_align_new(n);
    wl_merge *merge = NULL;
    if (!input_host || !offset || !align) {
        fprintf(stderr, "warplens merge: out of memory\n");
        goto done;
    }
    /* one pass over the inputs (each opened and checked once) gathers the collectives; the
     * progress line counts inputs surveyed, then inputs copied */
    cli_progress pl;
    cli_progress_init(&pl, "merging", "steps", quiet);
    wl_progress sink = cli_progress_sink(&pl);
    if (!(merge = wl_merge_survey((const char *const *)paths, n, visit_align, align, &sink, err, sizeof err)) ||
        wl_clock_align_finish(align, &hosts, &nhosts, input_host, err, sizeof err) != 0) {
        cli_progress_end(&pl);
        fprintf(stderr, "warplens merge: %s\n", err);
        goto done;
    }
    for (int k = 0; k < nover; k++) {
        for (int h = 0; h < nhosts; h++) {
            if (strlen(hosts[h].host) == over[k].host_len && !strncmp(hosts[h].host, over[k].host, over[k].host_len)) {
                hosts[h].offset_ns = over[k].ns;
                hosts[h].residual_ns = 0;
                hosts[h].collectives = -1;
                snprintf(hosts[h].source, sizeof hosts[h].source, "given");
                over[k].used = 1;
            }
        }
        if (!over[k].used) {
            cli_progress_end(&pl);
            fprintf(stderr, "warplens merge: --clock-offset: no session was recorded on host '%.*s'\n",
                    (int)over[k].host_len, over[k].host);
            goto done;
        }
    }
    for (int i = 0; i < n; i++)
        offset[i] = hosts[input_host[i]].offset_ns;
    wl_merge_stats st;
    int wrote = wl_merge_write(merge, output, offset, hosts, nhosts, &st, err, sizeof err);
    cli_progress_end(&pl);
    if (wrote != 0) {
        fprintf(stderr, "warplens merge: %s\n", err);
        goto done;
    }
    rc = 0;
    if (quiet)
        goto done;
    printf("merged %d sessions into %s: %d processes on %d host%s, %" PRIu64 " kernels%s\n", st.inputs, output,
           st.processes, st.hosts, st.hosts == 1 ? "" : "s", st.kernels,
           st.renumbered_pids ? " (pids used on two hosts renumbered: pid + k * 4194304)" : "");
    if (nhosts > 1) {
        printf("%-24s %16s %12s %12s  %s\n", "host", "offset_ns", "residual_ns", "collectives", "clock");
        for (int h = 0; h < nhosts; h++) {
            char coll[24] = "-";
            if (hosts[h].collectives >= 0 && strcmp(hosts[h].source, "reference"))
                snprintf(coll, sizeof coll, "%" PRId64, hosts[h].collectives);
            printf("%-24s %16" PRId64 " %12" PRId64 " %12s  %s\n", hosts[h].host, hosts[h].offset_ns,
                   hosts[h].residual_ns, coll,
                   !strcmp(hosts[h].source, "none") ? "none: no collective in common with the reference; not shifted"
                                                     : hosts[h].source);
        }
    }
done:
    wl_merge_free(merge);
    wl_clock_align_free(align);
    free(hosts);
    free(input_host);
    free(offset);
    session_args_free(paths, n);
    return rc;
}
