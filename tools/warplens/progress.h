/* The CLI's progress line for long work (import, export in every format, report, merge; `run
 * --metrics` has its own counts in run_progress.c but the same line): one line on stderr rewritten
 * in place (\r, cleared at the end) with done/total, percent, rate and time left. Shown only when
 * stderr is a terminal and the verb is not quiet, and only once the work has lasted
 * WARPLENS_PROGRESS_AFTER_MS (default 2000 ms: short work stays silent); WARPLENS_PROGRESS=0 turns
 * it off, =1 on even without a terminal (not with -q). The work itself reports through a
 * wl_progress sink (src/common/progress.h) and never prints. */
#ifndef WARPLENS_TOOLS_PROGRESS_H
#define WARPLENS_TOOLS_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "common/progress.h"

typedef struct cli_progress {
    const char *what, *unit; /* "exporting", "records" */
    int on, shown;
    uint64_t start_ns, last_ns, after_ns;
    uint64_t base, total; /* work in parts: done is base + the part's done, of total (0: the part's) */
} cli_progress;

void cli_progress_init(cli_progress *p, const char *what, const char *unit, int quiet);
/* The sink that the work calls (points at p). */
wl_progress cli_progress_sink(cli_progress *p);
void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total);
void cli_progress_end(cli_progress *p); /* clears the line */

/* shared by run_progress.c: "1,234,567"; "1h02m" / "3m05s" / "7s"; writes \r, erase, line */
const char *cli_progress_count(uint64_t v, char *b, size_t n);
const char *cli_progress_duration(double s, char *b, size_t n);
void cli_progress_show(const char *line);
uint64_t cli_progress_now_ns(void);

#endif
