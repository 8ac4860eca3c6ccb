/* Runs the recorder's NVML sampler (src/capture/nvml_sampler.c) for real outside a CUDA process,
 * the way the recorder does: the sampler thread reads NVML (the fake library of the tests, through
 * WARPLENS_NVML_LIBRARY), this thread plays the writer thread and turns samples into capture
 * records. Devices: CUDA 0 at bus 18, CUDA 1 at bus 2A, CUDA 2 at bus 99 (unknown to NVML).
 * A kernel record on device 0 spans the whole sampled time, so each of its windows has exactly one
 * kernel; device 1 runs none.
 * usage: nvml_sampler_driver CAPTURE.wlcap DURATION_MS INTERVAL_MS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/recorder.h"
#include "common/clock.h"

static void device(uint32_t id, const char *pci)
{
    wlcap_device d;
    memset(&d, 0, sizeof d);
    d.device_id = id;
    d.pci_str = wl_capw_string(pci);
    d.name_str = wl_capw_string("Fake GPU");
    wl_capw_record(WLCAP_DEVICE, &d, sizeof d);
    wl_nvml_add_device(id, pci); /* as device_info.c does after writing the record */
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: nvml_sampler_driver CAPTURE.wlcap DURATION_MS INTERVAL_MS\n");
        return 2;
    }
    unsigned duration = (unsigned)atoi(argv[2]), interval = (unsigned)atoi(argv[3]);
    uint64_t t0 = wl_realtime_ns();
    if (wl_capw_open(argv[1], (uint64_t)getpid(), t0) != 0)
        return 1;
    if (wl_nvml_start(interval, getenv("WARPLENS_NVML_LIBRARY")) != 0)
        fprintf(stderr, "driver: sampler not started\n");
    device(0, "0000:18:00.0");
    device(1, "00000000:2A:00.0");
    device(2, "0000:99:00.0");
    uint64_t until = wl_monotonic_ns() + (uint64_t)duration * 1000000ull;
    while (wl_monotonic_ns() < until) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        wl_nvml_write_pending(); /* the writer thread's drain */
    }
    wl_nvml_stop();
    wl_nvml_write_pending();
    uint64_t t1 = wl_realtime_ns();
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.start = t0, k.end = t1, k.correlation_id = 1, k.stream_id = 7, k.device_id = 0;
    k.name_str = wl_capw_string("_Z11busy_kernelv");
    k.grid_x = k.grid_y = k.grid_z = 1, k.block_x = 32, k.block_y = k.block_z = 1;
    k.carveout_requested = 0xff;
    wl_capw_record(WLCAP_KERNEL, &k, sizeof k);
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = wl_realtime_ns();
    e.reason = WLCAP_END_EXIT;
    wl_capw_record(WLCAP_END, &e, sizeof e);
    return wl_capw_close() == 0 ? 0 : 1;
}
