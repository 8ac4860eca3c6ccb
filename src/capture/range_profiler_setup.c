/* A context's range profiler, set up at its first call (range_profiler.h): the metric set checked
 * against the GPU once per process (names it does not know dropped, naming the close ones; the CTA
 * metric that ties ranges to launches added when it costs no pass), the configuration image and
 * its pass count, the replay mode that follows from it, the range profiler enabled, and the
 * counter-data image and the batch's decode scratch allocated, so application threads never
 * allocate later. Each step is timed (metric_cost.h: setup_device, setup_host, setup_enable).
 * The metric set lives here; range_profiler.c reads it for every batch. */
#include "capture/range_profiler.h"

#include "capture/metric_cost.h"
#include "capture/profiler_host.h"

#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/* Calls per batch (and ranges per counter-data image, maxRangesPerPass) under kernel replay. There
 * a kernel costs tens of milliseconds or more, so the flush interval decodes a batch after a few
 * calls anyway, while CUPTI's cost grows with the capacity configured: on the H100 (CUPTI 13.0,
 * `default`, 4 passes; bench/results/metrics-replay-cost-h100.md) a 1000-range configuration took
 * ~110 ms per batch to set up and ~150 ms more per replayed kernel than a 64-range one (a one-warp
 * kernel: 327 ms -> 70 ms per kernel; the PyTorch transformer step: 114.9 s -> 48.3 s). */
#define REPLAY_BATCH 64

wl_rp_set wl_rp_metrics = {.cta_idx = -1};

/* Drops names the GPU does not know, naming the close ones it does (first device only: the metric
 * ids must be the same for every device of the process). */
static void validate_names(mctx *m)
{
    int kept = 0;
    for (int i = 0; i < wl_rp_metrics.count; i++) {
        CUpti_Profiler_Host_GetMetricProperties_Params mp;
        memset(&mp, 0, sizeof mp);
        mp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
        mp.pHostObject = m->host;
        mp.pMetricName = wl_rp_metrics.names[i];
        if (cuptiProfilerHostGetMetricProperties(&mp) == CUPTI_SUCCESS) {
            if (kept != i)
                memcpy(wl_rp_metrics.names[kept], wl_rp_metrics.names[i], WL_METRIC_NAME_MAX);
            snprintf(wl_rp_metrics.units[kept], sizeof wl_rp_metrics.units[kept], "%s", mp.pDimUnit ? mp.pDimUnit : "");
            wl_rp_metrics.types[kept] = (uint32_t)mp.metricType;
            kept++;
            continue;
        }
        char list[400];
        wl_host_close_metric_names(m->host, wl_rp_metrics.names[i], list, sizeof list);
        wl_log("unknown metric '%s' on this GPU; %s%s; it is not collected (other metrics are)", wl_rp_metrics.names[i],
               list[0] ? "close names: " : "no close name (see `ncu --query-metrics`)", list);
    }
    wl_rp_metrics.count = kept;
    for (int i = 0; i < wl_rp_metrics.count; i++) {
        wl_rp_metrics.ptr[i] = wl_rp_metrics.names[i];
        if (!strcmp(wl_rp_metrics.names[i], WL_RP_CTA_METRIC))
            wl_rp_metrics.cta_idx = i;
    }
}

/* Passes the set needs on this chip, counted on a scratch host object (adding metrics to one
 * cannot be undone). 0 when it cannot be counted. */
static size_t passes_of(const char *chip, const uint8_t *avail, const char *const *names, size_t n)
{
    void *host = NULL;
    size_t passes = 0;
    uint8_t *img = NULL;
    size_t size = 0;
    if (wl_profiler_host_new(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, avail, &host) == CUPTI_SUCCESS &&
        wl_profiler_config(host, names, n, &img, &size) == CUPTI_SUCCESS)
        (void)wl_profiler_passes(img, size, &passes);
    free(img);
    wl_profiler_host_free(host, "metrics");
    return passes;
}

/* WL_RP_CTA_METRIC ties ranges to launches by grid size (metric_match.h). It joins the set only when
 * the chip has it and it costs no extra pass (first device; the names are the process's). */
static void add_cta_metric(mctx *m, const char *chip)
{
    if (wl_rp_metrics.cta_idx >= 0 || wl_rp_metrics.count >= WL_METRICS_MAX)
        return;
    CUpti_Profiler_Host_GetMetricProperties_Params mp;
    memset(&mp, 0, sizeof mp);
    mp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
    mp.pHostObject = m->host;
    mp.pMetricName = WL_RP_CTA_METRIC;
    if (cuptiProfilerHostGetMetricProperties(&mp) != CUPTI_SUCCESS)
        return;
    size_t without = passes_of(chip, m->availability, wl_rp_metrics.ptr, (size_t)wl_rp_metrics.count);
    wl_rp_metrics.ptr[wl_rp_metrics.count] = WL_RP_CTA_METRIC;
    size_t with = passes_of(chip, m->availability, wl_rp_metrics.ptr, (size_t)wl_rp_metrics.count + 1);
    if (!without || with != without) {
        wl_rp_metrics.ptr[wl_rp_metrics.count] = NULL;
        return;
    }
    snprintf(wl_rp_metrics.names[wl_rp_metrics.count], WL_METRIC_NAME_MAX, "%s", WL_RP_CTA_METRIC);
    snprintf(wl_rp_metrics.units[wl_rp_metrics.count], sizeof wl_rp_metrics.units[wl_rp_metrics.count], "%s", mp.pDimUnit ? mp.pDimUnit : "");
    wl_rp_metrics.types[wl_rp_metrics.count] = (uint32_t)mp.metricType;
    wl_rp_metrics.ptr[wl_rp_metrics.count] = wl_rp_metrics.names[wl_rp_metrics.count];
    wl_rp_metrics.cta_idx = wl_rp_metrics.count++;
}

/* One pass needs no replay: with user replay and auto range CUPTI still gives each kernel its
 * own range but runs it once, without saving and restoring device memory around each pass, which
 * is what makes kernel replay cost milliseconds per kernel. More passes need kernel replay: an
 * unmodified program cannot replay itself. WARPLENS_METRICS_REPLAY=kernel forces kernel replay
 * (for comparing the two in bench/). */
static CUpti_ProfilerReplayMode choose_replay(size_t passes)
{
    const char *force = getenv("WARPLENS_METRICS_REPLAY");
    if (force && !strcmp(force, "kernel"))
        return CUPTI_KernelReplay;
    return passes == 1 ? CUPTI_UserReplay : CUPTI_KernelReplay;
}

#define TRY(call, what)                                                                                        \
    do {                                                                                                       \
        CUptiResult st_ = (call);                                                                              \
        if (st_ != CUPTI_SUCCESS) {                                                                            \
            wl_rp_explain(m, what, st_);                                                                       \
            return -1;                                                                                         \
        }                                                                                                      \
    } while (0)

static int allocate(mctx *m)
{
    size_t cap = m->cap;
    m->calls = calloc(cap, sizeof *m->calls);
    m->values = calloc(cap * (size_t)wl_rp_metrics.count, sizeof *m->values);
    m->ctas = calloc(cap, sizeof *m->ctas);
    m->verdicts = calloc(cap, sizeof *m->verdicts);
    m->match_scratch = calloc(2 * cap, sizeof *m->match_scratch);
    m->fns = calloc(WL_FN_TABLE, sizeof *m->fns);
    return m->calls && m->values && m->ctas && m->verdicts && m->match_scratch && m->fns ? 0 : -1;
}

int wl_rp_setup(mctx *m)
{
    char chip[64], step[128];
    uint64_t t0 = wl_rp_now_ns(), t1;
    CUptiResult st0 = wl_profiler_device_begin(m->device_id, CUPTI_PROFILER_RANGE_PROFILING, chip, sizeof chip, step,
                                               sizeof step);
    if (st0 != CUPTI_SUCCESS) {
        wl_rp_explain(m, step, st0);
        return -1;
    }
    CUpti_Profiler_GetCounterAvailability_Params ca;
    memset(&ca, 0, sizeof ca);
    ca.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
    ca.ctx = m->ctx;
    TRY(cuptiProfilerGetCounterAvailability(&ca), "reading counter availability");
    uint8_t *avail = malloc(ca.counterAvailabilityImageSize ? ca.counterAvailabilityImageSize : 1);
    if (!avail) {
        wl_rp_explain(m, "allocating the counter availability image", CUPTI_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    ca.pCounterAvailabilityImage = avail;
    m->availability = avail; /* kept until teardown: the host object reads it later */
    TRY(cuptiProfilerGetCounterAvailability(&ca), "reading counter availability");
    t1 = wl_rp_now_ns();
    wl_mcost_add(WL_MC_SETUP_DEVICE, t1 - t0);
    t0 = t1;
    void *host = NULL;
    CUptiResult st = wl_profiler_host_new(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, avail, &host);
    m->host = host;
    if (st != CUPTI_SUCCESS) {
        wl_rp_explain(m, "initialising the metric host", st);
        return -1;
    }
    if (!wl_rp_metrics.validated) {
        wl_rp_metrics.validated = 1;
        validate_names(m);
        if (wl_rp_metrics.count)
            add_cta_metric(m, chip);
    }
    if (!wl_rp_metrics.count) {
        wl_rp_explain(m, "choosing metrics (none of the requested metrics exists on this GPU)", CUPTI_ERROR_INVALID_PARAMETER);
        return -1;
    }
    TRY(wl_profiler_config(m->host, wl_rp_metrics.ptr, (size_t)wl_rp_metrics.count, &m->config, &m->config_size),
        "building the metric configuration");
    TRY(wl_profiler_passes(m->config, m->config_size, &m->num_passes), "counting replay passes");
    t1 = wl_rp_now_ns();
    wl_mcost_add(WL_MC_SETUP_HOST, t1 - t0);
    t0 = t1;
    m->replay = choose_replay(m->num_passes);
    m->cap = m->replay == CUPTI_KernelReplay && wl_rp_batch > REPLAY_BATCH ? REPLAY_BATCH : wl_rp_batch;
    m->graphs = wl_rp_graphs;
    if (m->graphs == WL_GRAPHS_LAUNCH && m->replay != CUPTI_UserReplay) {
        wl_log("metrics: a graph launch as one range needs a one-pass set (this one needs %zu passes); graph"
               " launches are not profiled on GPU %u", m->num_passes, m->device_id);
        m->graphs = WL_GRAPHS_OFF;
    }

    CUpti_RangeProfiler_Enable_Params en;
    memset(&en, 0, sizeof en);
    en.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
    en.ctx = m->ctx;
    TRY(cuptiRangeProfilerEnable(&en), "enabling the range profiler");
    m->obj = en.pRangeProfilerObject;

    CUpti_RangeProfiler_GetCounterDataSize_Params ds;
    memset(&ds, 0, sizeof ds);
    ds.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
    ds.pRangeProfilerObject = m->obj;
    ds.pMetricNames = wl_rp_metrics.ptr;
    ds.numMetrics = (size_t)wl_rp_metrics.count;
    ds.maxNumOfRanges = m->cap;
    ds.maxNumRangeTreeNodes = (uint32_t)m->cap;
    TRY(cuptiRangeProfilerGetCounterDataSize(&ds), "sizing the counter data");
    m->counter_size = ds.counterDataSize;
    m->counter = malloc(m->counter_size);
    if (!m->counter || allocate(m) != 0) {
        wl_rp_explain(m, "allocating the counter data", CUPTI_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    wl_mcost_note_image(m->counter_size);
    wl_mcost_add(WL_MC_SETUP_ENABLE, wl_rp_now_ns() - t0);
    return 0;
}
