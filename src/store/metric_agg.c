/* Combining hardware metrics from summed counters (see metric_agg.h). */
#include "store/metric_agg.h"

#include <math.h>
#include <string.h>

int wl_metric_acc_index(const wl_metric_acc *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->names[i], name) == 0)
            return i;
    return -1;
}

static int is_sum_counter(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".sum") == 0;
}

void wl_metric_acc_init(wl_metric_acc *a, const char *const *names, int n)
{
    memset(a, 0, sizeof *a);
    a->n = n > WL_METRICS_MAX ? WL_METRICS_MAX : n;
    for (int i = 0; i < a->n; i++)
        a->names[i] = names[i];
    a->time_idx = wl_metric_acc_index(a, WL_METRIC_GPU_TIME);
    for (int i = 0; i < a->n; i++) {
        a->den[i][0] = a->den[i][1] = -1; /* a counter: added */
        const wl_metric_rule *r = wl_metric_rule_find(a->names[i]);
        if (r && r->den[0]) {
            for (int k = 0; k < 2 && r->den[k]; k++)
                if ((a->den[i][k] = wl_metric_acc_index(a, r->den[k])) < 0)
                    a->den[i][0] = -2, a->den[i][1] = -1, k = 2; /* denominator missing: by time */
        } else if (!r && !is_sum_counter(a->names[i])) {
            a->den[i][0] = -2;
        }
    }
}

void wl_metric_acc_add(wl_metric_acc *a, const double *v)
{
    a->kernels++;
    for (int i = 0; i < a->n; i++) {
        if (isnan(v[i]))
            continue;
        if (a->den[i][0] == -1) {
            a->num[i] += v[i];
            continue;
        }
        double w;
        if (a->den[i][0] == -2)
            w = a->time_idx >= 0 ? v[a->time_idx] : 1.0;
        else
            w = v[a->den[i][0]] + (a->den[i][1] >= 0 ? v[a->den[i][1]] : 0.0);
        if (isnan(w))
            continue;
        a->num[i] += v[i] * w;
        a->wsum[i] += w;
    }
}

double wl_metric_acc_value(const wl_metric_acc *a, int i)
{
    if (i < 0 || i >= a->n || !a->kernels)
        return NAN;
    if (a->den[i][0] == -1)
        return a->num[i];
    return a->wsum[i] > 0 ? a->num[i] / a->wsum[i] : NAN;
}

static double val(const wl_metric_acc *a, const char *name)
{
    return wl_metric_acc_value(a, wl_metric_acc_index(a, name));
}

/* fadd + fmul + 2*ffma; NaN when none of the three was collected */
static double flops(const wl_metric_acc *a, const char *add, const char *mul, const char *fma)
{
    double x = val(a, add), y = val(a, mul), z = val(a, fma);
    if (isnan(x) && isnan(y) && isnan(z))
        return NAN;
    return (isnan(x) ? 0 : x) + (isnan(y) ? 0 : y) + 2 * (isnan(z) ? 0 : z);
}

#define OP(o) "smsp__sass_thread_inst_executed_op_" o "_pred_on.sum"

void wl_metric_acc_summary(const wl_metric_acc *a, wl_metric_summary *s)
{
    s->gpu_time_ns = val(a, WL_METRIC_GPU_TIME);
    s->occupancy_pct = val(a, "sm__warps_active.avg.pct_of_peak_sustained_active");
    s->dram_read_bytes = val(a, "dram__bytes_read.sum");
    s->dram_write_bytes = val(a, "dram__bytes_write.sum");
    double bytes = (isnan(s->dram_read_bytes) ? 0 : s->dram_read_bytes) +
                   (isnan(s->dram_write_bytes) ? 0 : s->dram_write_bytes);
    s->dram_bytes_per_s = (s->gpu_time_ns > 0 && !(isnan(s->dram_read_bytes) && isnan(s->dram_write_bytes)))
                              ? bytes / s->gpu_time_ns * 1e9
                              : NAN;
    s->dram_pct = val(a, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
    s->l1_hit_pct = val(a, "l1tex__t_sector_hit_rate.pct");
    s->l2_hit_pct = val(a, "lts__t_sector_hit_rate.pct");
    s->fp32_flop = flops(a, OP("fadd"), OP("fmul"), OP("ffma"));
    s->fp16_flop = flops(a, OP("hadd"), OP("hmul"), OP("hfma"));
    s->fp64_flop = flops(a, OP("dadd"), OP("dmul"), OP("dfma"));
    s->tensor_inst = val(a, "sm__inst_executed_pipe_tensor.sum");
    s->tensor_pct = val(a, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active");
    s->inst_executed = val(a, "smsp__inst_executed.sum");
}

const char *const WL_METRIC_SUMMARY_KEYS[WL_METRIC_SUMMARY_FIELDS] = {
    "gpu_time_ns", "occupancy_pct", "dram_read_bytes", "dram_write_bytes", "dram_bytes_per_s", "dram_pct",
    "l1_hit_pct",  "l2_hit_pct",    "fp32_flop",       "fp16_flop",        "fp64_flop",        "tensor_inst",
    "tensor_pct",  "inst_executed"};

void wl_metric_summary_values(const wl_metric_summary *s, double out[WL_METRIC_SUMMARY_FIELDS])
{
    const double v[WL_METRIC_SUMMARY_FIELDS] = {
        s->gpu_time_ns, s->occupancy_pct, s->dram_read_bytes, s->dram_write_bytes, s->dram_bytes_per_s,
        s->dram_pct,    s->l1_hit_pct,    s->l2_hit_pct,      s->fp32_flop,        s->fp16_flop,
        s->fp64_flop,   s->tensor_inst,   s->tensor_pct,      s->inst_executed};
    memcpy(out, v, sizeof v);
}
