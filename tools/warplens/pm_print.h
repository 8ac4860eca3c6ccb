/* PM samples in the terminal (`warplens samples`): per device the recorder's status and a summary
 * per metric (windows, min, median, max, total), then either the values attributed to each kernel
 * launch or every window with its attribution. CSV tables are in long form (one line per value),
 * so devices with different metric sets share one header. */
#ifndef WARPLENS_TOOLS_PM_PRINT_H
#define WARPLENS_TOOLS_PM_PRINT_H

#include <stdint.h>

#include "store/session.h"
#include "store/session_pm.h"

typedef struct pm_print_options {
    int csv;
    int windows;          /* list windows instead of kernels */
    long limit;           /* rows of the kernel or window table, 0 = all */
    int64_t kernel_id;    /* -1: all; else that kernel's values and windows */
    uint64_t origin_ns;   /* times are printed relative to it */
    int sections;         /* CSV: put "# name" before each table */
} pm_print_options;

/* Prints the PM tables; returns 0, or -1 on a read error (message printed). */
int pm_print(wl_session *s, const pm_print_options *o);

/* The recorder's PM status lines of every GPU, in one line: "GPU 0 off: line; line". */
const char *pm_status_line(const wl_pm_config_row *cfg, int n, char *buf, size_t size);

/* For the run summary: per GPU, how many windows PM sampling took, or the last line saying why it
 * was off; prints nothing without PM sampling. */
void pm_print_run_note(wl_session *s, const char *session_path);

#endif
