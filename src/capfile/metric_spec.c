/* Metric presets, the aggregation catalog and close-name suggestions (see metric_spec.h). Metric
 * names and pass counts were checked offline against CUPTI 13.0's host API for chip GH100
 * (docs/recorder.md, "Hardware metrics"). */
#include "capfile/metric_spec.h"

#include <stdio.h>
#include <string.h>

#define FLOP(op) "smsp__sass_thread_inst_executed_op_" op "_pred_on.sum"

static const wl_metric_rule CATALOG[] = {
    {WL_METRIC_GPU_TIME, "gpu_time_ns", {NULL, NULL}},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy_pct", {"sm__cycles_active.sum", NULL}},
    {"sm__cycles_active.sum", "sm_active_cycles", {NULL, NULL}},
    {"dram__bytes_read.sum", "dram_read_bytes", {NULL, NULL}},
    {"dram__bytes_write.sum", "dram_write_bytes", {NULL, NULL}},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_pct", {"dram__cycles_elapsed.avg", NULL}},
    {"dram__cycles_elapsed.avg", "dram_cycles", {NULL, NULL}},
    {"l1tex__t_sector_hit_rate.pct", "l1_hit_pct",
     {"l1tex__t_sectors_lookup_hit.sum", "l1tex__t_sectors_lookup_miss.sum"}},
    {"l1tex__t_sectors_lookup_hit.sum", "l1_hit_sectors", {NULL, NULL}},
    {"l1tex__t_sectors_lookup_miss.sum", "l1_miss_sectors", {NULL, NULL}},
    {"lts__t_sector_hit_rate.pct", "l2_hit_pct", {"lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum"}},
    {"lts__t_sectors_lookup_hit.sum", "l2_hit_sectors", {NULL, NULL}},
    {"lts__t_sectors_lookup_miss.sum", "l2_miss_sectors", {NULL, NULL}},
    {FLOP("fadd"), "fadd", {NULL, NULL}},
    {FLOP("fmul"), "fmul", {NULL, NULL}},
    {FLOP("ffma"), "ffma", {NULL, NULL}},
    {FLOP("hadd"), "hadd", {NULL, NULL}},
    {FLOP("hmul"), "hmul", {NULL, NULL}},
    {FLOP("hfma"), "hfma", {NULL, NULL}},
    {FLOP("dadd"), "dadd", {NULL, NULL}},
    {FLOP("dmul"), "dmul", {NULL, NULL}},
    {FLOP("dfma"), "dfma", {NULL, NULL}},
    {"sm__inst_executed_pipe_tensor.sum", "tensor_inst", {NULL, NULL}},
    {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "tensor_pct", {"sm__cycles_active.sum", NULL}},
    {"smsp__inst_executed.sum", "inst_executed", {NULL, NULL}},
};

const char *const WL_METRIC_PRESETS[] = {"default", "memory", "compute", "occupancy", NULL};

/* Measured with the host API for GH100 (passes with gpu__time_duration.sum and the denominators):
 * default 4, memory 3, compute 3, occupancy 1. */
static const char *const P_DEFAULT[] = {
    "sm__warps_active.avg.pct_of_peak_sustained_active", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct", FLOP("fadd"), FLOP("fmul"), FLOP("ffma"), FLOP("hadd"), FLOP("hmul"),
    FLOP("hfma"), FLOP("dadd"), FLOP("dmul"), FLOP("dfma"), "sm__inst_executed_pipe_tensor.sum",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum", NULL};
static const char *const P_MEMORY[] = {
    "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct", NULL};
static const char *const P_COMPUTE[] = {
    FLOP("fadd"), FLOP("fmul"), FLOP("ffma"), FLOP("hadd"), FLOP("hmul"), FLOP("hfma"), FLOP("dadd"), FLOP("dmul"),
    FLOP("dfma"), "sm__inst_executed_pipe_tensor.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed.sum", NULL};
static const char *const P_OCCUPANCY[] = {"sm__warps_active.avg.pct_of_peak_sustained_active",
                                          "dram__bytes_read.sum", "dram__bytes_write.sum", NULL};
static const char *const *const PRESET_LISTS[] = {P_DEFAULT, P_MEMORY, P_COMPUTE, P_OCCUPANCY};

const wl_metric_rule *wl_metric_rule_find(const char *name)
{
    for (size_t i = 0; i < sizeof CATALOG / sizeof CATALOG[0]; i++)
        if (strcmp(CATALOG[i].name, name) == 0)
            return &CATALOG[i];
    return NULL;
}

const char *wl_metric_label(const char *name)
{
    const wl_metric_rule *r = wl_metric_rule_find(name);
    return r ? r->label : name;
}

int wl_edit_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 255 || lb > 255)
        return cap;
    int row[256];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0], best = row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best)
                best = v;
        }
        if (best >= cap)
            return cap;
    }
    return row[lb] < cap ? row[lb] : cap;
}

static size_t unit_prefix(const char *s)
{
    const char *p = strstr(s, "__");
    return p ? (size_t)(p - s) : 0;
}

int wl_close_names(const char *want, const char *const *cands, size_t ncands, size_t *out, int max)
{
    int limit = (int)strlen(want) / 4;
    if (limit < 2)
        limit = 2;
    size_t wp = unit_prefix(want);
    int dist[16];
    int n = 0;
    if (max > 16)
        max = 16;
    for (size_t i = 0; i < ncands; i++) {
        int d = wl_edit_distance(want, cands[i], 64);
        size_t cp = unit_prefix(cands[i]);
        int same_unit = wp && wp == cp && strncmp(want, cands[i], wp) == 0;
        if (d > limit && !same_unit)
            continue;
        /* insertion sort by distance into the best `max` */
        int at = n < max ? n : max;
        while (at > 0 && dist[at - 1] > d)
            at--;
        if (at >= max)
            continue;
        int last = n < max ? n : max - 1;
        for (int k = last; k > at; k--) {
            dist[k] = dist[k - 1];
            out[k] = out[k - 1];
        }
        dist[at] = d;
        out[at] = i;
        if (n < max)
            n++;
    }
    return n;
}

int wl_metric_name_valid(const char *s, size_t n)
{
    if (!n || n >= WL_METRIC_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return 0;
    }
    return 1;
}

int wl_metric_list_add(char names[][WL_METRIC_NAME_MAX], int *from_preset, int *n, int max, const char *name,
                       size_t len, int preset, const char *what, char *err, size_t err_size)
{
    for (int i = 0; i < *n; i++) {
        if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0) {
            if (from_preset && !preset)
                from_preset[i] = 0;
            return 0;
        }
    }
    if (*n >= max) {
        snprintf(err, err_size, "too many %s (at most %d)", what, max);
        return -1;
    }
    memcpy(names[*n], name, len);
    names[*n][len] = 0;
    if (from_preset)
        from_preset[*n] = preset;
    (*n)++;
    return 0;
}

static int add(char names[][WL_METRIC_NAME_MAX], int *n, int max, const char *name, size_t len, char *err,
               size_t err_size)
{
    return wl_metric_list_add(names, NULL, n, max, name, len, 0, "metrics in one run", err, err_size);
}

int wl_metrics_expand(const char *spec, char names[][WL_METRIC_NAME_MAX], int max, char *err, size_t err_size)
{
    int n = 0;
    if (add(names, &n, max, WL_METRIC_GPU_TIME, strlen(WL_METRIC_GPU_TIME), err, err_size))
        return -1;
    const char *p = spec;
    int words = 0;
    while (*p) {
        size_t len = strcspn(p, ", ");
        if (len) {
            words++;
            char word[WL_METRIC_NAME_MAX];
            snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
            if (strstr(word, "__")) {
                if (!wl_metric_name_valid(p, len)) {
                    snprintf(err, err_size, "'%.*s' is not a metric name (letters, digits, '_' and '.' only)",
                             (int)(len > 80 ? 80 : len), p);
                    return -1;
                }
                if (add(names, &n, max, p, len, err, err_size))
                    return -1;
            } else {
                int found = -1;
                for (int i = 0; WL_METRIC_PRESETS[i]; i++)
                    if (strcmp(WL_METRIC_PRESETS[i], word) == 0)
                        found = i;
                if (found < 0) {
                    size_t close[4];
                    int nc = wl_close_names(word, WL_METRIC_PRESETS, 4, close, 4);
                    const wl_metric_rule *r = NULL;
                    for (size_t i = 0; i < sizeof CATALOG / sizeof CATALOG[0]; i++)
                        if (strcmp(CATALOG[i].label, word) == 0)
                            r = &CATALOG[i];
                    if (r)
                        snprintf(err, err_size, "unknown metric preset '%s': did you mean the metric %s?", word,
                                 r->name);
                    else
                        snprintf(err, err_size,
                                 "unknown metric preset '%s'%s%s%s; presets: default, memory, compute, occupancy,"
                                 " or CUPTI metric names such as dram__bytes_read.sum",
                                 word, nc ? " (did you mean " : "", nc ? WL_METRIC_PRESETS[close[0]] : "",
                                 nc ? "?)" : "");
                    return -1;
                }
                for (const char *const *m = PRESET_LISTS[found]; *m; m++)
                    if (add(names, &n, max, *m, strlen(*m), err, err_size))
                        return -1;
            }
        }
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    if (!words) {
        snprintf(err, err_size, "no metrics given (use a preset: default, memory, compute, occupancy)");
        return -1;
    }
    /* the denominators make range aggregation exact (sum of numerators / sum of denominators) */
    int requested = n;
    for (int i = 0; i < requested; i++) {
        const wl_metric_rule *r = wl_metric_rule_find(names[i]);
        for (int k = 0; r && k < 2; k++)
            if (r->den[k] && add(names, &n, max, r->den[k], strlen(r->den[k]), err, err_size))
                return -1;
    }
    return n;
}
