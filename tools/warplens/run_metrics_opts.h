/* The options that go with `warplens run --metrics`: which kernels are profiled (ncu's -k, -s, -c
 * and --nvtx-include, warplens' --metrics-kernel, --metrics-skip, --metrics-count,
 * --metrics-nvtx) and how graph launches are (--metrics-graphs). Parsed, checked and handed to the
 * recorder as WARPLENS_METRICS_* variables (src/capture/metric_filter.h). */
#ifndef WARPLENS_TOOLS_RUN_METRICS_OPTS_H
#define WARPLENS_TOOLS_RUN_METRICS_OPTS_H

#include <stddef.h>

#define RUN_NVTX_NAMES 16

typedef struct run_metric_opts {
    const char *kernel, *skip, *count, *graphs;
    const char *nvtx[RUN_NVTX_NAMES];
    int nnvtx;
} run_metric_opts;

/* which option (the names, warplens' and ncu's, are in cmd_run.c's table) */
enum { RUN_MF_KERNEL, RUN_MF_SKIP, RUN_MF_COUNT, RUN_MF_NVTX, RUN_MF_GRAPHS };

/* Takes the option's value; -1 after one line on stderr when it is refused. */
int run_metric_opt(run_metric_opts *o, int which, const char *value);
/* Checks the values (and that --metrics was given); -1 after one line on stderr. */
int run_metric_opts_check(const run_metric_opts *o, int metrics_on);
/* Sets the recorder's variables; a text such as "-k gemm -c 10" into text for the session. */
void run_metric_opts_apply(const run_metric_opts *o, char *text, size_t n);

#endif
