/* See cupti_errors.h. */
#include "capture/cupti_errors.h"

const char *wl_cupti_result_text(CUptiResult st)
{
    const char *msg = NULL;
    if (cuptiGetResultString(st, &msg) != CUPTI_SUCCESS || !msg)
        return "unknown CUPTI error";
    return msg;
}

typedef enum failure {
    WL_CUPTI_FAIL_OTHER = 0,   /* see CUPTI's message */
    WL_CUPTI_FAIL_PERMISSION,  /* counters restricted to admin users */
    WL_CUPTI_FAIL_BUSY,        /* another tool holds the profiling hardware */
    WL_CUPTI_FAIL_UNSUPPORTED, /* GPU or configuration (vGPU, MIG, confidential computing, WSL, ...) */
    WL_CUPTI_FAIL_MEMORY,
} failure;

static failure failure_of(CUptiResult st)
{
    switch (st) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES: return WL_CUPTI_FAIL_PERMISSION;
    case CUPTI_ERROR_HARDWARE_BUSY: return WL_CUPTI_FAIL_BUSY;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED: return WL_CUPTI_FAIL_UNSUPPORTED;
    case CUPTI_ERROR_OUT_OF_MEMORY: return WL_CUPTI_FAIL_MEMORY;
    default: return WL_CUPTI_FAIL_OTHER;
    }
}

const char *wl_cupti_remedy(CUptiResult st, const char *unsupported, const char *out_of_memory)
{
    switch (failure_of(st)) {
    case WL_CUPTI_FAIL_PERMISSION:
        return "no permission to read GPU performance counters: run as root, or set the nvidia driver option"
               " NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
    case WL_CUPTI_FAIL_BUSY: return wl_cupti_busy_remedy();
    case WL_CUPTI_FAIL_UNSUPPORTED: return unsupported;
    case WL_CUPTI_FAIL_MEMORY:
        if (out_of_memory)
            return out_of_memory;
        break;
    default: break;
    }
    return "see the CUPTI message";
}

const char *wl_cupti_busy_remedy(void)
{
    return "the GPU's profiling hardware is held by another tool (DCGM profiling, Nsight Compute or another"
           " profiler): pause it (e.g. `dcgmi profile --pause`) and run again";
}
