/* The short summary printed after `warplens run`: top kernels, copy totals, records lost. */
#ifndef WARPLENS_TOOLS_RUN_SUMMARY_H
#define WARPLENS_TOOLS_RUN_SUMMARY_H

void print_run_summary(const char *session_path);

#endif
