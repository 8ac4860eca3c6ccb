/* CUPTI results in words, shared by the parts of the recorder that take the GPU's profiling
 * hardware (range profiler, PC sampling, PM sampling): CUPTI's own message, and which of the
 * failures a user can act on it is, with the remedy for the ones that read the same everywhere. */
#ifndef WARPLENS_CAPTURE_CUPTI_ERRORS_H
#define WARPLENS_CAPTURE_CUPTI_ERRORS_H

#include <cupti.h>

typedef enum wl_cupti_failure {
    WL_CUPTI_FAIL_OTHER = 0,   /* see CUPTI's message */
    WL_CUPTI_FAIL_PERMISSION,  /* counters restricted to admin users */
    WL_CUPTI_FAIL_BUSY,        /* another tool holds the profiling hardware */
    WL_CUPTI_FAIL_UNSUPPORTED, /* GPU or configuration (vGPU, MIG, confidential computing, WSL, ...) */
    WL_CUPTI_FAIL_MEMORY,
} wl_cupti_failure;

/* CUPTI's message for st, never NULL. */
const char *wl_cupti_result_text(CUptiResult st);
wl_cupti_failure wl_cupti_failure_of(CUptiResult st);
/* The remedies that read the same for every feature; the others depend on the feature. */
const char *wl_cupti_permission_remedy(void);
const char *wl_cupti_busy_remedy(void);

#endif
