/* Internals of PM sampling (`warplens run --pm-sampling`), shared by its two files:
 *  - pm_sampler.c: the settings from the environment, the sampler thread, which devices have a
 *    live context, and the hand-over to the writer thread (a ring of fixed-size items);
 *  - pm_device.c: CUPTI's PM sampling and profiler-host calls for one device (configuration,
 *    periodic decode and evaluation, pause/resume around a context's destruction, teardown).
 * Everything in pm_device.c runs on the sampler thread, never on an application thread. */
#ifndef WARPLENS_CAPTURE_PM_SAMPLER_H
#define WARPLENS_CAPTURE_PM_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "capfile/capfile.h"
#include "capfile/pm_metric_spec.h"

#define PM_MAX_DEVICES 64 /* CUDA ordinals followed (bits of a u64) */

typedef struct pm_settings {
    uint64_t interval_ns;        /* GPU-time trigger interval */
    size_t hw_buffer_bytes;      /* CUPTI's hardware buffer per device */
    unsigned decode_ms;          /* how often the sampler thread decodes */
    uint32_t max_samples;        /* counter-data image capacity (samples per decode round) */
    int n;                       /* requested metrics */
    const char *names[WL_PM_METRICS_MAX];
    int from_preset[WL_PM_METRICS_MAX]; /* 1: the name came from a preset only */
} pm_settings;

enum pm_state { PM_IDLE = 0, PM_RUNNING, PM_PAUSED, PM_FAILED };

typedef struct pm_device {
    uint32_t id;
    int state;
    void *obj;                   /* CUpti_PmSampling_Object */
    void *host;                  /* CUpti_Profiler_Host_Object */
    uint8_t *availability;       /* counter availability image: the host object refers to it */
    uint8_t *config;             /* config image: CUPTI keeps a pointer to it after SetConfig */
    uint8_t *counter;            /* counter-data image, reset after each decode */
    uint8_t *blank;              /* the image as CUPTI initialised it: each reset copies it back */
    size_t config_size, counter_size;
    char chip[64];
    int n;                       /* metrics sampled on this device */
    const char *names[WL_PM_METRICS_MAX];
    uint64_t next_index;         /* index of the next sample (per device, across pauses) */
    uint64_t last_end;           /* end of the last sample (gap detection), 0 before the first */
    uint64_t samples, gap_lost, ring_lost, overflows, cpu_ns;
    int64_t max_lag_ns;          /* CLOCK_REALTIME at decode minus the newest sample's end */
    int clock_warned, overflow_warned;
    int started;                 /* cuptiPmSamplingStart succeeded, no Stop since */
    unsigned holes_told;
    uint64_t first_start;        /* start of the first window (hole positions are told from it) */
    uint64_t ns_decode, ns_times, ns_eval, ns_reset, decode_calls; /* where the sampler's time goes */
    uint64_t setup_ns;           /* how long configuring took */
} pm_device;

/* ---- pm_device.c (sampler thread) ---- */
/* Configures and starts sampling; 0, or -1 after a status line saying why it is off. */
int pm_device_setup(pm_device *d, const pm_settings *s);
/* Decodes and hands over every completed sample; -1 when the device had to be torn down. */
int pm_device_decode(pm_device *d, const pm_settings *s);
/* Stops sampling and decodes what is left (the device's last context is being destroyed). */
void pm_device_pause(pm_device *d, const pm_settings *s);
/* Starts again after a pause (a new context); -1 when it could not (sampling then stays off there). */
int pm_device_resume(pm_device *d);
/* Stop, last decode, disable, free; the final status line with the counts. */
void pm_device_finish(pm_device *d, const pm_settings *s);

/* ---- pm_sampler.c: the hand-over to the writer (sampler thread) ---- */
/* 0, or -1 when the ring stayed full (the sample is counted as lost). */
int pm_emit_sample(uint32_t device, uint64_t index, uint64_t start, uint64_t end, const double *values, int n);
/* Metric definitions must reach the file before samples: waits for room. 0, or -1. */
int pm_emit_def(uint32_t device, uint32_t index, const char *name, const char *unit, int metric_type,
                uint64_t interval_ns);
/* A status line of the device: off = 1 when it says why sampling is off there, 0 for information;
 * also logged (one line on stderr) when `log` is set. */
void pm_emit_status(uint32_t device, int off, int log, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Samples missing from the hardware's sequence (gaps between windows). */
void pm_count_gaps(uint32_t device, uint64_t n);

#endif
