/* The recorder's clock probe kernel (capture/clock_calibration_cupti.c) as PTX, shared with
 * bench/bench_ik_probe_gaps.cu, which measures this very kernel's start and end gaps against
 * CUPTI's semaphore timestamps (the floors in capture/probe_floors.c): a change here must be
 * measured again. One thread reads %globaltimer as its first and last instructions and stores
 * both reads to device memory. */
#ifndef WARPLENS_CAPTURE_CLOCK_PROBE_PTX_H
#define WARPLENS_CAPTURE_CLOCK_PROBE_PTX_H

#define WL_CLOCK_PROBE_NAME "warplens_clock_probe"

static const char wl_clock_probe_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry warplens_clock_probe(.param .u64 p_out)\n"
    "{\n"
    "  .reg .b64 %rd<5>;\n"
    "  mov.u64 %rd1, %globaltimer;\n"
    "  ld.param.u64 %rd2, [p_out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mov.u64 %rd4, %globaltimer;\n"
    "  st.global.v2.u64 [%rd3], {%rd1, %rd4};\n"
    "  ret;\n"
    "}\n";

#endif
