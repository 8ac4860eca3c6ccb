/* Summary tables (see stats_print.h). Every table also has a CSV form with full names. */
#include "stats_print.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

static void csv_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

void print_overview(wl_session *s)
{
    wl_session_overview o;
    wl_session_get_overview(s, &o);
    char a[32], b[32];
    double span = o.last_ns > o.first_ns ? (double)(o.last_ns - o.first_ns) : 0.0;
    printf("program   %s\n", o.program[0] ? o.program : "(unknown)");
    printf("device    %s%s\n", o.device_name[0] ? o.device_name : "(none recorded)",
           o.devices > 1 ? " (and others)" : "");
    printf("recorded  %s of activity, GPU busy %s (%.1f%%), %d process%s, %d thread%s\n", fmt_ns(span, a, sizeof a),
           fmt_ns((double)o.gpu_busy_ns, b, sizeof b), span > 0 ? 100.0 * (double)o.gpu_busy_ns / span : 0.0,
           o.processes, o.processes == 1 ? "" : "es", o.threads, o.threads == 1 ? "" : "s");
    wl_capture_ranges cr;
    if (wl_session_capture_ranges(s, &cr) == 0 && cr.processes) {
        if (!cr.ranges)
            printf("capture   only between cudaProfilerStart and cudaProfilerStop (--capture-range), but the program"
                   " never called cudaProfilerStart: nothing was traced\n");
        else
            printf("capture   only between cudaProfilerStart and cudaProfilerStop: %" PRIu64 " range%s, %s traced of"
                   " %s run%s\n", cr.ranges, cr.ranges == 1 ? "" : "s", fmt_ns((double)cr.traced_ns, a, sizeof a),
                   fmt_ns((double)cr.run_ns, b, sizeof b),
                   cr.open ? " (the last range was still open at the end)" : "");
    }
    printf("records   %" PRIu64 " kernels, %" PRIu64 " memcpy, %" PRIu64 " memset, %" PRIu64 " API calls, %" PRIu64
           " syncs, %" PRIu64 " NVTX ranges, %" PRIu64 " scopes\n",
           o.kernels, o.memcpys, o.memsets, o.api_calls, o.syncs, o.nvtx_ranges, o.scopes);
    printf("lost      %" PRIu64 " record%s%s\n", o.lost_total, o.lost_total == 1 ? "" : "s",
           o.complete ? "" : "  (session INCOMPLETE: see `warplens info`)");
}

void print_kernel_table(wl_session *s, const stats_options *opt)
{
    wl_kernel_summary *k;
    int n = wl_session_kernel_summaries(s, &k);
    if (n < 0)
        return;
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += k[i].total_ns;
    int shown = (opt->kernel_limit > 0 && opt->kernel_limit < n) ? opt->kernel_limit : n;
    if (opt->csv) {
        printf("time_pct,total_ns,calls,mean_ns,min_ns,p50_ns,p99_ns,max_ns,grid,block,registers,static_smem,"
               "dynamic_smem,mean_queue_ns,mean_launch_ns,name\n");
        for (int i = 0; i < shown; i++) {
            printf("%.2f,%" PRIu64 ",%" PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                   ",%dx%dx%d,%dx%dx%d,%d,%d,%d,%.1f,%.1f,",
                   total ? 100.0 * (double)k[i].total_ns / (double)total : 0.0, k[i].total_ns, k[i].calls,
                   k[i].mean_ns, k[i].min_ns, k[i].p50_ns, k[i].p99_ns, k[i].max_ns, k[i].grid[0], k[i].grid[1],
                   k[i].grid[2], k[i].block[0], k[i].block[1], k[i].block[2], k[i].registers, k[i].static_smem,
                   k[i].dynamic_smem, k[i].mean_queue_ns, k[i].mean_launch_ns);
            csv_str(k[i].name);
            putchar('\n');
        }
        free(k);
        return;
    }
    print_title("GPU kernels (by total GPU time)", STATS_WIDTH);
    printf("%5s %9s %7s %9s %9s %9s %9s %9s  %s\n", "Time%", "Total", "Calls", "Mean", "Min", "p50", "p99", "Max",
           "Name");
    for (int i = 0; i < shown; i++) {
        char t[5][24], c[24], nm[64];
        printf("%5.1f %9s %7" PRIu64 " %9s %9s %9s %9s %9s  %s\n",
               total ? 100.0 * (double)k[i].total_ns / (double)total : 0.0,
               fmt_ns((double)k[i].total_ns, c, sizeof c), k[i].calls, fmt_ns(k[i].mean_ns, t[0], 24),
               fmt_ns((double)k[i].min_ns, t[1], 24), fmt_ns((double)k[i].p50_ns, t[2], 24),
               fmt_ns((double)k[i].p99_ns, t[3], 24), fmt_ns((double)k[i].max_ns, t[4], 24),
               fmt_middle(k[i].short_name[0] ? k[i].short_name : k[i].name, 24, nm, sizeof nm));
    }
    if (shown < n)
        printf("... %d more kernel name%s (`warplens stats` shows all)\n", n - shown, n - shown == 1 ? "" : "s");
    if (!n)
        printf("(no kernels recorded)\n");
    free(k);
}

void print_copy_table(wl_session *s, const stats_options *opt)
{
    wl_copy_summary *c;
    int n = wl_session_copy_summaries(s, &c);
    if (n < 0)
        return;
    if (opt->csv) {
        printf("kind,memory,count,bytes,total_ns,gbps\n");
        for (int i = 0; i < n; i++)
            printf("%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f\n", c[i].kind, c[i].memory, c[i].count, c[i].bytes,
                   c[i].total_ns, c[i].gbps);
        free(c);
        return;
    }
    print_title("Memory copies and sets", STATS_WIDTH);
    printf("%-7s %-22s %8s %12s %11s %11s\n", "Kind", "Memory", "Count", "Bytes", "Time", "GB/s");
    for (int i = 0; i < n; i++) {
        char b[32], t[32];
        printf("%-7s %-22s %8" PRIu64 " %12s %11s %11.2f\n", c[i].kind, c[i].memory, c[i].count,
               fmt_bytes((double)c[i].bytes, b, sizeof b), fmt_ns((double)c[i].total_ns, t, sizeof t), c[i].gbps);
    }
    if (!n)
        printf("(no memory copies or sets recorded)\n");
    free(c);
}

/* name_title: header of the name column; group_title: of the group column ("" when unused).
 * 34 + 1 + 12 + 1 + 8 + 4 x 11 = 100 columns. */
static void interval_table(const char *title, const char *name_title, const char *group_title,
                           wl_interval_summary *r, int n, const stats_options *opt)
{
    if (n < 0)
        return;
    if (opt->csv) {
        printf("name,");
        for (const char *g = group_title[0] ? group_title : "group"; *g; g++)
            putchar(*g >= 'A' && *g <= 'Z' ? *g - 'A' + 'a' : *g);
        printf(",count,total_ns,mean_ns,min_ns,max_ns\n");
        for (int i = 0; i < n; i++) {
            csv_str(r[i].name);
            printf(",%s,%" PRIu64 ",%" PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64 "\n", r[i].group, r[i].count, r[i].total_ns,
                   r[i].mean_ns, r[i].min_ns, r[i].max_ns);
        }
        return;
    }
    print_title(title, STATS_WIDTH);
    printf("%-34s %-12s %8s %10s %10s %10s %10s\n", name_title, group_title, "Count", "Total", "Mean", "Min", "Max");
    for (int i = 0; i < n; i++) {
        char nm[64], t[4][24];
        printf("%-34s %-12.12s %8" PRIu64 " %10s %10s %10s %10s\n", fmt_middle(r[i].name, 34, nm, sizeof nm),
               r[i].group, r[i].count, fmt_ns((double)r[i].total_ns, t[0], 24), fmt_ns(r[i].mean_ns, t[1], 24),
               fmt_ns((double)r[i].min_ns, t[2], 24), fmt_ns((double)r[i].max_ns, t[3], 24));
    }
    if (!n)
        printf("(none recorded)\n");
}

void print_api_table(wl_session *s, const stats_options *o)
{
    wl_interval_summary *r;
    int n = wl_session_api_summaries(s, &r);
    interval_table("CUDA API calls (CPU time in the call)", "Name", "Category", r, n, o);
    free(r);
}

void print_nvtx_table(wl_session *s, const stats_options *o)
{
    wl_interval_summary *r;
    int n = wl_session_nvtx_summaries(s, &r);
    interval_table("NVTX ranges (closed ranges)", "Name", "Domain", r, n, o);
    free(r);
}

void print_scope_table(wl_session *s, const stats_options *o)
{
    wl_interval_summary *r;
    int n = wl_session_scope_summaries(s, &r);
    interval_table("warplens scopes", "Name", "", r, n, o);
    free(r);
}

void print_sync_table(wl_session *s, const stats_options *o)
{
    wl_interval_summary *r;
    int n = wl_session_sync_summaries(s, &r);
    interval_table("Synchronisation waits (GPU-side wait records)", "Waited on", "", r, n, o);
    free(r);
}

void print_lost_table(wl_session *s, const stats_options *opt)
{
    wl_lost_row *r;
    int n = wl_session_lost(s, &r);
    if (n < 0)
        return;
    if (opt->csv) {
        printf("pid,source,count,detail,unit\n");
        for (int i = 0; i < n; i++) {
            printf("%u,%s,%" PRIu64 ",", r[i].pid, r[i].source, r[i].count);
            csv_str(r[i].detail);
            printf(",%s\n", r[i].unit);
        }
        free(r);
        return;
    }
    print_title("Records lost", STATS_WIDTH);
    if (!n)
        printf("none: every record CUPTI produced reached the session\n");
    for (int i = 0; i < n; i++) /* sources that count other things than records say what they count */
        printf("pid %-8u %-20s %10" PRIu64 "%s%s  %s\n", r[i].pid, r[i].source, r[i].count,
               strcmp(r[i].unit, "records") ? " " : "", strcmp(r[i].unit, "records") ? r[i].unit : "", r[i].detail);
    free(r);
}

int print_timer_table(wl_session *s, const stats_options *o)
{
    wl_interval_summary *r;
    int n = wl_session_timer_summaries(s, &r);
    if (n > 0)
        interval_table("Timers (warplens timer API, GPU intervals timed with CUDA events)", "Name", "Category", r, n,
                       o);
    free(r);
    return n;
}
