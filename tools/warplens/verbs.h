/* The CLI's verbs: one file per verb (cmd_<verb>.c), dispatched from main.c. */
#ifndef WARPLENS_TOOLS_VERBS_H
#define WARPLENS_TOOLS_VERBS_H

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

#endif
