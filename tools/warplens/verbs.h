/* The CLI's verbs: one file per verb (cmd_<verb>.c), each with its options' table (options.h);
 * the list of verbs (verbs.c) serves dispatch (main.c), `warplens --help` and the completions. */
#ifndef WARPLENS_TOOLS_VERBS_H
#define WARPLENS_TOOLS_VERBS_H

#include "options.h"

typedef struct wl_verb {
    const char *name;
    int (*fn)(int argc, char **argv);
    const cli_cmd *cmd; /* its options */
    const char *summary;
} wl_verb;

extern const wl_verb WL_VERBS[];
extern const int WL_NVERBS;

int cmd_run(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_occupancy(int argc, char **argv);
int cmd_occupancy_check(int argc, char **argv);
int cmd_throughput(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
int cmd_concurrency(int argc, char **argv);
int cmd_samples(int argc, char **argv);
int cmd_ranges(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_ranks(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_completion(int argc, char **argv);

extern const cli_cmd CLI_RUN, CLI_IMPORT, CLI_STATS, CLI_INFO, CLI_OCCUPANCY, CLI_OCCUPANCY_CHECK, CLI_THROUGHPUT,
    CLI_DECODE, CLI_EXPORT, CLI_REPORT, CLI_KERNELS, CLI_KERNEL, CLI_CONCURRENCY, CLI_SAMPLES, CLI_RANGES, CLI_MERGE,
    CLI_RANKS, CLI_ADVISE, CLI_COMPLETION;

#endif
