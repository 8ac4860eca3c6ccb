/* A fake of the CUPTI PC-sampling API for tests without a GPU (pc_sampling_driver.c): the entry
 * points src/capture/pc_sampling.c calls, behaving as the CUDA 13.0 header documents them. Each
 * fake context has a queue of PC records "its kernels produced" (fake_pcs_produce); GetData hands
 * out up to collectNumPcs of them and says how many remain; Disable leaves the context's late
 * records in the configuration buffer. Function names are malloc'd as CUPTI's are, either one
 * copy per GetData call (FAKE_PCS_NAMES=fresh) or one per function for the whole run (shared),
 * so that ASan/LSan see a double free or a leak in either case. Checks what the recorder
 * configures and records it for the driver. */
#include "fake_cupti_pcs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PENDING 8192
#define MAX_FUNCS 8

typedef struct fake_pc {
    uint32_t corr, function;
    uint32_t n;
    uint32_t index[4], samples[4];
} fake_pc;

typedef struct fake_ctx {
    int enabled, configured;
    CUpti_PCSamplingData *config;
    fake_pc pending[MAX_PENDING];
    size_t npending, head;
    fake_pc late[4]; /* left in the configuration buffer at Disable */
    size_t nlate;
    int oom_next;    /* the next GetData reports a full hardware buffer */
    uint64_t dropped_next;
} fake_ctx;

static fake_ctx g_ctx[FAKE_PCS_CONTEXTS];
static char *g_shared_names[MAX_FUNCS];
static const char *const FUNCS[MAX_FUNCS] = {"fake_chase", "fake_fma", "f2", "f3", "f4", "f5", "f6", "f7"};
static const uint32_t REASON_INDEX[4] = {2, 5, 7, 9};
static const char *const REASON_NAME[4] = {
    "smsp__pcsamp_warps_issue_stalled_long_scoreboard", "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
    "smsp__pcsamp_warps_issue_stalled_selected", "smsp__pcsamp_warps_issue_stalled_wait"};
fake_pcs_state fake_pcs;

static fake_ctx *ctx_of(CUcontext c)
{
    uintptr_t i = (uintptr_t)c;
    return i >= 1 && i <= FAKE_PCS_CONTEXTS ? &g_ctx[i - 1] : NULL;
}

static void fail(const char *what)
{
    fprintf(stderr, "fake CUPTI: %s\n", what);
    fake_pcs.misuse++;
}

void fake_pcs_produce(CUcontext c, uint32_t corr, uint32_t function, uint32_t npcs, uint32_t n, const uint32_t *index,
                      const uint32_t *samples)
{
    fake_ctx *x = ctx_of(c);
    for (uint32_t p = 0; x && p < npcs && x->npending < MAX_PENDING; p++) {
        fake_pc *pc = &x->pending[x->npending++];
        pc->corr = corr, pc->function = function, pc->n = n;
        memcpy(pc->index, index, n * sizeof *index);
        memcpy(pc->samples, samples, n * sizeof *samples);
    }
}

void fake_pcs_late(CUcontext c, uint32_t corr, uint32_t index, uint32_t samples)
{
    fake_ctx *x = ctx_of(c);
    if (x && x->nlate < 4)
        x->late[x->nlate++] = (fake_pc){corr, 1, 1, {index, 0, 0, 0}, {samples, 0, 0, 0}};
}

void fake_pcs_oom_next(CUcontext c) { ctx_of(c)->oom_next = 1; }
void fake_pcs_dropped_next(CUcontext c, uint64_t n) { ctx_of(c)->dropped_next = n; }

static char *name_of(uint32_t function, char **batch)
{
    if (fake_pcs.fresh_names) {
        if (!batch[function])
            batch[function] = strdup(FUNCS[function]);
        return batch[function];
    }
    if (!g_shared_names[function])
        g_shared_names[function] = strdup(FUNCS[function]);
    return g_shared_names[function];
}

static void fill(CUpti_PCSamplingPCData *dst, const fake_pc *src, char **batch)
{
    dst->cubinCrc = 0xC0FFEE;
    dst->pcOffset = 16 * src->function;
    dst->functionIndex = src->function;
    dst->functionName = name_of(src->function, batch);
    dst->correlationId = src->corr;
    dst->stallReasonCount = src->n;
    for (uint32_t k = 0; k < src->n; k++) {
        dst->stallReason[k].pcSamplingStallReasonIndex = src->index[k];
        dst->stallReason[k].samples = src->samples[k];
    }
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    *str = result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
           : result == CUPTI_ERROR_OUT_OF_MEMORY         ? "CUPTI_ERROR_OUT_OF_MEMORY"
                                                         : "fake CUPTI error";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
    if (!ctx_of(context))
        return CUPTI_ERROR_INVALID_CONTEXT;
    *deviceId = (uint32_t)((uintptr_t)context - 1);
    return CUPTI_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    *pctx = NULL;
    return CUDA_ERROR_NOT_INITIALIZED;
}

CUptiResult cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *p)
{
    fake_ctx *x = ctx_of(p->ctx);
    if (p->size != CUpti_PCSamplingEnableParamsSize || !x)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (fake_pcs.deny)
        return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    if (x->enabled)
        fail("enabled twice");
    x->enabled = 1;
    fake_pcs.enables++;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
    fake_ctx *x = ctx_of(p->ctx);
    if (p->size != CUpti_PCSamplingGetNumStallReasonsParamsSize || !x || !x->enabled || !p->numStallReasons)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *p->numStallReasons = 4;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
    fake_ctx *x = ctx_of(p->ctx);
    if (p->size != CUpti_PCSamplingGetStallReasonsParamsSize || !x || !x->enabled || p->numStallReasons != 4 ||
        !p->stallReasonIndex || !p->stallReasons)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (int i = 0; i < 4; i++) {
        p->stallReasonIndex[i] = REASON_INDEX[i];
        snprintf(p->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s", REASON_NAME[i]);
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingSetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *p)
{
    fake_ctx *x = ctx_of(p->ctx);
    if (p->size != CUpti_PCSamplingConfigurationInfoParamsSize || !x || !x->enabled)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numAttributes; i++) {
        CUpti_PCSamplingConfigurationInfo *a = &p->pPCSamplingConfigurationInfo[i];
        a->attributeStatus = CUPTI_SUCCESS;
        switch (a->attributeType) {
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
            fake_pcs.mode = (int)a->attributeData.collectionModeData.collectionMode;
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD:
            fake_pcs.period = (int)a->attributeData.samplingPeriodData.samplingPeriod;
            if (fake_pcs.period < 5 || fake_pcs.period > 31)
                a->attributeStatus = CUPTI_ERROR_INVALID_PARAMETER;
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON:
            fake_pcs.reasons = (int)a->attributeData.stallReasonData.stallReasonCount;
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER:
            x->config = a->attributeData.samplingDataBufferData.samplingDataBuffer;
            break;
        default: a->attributeStatus = CUPTI_ERROR_INVALID_OPERATION; break;
        }
        if (a->attributeStatus != CUPTI_SUCCESS)
            return CUPTI_ERROR_INVALID_PARAMETER;
    }
    if (!x->config || x->config->size != sizeof(CUpti_PCSamplingData) || !x->config->collectNumPcs ||
        !x->config->pPcData)
        fail("no usable configuration buffer");
    x->configured = 1;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *p)
{
    fake_ctx *x = ctx_of(p->ctx);
    CUpti_PCSamplingData *d = p->pcSamplingData;
    if (p->size != CUpti_PCSamplingGetDataParamsSize || !x || !d || !x->configured)
        return CUPTI_ERROR_INVALID_OPERATION;
    if (d == x->config || d->size != sizeof *d || !d->pPcData || !d->collectNumPcs)
        fail("GetData into an unusable buffer");
    fake_pcs.getdata_calls++;
    if (x->oom_next) {
        x->oom_next = 0;
        d->totalNumPcs = 0;
        d->hardwareBufferFull = 1;
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    char *batch[MAX_FUNCS] = {0};
    size_t n = 0;
    while (x->head < x->npending && n < d->collectNumPcs)
        fill(&d->pPcData[n++], &x->pending[x->head++], batch);
    d->totalNumPcs = n;
    d->remainingNumPcs = x->npending - x->head;
    d->droppedSamples = x->dropped_next;
    x->dropped_next = 0;
    if (x->head == x->npending)
        x->head = x->npending = 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *p)
{
    fake_ctx *x = ctx_of(p->ctx);
    if (p->size != CUpti_PCSamplingDisableParamsSize || !x || !x->enabled)
        return CUPTI_ERROR_INVALID_OPERATION;
    char *batch[MAX_FUNCS] = {0};
    if (x->config && x->nlate) {
        for (size_t i = 0; i < x->nlate && i < x->config->collectNumPcs; i++)
            fill(&x->config->pPcData[i], &x->late[i], batch);
        x->config->totalNumPcs = x->nlate;
    }
    if (x->npending - x->head)
        fail("disabled with records never collected");
    x->enabled = x->configured = 0;
    fake_pcs.disables++;
    return CUPTI_SUCCESS;
}
