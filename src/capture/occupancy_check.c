/* `warplens run --check-occupancy`: for the first launch of each distinct (function, block size,
 * dynamic shared memory) the launch callback asks the driver for its occupancy answer and the
 * function's compiled register count, so `warplens occupancy-check` can compare warplens'
 * calculator with NVIDIA's on every distinct kernel of a real run. Off by default: each new
 * configuration costs a few driver calls on the launching thread. (cupti.h brings the driver
 * API parameter structs.) */
#include "capture/recorder.h"

#include <cuda.h>
#include <cupti.h>
#include <stdlib.h>
#include <string.h>

#define SEEN_SLOTS 8192u /* distinct configurations checked per process; more are skipped */

static int g_enabled;
static _Atomic uint64_t g_seen[SEEN_SLOTS];

void wl_occ_check_init(void)
{
    const char *v = getenv("WARPLENS_CHECK_OCCUPANCY");
    g_enabled = v && *v && strcmp(v, "0") != 0;
}

/* Inserts the key; 1 if it was new. Lock-free: a slot is claimed with one compare-and-swap. */
static int first_time(uint64_t key)
{
    key |= 1; /* 0 marks an empty slot */
    uint32_t i = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & (SEEN_SLOTS - 1);
    for (unsigned probe = 0; probe < 64; probe++, i = (i + 1) & (SEEN_SLOTS - 1)) {
        uint64_t cur = atomic_load_explicit(&g_seen[i], memory_order_relaxed);
        if (cur == key)
            return 0;
        if (cur == 0) {
            if (atomic_compare_exchange_strong(&g_seen[i], &cur, key))
                return 1;
            if (cur == key)
                return 0;
        }
    }
    return 0; /* table crowded: stop checking rather than grow */
}

static int function_registers(CUfunction f)
{
    int regs = -1;
    if (cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS)
        return regs;
    /* runtime launches pass a CUkernel; its attributes are per device */
    CUdevice dev;
    if (cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
        cuKernelGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUkernel)(void *)f, dev) == CUDA_SUCCESS)
        return regs;
    return -1;
}

void wl_occ_check_launch(uint32_t cbid, const void *cbdata)
{
    if (!g_enabled)
        return;
    const CUpti_CallbackData *cd = cbdata;
    CUfunction f = NULL;
    unsigned bx = 0, by = 0, bz = 0, smem = 0;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
        const cuLaunchKernel_params *p = cd->functionParams;
        f = p->f, bx = p->blockDimX, by = p->blockDimY, bz = p->blockDimZ, smem = p->sharedMemBytes;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
        const cuLaunchCooperativeKernel_params *p = cd->functionParams;
        f = p->f, bx = p->blockDimX, by = p->blockDimY, bz = p->blockDimZ, smem = p->sharedMemBytes;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const cuLaunchKernelEx_params *p = cd->functionParams;
        if (!p->config)
            return;
        f = p->f, bx = p->config->blockDimX, by = p->config->blockDimY, bz = p->config->blockDimZ;
        smem = p->config->sharedMemBytes;
        break;
    }
    default:
        return;
    }
    unsigned block = bx * by * bz;
    if (!f || !block)
        return;
    uint64_t key = (uint64_t)(uintptr_t)f * 1000003u ^ ((uint64_t)block << 40) ^ ((uint64_t)smem << 8);
    if (!first_time(key))
        return;
    int active = -1;
    CUresult st = cuOccupancyMaxActiveBlocksPerMultiprocessor(&active, f, (int)block, smem);
    wl_api_event e;
    memset(&e, 0, sizeof e);
    e.kind = WL_API_EVENT_OCC_CHECK;
    e.correlation_id = cd->correlationId;
    e.cbid = block;
    e.tid = smem;
    e.return_value = (uint32_t)st;
    e.start = (uint64_t)(int64_t)active;
    e.end = (uint64_t)(int64_t)function_registers(f);
    wl_mpsc_push(&wl_api_ring, &e);
}
