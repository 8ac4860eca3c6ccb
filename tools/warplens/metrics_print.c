/* Hardware metrics in the CLI (see metrics_print.h). Values are combined from summed counters
 * (store/metric_agg.h); "-" marks a metric that was not collected. */
#include "metrics_print.h"

#include <math.h>
#include <string.h>

#include "format.h"
#include "kernel_format.h"

static const char *num(double v, const char *fmt, char *b, size_t n)
{
    if (isnan(v))
        snprintf(b, n, "-");
    else
        snprintf(b, n, fmt, v);
    return b;
}

static const char *bytes(double v, char *b, size_t n) { return isnan(v) ? num(v, "", b, n) : fmt_bytes(v, b, n); }

static const char *giga(double v, char *b, size_t n) { return num(isnan(v) ? v : v / 1e9, "%.3g", b, n); }

void print_metric_columns(const char *lead)
{
    printf("%7s %9s %6s %9s %9s %9s %6s %6s %6s %9s %9s %9s %7s  %s\n", lead, "GPU time", "Occ%", "DRAM rd",
           "DRAM wr", "DRAM GB/s", "DRAM%", "L1hit%", "L2hit%", "FP32 GF", "FP16 GF", "FP64 GF", "Tensor%",
           "Name");
}

void print_metric_row(const wl_metric_acc *a, const char *label)
{
    wl_metric_summary s;
    wl_metric_acc_summary(a, &s);
    char b[13][32], nm[64];
    printf("%7llu %9s %6s %9s %9s %9s %6s %6s %6s %9s %9s %9s %7s  %s\n", (unsigned long long)a->kernels,
           isnan(s.gpu_time_ns) ? "-" : fmt_ns(s.gpu_time_ns, b[0], 32), num(s.occupancy_pct, "%.1f", b[1], 32),
           bytes(s.dram_read_bytes, b[2], 32), bytes(s.dram_write_bytes, b[3], 32),
           num(isnan(s.dram_bytes_per_s) ? NAN : s.dram_bytes_per_s / 1e9, "%.1f", b[4], 32),
           num(s.dram_pct, "%.1f", b[5], 32), num(s.l1_hit_pct, "%.1f", b[6], 32), num(s.l2_hit_pct, "%.1f", b[7], 32),
           giga(s.fp32_flop, b[8], 32), giga(s.fp16_flop, b[9], 32), giga(s.fp64_flop, b[10], 32),
           num(s.tensor_pct, "%.1f", b[11], 32), kf_shorten(label, 48, nm, sizeof nm));
}

/* The overview's narrower form (`warplens stats` keeps to 100 columns): time, occupancy, DRAM rate
 * and share, L2 hit rate, FP32 and tensor use. */
void print_metric_columns_compact(const char *lead)
{
    printf("%7s %9s %6s %9s %6s %6s %9s %7s  %s\n", lead, "GPU time", "Occ%", "DRAM GB/s", "DRAM%", "L2hit%",
           "FP32 GF", "Tensor%", "Name");
}

void print_metric_row_compact(const wl_metric_acc *a, const char *label)
{
    wl_metric_summary s;
    wl_metric_acc_summary(a, &s);
    char b[8][32], nm[64];
    printf("%7llu %9s %6s %9s %6s %6s %9s %7s  %s\n", (unsigned long long)a->kernels,
           isnan(s.gpu_time_ns) ? "-" : fmt_ns(s.gpu_time_ns, b[0], 32), num(s.occupancy_pct, "%.1f", b[1], 32),
           num(isnan(s.dram_bytes_per_s) ? NAN : s.dram_bytes_per_s / 1e9, "%.1f", b[2], 32),
           num(s.dram_pct, "%.1f", b[3], 32), num(s.l2_hit_pct, "%.1f", b[4], 32), giga(s.fp32_flop, b[5], 32),
           num(s.tensor_pct, "%.1f", b[6], 32), kf_shorten(label, 32, nm, sizeof nm));
}

void print_metric_table(const wl_metric_set *m, const int64_t *name_ids, char *const *names, int n)
{
    if (!m->n)
        return;
    printf("\nHardware metrics per kernel name (summed counters over the measured calls; %d replay pass%s;\n"
           "kernels were serialised and replayed, so durations above include profiling effects)\n",
           m->max_passes, m->max_passes == 1 ? "" : "es");
    print_metric_columns("Calls");
    for (int i = 0; i < n; i++) {
        const wl_metric_acc *a = wl_metric_set_find(m, name_ids[i]);
        if (a)
            print_metric_row(a, names[i]);
    }
    if (m->unlinked)
        printf("(%llu of %llu metric ranges could not be tied to one kernel and are not in this table)\n",
               (unsigned long long)m->unlinked, (unsigned long long)m->ranges);
}

static void json_value(FILE *o, double v)
{
    if (isnan(v) || isinf(v))
        fprintf(o, "null");
    else
        fprintf(o, "%.17g", v);
}

void print_metric_acc_json(FILE *o, const wl_metric_acc *a, int passes)
{
    wl_metric_summary s;
    wl_metric_acc_summary(a, &s);
    fprintf(o, ",\"metrics\":{\"measured_calls\":%llu,\"replay_passes\":%d", (unsigned long long)a->kernels, passes);
    const struct { const char *k; double v; } derived[] = {
        {"dram_bytes_per_s", s.dram_bytes_per_s}, {"fp32_flop", s.fp32_flop}, {"fp16_flop", s.fp16_flop},
        {"fp64_flop", s.fp64_flop}};
    for (size_t i = 0; i < sizeof derived / sizeof derived[0]; i++) {
        fprintf(o, ",\"%s\":", derived[i].k);
        json_value(o, derived[i].v);
    }
    for (int i = 0; i < a->n; i++) {
        fprintf(o, ",\"%s\":", a->names[i]);
        json_value(o, wl_metric_acc_value(a, i));
    }
    fprintf(o, "}");
}

void print_metric_json(FILE *o, const wl_metric_set *m, int64_t key)
{
    const wl_metric_acc *a = m->n ? wl_metric_set_find(m, key) : NULL;
    if (a)
        print_metric_acc_json(o, a, m->max_passes);
}

static void panel_lines(const char *title, const wl_metric_acc *a)
{
    wl_metric_summary s;
    wl_metric_acc_summary(a, &s);
    char b[12][32];
    printf("%-9s GPU time %s, occupancy %s%%, DRAM read %s write %s (%s GB/s, %s%% of peak)\n", title,
           isnan(s.gpu_time_ns) ? "-" : fmt_ns(s.gpu_time_ns, b[0], 32), num(s.occupancy_pct, "%.1f", b[1], 32),
           bytes(s.dram_read_bytes, b[2], 32), bytes(s.dram_write_bytes, b[3], 32),
           num(isnan(s.dram_bytes_per_s) ? NAN : s.dram_bytes_per_s / 1e9, "%.1f", b[4], 32),
           num(s.dram_pct, "%.1f", b[5], 32));
    printf("%-9s L1 hit %s%%, L2 hit %s%%, FLOP fp32 %s fp16 %s fp64 %s, tensor %s%% (%s inst), inst %s\n", "",
           num(s.l1_hit_pct, "%.1f", b[6], 32), num(s.l2_hit_pct, "%.1f", b[7], 32), num(s.fp32_flop, "%.4g", b[8], 32),
           num(s.fp16_flop, "%.4g", b[9], 32), num(s.fp64_flop, "%.4g", b[10], 32), num(s.tensor_pct, "%.1f", b[11], 32),
           num(s.tensor_inst, "%.4g", b[0], 32), num(s.inst_executed, "%.4g", b[1], 32));
}

void print_metric_panel(wl_session *s, int64_t kernel_id, int64_t name_id)
{
    wl_metric_set one, all;
    if (wl_session_metrics(s, WL_METRICS_BY_KERNEL, &one) != 0 || !one.n) {
        wl_metric_set_free(&one);
        return;
    }
    const wl_metric_acc *a = wl_metric_set_find(&one, kernel_id);
    if (one.kernel_replay)
        printf("\nhardware metrics (%d replay pass%s; kernel replay serialises kernels)\n", one.max_passes,
               one.max_passes == 1 ? "" : "es");
    else
        printf("\nhardware metrics (1 pass, no replay; kernels serialised)\n");
    if (a)
        panel_lines("this call", a);
    else
        printf("this call: no metrics (its range was not recorded or not tied to this kernel)\n");
    if (wl_session_metrics(s, WL_METRICS_BY_NAME, &all) == 0) {
        const wl_metric_acc *g = wl_metric_set_find(&all, name_id);
        if (g && g->kernels > 1) {
            char t[48];
            snprintf(t, sizeof t, "all %llu", (unsigned long long)g->kernels);
            panel_lines(t, g);
        }
    }
    wl_metric_set_free(&all);
    wl_metric_set_free(&one);
}

/* "1,234 ranges: 1,200 kernels (3 graph nodes), 30 copies, ..." with the parts that are not 0. */
static void attribution_line(wl_session *s, uint64_t fallback_ranges, uint64_t fallback_untied)
{
    wl_metric_ranges r;
    if (wl_session_metric_ranges(s, &r) != 0 || !r.ranges) {
        printf("%llu ranges, %llu not tied to a kernel.\n", (unsigned long long)fallback_ranges,
               (unsigned long long)fallback_untied);
        return;
    }
    printf("%llu ranges: %llu kernels", (unsigned long long)r.ranges, (unsigned long long)(r.kernels + r.graph_nodes));
    if (r.graph_nodes)
        printf(" (%llu graph nodes)", (unsigned long long)r.graph_nodes);
    const struct { uint64_t n; const char *what; } parts[] = {
        {r.copies, "copies"}, {r.sets, "sets"}, {r.graph_launches, "whole graph launches"},
        {r.internal, "driver work inside launch calls"}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].n)
            printf(", %llu %s", (unsigned long long)parts[i].n, parts[i].what);
    printf("; %llu not tied to an activity", (unsigned long long)r.untied);
    if (r.launches_without)
        printf(", %llu profiled launches without a range of their own", (unsigned long long)r.launches_without);
    printf(".\n");
}

void print_metric_run_note(wl_session *s)
{
    wl_metric_set m;
    if (wl_session_metrics(s, WL_METRICS_BY_NAME, &m) != 0)
        return;
    if (m.n && m.kernel_replay) {
        printf("\nHardware metrics: %d metrics, %d replay pass%s per kernel. ", m.n, m.max_passes,
               m.max_passes == 1 ? "" : "es");
        attribution_line(s, m.ranges, m.unlinked);
        printf("Metrics mode serialises and replays every kernel: the timings of this run differ from an unprofiled"
               " run, and CUPTI gives replayed kernels no timestamps.\n");
    } else if (m.n) {
        printf("\nHardware metrics: %d metrics, 1 pass collected as the work ran (no replay). ", m.n);
        attribution_line(s, m.ranges, m.unlinked);
        printf("Metrics mode serialises kernels: the timings of this run differ from an unprofiled run.\n");
    }
    if (m.status[0])
        printf("Hardware metrics were off on some GPU: %s (the recorder's message says why).\n", m.status);
    wl_metric_set_free(&m);
}

void print_copy_metric_table(wl_session *s)
{
    wl_metric_set m;
    char labels[16][32];
    if (wl_session_copy_metrics(s, &m, labels, 16) != 0 || !m.ngroups) {
        wl_metric_set_free(&m);
        return;
    }
    printf("\nHardware metrics of copies and sets (their own ranges; counters summed over the calls)\n");
    print_metric_columns("Calls");
    for (int i = 0; i < m.ngroups; i++)
        print_metric_row(&m.accs[i], labels[m.keys[i]]);
    wl_metric_set_free(&m);
}
