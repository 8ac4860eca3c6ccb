/* The ranks section of the HTML report (see report_ranks.h). */
#include "export/report_ranks.h"

#include <stdio.h>

#include "analysis/rank_steps.h"

static void count_process(const wl_process_row *p, void *arg)
{
    (void)p;
    ++*(int *)arg;
}

static void label(const wl_rank *k, char *out, size_t n)
{
    if (k->rank >= 0)
        snprintf(out, n, "%d", k->rank);
    else
        snprintf(out, n, "pid %u", k->pid);
}

int wl_report_ranks(wl_json_out *j, wl_session *s)
{
    /* a table of ranks needs two processes: a single-process session is not read again for it */
    int processes = 0;
    if (wl_session_each_process(s, count_process, &processes) < 2)
        return 0;
    const char *path = wl_session_path(s);
    wl_rank_report r;
    char err[512];
    if (wl_rank_report_build(&path, 1, NULL, &r, err, sizeof err) != 0)
        return 0;
    if (r.nranks < 2 || r.nsteps < 1) {
        wl_rank_report_free(&r);
        return 0;
    }
    wl_json_lit(j, ",\"ranks\":{\"step\":");
    wl_json_str(j, r.step_name);
    wl_json_lit(j, ",\"ranks\":[");
    for (int i = 0; i < r.nranks; i++) {
        const wl_rank *k = &r.ranks[i];
        wl_rank_total t;
        wl_rank_total_of(&r, i, &t);
        char lab[32];
        label(k, lab, sizeof lab);
        wl_json_lit(j, i ? ",{\"rank\":" : "{\"rank\":");
        wl_json_str(j, lab);
        wl_json_key(j, "host"), wl_json_str(j, k->host);
        wl_json_key(j, "pid"), wl_json_u64(j, k->pid);
        wl_json_key(j, "steps"), wl_json_i64(j, k->nsteps);
        wl_json_key(j, "mean_ns"), wl_json_double(j, k->nsteps ? (double)t.time_ns / k->nsteps : 0.0);
        wl_json_key(j, "gpu_busy_pct"), wl_json_double(j, t.time_ns ? 100.0 * (double)t.busy_ns / (double)t.time_ns : 0.0);
        wl_json_key(j, "collective_ns"), wl_json_u64(j, t.collective_ns);
        wl_json_key(j, "wait_ns"), wl_json_u64(j, t.wait_ns);
        wl_json_key(j, "copies"), wl_json_u64(j, t.copies);
        wl_json_key(j, "straggler_steps"), wl_json_i64(j, t.straggler_steps);
        wl_json_lit(j, "}");
    }
    wl_json_lit(j, "],\"steps\":[");
    for (int i = 0; i < r.nsteps; i++) {
        const wl_step_summary *q = &r.steps[i];
        char lab[32];
        label(&r.ranks[q->straggler], lab, sizeof lab);
        wl_json_lit(j, i ? ",{\"step\":" : "{\"step\":");
        wl_json_i64(j, i);
        wl_json_key(j, "mean_ns"), wl_json_u64(j, q->mean_ns);
        wl_json_key(j, "max_ns"), wl_json_u64(j, q->max_ns);
        wl_json_key(j, "straggler"), wl_json_str(j, lab);
        wl_json_key(j, "imbalance_pct"), wl_json_double(j, q->imbalance_pct);
        wl_json_lit(j, "}");
    }
    wl_json_lit(j, "]}");
    wl_rank_report_free(&r);
    return 1;
}
