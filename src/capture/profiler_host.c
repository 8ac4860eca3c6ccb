/* See profiler_host.h. */
#include "capture/profiler_host.h"

#include <cuda.h>
#include <cupti_target.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cupti_errors.h"
#include "common/log.h"

CUptiResult wl_profiler_host_new(CUpti_ProfilerType type, const char *chip, const uint8_t *availability, void **host)
{
    CUpti_Profiler_Host_Initialize_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
    p.profilerType = type;
    p.pChipName = chip;
    p.pCounterAvailabilityImage = availability;
    CUptiResult st = cuptiProfilerHostInitialize(&p);
    *host = st == CUPTI_SUCCESS ? p.pHostObject : NULL;
    return st;
}

void wl_profiler_host_free(void *host, const char *who)
{
    if (!host)
        return;
    CUpti_Profiler_Host_Deinitialize_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
    p.pHostObject = host;
    CUptiResult st = cuptiProfilerHostDeinitialize(&p);
    if (st != CUPTI_SUCCESS) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "%s: freeing the profiler host object failed (%s)", who, wl_cupti_result_text(st));
    }
}

CUptiResult wl_profiler_config(void *host, const char *const *names, size_t n, uint8_t **image, size_t *size)
{
    *image = NULL;
    *size = 0;
    CUpti_Profiler_Host_ConfigAddMetrics_Params am;
    memset(&am, 0, sizeof am);
    am.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
    am.pHostObject = host;
    am.ppMetricNames = (const char **)(uintptr_t)names;
    am.numMetrics = n;
    CUptiResult st = cuptiProfilerHostConfigAddMetrics(&am);
    if (st != CUPTI_SUCCESS)
        return st;
    CUpti_Profiler_Host_GetConfigImageSize_Params cs;
    memset(&cs, 0, sizeof cs);
    cs.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
    cs.pHostObject = host;
    if ((st = cuptiProfilerHostGetConfigImageSize(&cs)) != CUPTI_SUCCESS)
        return st;
    uint8_t *img = malloc(cs.configImageSize ? cs.configImageSize : 1);
    if (!img)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    CUpti_Profiler_Host_GetConfigImage_Params gi;
    memset(&gi, 0, sizeof gi);
    gi.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
    gi.pHostObject = host;
    gi.configImageSize = cs.configImageSize;
    gi.pConfigImage = img;
    if ((st = cuptiProfilerHostGetConfigImage(&gi)) != CUPTI_SUCCESS) {
        free(img);
        return st;
    }
    *image = img;
    *size = cs.configImageSize;
    return CUPTI_SUCCESS;
}

CUptiResult wl_profiler_passes(const uint8_t *image, size_t size, size_t *passes)
{
    CUpti_Profiler_Host_GetNumOfPasses_Params np;
    memset(&np, 0, sizeof np);
    np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
    np.configImageSize = size;
    np.pConfigImage = (uint8_t *)(uintptr_t)image;
    CUptiResult st = cuptiProfilerHostGetNumOfPasses(&np);
    *passes = np.numOfPasses;
    return st;
}

static const char *unsupported_reason(const CUpti_Profiler_DeviceSupported_Params *ds)
{
    return ds->architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED          ? "GPU architecture"
           : ds->vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED                ? "vGPU"
           : ds->confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "confidential computing"
           : ds->cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED                 ? "CMP device"
           : ds->wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED                 ? "WSL"
           : ds->sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED                 ? "SLI"
                                                                               : "configuration";
}

static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_initialised; /* under g_init_lock */

CUptiResult wl_profiler_device_begin(uint32_t device, CUpti_Profiler_API api, char *chip, size_t chip_size, char *step,
                                     size_t step_size)
{
    CUptiResult st = CUPTI_SUCCESS;
    pthread_mutex_lock(&g_init_lock);
    if (!g_initialised) { /* not at injection: it may initialise CUDA */
        CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE, NULL};
        st = cuptiProfilerInitialize(&ip);
        g_initialised = st == CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&g_init_lock);
    if (st != CUPTI_SUCCESS) {
        snprintf(step, step_size, "initialising the CUPTI profiler");
        return st;
    }
    CUdevice cu;
    if (cuDeviceGet(&cu, (int)device) == CUDA_SUCCESS) {
        CUpti_Profiler_DeviceSupported_Params ds;
        memset(&ds, 0, sizeof ds);
        ds.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
        ds.cuDevice = cu;
        ds.api = api;
        if (cuptiProfilerDeviceSupported(&ds) == CUPTI_SUCCESS && ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
            snprintf(step, step_size, "the support check (unsupported: %s)", unsupported_reason(&ds));
            return CUPTI_ERROR_NOT_SUPPORTED;
        }
    }
    CUpti_Device_GetChipName_Params cn;
    memset(&cn, 0, sizeof cn);
    cn.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
    cn.deviceIndex = device;
    if ((st = cuptiDeviceGetChipName(&cn)) != CUPTI_SUCCESS) {
        snprintf(step, step_size, "reading the chip name");
        return st;
    }
    snprintf(chip, chip_size, "%s", cn.pChipName ? cn.pChipName : "");
    return CUPTI_SUCCESS;
}
