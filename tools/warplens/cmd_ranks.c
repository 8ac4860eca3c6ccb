/* `warplens ranks SESSION | S1 S2 ... [--step NAME] [--json | --csv]`: per rank and per step,
 * step time, GPU busy, time in collectives and waiting in them for the slowest rank, copies; the
 * straggler of each step and the imbalance (analysis/rank_steps.h). Works on one merged session
 * or on the ranks' own sessions (only durations are compared: no clock alignment needed). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/rank_steps.h"
#include "export/json_out.h"
#include "format.h"
#include "kernel_format.h"
#include "session_args.h"
#include "verbs.h"

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

static void rank_label(const wl_rank *k, char *out, size_t n)
{
    if (k->rank >= 0)
        snprintf(out, n, "%d", k->rank);
    else
        snprintf(out, n, "pid %u", k->pid);
}

static void print_csv(const wl_rank_report *r)
{
    printf("rank,host,pid,step,start_ns,time_ns,gpu_busy_pct,collective_ns,wait_ns,copies,copy_bytes,copy_ns,"
           "straggler,imbalance_pct\n");
    for (int i = 0; i < r->nranks; i++) {
        const wl_rank *k = &r->ranks[i];
        for (int s = 0; s < k->nsteps; s++) {
            const wl_rank_step *x = &k->steps[s];
            uint64_t len = x->end_ns - x->start_ns;
            printf("%d,", k->rank);
            kf_csv_str(stdout, k->host);
            printf(",%u,%d,%" PRIu64 ",%" PRIu64 ",%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                   ",%d,", k->pid, s, x->start_ns, len, pct(x->busy_ns, len), x->collective_ns, x->wait_ns, x->copies,
                   x->copy_bytes, x->copy_ns, s < r->nsteps && r->steps[s].straggler == i);
            if (s < r->nsteps)
                printf("%.2f", r->steps[s].imbalance_pct);
            printf("\n");
        }
    }
}

static void print_json(const wl_rank_report *r)
{
    wl_json_out j;
    wl_json_init(&j, stdout);
    wl_json_lit(&j, "{\"step\":");
    wl_json_str(&j, r->step_name);
    wl_json_lit(&j, ",\"ranks\":[");
    for (int i = 0; i < r->nranks; i++) {
        const wl_rank *k = &r->ranks[i];
        wl_json_lit(&j, i ? ",{\"rank\":" : "{\"rank\":");
        wl_json_i64(&j, k->rank);
        wl_json_lit(&j, ",\"host\":");
        wl_json_str(&j, k->host);
        wl_json_lit(&j, ",\"pid\":");
        wl_json_u64(&j, k->pid);
        wl_json_lit(&j, ",\"steps\":[");
        for (int s = 0; s < k->nsteps; s++) {
            const wl_rank_step *x = &k->steps[s];
            uint64_t len = x->end_ns - x->start_ns;
            wl_json_lit(&j, s ? ",{\"start_ns\":" : "{\"start_ns\":");
            wl_json_u64(&j, x->start_ns);
            wl_json_lit(&j, ",\"time_ns\":");
            wl_json_u64(&j, len);
            wl_json_lit(&j, ",\"gpu_busy_pct\":");
            wl_json_double(&j, pct(x->busy_ns, len));
            wl_json_lit(&j, ",\"collective_ns\":");
            wl_json_u64(&j, x->collective_ns);
            wl_json_lit(&j, ",\"wait_ns\":");
            wl_json_u64(&j, x->wait_ns);
            wl_json_lit(&j, ",\"copies\":");
            wl_json_u64(&j, x->copies);
            wl_json_lit(&j, ",\"copy_bytes\":");
            wl_json_u64(&j, x->copy_bytes);
            wl_json_lit(&j, ",\"copy_ns\":");
            wl_json_u64(&j, x->copy_ns);
            wl_json_lit(&j, "}");
        }
        wl_json_lit(&j, "]}");
    }
    wl_json_lit(&j, "],\"steps\":[");
    for (int s = 0; s < r->nsteps; s++) {
        const wl_step_summary *q = &r->steps[s];
        wl_json_lit(&j, s ? ",{\"step\":" : "{\"step\":");
        wl_json_i64(&j, s);
        wl_json_lit(&j, ",\"mean_ns\":");
        wl_json_u64(&j, q->mean_ns);
        wl_json_lit(&j, ",\"max_ns\":");
        wl_json_u64(&j, q->max_ns);
        wl_json_lit(&j, ",\"straggler_rank\":");
        wl_json_i64(&j, r->ranks[q->straggler].rank);
        wl_json_lit(&j, ",\"straggler_pid\":");
        wl_json_u64(&j, r->ranks[q->straggler].pid);
        wl_json_lit(&j, ",\"imbalance_pct\":");
        wl_json_double(&j, q->imbalance_pct);
        wl_json_lit(&j, "}");
    }
    wl_json_lit(&j, "]}\n");
    wl_json_flush(&j);
}

static int by_imbalance(const void *a, const void *b)
{
    const wl_step_summary *x = a, *y = b;
    return (x->imbalance_pct < y->imbalance_pct) - (x->imbalance_pct > y->imbalance_pct);
}

static void print_text(const wl_rank_report *r, int top)
{
    printf("step '%s': %d ranks, %d steps on every rank\n\n", r->step_name, r->nranks, r->nsteps);
    printf("%-8s %-20s %8s %6s %11s %8s %12s %12s %7s %10s\n", "rank", "host", "pid", "steps", "step mean",
           "GPU busy", "collectives", "waiting", "copies", "straggler");
    uint64_t collective_ns = 0;
    for (int i = 0; i < r->nranks; i++) {
        const wl_rank *k = &r->ranks[i];
        wl_rank_total t;
        wl_rank_total_of(r, i, &t);
        collective_ns += t.collective_ns;
        char lab[32], mean[32], c[32], w[32];
        rank_label(k, lab, sizeof lab);
        printf("%-8s %-20.20s %8u %6d %11s %7.1f%% %12s %12s %7" PRIu64 " %4d/%-5d\n", lab, k->host, k->pid,
               k->nsteps, fmt_ns((double)t.time_ns / (k->nsteps ? k->nsteps : 1), mean, sizeof mean),
               pct(t.busy_ns, t.time_ns), fmt_ns((double)t.collective_ns, c, sizeof c),
               fmt_ns((double)t.wait_ns, w, sizeof w), t.copies, t.straggler_steps, r->nsteps);
    }
    if (r->nranks > 1 && collective_ns == 0) /* the straggler below is then the rank with the longest step */
        printf("\nno collective kernels were recorded (NCCL's or another GPU library's): no rank can be seen waiting\n"
               "for the others, so a step's straggler is only its longest; ranks that synchronise on the host\n"
               "(gloo, MPI on host buffers) have about the same step time, and which is longest is noise\n");
    wl_step_summary *v = malloc((size_t)(r->nsteps ? r->nsteps : 1) * sizeof *v);
    if (!v || !r->nsteps) {
        free(v);
        return;
    }
    memcpy(v, r->steps, (size_t)r->nsteps * sizeof *v);
    qsort(v, (size_t)r->nsteps, sizeof *v, by_imbalance);
    printf("\nmost imbalanced steps (straggler: the rank that arrives last at the collectives; imbalance: its time"
           " outside waiting over the mean, minus 1)\n%6s %12s %12s %-10s %10s\n", "step", "mean", "max",
           "straggler", "imbalance");
    for (int s = 0; s < r->nsteps && s < top; s++) {
        char a[32], b[32], lab[32];
        rank_label(&r->ranks[v[s].straggler], lab, sizeof lab);
        printf("%6d %12s %12s %-10s %9.1f%%\n", v[s].step, fmt_ns((double)v[s].mean_ns, a, sizeof a),
               fmt_ns((double)v[s].max_ns, b, sizeof b), lab, v[s].imbalance_pct);
    }
    free(v);
}


enum { O_STEP = 1, O_JSON, O_CSV, O_TOP };

static const cli_opt OPTS[] = {
    {O_STEP, 0, "step", CLI_ARG_REQUIRED, "NAME",
     "the NVTX range (or scope) that is one step (default: the most frequent\n"
     "top-level NVTX range)", NULL, NULL},
    {O_JSON, 0, "json", CLI_ARG_NONE, NULL, "every rank's every step, and each step's straggler, as JSON", NULL, NULL},
    {O_CSV, 0, "csv", CLI_ARG_NONE, NULL, "one row per rank and step", NULL, NULL},
    {O_TOP, 0, "top", CLI_ARG_REQUIRED, "N", "text: the N most imbalanced steps (default 10)", NULL, NULL},
    {0},
};
const cli_cmd CLI_RANKS = {"ranks", "SESSION... | DIR | 'GLOB' [--step NAME] [--json | --csv]", NULL, OPTS, NULL, NULL,
                           0, CLI_POS_SESSION, NULL};

int cmd_ranks(int argc, char **argv)
{
    const char *step = NULL;
    int json = 0, csv = 0, nargs = 0, top = 10;
    char **args = calloc((size_t)argc, sizeof *args);
    if (!args)
        return 2;
    cli_parser p;
    cli_init(&p, &CLI_RANKS, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        long long v;
        switch (id) {
        case CLI_HELP: free(args); return 0;
        case CLI_ERROR: free(args); return 2;
        case O_STEP: step = p.arg; break;
        case O_JSON: json = 1; break;
        case O_CSV: csv = 1; break;
        case O_TOP:
            if (cli_number(&p, 1, 1000000, &v)) {
                free(args);
                return 2;
            }
            top = (int)v;
            break;
        case CLI_POSITIONAL: args[nargs++] = (char *)p.arg; break;
        }
    }
    if (!nargs || (json && csv)) {
        free(args);
        return cli_error(&CLI_RANKS, "%s", !nargs ? "no session given (usage: warplens ranks SESSION... [options])"
                                                  : "--json and --csv: choose one");
    }
    char **paths;
    int n = session_args_expand("ranks", args, nargs, NULL, &paths);
    free(args);
    if (n < 0)
        return 2;
    wl_rank_report r;
    char err[1024];
    int rc = 1;
    if (wl_rank_report_build((const char *const *)paths, n, step, &r, err, sizeof err) != 0) {
        fprintf(stderr, "warplens ranks: %s\n", err);
    } else {
        if (json)
            print_json(&r);
        else if (csv)
            print_csv(&r);
        else
            print_text(&r, top);
        wl_rank_report_free(&r);
        rc = 0;
    }
    session_args_free(paths, n);
    return rc;
}
