/* CUPTI PM sampling on one device (see pm_sampler.h), on the sampler thread only.
 *
 * Set-up: profiler initialisation (once), the support check, chip name, counter availability,
 * a profiler host object of type PM_SAMPLING, the metric names checked against the chip (unknown
 * ones are reported with the chip's close names and left out), the configuration checked to fit
 * one pass (PM sampling cannot replay), then cuptiPmSamplingEnable, SetConfig (GPU-time trigger
 * every interval, KEEP_LATEST so a late decode loses the oldest records rather than stopping the
 * stream), the counter-data image for `max_samples` samples, Start.
 *
 * Decode: DecodeData moves records from the hardware buffer into the counter-data image; every
 * completed sample is read (start/end timestamps) and evaluated to metric values, handed to the
 * writer, and the image is reset (a copy of its first initialisation); a full image is decoded
 * again at once. A gap between a sample's start and the previous sample's end is counted as that
 * many missing samples.
 *
 * Timestamps: CUPTI converts PM sample times with the same GPU-to-CPU conversion as activity
 * records (NVIDIA, quoted in pytorch/kineto#1526), so they are on the session clock (CLOCK_REALTIME
 * as the recorder registers no timestamp callback) and are stored unchanged. Each decode checks
 * the newest sample's end against CLOCK_REALTIME; a sample in the future or minutes old means
 * another clock, said once. tests/gpu/gpu_test_pm_sampling.cu checks the alignment with kernels.
 *
 * Lifetime of the buffers: the availability image stays alive as long as the host object (freeing
 * it crashed the range profiler's host object on the H100) and the config image as long as the
 * sampling object (CUPTI keeps its pointer after SetConfig). */
#include "capture/pm_sampler.h"
#include "capture/cupti_errors.h"
#include "capture/profiler_host.h"

#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"

#define MAX_DECODE_ROUNDS 64           /* a full image is decoded again, up to this many times */
#define CLOCK_FUTURE_NS 5000000ll      /* a sample ending 5 ms after "now" is not on our clock */
#define CLOCK_PAST_NS 60000000000ll    /* nor one that ended a minute before the decode */
#define MAX_HOLES_TOLD 3               /* holes described one by one in status lines */

static const char *remedy(CUptiResult st)
{
    if (st == CUPTI_ERROR_INVALID_OPERATION) /* what PM sampling says when another process samples */
        return wl_cupti_busy_remedy();
    return wl_cupti_remedy(st,
                           "PM sampling with a GPU-time trigger needs an Ampere GA10x, Ada, Hopper or newer GPU, bare"
                           " metal or a vGPU with profiling enabled, no MIG",
                           "not enough memory for the hardware buffer: make it smaller with WARPLENS_PM_HW_BUFFER"
                           " (e.g. 32M)");
}

/* Sampling is off on this device: one line with the step, CUPTI's message and the remedy. */
static void off(pm_device *d, const char *what, CUptiResult st)
{
    pm_emit_status(d->id, 1, 1, "PM sampling is off on GPU %u: %s failed (%s); %s. Tracing continues.", d->id, what,
                   wl_cupti_result_text(st), remedy(st));
    d->state = PM_FAILED;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static CUptiResult stop_object(void *obj)
{
    CUpti_PmSampling_Stop_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE;
    p.pPmSamplingObject = obj;
    return cuptiPmSamplingStop(&p);
}

static CUptiResult host_new(const pm_device *d, void **host)
{
    return wl_profiler_host_new(CUPTI_PROFILER_TYPE_PM_SAMPLING, d->chip, d->availability, host);
}

static void host_free(void *host) { wl_profiler_host_free(host, "PM sampling"); }

static CUptiResult build_config(void *host, const char **names, int n, uint8_t **image, size_t *size)
{
    return wl_profiler_config(host, names, (size_t)n, image, size);
}

/* Passes a set of metrics needs, on a host object of its own (adding metrics cannot be undone). */
static CUptiResult trial_passes(const pm_device *d, const char **names, int n, size_t *passes)
{
    void *host;
    CUptiResult st = host_new(d, &host);
    if (st != CUPTI_SUCCESS)
        return st;
    uint8_t *img;
    size_t size;
    if ((st = build_config(host, names, n, &img, &size)) == CUPTI_SUCCESS)
        st = wl_profiler_passes(img, size, passes);
    free(img);
    host_free(host);
    return st;
}

/* Gives back what this device holds. cuptiPmSamplingDisable is never called: on the H100 (CUDA 13.0)
 * disabling and then freeing the host object aborted the program at exit with a double free inside
 * CUPTI (bench/results/gpu-pm-sampling-h100.log), and other tools leave it out for the same reason.
 * A started object is stopped instead and the driver releases it with the process; so the config
 * image, which CUPTI keeps a pointer to, stays allocated too (once per device and process). Every
 * caller has set the device PM_FAILED first (or is the exit), so it is not set up again. At the process's
 * exit (`exiting`) CUPTI's host object is left to the process's end as well: nothing is gained by
 * freeing it then, and CUPTI's own libraries may already be running their exit handlers. */
static void release(pm_device *d, int exiting)
{
    if (d->obj && d->started && stop_object(d->obj) == CUPTI_SUCCESS)
        d->started = 0; /* failing, it had stopped already */
    if (!exiting) { /* at exit the object stays where it is, still referenced, for the process's end */
        host_free(d->host);
        d->host = NULL;
    }
    free(d->counter);
    free(d->blank);
    free(d->availability);
    d->counter = d->blank = d->availability = NULL;
    if (!d->obj) {
        free(d->config);
        d->config = NULL;
    }
}

/* Keeps the metrics the chip knows (reporting the others) and their units and types. */
static int check_names(pm_device *d, const pm_settings *s, char units[][40], int *types)
{
    d->n = 0;
    for (int i = 0; i < s->n; i++) {
        CUpti_Profiler_Host_GetMetricProperties_Params mp;
        memset(&mp, 0, sizeof mp);
        mp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
        mp.pHostObject = d->host;
        mp.pMetricName = s->names[i];
        if (cuptiProfilerHostGetMetricProperties(&mp) == CUPTI_SUCCESS) {
            snprintf(units[d->n], 40, "%s", mp.pDimUnit ? mp.pDimUnit : "");
            types[d->n] = (int)mp.metricType;
            d->names[d->n++] = s->names[i];
            continue;
        }
        char close[400];
        wl_host_close_metric_names(d->host, s->names[i], close, sizeof close);
        pm_emit_status(d->id, 0, 1,
                       "PM sampling on GPU %u (%s): unknown metric '%s'; %s%s; it is not sampled (the others are)",
                       d->id, d->chip, s->names[i], close[0] ? "close names: " : "no close name on this chip",
                       close);
    }
    return d->n;
}

/* The configuration must fit one pass. Returns 0 with d->config built for the metrics kept, or -1
 * (sampling off, said why). A preset metric that does not fit with the ones before it is left out
 * with a note; a set the user named is refused, naming the metrics that do not fit. */
static int fit_one_pass(pm_device *d, const pm_settings *s, char units[][40], int *types)
{
    size_t passes = 0;
    CUptiResult st = build_config(d->host, d->names, d->n, &d->config, &d->config_size);
    if (st == CUPTI_SUCCESS)
        st = wl_profiler_passes(d->config, d->config_size, &passes);
    if (st != CUPTI_SUCCESS) {
        off(d, "building the metric configuration", st);
        return -1;
    }
    if (passes == 1)
        return 0;
    /* which metrics do not fit: add them one at a time, keeping those that stay within one pass */
    const char *fit[WL_PM_METRICS_MAX];
    char fit_units[WL_PM_METRICS_MAX][40];
    int fit_types[WL_PM_METRICS_MAX], nfit = 0, user_offender = 0;
    char bad[600] = "";
    for (int i = 0; i < d->n; i++) {
        fit[nfit] = d->names[i];
        size_t p = 0;
        st = trial_passes(d, fit, nfit + 1, &p);
        if (st != CUPTI_SUCCESS) {
            off(d, "counting the passes of the metric configuration", st);
            return -1;
        }
        if (p <= 1) {
            memcpy(fit_units[nfit], units[i], 40);
            fit_types[nfit++] = types[i];
            continue;
        }
        size_t alone = 0;
        trial_passes(d, &d->names[i], 1, &alone);
        size_t used = strlen(bad);
        snprintf(bad + used, sizeof bad - used, "%s%s (%zu pass%s alone)", used ? ", " : "", d->names[i], alone,
                 alone == 1 ? "" : "es");
        for (int k = 0; k < s->n; k++)
            if (s->names[k] == d->names[i] && !s->from_preset[k])
                user_offender = 1;
    }
    if (user_offender || !nfit) {
        pm_emit_status(d->id, 1, 1,
                       "PM sampling is off on GPU %u (%s): the metrics need %zu passes, PM sampling collects one;"
                       " these do not fit with the ones before them: %s. Choose metrics that fit one pass (the"
                       " presets do on H100). Tracing continues.",
                       d->id, d->chip, passes, bad);
        d->state = PM_FAILED;
        return -1;
    }
    pm_emit_status(d->id, 0, 1, "PM sampling on GPU %u (%s): preset metrics left out to fit one pass: %s", d->id,
                   d->chip, bad);
    d->n = nfit;
    for (int i = 0; i < nfit; i++) {
        d->names[i] = fit[i];
        memcpy(units[i], fit_units[i], 40);
        types[i] = fit_types[i];
    }
    /* adding metrics cannot be undone: a fresh host object for the set that fits */
    free(d->config);
    d->config = NULL;
    host_free(d->host);
    d->host = NULL;
    if ((st = host_new(d, &d->host)) == CUPTI_SUCCESS &&
        (st = build_config(d->host, d->names, d->n, &d->config, &d->config_size)) == CUPTI_SUCCESS)
        st = wl_profiler_passes(d->config, d->config_size, &passes);
    if (st != CUPTI_SUCCESS || passes != 1) {
        off(d, "building the one-pass configuration", st != CUPTI_SUCCESS ? st : CUPTI_ERROR_NOT_SUPPORTED);
        return -1;
    }
    return 0;
}

/* CUPTI initialises the counter-data image once; each later reset copies that blank image back,
 * which costs less than initialising it again after every decode. */
static CUptiResult init_counter_data(pm_device *d)
{
    uint64_t t0 = wl_monotonic_ns();
    CUptiResult st = CUPTI_SUCCESS;
    if (d->blank) {
        memcpy(d->counter, d->blank, d->counter_size);
    } else {
        CUpti_PmSampling_CounterDataImage_Initialize_Params p;
        memset(&p, 0, sizeof p);
        p.structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE;
        p.pPmSamplingObject = d->obj;
        p.counterDataSize = d->counter_size;
        p.pCounterData = d->counter;
        st = cuptiPmSamplingCounterDataImageInitialize(&p);
        if (st == CUPTI_SUCCESS && (d->blank = malloc(d->counter_size)) != NULL)
            memcpy(d->blank, d->counter, d->counter_size); /* without it, initialise every time */
    }
    d->ns_reset += wl_monotonic_ns() - t0;
    return st;
}

static CUptiResult start(pm_device *d)
{
    CUptiResult st = init_counter_data(d);
    if (st != CUPTI_SUCCESS)
        return st;
    CUpti_PmSampling_Start_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE;
    p.pPmSamplingObject = d->obj;
    st = cuptiPmSamplingStart(&p);
    if (st == CUPTI_SUCCESS)
        d->started = 1;
    return st;
}

static CUptiResult stop(pm_device *d)
{
    CUptiResult st = stop_object(d->obj);
    if (st == CUPTI_SUCCESS)
        d->started = 0;
    return st;
}

#define TRY(call, what)                                                                                        \
    do {                                                                                                       \
        CUptiResult st_ = (call);                                                                              \
        if (st_ != CUPTI_SUCCESS) {                                                                            \
            off(d, what, st_);                                                                                 \
            release(d, 0);                                                                                     \
            return -1;                                                                                         \
        }                                                                                                      \
    } while (0)

int pm_device_setup(pm_device *d, const pm_settings *s)
{
    uint64_t t0 = wl_monotonic_ns(), cpu0 = thread_cpu_ns();
    char step[128];
    CUptiResult st0 = wl_profiler_device_begin(d->id, CUPTI_PROFILER_PM_SAMPLING, d->chip, sizeof d->chip, step,
                                               sizeof step);
    if (st0 != CUPTI_SUCCESS) {
        off(d, step, st0);
        return -1;
    }

    CUpti_PmSampling_GetCounterAvailability_Params ca;
    memset(&ca, 0, sizeof ca);
    ca.structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE;
    ca.deviceIndex = d->id;
    TRY(cuptiPmSamplingGetCounterAvailability(&ca), "reading counter availability");
    d->availability = calloc(1, ca.counterAvailabilityImageSize ? ca.counterAvailabilityImageSize : 1);
    if (!d->availability)
        TRY(CUPTI_ERROR_OUT_OF_MEMORY, "allocating the counter availability image");
    ca.pCounterAvailabilityImage = d->availability;
    TRY(cuptiPmSamplingGetCounterAvailability(&ca), "reading counter availability");
    TRY(host_new(d, &d->host), "initialising the metric host");

    char units[WL_PM_METRICS_MAX][40];
    int types[WL_PM_METRICS_MAX];
    if (!check_names(d, s, units, types)) {
        pm_emit_status(d->id, 1, 1, "PM sampling is off on GPU %u (%s): none of the requested metrics exists on"
                       " this chip. Tracing continues.", d->id, d->chip);
        d->state = PM_FAILED;
        release(d, 0);
        return -1;
    }
    if (fit_one_pass(d, s, units, types) != 0) {
        release(d, 0);
        return -1;
    }

    CUpti_PmSampling_Enable_Params en;
    memset(&en, 0, sizeof en);
    en.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE;
    en.deviceIndex = d->id;
    TRY(cuptiPmSamplingEnable(&en), "enabling PM sampling");
    d->obj = en.pPmSamplingObject;

    CUpti_PmSampling_SetConfig_Params sc;
    memset(&sc, 0, sizeof sc);
    sc.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE;
    sc.pPmSamplingObject = d->obj;
    sc.configSize = d->config_size;
    sc.pConfig = d->config;
    sc.hardwareBufferSize = s->hw_buffer_bytes;
    sc.samplingInterval = s->interval_ns;
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
    TRY(cuptiPmSamplingSetConfig(&sc), "configuring PM sampling (interval, trigger, hardware buffer)");

    CUpti_PmSampling_GetCounterDataSize_Params cs;
    memset(&cs, 0, sizeof cs);
    cs.structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE;
    cs.pPmSamplingObject = d->obj;
    cs.pMetricNames = d->names;
    cs.numMetrics = (size_t)d->n;
    cs.maxSamples = s->max_samples;
    TRY(cuptiPmSamplingGetCounterDataSize(&cs), "sizing the counter data");
    d->counter_size = cs.counterDataSize;
    if (!(d->counter = malloc(d->counter_size ? d->counter_size : 1)))
        TRY(CUPTI_ERROR_OUT_OF_MEMORY, "allocating the counter data");

    /* the definitions reach the file before any sample of this device */
    for (int i = 0; i < d->n; i++) {
        if (pm_emit_def(d->id, (uint32_t)i, d->names[i], units[i], types[i], s->interval_ns) != 0) {
            pm_emit_status(d->id, 1, 1, "PM sampling is off on GPU %u: the recorder's writer did not take the"
                           " metric definitions within 1 s. Tracing continues.", d->id);
            d->state = PM_FAILED;
            release(d, 0);
            return -1;
        }
    }
    TRY(start(d), "starting PM sampling");
    d->state = PM_RUNNING;
    d->setup_ns = wl_monotonic_ns() - t0;
    uint64_t setup_cpu = thread_cpu_ns() - cpu0;
    pm_emit_status(d->id, 0, 1,
                   "PM sampling on GPU %u (%s): %d metric%s every %.0f us, hardware buffer %zu MiB, decoded every %u ms;"
                   " set up in %.1f ms (%.1f ms CPU)",
                   d->id, d->chip, d->n, d->n == 1 ? "" : "s", (double)s->interval_ns / 1000.0,
                   s->hw_buffer_bytes >> 20, s->decode_ms, (double)d->setup_ns / 1e6, (double)setup_cpu / 1e6);
    return 0;
}

/* Reads and hands over the completed samples of the image; returns how many. */
static int take_samples(pm_device *d, int round, int *failed)
{
    CUpti_PmSampling_GetCounterDataInfo_Params gi;
    memset(&gi, 0, sizeof gi);
    gi.structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE;
    gi.pCounterDataImage = d->counter;
    gi.counterDataImageSize = d->counter_size;
    uint64_t t0 = wl_monotonic_ns();
    CUptiResult st = cuptiPmSamplingGetCounterDataInfo(&gi);
    if (st != CUPTI_SUCCESS) {
        off(d, "reading the number of decoded samples", st);
        *failed = 1;
        return 0;
    }
    double values[WL_PM_METRICS_MAX];
    uint64_t newest = 0;
    for (size_t i = 0; i < gi.numCompletedSamples; i++) {
        CUpti_PmSampling_CounterData_GetSampleInfo_Params si;
        memset(&si, 0, sizeof si);
        si.structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE;
        si.pPmSamplingObject = d->obj;
        si.pCounterDataImage = d->counter;
        si.counterDataImageSize = d->counter_size;
        si.sampleIndex = i;
        if ((st = cuptiPmSamplingCounterDataGetSampleInfo(&si)) != CUPTI_SUCCESS) {
            off(d, "reading a sample's time window", st);
            *failed = 1;
            return (int)i;
        }
        uint64_t t1 = wl_monotonic_ns();
        d->ns_times += t1 - t0;
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev;
        memset(&ev, 0, sizeof ev);
        ev.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
        ev.pHostObject = d->host;
        ev.pCounterDataImage = d->counter;
        ev.counterDataImageSize = d->counter_size;
        ev.rangeIndex = i;
        ev.ppMetricNames = d->names;
        ev.numMetrics = (size_t)d->n;
        ev.pMetricValues = values;
        if ((st = cuptiProfilerHostEvaluateToGpuValues(&ev)) != CUPTI_SUCCESS) {
            off(d, "evaluating a sample's metric values", st);
            *failed = 1;
            return (int)i;
        }
        t0 = wl_monotonic_ns();
        d->ns_eval += t0 - t1;
        /* windows follow each other: a hole of more than half an interval is missing samples */
        uint64_t interval = si.endTimestamp > si.startTimestamp ? si.endTimestamp - si.startTimestamp : 0;
        if (d->last_end && interval && si.startTimestamp > d->last_end + interval / 2) {
            uint64_t missing = (si.startTimestamp - d->last_end + interval / 2) / interval;
            d->gap_lost += missing;
            pm_count_gaps(d->id, missing);
            if (d->holes_told < MAX_HOLES_TOLD) {
                d->holes_told++;
                pm_emit_status(d->id, 0, 1,
                               "PM sampling on GPU %u: %llu window%s missing at %.3f ms (found at sample %zu of %zu in"
                               " this decode, %.1f ms after that window; counter-data round %d)",
                               d->id, (unsigned long long)missing, missing == 1 ? "" : "s",
                               (double)(d->last_end - d->first_start) / 1e6, i, (size_t)gi.numCompletedSamples,
                               (double)((int64_t)wl_realtime_ns() - (int64_t)si.startTimestamp) / 1e6, round);
            }
        }
        if (!d->first_start)
            d->first_start = si.startTimestamp;
        if (si.endTimestamp > d->last_end)
            d->last_end = si.endTimestamp;
        newest = si.endTimestamp;
        if (pm_emit_sample(d->id, d->next_index++, si.startTimestamp, si.endTimestamp, values, d->n) != 0)
            d->ring_lost++; /* counted for the session by pm_sampler.c too */
        d->samples++;
    }
    if (gi.numCompletedSamples) {
        int64_t lag = (int64_t)(wl_realtime_ns() - newest);
        if (lag > d->max_lag_ns)
            d->max_lag_ns = lag;
        if (!d->clock_warned && (lag < -CLOCK_FUTURE_NS || lag > CLOCK_PAST_NS)) {
            d->clock_warned = 1;
            pm_emit_status(d->id, 0, 1,
                           "PM sampling on GPU %u: sample times are %+.3f ms from CLOCK_REALTIME when decoded: CUPTI"
                           " did not return them on the activity clock, so samples will not line up with kernels",
                           d->id, (double)-lag / 1e6);
        }
        if ((st = init_counter_data(d)) != CUPTI_SUCCESS) {
            off(d, "re-initialising the counter data", st);
            *failed = 1;
        }
    }
    return (int)gi.numCompletedSamples;
}

/* Decodes until the hardware buffer is empty (or `rounds` full images). -1: torn down. */
static int decode_rounds(pm_device *d, int rounds)
{
    uint64_t cpu0 = thread_cpu_ns();
    int rc = 0;
    for (int r = 0; r < rounds; r++) {
        CUpti_PmSampling_DecodeData_Params dd;
        memset(&dd, 0, sizeof dd);
        dd.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE;
        dd.pPmSamplingObject = d->obj;
        dd.pCounterDataImage = d->counter;
        dd.counterDataImageSize = d->counter_size;
        uint64_t t0 = wl_monotonic_ns();
        CUptiResult st = cuptiPmSamplingDecodeData(&dd);
        d->ns_decode += wl_monotonic_ns() - t0;
        d->decode_calls++;
        int overflow = dd.overflow || st == CUPTI_ERROR_OUT_OF_MEMORY;
        if (overflow) {
            d->overflows++;
            if (!d->overflow_warned) {
                d->overflow_warned = 1;
                pm_emit_status(d->id, 0, 1,
                               "PM sampling on GPU %u: the hardware buffer overflowed (decoding fell behind); the"
                               " samples lost are counted. A larger WARPLENS_PM_HW_BUFFER or a longer --pm-interval"
                               " avoids it", d->id);
            }
        }
        if (st != CUPTI_SUCCESS && st != CUPTI_ERROR_OUT_OF_MEMORY) {
            off(d, "decoding samples", st);
            rc = -1;
            break;
        }
        int failed = 0;
        take_samples(d, r, &failed);
        if (failed) {
            rc = -1;
            break;
        }
        if (st == CUPTI_ERROR_OUT_OF_MEMORY) {
            /* the stream stopped at the overflow: start it again (the hole is counted as a gap) */
            CUptiResult s2 = stop(d);
            if (s2 == CUPTI_SUCCESS)
                s2 = start(d);
            if (s2 != CUPTI_SUCCESS) {
                off(d, "restarting after a hardware buffer overflow", s2);
                rc = -1;
            }
            break;
        }
        if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
            break;
    }
    d->cpu_ns += thread_cpu_ns() - cpu0;
    if (rc != 0)
        release(d, 0);
    return rc;
}

int pm_device_decode(pm_device *d, const pm_settings *s)
{
    (void)s;
    if (d->state != PM_RUNNING)
        return 0;
    return decode_rounds(d, MAX_DECODE_ROUNDS);
}

void pm_device_pause(pm_device *d, const pm_settings *s)
{
    (void)s;
    if (d->state != PM_RUNNING)
        return;
    CUptiResult st = stop(d);
    if (st != CUPTI_SUCCESS) {
        off(d, "stopping PM sampling before the context's destruction", st);
        release(d, 0);
        return;
    }
    if (decode_rounds(d, MAX_DECODE_ROUNDS) == 0)
        d->state = PM_PAUSED;
}

int pm_device_resume(pm_device *d)
{
    if (d->state != PM_PAUSED)
        return 0;
    CUptiResult st = start(d);
    if (st == CUPTI_SUCCESS) {
        d->state = PM_RUNNING;
        d->last_end = 0; /* the time without a context is not a gap */
        return 0;
    }
    /* the object is not enabled anew (see release): sampling stays off on this device */
    off(d, "restarting PM sampling in the device's new context", st);
    release(d, 0);
    return -1;
}

void pm_device_finish(pm_device *d, const pm_settings *s)
{
    if (d->state == PM_RUNNING) {
        CUptiResult st = stop(d);
        if (st != CUPTI_SUCCESS)
            off(d, "stopping PM sampling at exit", st);
        else
            decode_rounds(d, MAX_DECODE_ROUNDS);
    }
    if (d->state == PM_RUNNING || d->state == PM_PAUSED) {
        double n = d->samples ? (double)d->samples : 1;
        pm_emit_status(d->id, 0, 1,
                       "PM sampling on GPU %u: %llu windows of %d metric%s every %.0f us; %llu missing (gaps), %llu"
                       " lost (sample ring full), %llu hardware buffer overflow%s; sampler thread %.1f ms CPU (%.2f us"
                       " per window: decode %.2f, sample times %.2f, evaluation %.2f, image reset %.2f; %llu decode"
                       " calls); decoded up to %.1f ms after a window ended",
                       d->id, (unsigned long long)d->samples, d->n, d->n == 1 ? "" : "s",
                       (double)s->interval_ns / 1000.0, (unsigned long long)d->gap_lost,
                       (unsigned long long)d->ring_lost, (unsigned long long)d->overflows,
                       d->overflows == 1 ? "" : "s", (double)d->cpu_ns / 1e6, (double)d->cpu_ns / n / 1000.0,
                       (double)d->ns_decode / n / 1000.0, (double)d->ns_times / n / 1000.0,
                       (double)d->ns_eval / n / 1000.0, (double)d->ns_reset / n / 1000.0,
                       (unsigned long long)d->decode_calls, (double)d->max_lag_ns / 1e6);
        d->state = PM_IDLE;
    }
    release(d, 1);
}
