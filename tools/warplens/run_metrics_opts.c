/* The --metrics filter and graph options of `warplens run` (see run_metrics_opts.h). */
#include "run_metrics_opts.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int run_metric_opt(run_metric_opts *o, int which, const char *value)
{
    switch (which) {
    case RUN_MF_KERNEL: o->kernel = value; break;
    case RUN_MF_SKIP: o->skip = value; break;
    case RUN_MF_COUNT: o->count = value; break;
    case RUN_MF_GRAPHS: o->graphs = value; break;
    case RUN_MF_NVTX:
        if (o->nnvtx == RUN_NVTX_NAMES) {
            fprintf(stderr, "warplens run: at most %d --metrics-nvtx names\n", RUN_NVTX_NAMES);
            return -1;
        }
        o->nvtx[o->nnvtx++] = value;
        break;
    }
    return 0;
}

/* The regular expression of -k without ncu's "regex:" prefix. */
static const char *kernel_regex(const char *v) { return strncmp(v, "regex:", 6) ? v : v + 6; }

static int check_count(const char *what, const char *v, long min)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || end == v || n < min) {
        fprintf(stderr, "warplens run: %s needs a whole number of at least %ld, got '%s'\n", what, min, v);
        return -1;
    }
    return 0;
}

int run_metric_opts_check(const run_metric_opts *o, int metrics_on)
{
    const char *given = o->kernel ? "--metrics-kernel" : o->skip ? "--metrics-skip" : o->count ? "--metrics-count"
                        : o->nnvtx ? "--metrics-nvtx" : o->graphs ? "--metrics-graphs" : NULL;
    if (!given)
        return 0;
    if (!metrics_on) {
        fprintf(stderr, "warplens run: %s goes with --metrics\n", given);
        return -1;
    }
    if (o->kernel) {
        regex_t re;
        int rc = regcomp(&re, kernel_regex(o->kernel), REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[160];
            regerror(rc, &re, msg, sizeof msg);
            fprintf(stderr, "warplens run: --metrics-kernel '%s': %s\n", o->kernel, msg);
            return -1;
        }
        regfree(&re);
    }
    if ((o->skip && check_count("--metrics-skip", o->skip, 0)) || (o->count && check_count("--metrics-count", o->count, 1)))
        return -1;
    for (int i = 0; i < o->nnvtx; i++)
        if (!o->nvtx[i][0] || strchr(o->nvtx[i], '\n') || strlen(o->nvtx[i]) > 127) {
            fprintf(stderr, "warplens run: --metrics-nvtx names a range: 1 to 127 characters, no newline\n");
            return -1;
        }
    if (o->graphs && strcmp(o->graphs, "off") && strcmp(o->graphs, "node") && strcmp(o->graphs, "launch")) {
        fprintf(stderr, "warplens run: --metrics-graphs: unknown mode '%s' (off, node or launch)\n", o->graphs);
        return -1;
    }
    return 0;
}

void run_metric_opts_apply(const run_metric_opts *o, char *text, size_t n)
{
    size_t at = 0;
#define SAY(...) (at += (size_t)snprintf(text + at, at < n ? n - at : 0, __VA_ARGS__), at = at < n ? at : n)
    if (n)
        text[0] = 0;
    if (o->kernel) {
        setenv("WARPLENS_METRICS_KERNEL", kernel_regex(o->kernel), 1);
        SAY("%s-k %s", at ? " " : "", kernel_regex(o->kernel));
    }
    if (o->skip) {
        setenv("WARPLENS_METRICS_SKIP", o->skip, 1);
        SAY("%s-s %s", at ? " " : "", o->skip);
    }
    if (o->count) {
        setenv("WARPLENS_METRICS_COUNT", o->count, 1);
        SAY("%s-c %s", at ? " " : "", o->count);
    }
    char names[RUN_NVTX_NAMES * 130] = "";
    for (int i = 0; i < o->nnvtx; i++) {
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "\n" : "", o->nvtx[i]);
        SAY("%s--nvtx-include %s", at ? " " : "", o->nvtx[i]);
    }
    if (o->nnvtx)
        setenv("WARPLENS_METRICS_NVTX", names, 1);
    if (o->graphs) {
        setenv("WARPLENS_METRICS_GRAPHS", o->graphs, 1);
        SAY("%s--metrics-graphs %s", at ? " " : "", o->graphs);
    }
#undef SAY
}
