/* Post-run summary (see run_summary.h), printed to stderr's neighbour stdout after the program's
 * own output. */
#include "run_summary.h"

#include <stdio.h>

#include "advise_print.h"
#include "metrics_print.h"
#include "pm_print.h"
#include "stalls_print.h"
#include "stats_print.h"

void print_run_summary(const char *session_path)
{
    char err[512];
    wl_session *s = wl_session_open(session_path, err, sizeof err);
    if (!s) {
        fprintf(stderr, "warplens: %s\n", err);
        return;
    }
    printf("\n== warplens: session written to %s ==\n", session_path);
    print_overview(s);
    stats_options o = {5, 0};
    print_kernel_table(s, &o);
    print_copy_table(s, &o);
    print_lost_table(s, &o);
    print_metric_run_note(s);
    pm_print_run_note(s, session_path);
    print_stall_run_note(s, session_path);
    wl_advise_opts ao = {NULL, 1.0};
    wl_advise_result ar;
    char aerr[256];
    if (wl_advise(s, &ao, &ar, aerr, sizeof aerr) == 0) {
        printf("\n");
        advise_print_oneline(stdout, &ar, 3);
        wl_advise_free(&ar);
    }
    printf("\nMore: warplens stats %s\n", session_path);
    wl_session_close(s);
}
