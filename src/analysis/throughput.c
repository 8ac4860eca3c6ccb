/* Throughput and roofline arithmetic (see throughput.h). */
#include "analysis/throughput.h"

#include <string.h>

#include "analysis/device_tables.h"

int wl_tp_device_peaks(const wl_occ_device *d, wl_tp_precision p, wl_tp_peaks *out)
{
    memset(out, 0, sizeof *out);
    if (!d)
        return -1;
    double rate = 0;
    switch (p) {
    case WL_TP_FP32: rate = d->fp32_flop_per_clk_per_sm; break;
    case WL_TP_FP64: rate = d->fp64_flop_per_clk_per_sm; break;
    case WL_TP_FP16_TENSOR: rate = d->fp16_tensor_flop_per_clk_per_sm; break;
    case WL_TP_BF16_TENSOR: rate = d->bf16_tensor_flop_per_clk_per_sm; break;
    }
    out->tflops = wl_occ_peak_tflops(d, rate);
    out->dram_gbps = wl_occ_peak_dram_gbps(d);
    if (out->tflops > 0 && out->dram_gbps > 0)
        out->ridge_flop_per_byte = out->tflops * 1e3 / out->dram_gbps;
    return out->tflops > 0 && out->dram_gbps > 0 ? 0 : -1;
}

wl_tp_bound wl_tp_compute(const wl_tp_peaks *pk, double flops, double bytes, uint64_t duration_ns,
                          wl_throughput *out)
{
    memset(out, 0, sizeof *out);
    if (duration_ns == 0 || flops < 0 || bytes < 0)
        return out->bound;
    double secs = (double)duration_ns * 1e-9;
    out->tflops = flops / secs / 1e12;
    out->gbps = bytes / secs / 1e9;
    if (pk && pk->tflops > 0)
        out->pct_peak_compute = out->tflops / pk->tflops * 100.0;
    if (pk && pk->dram_gbps > 0)
        out->pct_peak_dram = out->gbps / pk->dram_gbps * 100.0;
    if (flops > 0 && bytes > 0)
        out->intensity = flops / bytes;
    if (!pk || pk->tflops <= 0 || pk->dram_gbps <= 0)
        return out->bound;
    if (flops > 0 && bytes > 0) {
        /* GB/s x FLOP/B = GFLOP/s; the roof is the lower of the two ceilings. */
        double mem_roof = out->intensity * pk->dram_gbps / 1e3;
        out->roof_tflops = mem_roof < pk->tflops ? mem_roof : pk->tflops;
        out->pct_of_roof = out->tflops / out->roof_tflops * 100.0;
        out->bound = out->intensity < pk->ridge_flop_per_byte ? WL_TP_MEMORY_BOUND : WL_TP_COMPUTE_BOUND;
    }
    /* With only one of FLOPs and bytes the intensity, hence the bound, stays unknown. */
    return out->bound;
}

const char *wl_tp_bound_name(wl_tp_bound b)
{
    switch (b) {
    case WL_TP_MEMORY_BOUND: return "memory-bound";
    case WL_TP_COMPUTE_BOUND: return "compute-bound";
    default: return "unknown";
    }
}
