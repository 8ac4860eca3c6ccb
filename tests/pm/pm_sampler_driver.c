/* Runs the recorder's PM sampler (src/capture/pm_sampler.c, pm_device.c) for real outside a CUDA
 * process, against the fake CUPTI of tests/pm/fake_cupti_pm.c: the environment configures it as
 * `warplens run --pm-sampling` would (WARPLENS_PM_SAMPLING, WARPLENS_PM_INTERVAL_US, ...), this
 * thread plays the resource callbacks (a context of CUDA device 0 appears) and the writer thread
 * (drains every 10 ms into the capture). A kernel record on device 0 covers the middle third of the
 * run, so its windows are attributed to it and the others are idle.
 * usage: pm_sampler_driver CAPTURE.wlcap DURATION_MS [reset|stall|stall-long]
 *   reset: the device's last context is destroyed half-way and a new one created 50 ms later
 *   stall: the writer does not drain for the first 600 ms (the ring fills and windows spill)
 *   stall-long: likewise for 2,500 ms, past the spill's budget (losses are counted) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/recorder.h"
#include "../driver_capture.h"
#include "common/clock.h"

void wl_pool_wake(void) {} /* the writer's doorbell: this thread plays the writer on its own clock */

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pm_sampler_driver CAPTURE.wlcap DURATION_MS [reset|stall|stall-long]\n");
        return 2;
    }
    unsigned duration = (unsigned)atoi(argv[2]);
    const char *mode = argc > 3 ? argv[3] : "";
    uint64_t t0 = wl_realtime_ns();
    if (wl_capw_open(argv[1], (uint64_t)getpid(), t0) != 0)
        return 1;
    driver_process_record(t0);
    wlcap_device d;
    memset(&d, 0, sizeof d);
    d.pci_str = wl_capw_string("0000:18:00.0");
    d.name_str = wl_capw_string("Fake GPU");
    wl_capw_record(WLCAP_DEVICE, &d, sizeof d);
    wl_pm_start();
    wl_pm_context_created(0);
    uint64_t start = wl_monotonic_ns(), until = start + (uint64_t)duration * 1000000ull;
    int reset_done = 0;
    while (wl_monotonic_ns() < until) {
        sleep_ms(10);
        uint64_t now = wl_monotonic_ns();
        if (!strcmp(mode, "reset") && !reset_done && now - start > (uint64_t)duration * 500000ull) {
            wl_pm_context_destroying(0); /* as cudaDeviceReset: waits for the last decode */
            wl_pm_write_pending();
            sleep_ms(50);
            wl_pm_context_created(0);
            reset_done = 1;
        }
        if ((!strcmp(mode, "stall") && now - start < 600000000ull) ||
            (!strcmp(mode, "stall-long") && now - start < 2500000000ull))
            continue;
        wl_pm_write_pending();
    }
    wl_pm_stop();
    wl_pm_write_pending();
    uint64_t t1 = wl_realtime_ns();
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.start = t0 + (t1 - t0) / 3, k.end = t0 + 2 * (t1 - t0) / 3, k.correlation_id = 1, k.stream_id = 7;
    k.name_str = wl_capw_string("_Z11busy_kernelv");
    k.grid_x = k.grid_y = k.grid_z = 1, k.block_x = 32, k.block_y = k.block_z = 1;
    k.carveout_requested = 0xff;
    wl_capw_record(WLCAP_KERNEL, &k, sizeof k);
    return driver_end_record(WLCAP_END_EXIT) == 0 ? 0 : 1;
}
