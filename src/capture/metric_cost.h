/* Where the recorder's hardware-metrics time goes (`--metrics`): the time spent in each kind of
 * CUPTI range-profiler call and inside the profiled driver calls themselves (where CUPTI's kernel
 * replay runs the passes), summed per process and written as STAT records at the end
 * (docs/capture-format.md, `metrics_*`). Any thread; lock-free counters. */
#ifndef WARPLENS_CAPTURE_METRIC_COST_H
#define WARPLENS_CAPTURE_METRIC_COST_H

#include <stdint.h>

enum {
    WL_MC_CONFIGURE = 0, /* counter-data image initialised, SetConfig */
    WL_MC_START,         /* Start */
    WL_MC_STOP,          /* Stop */
    WL_MC_DECODE,        /* DecodeData, GetCounterDataInfo */
    WL_MC_EVALUATE,      /* EvaluateToGpuValues for every range of a batch */
    WL_MC_TIE,           /* ranges tied to calls and handed to the writer */
    WL_MC_KERNEL_CALL,   /* a profiled kernel launch, entry to exit: the replay passes run here */
    WL_MC_OTHER_CALL,    /* a profiled copy or graph launch, likewise */
    WL_MC_SETUP_DEVICE,  /* a context's set-up: profiler and device support, counter availability */
    WL_MC_SETUP_HOST,    /* ... the metric host object, the names checked, the configuration built */
    WL_MC_SETUP_ENABLE,  /* ... the range profiler enabled, the counter-data image sized and allocated */
    WL_MC_COUNT
};

void wl_mcost_add(int phase, uint64_t ns);
/* the size of a context's counter-data image (the largest is kept: `metrics_image_bytes`) */
void wl_mcost_note_image(uint64_t bytes);
/* Writes every phase seen as `metrics_<phase>_ns`, `metrics_<phase>_count` and, for the calls,
 * `metrics_<phase>_max_ns` (calls, Start, Stop), and `metrics_image_bytes`, through `write` (the
 * writer's STAT records). */
void wl_mcost_write(void (*write)(const char *name, uint64_t value));

#endif
