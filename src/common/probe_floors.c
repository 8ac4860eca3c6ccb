/* Floors of the clock probe's gaps per GPU model (probe_floors.h). Each entry was measured with
 * bench/bench_ik_probe_gaps.cu --raw on that GPU for the probe in capture/clock_probe_ptx.h: the
 * minima over its probes less one 32 ns timer step, checked on others (bench/results/
 * ik-probe-gaps-h100.log). A device not listed gets no floors: the calibration is then the plain
 * intersection (about ±450 ns on the H100). */
#include "common/probe_floors.h"

#include <string.h>

static const struct {
    const char *name;
    wl_probe_floors floors;
} k_floors[] = {
    /* 2026-11-25, driver 580.159.04: start gap 192-256 ns, end gap 704-736 ns over 1,920 probes in
     * two processes (raw GPU timestamps) */
    {"NVIDIA H100 80GB HBM3", {160, 672}},
};

int wl_probe_floors_for(const char *name, wl_probe_floors *out)
{
    if (!name)
        return 0;
    for (size_t i = 0; i < sizeof k_floors / sizeof k_floors[0]; i++)
        if (!strcmp(name, k_floors[i].name)) {
            *out = k_floors[i].floors;
            return 1;
        }
    return 0;
}
