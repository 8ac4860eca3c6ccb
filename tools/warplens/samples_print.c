/* NVML device samples in the terminal (see samples_print.h). Values NVML could not read print
 * as "-" (empty in CSV). */
#include "samples_print.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "format.h"
#include "store/session_cursors.h"

static const char *num(int64_t v, double scale, const char *fmt, char *buf, size_t n)
{
    if (v < 0)
        return "-";
    snprintf(buf, n, fmt, (double)v / scale);
    return buf;
}

void samples_print_header(int csv)
{
    if (csv)
        printf("pid,device,time_ms,window_ms,gpu_util_pct,mem_util_pct,sm_clock_mhz,mem_clock_mhz,power_w,"
               "temperature_c,memory_used_mib,attribution,kernels,kernel_id,kernel,busy_pct\n");
    else
        printf("%-4s %10s %7s %4s %4s %6s %6s %7s %4s %8s  %-20s %s\n", "dev", "time ms", "win ms", "gpu%",
               "mem%", "sm MHz", "mem MHz", "power W", "degC", "mem MiB", "attribution", "kernel (busy % of window)");
}

void samples_print_row(const wl_sample_attribution *a, uint64_t origin_ns, int csv)
{
    const wl_device_sample_row *r = &a->sample;
    char b[8][32];
    double t = r->ts_ns >= origin_ns ? (double)(r->ts_ns - origin_ns) / 1e6 : 0;
    uint64_t win_ns = r->ts_ns - r->window_start_ns;
    double busy = win_ns ? 100.0 * (double)a->busy_ns / (double)win_ns : 0;
    const char *f = csv ? "%.0f" : "%.0f";
    const char *util = num(r->gpu_util_pct, 1, f, b[0], 32), *mem = num(r->mem_util_pct, 1, f, b[1], 32);
    const char *sm = num(r->sm_clock_mhz, 1, f, b[2], 32), *mc = num(r->mem_clock_mhz, 1, f, b[3], 32);
    const char *pw = num(r->power_mw, 1000, "%.1f", b[4], 32), *tc = num(r->temperature_c, 1, f, b[5], 32);
    const char *mu = num(r->memory_used_bytes, 1048576.0, "%.0f", b[6], 32);
    if (csv) {
        #define D(s) ((s)[0] == '-' ? "" : (s))
        printf("%u,%u,%.3f,%.3f,%s,%s,%s,%s,%s,%s,%s,%s,%" PRIu64 ",", r->pid, r->device_id, t, (double)win_ns / 1e6,
               D(util), D(mem), D(sm), D(mc), D(pw), D(tc), D(mu), a->kind == WL_SAMPLE_EXACT ? "exact"
               : a->kind == WL_SAMPLE_SHARED ? "shared_upper_bound" : "idle", a->kernels);
        #undef D
        if (a->kernel_id >= 0)
            printf("%lld,\"%s\"", (long long)a->kernel_id, a->kernel_name);
        else
            printf(",");
        printf(",%.1f\n", busy);
        return;
    }
    char who[96] = "";
    if (a->kind == WL_SAMPLE_EXACT)
        snprintf(who, sizeof who, "%.60s (%.0f %%)", a->kernel_name, busy);
    else if (a->kind == WL_SAMPLE_SHARED)
        snprintf(who, sizeof who, "%" PRIu64 " kernels, longest %.40s (%.0f %%)", a->kernels, a->kernel_name, busy);
    printf("%-4u %10.3f %7.2f %4s %4s %6s %6s %7s %4s %8s  %-20s %s\n", r->device_id, t, (double)win_ns / 1e6, util,
           mem, sm, mc, pw, tc, mu, wl_sample_attr_name(a->kind), who);
}

int print_device_sample_table(wl_session *s, const stats_options *o)
{
    wl_device_sample_summary *d;
    int n = wl_device_sample_summaries(s, &d);
    if (n <= 0) {
        free(d);
        return n;
    }
    if (o->csv) {
        printf("pid,device,samples,exact,shared,idle,gpu_util_mean,gpu_util_max,mem_util_mean,sm_clock_min_mhz,"
               "sm_clock_max_mhz,mem_clock_max_mhz,power_mean_w,power_max_w,temperature_max_c,memory_used_max_mib,"
               "energy_j\n");
        for (int i = 0; i < n; i++)
            printf("%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.1f,%lld,%.1f,%lld,%lld,%lld,%.1f,%.1f,%lld,"
                   "%.0f,%.1f\n",
                   d[i].pid, d[i].device_id, d[i].samples, d[i].exact, d[i].shared, d[i].idle, d[i].gpu_util_mean,
                   (long long)d[i].gpu_util_max, d[i].mem_util_mean, (long long)d[i].sm_clock_min,
                   (long long)d[i].sm_clock_max, (long long)d[i].mem_clock_max, d[i].power_mean_w, d[i].power_max_w,
                   (long long)d[i].temperature_max,
                   d[i].memory_used_max >= 0 ? (double)d[i].memory_used_max / 1048576.0 : -1, d[i].energy_j);
        free(d);
        return n;
    }
    print_title("Device samples (NVML; attribution: exact = one kernel in the window, shared = upper bound)",
                STATS_WIDTH);
    printf("%-4s %-8s %7s %6s %6s %5s %9s %9s %9s %11s %5s %8s\n", "dev", "pid", "samples", "exact", "shared",
           "idle", "gpu% avg", "gpu% max", "SM MHz", "W avg/max", "degC", "mem MiB");
    for (int i = 0; i < n; i++) {
        char clk[32], pw[32], u1[16], u2[16], t[16], m[24];
        if (d[i].sm_clock_min >= 0)
            snprintf(clk, sizeof clk, "%lld-%lld", (long long)d[i].sm_clock_min, (long long)d[i].sm_clock_max);
        else
            snprintf(clk, sizeof clk, "-");
        if (d[i].power_mean_w >= 0)
            snprintf(pw, sizeof pw, "%.1f/%.1f", d[i].power_mean_w, d[i].power_max_w);
        else
            snprintf(pw, sizeof pw, "-");
        printf("%-4u %-8u %7" PRIu64 " %6" PRIu64 " %6" PRIu64 " %5" PRIu64 " %9s %9s %9s %11s %5s %8s\n",
               d[i].device_id, d[i].pid, d[i].samples, d[i].exact, d[i].shared, d[i].idle,
               d[i].gpu_util_mean >= 0 ? (snprintf(u1, sizeof u1, "%.1f", d[i].gpu_util_mean), u1) : "-",
               num(d[i].gpu_util_max, 1, "%.0f", u2, sizeof u2), clk, pw, num(d[i].temperature_max, 1, "%.0f", t, sizeof t),
               num(d[i].memory_used_max, 1048576.0, "%.0f", m, sizeof m));
    }
    free(d);
    return n;
}

typedef struct kctx {
    uint64_t origin;
    int rows;
} kctx;

static int on_kernel_sample(const wl_sample_attribution *a, void *arg)
{
    kctx *k = arg;
    if (k->rows++ == 0) {
        printf("\ndevice samples (NVML) whose window overlaps this launch\n");
        samples_print_header(0);
    }
    samples_print_row(a, k->origin, 0);
    return k->rows >= 20; /* a long kernel: the first 20 windows show the pattern */
}

void print_kernel_samples(wl_session *s, int64_t kernel_id)
{
    if (!wl_session_has_device_samples(s))
        return;
    wl_session_span span;
    wl_session_get_span(s, &span);
    kctx k = {span.origin_ns, 0};
    wl_kernel_device_samples(s, kernel_id, on_kernel_sample, &k);
    if (k.rows == 0)
        printf("\ndevice samples (NVML): no sample window covers this launch (it ran outside the sampled time)\n");
}
