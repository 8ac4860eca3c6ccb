/* Throughput and roofline arithmetic against hand-computed H100 SXM5 values. */
#include <math.h>

#include "analysis/device_tables.h"
#include "analysis/throughput.h"
#include "test.h"

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * fabs(b) + 1e-12; }

int main(void)
{
    const wl_occ_device *h100 = wl_occ_device_find("sm_90");
    CHECK(h100 != NULL);
    wl_tp_peaks pk;
    CHECK_EQ_INT(wl_tp_device_peaks(h100, WL_TP_FP32, &pk), 0);
    /* 132 SMs x 1.98 GHz x 256 FLOP/clk = 66.90 TFLOP/s; 5120 / 8 x 2 x 2.619 GHz = 3352.3 GB/s */
    CHECK(near(pk.tflops, 132 * 1.98e9 * 256 / 1e12, 1e-9));
    CHECK(near(pk.dram_gbps, 5120 / 8.0 * 2 * 2.619e9 / 1e9, 1e-9));
    CHECK(near(pk.ridge_flop_per_byte, pk.tflops * 1e3 / pk.dram_gbps, 1e-12));
    CHECK(pk.ridge_flop_per_byte > 19.9 && pk.ridge_flop_per_byte < 20.0);

    wl_throughput t;
    /* 1 GFLOP and 100 MB in 1 ms: 1 TFLOP/s, 100 GB/s, 10 FLOP/B -> memory-bound */
    CHECK_EQ_INT(wl_tp_compute(&pk, 1e9, 1e8, 1000000, &t), WL_TP_MEMORY_BOUND);
    CHECK(near(t.tflops, 1.0, 1e-12));
    CHECK(near(t.gbps, 100.0, 1e-12));
    CHECK(near(t.intensity, 10.0, 1e-12));
    CHECK(near(t.pct_peak_compute, 100.0 / pk.tflops, 1e-12));
    CHECK(near(t.pct_peak_dram, 100.0 * 100.0 / pk.dram_gbps, 1e-12));
    CHECK(near(t.roof_tflops, 10.0 * pk.dram_gbps / 1e3, 1e-12));
    CHECK(near(t.pct_of_roof, 100.0 / t.roof_tflops, 1e-12));
    CHECK_EQ_STR(wl_tp_bound_name(t.bound), "memory-bound");

    /* 100 FLOP/B: past the ridge -> compute-bound, the roof is the compute peak */
    CHECK_EQ_INT(wl_tp_compute(&pk, 50e12 * 1e-3, 5e8, 1000000, &t), WL_TP_COMPUTE_BOUND);
    CHECK(near(t.tflops, 50.0, 1e-12));
    CHECK(near(t.roof_tflops, pk.tflops, 1e-12));
    CHECK(near(t.pct_of_roof, 50.0 / pk.tflops * 100, 1e-12));

    /* exactly at the ridge counts as compute-bound */
    CHECK_EQ_INT(wl_tp_compute(&pk, pk.ridge_flop_per_byte * 1e6, 1e6, 1000, &t), WL_TP_COMPUTE_BOUND);

    /* only FLOPs or only bytes: rates, no bound; no duration: nothing */
    CHECK_EQ_INT(wl_tp_compute(&pk, 1e9, 0, 1000000, &t), WL_TP_UNKNOWN);
    CHECK(near(t.tflops, 1.0, 1e-12) && t.gbps == 0 && t.intensity == 0);
    CHECK_EQ_INT(wl_tp_compute(&pk, 0, 1e9, 1000000, &t), WL_TP_UNKNOWN);
    CHECK(near(t.gbps, 1000.0, 1e-12));
    CHECK_EQ_INT(wl_tp_compute(&pk, 1e9, 1e9, 0, &t), WL_TP_UNKNOWN);
    CHECK(t.tflops == 0);
    CHECK_EQ_INT(wl_tp_compute(NULL, 1e9, 1e8, 1000, &t), WL_TP_UNKNOWN);

    /* tensor and FP64 peaks scale with the per-SM rates of the table */
    wl_tp_peaks p16, p64;
    CHECK_EQ_INT(wl_tp_device_peaks(h100, WL_TP_FP16_TENSOR, &p16), 0);
    CHECK(near(p16.tflops, wl_occ_peak_tflops(h100, h100->fp16_tensor_flop_per_clk_per_sm), 1e-12));
    CHECK_EQ_INT(wl_tp_device_peaks(h100, WL_TP_FP64, &p64), 0);
    CHECK(p64.tflops < pk.tflops);

    /* a recorded device with a lower clock has proportionally lower peaks */
    wl_occ_device slow = *h100;
    slow.core_clock_khz /= 2;
    wl_tp_peaks ps;
    wl_tp_device_peaks(&slow, WL_TP_FP32, &ps);
    CHECK(near(ps.tflops, pk.tflops / 2, 1e-12));
    return test_report("test_throughput");
}
