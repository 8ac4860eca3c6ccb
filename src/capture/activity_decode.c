/* CUPTI activity records -> capture records, on the writer thread. Field meanings are kept as
 * CUPTI defines them (docs/capture-format.md); derived values are computed later by the store. */
#include "capture/cupti_errors.h"
#include "capture/recorder.h"
#include "capture/inkernel_capture.h"

#include <cupti.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"

static void put_kernel(const CUpti_ActivityKernel10 *k)
{
    wlcap_kernel r;
    memset(&r, 0, sizeof r);
    r.start = k->start;
    r.end = k->end;
    r.queued = k->queued;
    r.submitted = k->submitted;
    r.completed = k->completed;
    r.graph_node_id = k->graphNodeId;
    r.local_mem_total = k->localMemoryTotal_v2;
    r.grid_id = k->gridId;
    r.correlation_id = k->correlationId;
    r.device_id = k->deviceId;
    r.context_id = k->contextId;
    r.stream_id = k->streamId;
    r.graph_id = k->graphId;
    r.grid_x = k->gridX, r.grid_y = k->gridY, r.grid_z = k->gridZ;
    r.block_x = k->blockX, r.block_y = k->blockY, r.block_z = k->blockZ;
    r.cluster_x = k->clusterX, r.cluster_y = k->clusterY, r.cluster_z = k->clusterZ;
    r.cluster_sched_policy = k->clusterSchedulingPolicy;
    r.static_smem = k->staticSharedMemory;
    r.dynamic_smem = k->dynamicSharedMemory;
    r.smem_executed = k->sharedMemoryExecuted;
    r.smem_limit_config = (uint32_t)k->shmemLimitConfig;
    r.local_mem_per_thread = k->localMemoryPerThread;
    r.max_potential_cluster_size = k->maxPotentialClusterSize;
    r.max_active_clusters = k->maxActiveClusters;
    r.name_str = wl_capw_string(k->name);
    r.registers_per_thread = k->registersPerThread;
    r.launch_type = k->launchType;
    r.is_device_launched = k->isDeviceLaunched;
    r.cache_config_requested = k->cacheConfig.config.requested;
    r.cache_config_executed = k->cacheConfig.config.executed;
    r.smem_config = k->sharedMemoryConfig;
    r.carveout_requested = k->isSharedMemoryCarveoutRequested ? k->sharedMemoryCarveoutRequested : 0xff;
    wl_capw_record(WLCAP_KERNEL, &r, sizeof r);
}

/* The fields ordinary and peer copy records share (same names in both CUPTI structs). */
#define COPY_COMMON(r, m)                                                                          \
    do {                                                                                           \
        memset(&(r), 0, sizeof(r));                                                                \
        (r).bytes = (m)->bytes;                                                                    \
        (r).start = (m)->start;                                                                    \
        (r).end = (m)->end;                                                                        \
        (r).graph_node_id = (m)->graphNodeId;                                                      \
        (r).device_id = (m)->deviceId;                                                             \
        (r).context_id = (m)->contextId;                                                           \
        (r).stream_id = (m)->streamId;                                                             \
        (r).correlation_id = (m)->correlationId;                                                   \
        (r).graph_id = (m)->graphId;                                                               \
        (r).copy_kind = (m)->copyKind;                                                             \
        (r).src_kind = (m)->srcKind;                                                               \
        (r).dst_kind = (m)->dstKind;                                                               \
        (r).flags = (m)->flags;                                                                    \
    } while (0)

static void put_memcpy(const CUpti_ActivityMemcpy6 *m)
{
    wlcap_memcpy r;
    COPY_COMMON(r, m);
    r.src_device = r.dst_device = m->deviceId;
    wl_capw_record(WLCAP_MEMCPY, &r, sizeof r);
}

static void put_peer_copy(const CUpti_ActivityMemcpyPtoP4 *m)
{
    wlcap_memcpy r;
    COPY_COMMON(r, m);
    r.src_device = m->srcDeviceId;
    r.dst_device = m->dstDeviceId;
    r.is_peer = 1;
    wl_capw_record(WLCAP_MEMCPY, &r, sizeof r);
}

static void put_memset(const CUpti_ActivityMemset4 *m)
{
    wlcap_memset r;
    memset(&r, 0, sizeof r);
    r.bytes = m->bytes;
    r.start = m->start;
    r.end = m->end;
    r.graph_node_id = m->graphNodeId;
    r.device_id = m->deviceId;
    r.context_id = m->contextId;
    r.stream_id = m->streamId;
    r.correlation_id = m->correlationId;
    r.graph_id = m->graphId;
    r.value = m->value;
    r.memory_kind = m->memoryKind;
    r.flags = m->flags;
    wl_capw_record(WLCAP_MEMSET, &r, sizeof r);
}

static void put_api(const CUpti_ActivityAPI *a, uint8_t domain)
{
    wlcap_api r;
    memset(&r, 0, sizeof r);
    r.start = a->start;
    r.end = a->end;
    r.cbid = a->cbid;
    r.tid = a->threadId;
    r.correlation_id = a->correlationId;
    r.return_value = a->returnValue;
    r.domain = domain;
    wl_threads_seen(a->threadId);
    wl_capw_record(WLCAP_API, &r, sizeof r);
}

static void put_marker(const CUpti_ActivityMarker2 *m)
{
    wlcap_marker r;
    memset(&r, 0, sizeof r);
    r.timestamp = m->timestamp;
    r.id = m->id;
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START)
        r.kind = WLCAP_MARK_START;
    else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
        r.kind = WLCAP_MARK_END;
    else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS)
        r.kind = WLCAP_MARK_INSTANT;
    else
        return; /* sync-object markers are not ranges */
    if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        r.tid = m->objectId.pt.threadId;
        wl_threads_seen(r.tid);
    }
    r.name_str = wl_capw_string(m->name);
    r.domain_str = wl_capw_string(m->domain);
    wl_capw_record(WLCAP_MARKER, &r, sizeof r);
}

static void put_extcorr(const CUpti_ActivityExternalCorrelation *e)
{
    wlcap_extcorr r = {e->externalId, e->correlationId, (uint32_t)e->externalKind};
    wl_capw_record(WLCAP_EXTCORR, &r, sizeof r);
}

/* The range profiler launches kernels of its own under the application's correlation ids (WaitNs
 * before each range without replay, tools_memcmp around kernel replay): they are CUPTI's, not the
 * program's, and would make every profiled launch look like two kernels. Matched as plain or
 * Itanium-mangled names ("_Z6WaitNs..."). */
static int is_profiler_kernel(const char *name)
{
    static const struct { const char *plain, *mangled; } own[] = {
        {"WaitNs", "_Z6WaitNs"},
        {"tools_memcmp", "_Z12tools_memcmp"},
    };
    if (!name)
        return 0;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (!strcmp(name, own[i].plain) || !strncmp(name, own[i].mangled, strlen(own[i].mangled)))
            return 1;
    return 0;
}

static void put_program_kernel(const CUpti_ActivityKernel10 *k)
{
    if (wl_metrics_enabled() && is_profiler_kernel(k->name)) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "metrics: the range profiler's own kernels (%s, ...) are kept out of the session", k->name);
        return;
    }
    put_kernel(k);
}

void wl_decode_activity_buffer(uint8_t *buf, size_t valid)
{
    CUpti_Activity *rec = NULL;
    for (;;) {
        CUptiResult st = cuptiActivityGetNextRecord(buf, valid, &rec);
        if (st == CUPTI_ERROR_MAX_LIMIT_REACHED)
            break;
        if (st != CUPTI_SUCCESS) {
            static atomic_flag once = ATOMIC_FLAG_INIT;
            const char *msg = wl_cupti_result_text(st);
            wl_log_once(&once, "CUPTI could not read an activity buffer (%s); its remaining records are lost",
                        msg);
            break;
        }
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            if (!wl_internal_corr_is(((const CUpti_ActivityKernel10 *)rec)->correlationId))
                put_program_kernel((const CUpti_ActivityKernel10 *)rec);
            else /* the recorder's own kernel: kept out of the session; calibrations use its times */
                wl_calib_note(((const CUpti_ActivityKernel10 *)rec)->correlationId,
                              ((const CUpti_ActivityKernel10 *)rec)->start,
                              ((const CUpti_ActivityKernel10 *)rec)->end);
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            if (!wl_internal_corr_is(((const CUpti_ActivityMemcpy6 *)rec)->correlationId))
                put_memcpy((const CUpti_ActivityMemcpy6 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY2:
            put_peer_copy((const CUpti_ActivityMemcpyPtoP4 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            put_memset((const CUpti_ActivityMemset4 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_DRIVER:
            put_api((const CUpti_ActivityAPI *)rec, WLCAP_API_DRIVER);
            break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
            put_api((const CUpti_ActivityAPI *)rec, WLCAP_API_RUNTIME);
            break;
        case CUPTI_ACTIVITY_KIND_MARKER:
            put_marker((const CUpti_ActivityMarker2 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
            put_extcorr((const CUpti_ActivityExternalCorrelation *)rec);
            break;
        default:
            break; /* MARKER_DATA and others carry nothing we store yet */
        }
    }
}

void wl_decode_report_dropped(void)
{
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped) {
        wlcap_dropped r = {dropped, WLCAP_DROP_CUPTI, 0, 0, 0};
        wl_capw_record(WLCAP_DROPPED, &r, sizeof r);
    }
}
