/* Runs the recorder's PC-sampling module (src/capture/pc_sampling.c) for real without a GPU,
 * against the fake CUPTI of fake_cupti_pcs.c: this program plays the driver-API launch callbacks
 * (entry, the kernel producing PC records, exit), the context-destroy callback, the recorder's
 * exit and the writer thread, and writes a capture file the CLI test imports
 * (tests/cli/test_pcsampling_cli.sh). The launches:
 *   context 1 (device 0): launch 11 of fake_chase, 3000 PCs (more than one GetData holds) with
 *     long_scoreboard 3 / its not_issued 2 / selected 1 each; launch 12 of fake_fma, 10 PCs with
 *     wait 50 / selected 10, one PC with a reason CUPTI never named (3 samples), 5 samples dropped,
 *     one record left in the configuration buffer at Disable (selected 1); then the context is
 *     destroyed.
 *   context 2 (device 1): launch 13 of fake_fma, whose first collection finds the hardware buffer
 *     full; its 10 PCs (wait 40 / selected 20) come at the recorder's exit, plus one record left at
 *     Disable (wait 7).
 * Environment: WARPLENS_PC_SAMPLING / WARPLENS_PC_PERIOD as the recorder reads them;
 * FAKE_PCS_NAMES=fresh|shared (how the fake hands out function names); FAKE_PCS_DENY=1 (no
 * permission); FAKE_METRICS=1 (hardware metrics on). Prints what the fake saw on stdout; exits 1
 * when the recorder used the API in a way the header does not allow.
 * usage: pc_sampling_driver CAPTURE.wlcap */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/recorder.h"
#include "../driver_capture.h"
#include "common/clock.h"
#include "fake_cupti_pcs.h"

/* the parts of the recorder this module talks to, outside the files under test */
int wl_metrics_enabled(void) { return getenv("FAKE_METRICS") != NULL; }
void wl_pool_wake(void) {}

#define CTX(n) ((CUcontext)(uintptr_t)(n))

typedef void (*kernel_fn)(CUcontext c, uint32_t corr);

static void launch(CUcontext c, uint32_t corr, kernel_fn run)
{
    CUpti_CallbackData cd;
    memset(&cd, 0, sizeof cd);
    cd.context = c;
    cd.correlationId = corr;
    cd.callbackSite = CUPTI_API_ENTER;
    wl_stalls_launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cd);
    run(c, corr);
    cd.callbackSite = CUPTI_API_EXIT;
    wl_stalls_launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cd);
    wl_stalls_drain(); /* the writer thread's pass */
}

static void chase(CUcontext c, uint32_t corr)
{
    const uint32_t idx[3] = {2, 5, 7}, smp[3] = {3, 2, 1};
    fake_pcs_produce(c, corr, 0, 3000, 3, idx, smp);
}

static void fma_kernel(CUcontext c, uint32_t corr)
{
    const uint32_t idx[2] = {9, 7}, smp[2] = {50, 10}, unnamed[1] = {42}, three[1] = {3};
    fake_pcs_produce(c, corr, 1, 10, 2, idx, smp);
    fake_pcs_produce(c, corr, 1, 1, 1, unnamed, three);
    fake_pcs_dropped_next(c, 5);
    fake_pcs_late(c, corr, 7, 1);
}

static void fma_full(CUcontext c, uint32_t corr)
{
    const uint32_t idx[2] = {9, 7}, smp[2] = {40, 20};
    fake_pcs_produce(c, corr, 1, 10, 2, idx, smp);
    fake_pcs_oom_next(c);
    fake_pcs_late(c, corr, 9, 7);
}

static void kernel(uint32_t corr, uint32_t device, const char *name, uint64_t start)
{
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.start = start, k.end = start + 1000000, k.correlation_id = corr, k.device_id = device, k.stream_id = 7;
    k.name_str = wl_capw_string(name);
    k.grid_x = k.grid_y = k.grid_z = 1, k.block_x = 32, k.block_y = k.block_z = 1;
    k.carveout_requested = 0xff;
    wl_capw_record(WLCAP_KERNEL, &k, sizeof k);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pc_sampling_driver CAPTURE.wlcap\n");
        return 2;
    }
    const char *names = getenv("FAKE_PCS_NAMES");
    fake_pcs.fresh_names = !names || strcmp(names, "shared") != 0;
    fake_pcs.deny = getenv("FAKE_PCS_DENY") != NULL;
    uint64_t t0 = wl_realtime_ns();
    if (wl_capw_open(argv[1], (uint64_t)getpid(), t0) != 0)
        return 1;
    int on = wl_stalls_init();
    if (on) {
        launch(CTX(1), 11, chase);
        launch(CTX(1), 12, fma_kernel);
        wl_stalls_context_destroyed(CTX(1));
        launch(CTX(2), 13, fma_full);
        wl_stalls_stop(); /* the recorder's exit */
        wl_stalls_drain();
    }
    kernel(11, 0, "fake_chase", t0 + 1000);
    kernel(12, 0, "fake_fma", t0 + 2000000);
    kernel(13, 1, "fake_fma", t0 + 4000000);
    if (driver_end_record(WLCAP_END_EXIT) != 0)
        return 1;
    printf("on=%d mode=%d period=%d reasons=%d enables=%d disables=%d getdata=%d misuse=%d\n", on, fake_pcs.mode,
           fake_pcs.period, fake_pcs.reasons, fake_pcs.enables, fake_pcs.disables, fake_pcs.getdata_calls,
           fake_pcs.misuse);
    return fake_pcs.misuse ? 1 : 0;
}
