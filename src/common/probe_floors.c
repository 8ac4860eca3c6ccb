/* Floors of the clock probe's gaps per GPU model (probe_floors.h). Each entry was measured with
 * bench/bench_ik_probe_gaps.cu --raw on that GPU for the probe in capture/clock_probe_ptx.h: the
 * minima over its probes less one 32 ns timer step, checked on others (bench/results/
 * ik-probe-gaps-h100.md, probe-floors-h200.log). A device not listed gets no floors: the
 * calibration is then the plain intersection (about ±450 ns on the H100, ±320 ns on the H200),
 * unless WARPLENS_PROBE_FLOORS gives them (capture/clock_calibration_cupti.c). */
#include "common/probe_floors.h"

#include <ctype.h>
#include <string.h>

static const struct {
    const char *name;
    wl_probe_floors floors;
} k_floors[] = {
    /* 2026-11-25, driver 580.159.04: start gap 192-256 ns, end gap 704-736 ns over 1,920 probes in
     * two processes (raw GPU timestamps) */
    {"NVIDIA H100 80GB HBM3", {160, 672}},
    /* 2026-11-28, driver 580.159.04, both GPUs of a 2-GPU host: start gap 192-256 ns on both, end
     * gap 448-672 ns on one and 416-608 ns on the other (3 runs of 960 probes; the end floor is
     * the smaller GPU's minimum less one step) */
    {"NVIDIA H200", {160, 384}},
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

/* one decimal integer 0..1000000 at *p, advancing *p; -1 when there is none or it is larger */
static int floor_value(const char **p, int64_t *v)
{
    const char *q = *p;
    int64_t x = 0;
    if (!isdigit((unsigned char)*q))
        return -1;
    for (; isdigit((unsigned char)*q); q++) {
        x = x * 10 + (*q - '0');
        if (x > 1000000)
            return -1;
    }
    *v = x;
    *p = q;
    return 0;
}

int wl_probe_floors_parse(const char *s, wl_probe_floors *out)
{
    wl_probe_floors f;
    if (!s || floor_value(&s, &f.start_ns) != 0 || *s++ != ',' || floor_value(&s, &f.end_ns) != 0 || *s)
        return -1;
    *out = f;
    return 0;
}
