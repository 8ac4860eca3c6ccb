/* Where the recorder's hardware-metrics time goes (metric_cost.h). The phases are timed by their
 * callers with CLOCK_MONOTONIC (wl_rp_now_ns) around each CUPTI call: a few tens of calls per
 * batch, nothing on the hot path of unprofiled work. */
#include "capture/metric_cost.h"

#include <stdatomic.h>
#include <stdio.h>

static const char *const g_phase_name[WL_MC_COUNT] = {"configure",    "start",        "stop",
                                                      "decode",       "evaluate",     "tie",
                                                      "kernel_call",  "other_call",   "setup_device",
                                                      "setup_host",   "setup_enable"};
static _Atomic uint64_t g_ns[WL_MC_COUNT], g_count[WL_MC_COUNT], g_max[WL_MC_COUNT], g_image;

static void keep_max(_Atomic uint64_t *slot, uint64_t v)
{
    uint64_t m = atomic_load(slot);
    while (v > m && !atomic_compare_exchange_weak(slot, &m, v))
        ;
}

void wl_mcost_note_image(uint64_t bytes) { keep_max(&g_image, bytes); }

void wl_mcost_add(int phase, uint64_t ns)
{
    if (phase < 0 || phase >= WL_MC_COUNT)
        return;
    atomic_fetch_add(&g_ns[phase], ns);
    atomic_fetch_add(&g_count[phase], 1);
    keep_max(&g_max[phase], ns);
}

void wl_mcost_write(void (*write)(const char *name, uint64_t value))
{
    char name[64];
    if (atomic_load(&g_image))
        write("metrics_image_bytes", atomic_load(&g_image));
    for (int p = 0; p < WL_MC_COUNT; p++) {
        uint64_t n = atomic_load(&g_count[p]);
        if (!n)
            continue;
        snprintf(name, sizeof name, "metrics_%s_ns", g_phase_name[p]);
        write(name, atomic_load(&g_ns[p]));
        snprintf(name, sizeof name, "metrics_%s_count", g_phase_name[p]);
        write(name, n);
        if (p == WL_MC_KERNEL_CALL || p == WL_MC_OTHER_CALL || p == WL_MC_START || p == WL_MC_STOP) {
            snprintf(name, sizeof name, "metrics_%s_max_ns", g_phase_name[p]);
            write(name, atomic_load(&g_max[p]));
        }
    }
}
