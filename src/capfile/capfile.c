/* Small shared pieces of the capture format: record sizes and names, the record-mask parser. */
#include "capfile/capfile.h"

#include <stdio.h>
#include <string.h>

uint32_t wlcap_payload_size(uint16_t type)
{
    switch (type) {
    case WLCAP_PROCESS: return sizeof(wlcap_process);
    case WLCAP_DEVICE: return sizeof(wlcap_device);
    case WLCAP_KERNEL: return sizeof(wlcap_kernel);
    case WLCAP_MEMCPY: return sizeof(wlcap_memcpy);
    case WLCAP_MEMSET: return sizeof(wlcap_memset);
    case WLCAP_API: return sizeof(wlcap_api);
    case WLCAP_SYNC: return sizeof(wlcap_sync);
    case WLCAP_MARKER: return sizeof(wlcap_marker);
    case WLCAP_EXTCORR: return sizeof(wlcap_extcorr);
    case WLCAP_SCOPE: return sizeof(wlcap_scope);
    case WLCAP_THREAD: return sizeof(wlcap_thread);
    case WLCAP_DROPPED: return sizeof(wlcap_dropped);
    case WLCAP_END: return sizeof(wlcap_end);
    case WLCAP_API_NAME: return sizeof(wlcap_api_name);
    case WLCAP_OCC_CHECK: return sizeof(wlcap_occ_check);
    case WLCAP_ANNOTATION: return sizeof(wlcap_annotation);
    case WLCAP_METRIC_DEF: return sizeof(wlcap_metric_def);
    case WLCAP_METRIC_RANGE: return sizeof(wlcap_metric_range);
    case WLCAP_DEVICE_SAMPLE: return sizeof(wlcap_device_sample);
    case WLCAP_PM_METRIC_DEF: return sizeof(wlcap_pm_metric_def);
    case WLCAP_PM_SAMPLE: return sizeof(wlcap_pm_sample);
    case WLCAP_STALL_REASON: return sizeof(wlcap_stall_reason);
    case WLCAP_KERNEL_STALL: return sizeof(wlcap_kernel_stall);
    case WLCAP_CAPTURE_RANGE: return sizeof(wlcap_capture_range);
    case WLCAP_STAT: return sizeof(wlcap_stat);
    case WLCAP_ATTR: return sizeof(wlcap_attr);
    case WLCAP_METRIC_OWNER: return sizeof(wlcap_metric_owner);
    default: return 0;
    }
}

const char *wlcap_type_name(uint16_t type)
{
    static const char *const names[WLCAP_TYPE_COUNT] = {
        [WLCAP_STRING] = "string", [WLCAP_PROCESS] = "process", [WLCAP_DEVICE] = "device",
        [WLCAP_KERNEL] = "kernel", [WLCAP_MEMCPY] = "memcpy",   [WLCAP_MEMSET] = "memset",
        [WLCAP_API] = "api",       [WLCAP_SYNC] = "sync",       [WLCAP_MARKER] = "marker",
        [WLCAP_EXTCORR] = "extcorr", [WLCAP_SCOPE] = "scope",   [WLCAP_THREAD] = "thread",
        [WLCAP_DROPPED] = "dropped", [WLCAP_END] = "end",       [WLCAP_API_NAME] = "api_name",
        [WLCAP_OCC_CHECK] = "occ_check",       [WLCAP_ANNOTATION] = "annotation",
        [WLCAP_METRIC_DEF] = "metric_def",     [WLCAP_METRIC_RANGE] = "metric_range",
        [WLCAP_DEVICE_SAMPLE] = "device_sample",  [WLCAP_PM_METRIC_DEF] = "pm_metric_def",
        [WLCAP_PM_SAMPLE] = "pm_sample",
        [WLCAP_STALL_REASON] = "stall_reason",   [WLCAP_KERNEL_STALL] = "kernel_stall",
        [WLCAP_CAPTURE_RANGE] = "capture_range",
        [WLCAP_STAT] = "stat", [WLCAP_ATTR] = "attr", [WLCAP_METRIC_OWNER] = "metric_owner",
    };
    return type < WLCAP_TYPE_COUNT && names[type] ? names[type] : "unknown";
}

int wl_record_mask_parse(const char *spec, uint32_t *mask, char *bad, int bad_size)
{
    static const struct { const char *word; uint32_t bit; } words[] = {
        {"kernels", WL_RECORD_KERNELS}, {"memcpy", WL_RECORD_MEMCPY}, {"api", WL_RECORD_API},
        {"nvtx", WL_RECORD_NVTX},       {"sync", WL_RECORD_SYNC},     {"all", WL_RECORD_ALL},
    };
    uint32_t m = 0;
    const char *p = spec;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
            if (strlen(words[i].word) == n && strncmp(p, words[i].word, n) == 0) {
                m |= words[i].bit;
                found = 1;
            }
        }
        if (!found) {
            if (bad && bad_size > 0)
                snprintf(bad, (size_t)bad_size, "%.*s", (int)n, p);
            return -1;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    if (!m) {
        if (bad && bad_size > 0)
            snprintf(bad, (size_t)bad_size, "%s", "(empty)");
        return -1;
    }
    *mask = m;
    return 0;
}
