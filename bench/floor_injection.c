/* The overhead floor for bench/overhead.py: the least a CUPTI-based tracer can do. Loaded through
 * CUDA_INJECTION64_PATH, it records CONCURRENT_KERNEL activity only, into 8 MiB buffers, and just
 * counts the records (no file, no thread of its own). warplens' cost is judged against this. */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

#define BUF_SIZE (8u << 20)

static unsigned long long g_records;

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = aligned_alloc(8, BUF_SIZE);
    *size = *buf ? BUF_SIZE : 0;
    *max = 0;
}

static void CUPTIAPI complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
        g_records++;
    free(buf);
}

static void at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "floor: %llu kernel records\n", g_records);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    if (cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
        /* WL_FLOOR_LATENCY=1: also queued/submitted timestamps, which warplens records (queue delay) */
        (getenv("WL_FLOOR_LATENCY") && cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)) {
        fprintf(stderr, "floor: CUPTI set-up failed\n");
        return 1;
    }
    atexit(at_exit);
    return 1;
}
