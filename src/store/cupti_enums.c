/* CUPTI enum values -> names (see cupti_enums.h). The values come from the toolkit's headers so
 * they track CUPTI; the store needs no CUPTI library at run time. */
#include "store/cupti_enums.h"

#include <cupti_activity.h>
#include <string.h>

const char *wl_copy_kind_name(uint8_t kind, int is_peer)
{
    if (is_peer)
        return "PtoP";
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
    }
}

const char *wl_memory_kind_name(uint32_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "device_static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "managed_static";
    default: return "unknown";
    }
}

const char *wl_sync_type_name(uint32_t type)
{
    switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "stream_wait_event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "stream";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "context";
    default: return "unknown";
    }
}

const char *wl_launch_type_name(uint32_t type)
{
    switch (type) {
    case CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR: return "regular";
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE: return "cooperative";
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE: return "cooperative_multi_device";
    default: return "other";
    }
}

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

const char *wl_api_category(const char *name)
{
    while (*name == '_')
        name++; /* __cudaLaunchKernel: what <<<>>> compiles to */
    if (starts(name, "cuGraphLaunch") || starts(name, "cudaGraphLaunch"))
        return "graph_launch";
    if (starts(name, "cuLaunch") || starts(name, "cudaLaunch"))
        return "launch";
    if (starts(name, "cuMemcpy") || starts(name, "cudaMemcpy"))
        return "memcpy";
    if (starts(name, "cuMemset") || starts(name, "cudaMemset"))
        return "memset";
    if (strstr(name, "Synchronize") || strstr(name, "StreamWaitEvent"))
        return "sync";
    if (starts(name, "cuMem") || starts(name, "cudaMalloc") || starts(name, "cudaFree") || starts(name, "cudaHost"))
        return "alloc";
    return "other";
}
