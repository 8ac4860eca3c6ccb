/* `warplens run --metrics`'s progress line: while the program runs, the recorder of each process
 * rewrites <pid>.wlprogress in the capture folder (capfile.h, wlcap_progress); every 250 ms the CLI
 * sums them and rewrites one line on the terminal: calls profiled, passes and replay, the rate over
 * the last ten seconds, the calls waiting for the profiler and the time they will take at that
 * rate, ranges by kind, launches the filters left out, time so far. Only on a terminal (stderr), not
 * with -q; WARPLENS_PROGRESS=0/1 forces it off or on. */
#ifndef WARPLENS_TOOLS_RUN_PROGRESS_H
#define WARPLENS_TOOLS_RUN_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "capfile/capfile.h"

#define RUN_PROGRESS_WINDOW 40 /* ticks the rate is taken over (10 s at 250 ms) */

typedef struct run_progress {
    char dir[4096];
    int on, shown;
    uint64_t start_ns;
    uint64_t done[RUN_PROGRESS_WINDOW], at[RUN_PROGRESS_WINDOW]; /* calls finished, when */
    unsigned ticks;
} run_progress;

/* on: show it (a terminal and not quiet, or WARPLENS_PROGRESS=1). */
void run_progress_init(run_progress *p, const char *capture_dir, int on);
void run_progress_tick(run_progress *p);
void run_progress_end(run_progress *p); /* clears the line */

/* Sums the progress files of dir into sum; how many were read. */
int run_progress_read(const char *dir, wlcap_progress *sum);
/* The line for these counts (no newline): elapsed seconds since the start, rate in calls/s (<= 0:
 * not known yet). */
void run_progress_format(const wlcap_progress *sum, double elapsed_s, double rate, char *out, size_t n);

#endif
