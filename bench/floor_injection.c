/* The overhead floor for bench/overhead.py: the least a CUPTI-based tracer can do. Loaded through
 * CUDA_INJECTION64_PATH, it records CONCURRENT_KERNEL activity only, into 8 MiB buffers, and just
 * counts the records (no file, no thread of its own). warplens' cost is judged against this.
 * WL_FLOOR_RANGE=1: recording is switched on by cudaProfilerStart and off by cudaProfilerStop, as
 * `warplens run --capture-range profiler-api` does, for the in-process comparison (--inproc).
 * It is also the reference count of the lossless-capture checks (tests/gpu/gpu_threads.py): it
 * allocates a buffer whenever CUPTI asks, so it loses nothing to its own limits.
 * WL_FLOOR_OUT=FILE: the count also appended to FILE as one line "rank=R pid=P kernels=N" (R: the
 * RANK environment variable, "-" without one), for jobs of several processes (tests/gpu/
 * test_multirank.sh: each rank's count next to its session's).
 * WL_FLOOR_STATS=1: at exit also how CUPTI used the buffers: requests, the most outstanding at
 * once, how many distinct threads asked, completed buffers and their fill, records CUPTI dropped.
 * WL_FLOOR_PER_THREAD=0: CUPTI's per-thread activity buffers off (one shared buffer queue).
 * WL_FLOOR_BUF_KB=N: buffer size (default 8 MiB).
 * WL_FLOOR_FLUSH_MS=N: CUPTI's periodic flush (cuptiActivityFlushPeriod), off by default.
 * WL_FLOOR_DEVBUF_KB=N: CUPTI's device buffer size (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE).
 * (The last three are for memory experiments: where CUPTI's own host memory goes.) */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static size_t g_buf_size = 8u << 20;
static unsigned long long g_records;
static int g_stats;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long g_requests, g_outstanding, g_peak, g_completed, g_valid_sum, g_valid_max;
#define MAX_TIDS 8192
static long g_tids[MAX_TIDS];
static unsigned g_ntids;

static void note_request(void)
{
    long tid = syscall(SYS_gettid);
    pthread_mutex_lock(&g_lock);
    g_requests++;
    if (++g_outstanding > g_peak)
        g_peak = g_outstanding;
    unsigned i = 0;
    while (i < g_ntids && g_tids[i] != tid)
        i++;
    if (i == g_ntids && g_ntids < MAX_TIDS)
        g_tids[g_ntids++] = tid;
    pthread_mutex_unlock(&g_lock);
}

static void note_complete(size_t valid)
{
    pthread_mutex_lock(&g_lock);
    g_outstanding--;
    g_completed++;
    g_valid_sum += valid;
    if (valid > g_valid_max)
        g_valid_max = valid;
    pthread_mutex_unlock(&g_lock);
}

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = aligned_alloc(8, g_buf_size);
    *size = *buf ? g_buf_size : 0;
    *max = 0;
    if (g_stats && *buf)
        note_request();
}

static void CUPTIAPI complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    unsigned long long n = 0;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
        n++;
    __atomic_add_fetch(&g_records, n, __ATOMIC_RELAXED);
    if (g_stats)
        note_complete(valid);
    free(buf);
}

static void CUPTIAPI on_profiler_api(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    (void)u, (void)d;
    const CUpti_CallbackData *cd = data;
    if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && cd->callbackSite == CUPTI_API_EXIT)
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    else if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && cd->callbackSite == CUPTI_API_ENTER)
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

static void at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "floor: %llu kernel records\n", g_records);
    const char *out = getenv("WL_FLOOR_OUT"), *rank = getenv("RANK");
    FILE *f = out && out[0] ? fopen(out, "a") : NULL; /* one short line: appends of ranks do not mix */
    if (f) {
        fprintf(f, "rank=%s pid=%ld kernels=%llu\n", rank && rank[0] ? rank : "-", (long)getpid(), g_records);
        fclose(f);
    } else if (out && out[0]) {
        fprintf(stderr, "floor: cannot append to %s\n", out);
    }
    if (g_stats) {
        size_t dropped = 0;
        cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
        fprintf(stderr,
                "floor-stats: requests %llu peak_outstanding %llu threads_asking %u completed %llu"
                " valid_mean_kib %.1f valid_max_kib %.1f buffer_kib %zu dropped %zu\n",
                g_requests, g_peak, g_ntids, g_completed, g_completed ? g_valid_sum / 1024.0 / g_completed : 0.0,
                g_valid_max / 1024.0, g_buf_size >> 10, dropped);
    }
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    const char *range = getenv("WL_FLOOR_RANGE");
    const char *v;
    g_stats = (v = getenv("WL_FLOOR_STATS")) && *v == '1';
    if ((v = getenv("WL_FLOOR_BUF_KB")) && atol(v) >= 64)
        g_buf_size = (size_t)atol(v) << 10;
    if ((v = getenv("WL_FLOOR_DEVBUF_KB")) && atol(v) > 0) {
        size_t dev = (size_t)atol(v) << 10, sz = sizeof dev;
        if (cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &dev) != CUPTI_SUCCESS)
            fprintf(stderr, "floor: device buffer size not accepted\n");
    }
    if ((v = getenv("WL_FLOOR_FLUSH_MS")) && atol(v) > 0 && cuptiActivityFlushPeriod((uint32_t)atol(v)) != CUPTI_SUCCESS)
        fprintf(stderr, "floor: periodic flush not accepted\n");
    if ((v = getenv("WL_FLOOR_PER_THREAD")) && *v == '0') {
        uint8_t off = 0;
        size_t sz = sizeof off;
        if (cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &off) != CUPTI_SUCCESS)
            fprintf(stderr, "floor: per-thread buffers could not be switched off\n");
    }
    static CUpti_SubscriberHandle sub;
    if (range && *range == '1' &&
        (cuptiSubscribe(&sub, on_profiler_api, NULL) != CUPTI_SUCCESS ||
         cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) != CUPTI_SUCCESS ||
         cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) != CUPTI_SUCCESS)) {
        fprintf(stderr, "floor: CUPTI callback set-up failed\n");
        return 1;
    }
    if (cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS ||
        (!(range && *range == '1') && cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) ||
        /* WL_FLOOR_LATENCY=1: also queued/submitted timestamps, which warplens records (queue delay) */
        (getenv("WL_FLOOR_LATENCY") && cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)) {
        fprintf(stderr, "floor: CUPTI set-up failed\n");
        return 1;
    }
    atexit(at_exit);
    return 1;
}
