/* PM samples in the terminal (see pm_print.h). Values: bytes as sizes, percentages with one
 * decimal, anything else with 4 significant digits. Per kernel, counters are sums over the
 * windows overlapping the launch and levels are time-weighted means (analysis/pm_samples.h). */
#include "cli_session.h"
#include "pm_print.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pm_samples.h"
#include "capfile/pm_metric_spec.h"
#include "format.h"
#include "store/session_samples.h"

#define WIDTH 112

typedef struct pctx {
    const pm_print_options *o;
    const wl_pm_metric_row *m;
    int n;
    long rows;
    int have_group;
    uint32_t group_pid, group_dev;     /* the group whose header was printed last */
} pctx;

static const char *value_text(const wl_pm_metric_row *m, double v, char *buf, size_t n)
{
    if (!strcmp(m->unit, "byte") && m->additive)
        return fmt_bytes(v, buf, n);
    if (!strcmp(m->unit, "percent"))
        snprintf(buf, n, "%.1f", v);
    else
        snprintf(buf, n, "%.4g", v);
    return buf;
}

/* The metric rows of (pid, device): [*first, *end). */
static void group(const pctx *c, uint32_t pid, uint32_t dev, int *first, int *end)
{
    int i = 0;
    while (i < c->n && (c->m[i].pid != pid || c->m[i].device_id != dev))
        i++;
    *first = i;
    while (i < c->n && c->m[i].pid == pid && c->m[i].device_id == dev)
        i++;
    *end = i;
}

static double ms_since(uint64_t t, uint64_t origin) { return t >= origin ? (double)(t - origin) / 1e6 : 0.0; }

static const char *csv_kind(wl_sample_attr_kind k)
{
    return k == WL_SAMPLE_EXACT ? "exact" : k == WL_SAMPLE_SHARED ? "shared_upper_bound" : "idle";
}

static void metric_headers(const pctx *c, int first, int end)
{
    for (int j = first; j < end; j++) {
        char b[20];
        printf(" %16s", fmt_middle(wl_pm_metric_label(c->m[j].name), 16, b, sizeof b));
    }
    printf("\n");
}

/* ---- summary -------------------------------------------------------------------------------------- */

static int print_summary(wl_session *s, pctx *c)
{
    const pm_print_options *o = c->o;
    wl_pm_config_row *cfg;
    int nc = wl_session_pm_configs(s, &cfg);
    if (nc < 0)
        return -1;
    if (o->csv) {
        if (o->sections)
            printf("# pm_summary\n");
        printf("pid,device,metric_index,metric,label,unit,windows,min,median,max,mean,total\n");
    } else {
        print_title("PM sampling (CUPTI, device-wide windows; attributed to kernels by time overlap)", WIDTH);
        for (int i = 0; i < nc; i++) {
            printf("GPU %u, pid %u: PM sampling %s", cfg[i].device_id, cfg[i].pid, cfg[i].status);
            if (cfg[i].interval_ns)
                printf(", every %.0f us", (double)cfg[i].interval_ns / 1000.0);
            printf("\n");
            for (char *line = cfg[i].detail; *line;) {
                size_t len = strcspn(line, "\n");
                printf("  | %.*s\n", (int)len, line);
                line += len;
                if (*line)
                    line++;
            }
            wl_pm_long_windows lw;
            if (cfg[i].interval_ns &&
                wl_session_pm_long_windows(s, cfg[i].pid, cfg[i].device_id, cfg[i].interval_ns * 3 / 2, &lw) == 0 &&
                lw.count)
                printf("  note: %" PRIu64 " window%s longer than 1.5 intervals (the longest %.3f ms, from %.3f ms): the"
                       " trigger fired late there, e.g. while the GPU idled; counters cover the whole window, levels"
                       " average over it\n",
                       lw.count, lw.count == 1 ? "" : "s", (double)lw.longest_ns / 1e6,
                       ms_since(lw.longest_start_ns, o->origin_ns));
        }
        printf("%-4s %-8s %-16s %-11s %8s %11s %11s %11s %11s  %s\n", "dev", "pid", "metric", "unit", "windows", "min",
               "median", "max", "total", "CUPTI name");
    }
    free(cfg);
    for (int j = 0; j < c->n; j++) {
        const wl_pm_metric_row *m = &c->m[j];
        wl_pm_metric_stats st;
        if (wl_session_pm_metric_stats(s, m->pid, m->device_id, m->metric_index, &st) != 0)
            return -1;
        if (o->csv) {
            printf("%u,%u,%u,%s,\"%s\",%s,%" PRIu64 ",%.6g,%.6g,%.6g,%.6g,", m->pid, m->device_id, m->metric_index,
                   m->name, wl_pm_metric_label(m->name), m->unit, st.windows, st.min, st.median, st.max, st.mean);
            if (m->additive)
                printf("%.6g", st.sum);
            printf("\n");
            continue;
        }
        char b[4][32], label[20];
        printf("%-4u %-8u %-16s %-11s %8" PRIu64 " %11s %11s %11s %11s  %s\n", m->device_id, m->pid,
               fmt_middle(wl_pm_metric_label(m->name), 16, label, sizeof label), m->unit, st.windows,
               st.windows ? value_text(m, st.min, b[0], 32) : "-", st.windows ? value_text(m, st.median, b[1], 32) : "-",
               st.windows ? value_text(m, st.max, b[2], 32) : "-", m->additive ? value_text(m, st.sum, b[3], 32) : "-",
               m->name);
    }
    uint64_t lost = wl_session_pm_lost(s);
    if (!o->csv && lost)
        printf("lost: %" PRIu64 " PM windows (warplens stats --only lost says where)\n", lost);
    return 0;
}

/* ---- per kernel ----------------------------------------------------------------------------------- */

static int on_kernel(const wl_pm_kernel_values *k, void *arg)
{
    pctx *c = arg;
    const pm_print_options *o = c->o;
    if (o->kernel_id >= 0 && k->kernel_id != o->kernel_id)
        return 0;
    int first, end;
    group(c, k->sample_pid, k->sample_device, &first, &end);
    double start = ms_since(k->start_ns, o->origin_ns), dur = (double)(k->end_ns - k->start_ns) / 1e6;
    if (o->csv) {
        for (int j = first; j < end; j++) {
            uint32_t m = c->m[j].metric_index;
            if (m >= WL_PM_SAMPLE_METRICS || !(k->valid & (1ull << m)))
                continue;
            printf("%" PRId64 ",\"%s\",%u,%u,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%s,%.6g\n", k->kernel_id,
                   k->name, k->pid, k->device_id, start, dur, k->windows, k->exact_windows, k->shared_windows,
                   csv_kind(k->kind), c->m[j].name, c->m[j].unit, k->values[m]);
        }
    } else {
        if (!c->have_group || c->group_pid != k->sample_pid || c->group_dev != k->sample_device) {
            c->have_group = 1, c->group_pid = k->sample_pid, c->group_dev = k->sample_device;
            printf("%8s %-30s %4s %10s %9s %7s %-20s", "id", "kernel", "dev", "start ms", "dur ms", "windows",
                   "attribution");
            metric_headers(c, first, end);
        }
        char name[40];
        printf("%8" PRId64 " %-30s %4u %10.3f %9.3f %7" PRIu64 " %-20s", k->kernel_id,
               fmt_middle(k->name, 30, name, sizeof name), k->device_id, start, dur, k->windows,
               wl_sample_attr_name(k->kind));
        for (int j = first; j < end; j++) {
            uint32_t m = c->m[j].metric_index;
            char b[32];
            printf(" %16s", m < WL_PM_SAMPLE_METRICS && (k->valid & (1ull << m)) ? value_text(&c->m[j], k->values[m], b, 32)
                                                                                 : "-");
        }
        printf("\n");
    }
    return ++c->rows >= o->limit && o->limit > 0;
}

/* ---- per window ----------------------------------------------------------------------------------- */

static int on_window(const wl_pm_attribution *a, void *arg)
{
    pctx *c = arg;
    const pm_print_options *o = c->o;
    const wl_pm_sample_row *r = a->sample;
    int first, end;
    group(c, r->pid, r->device_id, &first, &end);
    uint64_t win = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
    double busy = win ? 100.0 * (double)a->busy_ns / (double)win : 0;
    double start = ms_since(r->start_ns, o->origin_ns);
    if (o->csv) {
        for (int j = first; j < end; j++) {
            uint32_t m = c->m[j].metric_index;
            if (m >= WL_PM_SAMPLE_METRICS || !(r->valid & (1ull << m)))
                continue;
            printf("%u,%u,%" PRIu64 ",%.4f,%.3f,%s,%" PRIu64 ",", r->pid, r->device_id, r->sample_index, start,
                   (double)win / 1e3, csv_kind(a->kind), a->kernels);
            if (a->kernel_id >= 0)
                printf("%" PRId64 ",\"%s\"", a->kernel_id, a->kernel_name);
            else
                printf(",");
            printf(",%.1f,%s,%s,%.6g\n", busy, c->m[j].name, c->m[j].unit, r->values[m]);
        }
    } else {
        if (!c->have_group || c->group_pid != r->pid || c->group_dev != r->device_id) {
            c->have_group = 1, c->group_pid = r->pid, c->group_dev = r->device_id;
            printf("%4s %11s %7s %-20s %-34s", "dev", "start ms", "dur us", "attribution", "kernel (busy % of window)");
            metric_headers(c, first, end);
        }
        char who[64] = "", name[40];
        if (a->kind == WL_SAMPLE_EXACT)
            snprintf(who, sizeof who, "%s (%.0f %%)", fmt_middle(a->kernel_name, 26, name, sizeof name), busy);
        else if (a->kind == WL_SAMPLE_SHARED)
            snprintf(who, sizeof who, "%" PRIu64 " kernels, %s (%.0f %%)", a->kernels,
                     fmt_middle(a->kernel_name, 14, name, sizeof name), busy);
        printf("%4u %11.4f %7.1f %-20s %-34s", r->device_id, start, (double)win / 1e3, wl_sample_attr_name(a->kind),
               who);
        for (int j = first; j < end; j++) {
            uint32_t m = c->m[j].metric_index;
            char b[32];
            printf(" %16s", m < WL_PM_SAMPLE_METRICS && (r->valid & (1ull << m)) ? value_text(&c->m[j], r->values[m], b, 32)
                                                                                 : "-");
        }
        printf("\n");
    }
    return ++c->rows >= o->limit && o->limit > 0;
}

int pm_print(wl_session *s, const pm_print_options *o)
{
    wl_pm_metric_row *m;
    int n = wl_session_pm_metrics(s, &m);
    if (n < 0) {
        cli_read_error(s, "warplens: reading the PM metrics failed\n");
        return -1;
    }
    pctx c = {o, m, n, 0, 0, 0, 0};
    int rc = print_summary(s, &c);
    wl_pm_walk w = {NULL, NULL, &c, 0, 0};
    if (rc == 0 && o->kernel_id >= 0) {
        uint32_t pid, dev;
        if (wl_session_kernel_interval(s, o->kernel_id, &pid, &dev, &w.from_ns, &w.to_ns) != 0) {
            cli_no_row(s, "kernel", o->kernel_id, "warplens: no kernel with id %" PRId64 " and timestamps in this session\n",
                       o->kernel_id);
            free(m);
            return -1;
        }
        if (w.to_ns <= w.from_ns)
            w.to_ns = w.from_ns + 1;
    }
    /* the kernel table, and with --windows or --kernel the windows */
    for (int pass = 0; rc == 0 && pass < 2; pass++) {
        int windows = pass == 1;
        if (windows ? !(o->windows || o->kernel_id >= 0) : o->windows)
            continue;
        c.rows = 0;
        c.have_group = 0;
        w.kernel = windows ? NULL : on_kernel;
        w.window = windows ? on_window : NULL;
        if (o->csv) {
            if (o->sections)
                printf("\n# %s\n", windows ? "pm_windows" : "pm_kernels");
            printf(windows ? "pid,device,sample_index,start_ms,duration_us,attribution,kernels,kernel_id,kernel,"
                             "busy_pct,metric,unit,value\n"
                           : "kernel_id,kernel,pid,device,start_ms,duration_ms,windows,exact_windows,shared_windows,"
                             "attribution,metric,unit,value\n");
        } else {
            print_title(windows ? "PM windows (exact: one kernel in the window; shared: several, values are upper bounds"
                                  " for each)"
                                : "PM values per kernel launch (counters summed over its windows, levels time-weighted;"
                                  " shared: upper bounds)",
                        WIDTH);
        }
        if (wl_pm_attribute(s, m, n, &w) < 0) {
            cli_read_error(s, "warplens: reading the PM samples failed\n");
            rc = -1;
        } else if (!o->csv && c.rows == 0) {
            printf(windows ? "(no window)\n" : "(no kernel overlaps a PM window)\n");
        }
    }
    free(m);
    return rc;
}

void pm_print_run_note(wl_session *s, const char *session_path)
{
    wl_pm_config_row *cfg;
    int nc = wl_session_pm_configs(s, &cfg);
    for (int i = 0; i < nc; i++) {
        /* the last status line is the latest word: the final counts, or why sampling is off */
        const char *last = cfg[i].detail, *nl;
        while ((nl = strchr(last, '\n')) && nl[1])
            last = nl + 1;
        printf("\n%.*s\n", (int)strcspn(last, "\n"), last); /* the recorder's lines name the GPU */
        if (!strcmp(cfg[i].status, "on"))
            printf("  -> warplens samples %s --pm\n", session_path);
    }
    free(cfg);
}

const char *pm_status_line(const wl_pm_config_row *cfg, int n, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && o + 1 < size; i++) {
        o += (size_t)snprintf(buf + o, size - o, "%sGPU %u %s: ", i ? "; " : "", cfg[i].device_id, cfg[i].status);
        for (const char *c = cfg[i].detail; *c && o + 3 < size; c++) {
            if (*c == '\n') {
                if (c[1])
                    buf[o++] = ';', buf[o++] = ' ';
            } else if ((unsigned char)*c >= 32) {
                buf[o++] = *c;
            }
        }
        buf[o < size ? o : size - 1] = 0;
    }
    return buf;
}
