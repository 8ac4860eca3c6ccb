/* PM sampling presets, labels and the time-combination rule (see pm_metric_spec.h). Each preset
 * was checked offline with CUPTI 13.0's host API (CUPTI_PROFILER_TYPE_PM_SAMPLING, chip GH100):
 * every name exists and the whole preset fits one pass. On other chips some names differ (GB100
 * has no pcie__*, GB202 no dram__bytes_*) or a preset needs two passes (GA10x, AD10x, GA100); the
 * recorder then leaves those preset metrics out and says which. */
#include "capfile/pm_metric_spec.h"

#include <stdio.h>
#include <string.h>

#define SM_ACTIVE "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
#define WARPS_ACTIVE "sm__warps_active.avg.pct_of_peak_sustained_elapsed"
#define TENSOR "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"
#define DRAM_PCT "dram__throughput.avg.pct_of_peak_sustained_elapsed"

const char *const WL_PM_PRESETS[] = {"default", "memory", "compute", NULL};

static const char *const P_DEFAULT[] = {SM_ACTIVE, WARPS_ACTIVE, "dram__bytes_read.sum", "dram__bytes_write.sum",
                                        DRAM_PCT, "pcie__read_bytes.sum", "pcie__write_bytes.sum", TENSOR, NULL};
static const char *const P_MEMORY[] = {"dram__bytes_read.sum", "dram__bytes_write.sum", DRAM_PCT,
                                       "pcie__read_bytes.sum", "pcie__write_bytes.sum", "nvlrx__bytes.sum",
                                       "nvltx__bytes.sum", NULL};
static const char *const P_COMPUTE[] = {SM_ACTIVE, TENSOR, "sm__inst_executed_realtime.sum", "gr__cycles_active.avg",
                                        NULL};
static const char *const *const PRESET_LISTS[] = {P_DEFAULT, P_MEMORY, P_COMPUTE};

static const struct { const char *name, *label; } LABELS[] = {
    {SM_ACTIVE, "SM active"},
    {WARPS_ACTIVE, "warps active"},
    {"dram__bytes_read.sum", "DRAM read"},
    {"dram__bytes_write.sum", "DRAM write"},
    {DRAM_PCT, "DRAM throughput"},
    {"pcie__read_bytes.sum", "PCIe read"},
    {"pcie__write_bytes.sum", "PCIe write"},
    {TENSOR, "tensor pipe"},
    {"nvlrx__bytes.sum", "NVLink rx"},
    {"nvltx__bytes.sum", "NVLink tx"},
    {"sm__inst_executed_realtime.sum", "instructions"},
    {"gr__cycles_active.avg", "GR active cycles"},
};

const char *wl_pm_metric_label(const char *name)
{
    for (size_t i = 0; i < sizeof LABELS / sizeof LABELS[0]; i++)
        if (strcmp(LABELS[i].name, name) == 0)
            return LABELS[i].label;
    return name;
}

int wl_pm_metric_additive(const char *name, int metric_type)
{
    if (metric_type > 0) /* ratio or throughput */
        return 0;
    const char *dot = strchr(name, '.');
    if (!dot || strchr(dot + 1, '.'))
        return 0; /* no rollup, or a submetric such as .pct_of_peak_sustained_elapsed or .per_second */
    static const char *const rollups[] = {"sum", "avg", "max", "min"};
    for (int i = 0; i < 4; i++)
        if (strcmp(dot + 1, rollups[i]) == 0)
            return !strstr(name, "throughput"); /* a throughput base metric is a percentage */
    return 0;
}

static int add(char names[][WL_METRIC_NAME_MAX], int *from_preset, int *n, int max, const char *name, size_t len,
               int preset, char *err, size_t err_size)
{
    return wl_metric_list_add(names, from_preset, n, max, name, len, preset, "PM sampling metrics", err, err_size);
}

int wl_pm_metrics_expand(const char *spec, char names[][WL_METRIC_NAME_MAX], int *from_preset, int max, char *err,
                         size_t err_size)
{
    int n = 0, words = 0;
    const char *p = spec ? spec : "";
    while (*p) {
        size_t len = strcspn(p, ", ");
        if (len) {
            words++;
            if (memmem(p, len, "__", 2)) {
                if (!wl_metric_name_valid(p, len)) {
                    snprintf(err, err_size, "'%.*s' is not a metric name (letters, digits, '_' and '.' only)",
                             (int)(len > 80 ? 80 : len), p);
                    return -1;
                }
                if (add(names, from_preset, &n, max, p, len, 0, err, err_size))
                    return -1;
            } else {
                char word[64];
                snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
                int found = -1;
                for (int i = 0; WL_PM_PRESETS[i]; i++)
                    if (strcmp(WL_PM_PRESETS[i], word) == 0)
                        found = i;
                if (found < 0) {
                    size_t close[3];
                    int nc = wl_close_names(word, WL_PM_PRESETS, 3, close, 1);
                    snprintf(err, err_size,
                             "unknown PM sampling preset '%s'%s%s%s; presets: default, memory, compute, or CUPTI"
                             " metric names such as dram__bytes_read.sum (one pass only)",
                             word, nc ? " (did you mean " : "", nc ? WL_PM_PRESETS[close[0]] : "", nc ? "?)" : "");
                    return -1;
                }
                for (const char *const *m = PRESET_LISTS[found]; *m; m++)
                    if (add(names, from_preset, &n, max, *m, strlen(*m), 1, err, err_size))
                        return -1;
            }
        }
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    if (!words) {
        snprintf(err, err_size, "no PM sampling metrics given (use a preset: default, memory, compute)");
        return -1;
    }
    return n;
}
