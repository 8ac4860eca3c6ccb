/* The recorder's own work per kernel launch on the application's thread: its CUPTI callback
 * (wl_cupti_on_callback, the function CUPTI calls) entered and left once per launch, as CUPTI does
 * for cuLaunchKernel, with a consumer thread draining the ring the way the writer does (a pair
 * for the clock map, then pop and map every call). No GPU and no CUPTI dispatch: this is the part
 * of warplens' per-launch cost that is warplens' code, on top of CUPTI's callback dispatch
 * (bench/overhead.py measures that as "empty CUPTI API callbacks"). Reported for both hot-path
 * clocks (host_clock.h) next to the clock reads alone; median of 7 runs. Built into a shared library
 * with the recorder's sources and flags (hidden symbols: direct calls, thread-locals through
 * __tls_get_addr, as in the injected library); recorder_callback_cost_main.c runs it.
 * usage: bench_callback_cost [launches per run] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "capture/cupti_callback.h"
#include "capture/host_clock.h"
#include "capture/recorder.h"
#include "common/clock.h"

#define RUNS 7

static atomic_int g_stop;
static atomic_ullong g_drained;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *consumer(void *arg)
{
    (void)arg;
    volatile uint64_t sink = 0;
    while (!atomic_load(&g_stop)) {
        wl_host_clock_sample();
        wl_api_event e;
        unsigned long long n = 0;
        while (wl_mpsc_pop(&wl_api_ring, &e)) {
            sink += wl_host_clock_to_ns(e.start) + wl_host_clock_to_ns(e.end);
            n++;
        }
        atomic_fetch_add(&g_drained, n);
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* ns per launch: one enter and one exit callback for cuLaunchKernel */
static double callbacks(long n)
{
    uint64_t correlation_data = 0;
    CUresult result = CUDA_SUCCESS;
    cuLaunchKernel_params params = {0};
    CUpti_CallbackData cd = {0};
    cd.functionName = "cuLaunchKernel";
    cd.functionParams = &params;
    cd.functionReturnValue = &result;
    cd.correlationData = &correlation_data;
    double t0 = (double)wl_monotonic_ns();
    for (long i = 0; i < n; i++) {
        cd.correlationId = (uint32_t)i + 1;
        cd.callbackSite = CUPTI_API_ENTER;
        wl_cupti_on_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cd);
        cd.callbackSite = CUPTI_API_EXIT;
        wl_cupti_on_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cd);
    }
    return ((double)wl_monotonic_ns() - t0) / (double)n;
}

static double two_reads(long n)
{
    volatile uint64_t sink = 0;
    double t0 = (double)wl_monotonic_ns();
    for (long i = 0; i < n; i++)
        sink += wl_host_ticks() + wl_host_ticks();
    return ((double)wl_monotonic_ns() - t0) / (double)n;
}

static double median(double (*fn)(long), long n)
{
    double v[RUNS];
    for (int r = 0; r < RUNS; r++)
        v[r] = fn(n);
    qsort(v, RUNS, sizeof v[0], cmp_double);
    return v[RUNS / 2];
}

__attribute__((visibility("default"))) int wl_bench_callback_cost(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    if (n <= 0) {
        fprintf(stderr, "usage: bench_callback_cost [launches per run]\n");
        return 2;
    }
    /* what wl_cupti_setup does before enabling callbacks, without a GPU */
    if (!wl_api_callbacks_select(WL_RECORD_API | WL_RECORD_SYNC)) {
        fprintf(stderr, "bench_callback_cost: CUPTI names no API callbacks (is libcupti loadable?)\n");
        return 1;
    }
    atomic_store(&wl_state, WL_STATE_RUNNING);
    pthread_t th;
    if (pthread_create(&th, NULL, consumer, NULL) != 0) {
        fprintf(stderr, "bench_callback_cost: cannot start the consumer thread\n");
        return 1;
    }
    int tsc = wl_host_clock_tsc;
    printf("# bench_callback_cost: the recorder's callback work per launch (enter + exit), %ld launches per run,"
           " median of %d runs\n", n, RUNS);
    printf("hot-path clock chosen here: %s\n", wl_host_clock_name());
    for (int pass = tsc ? 0 : 1; pass < 2; pass++) {
        wl_host_clock_tsc = pass == 0; /* the realtime pass: what every launch paid before the TSC */
        double cb = median(callbacks, n), clk = median(two_reads, n);
        printf("clock %-8s  callbacks %6.1f ns/launch   its two clock reads alone %5.1f ns\n",
               wl_host_clock_name(), cb, clk);
    }
    wl_host_clock_tsc = tsc;
    atomic_store(&g_stop, 1);
    pthread_join(th, NULL);
    wl_api_event e;
    while (wl_mpsc_pop(&wl_api_ring, &e))
        atomic_fetch_add(&g_drained, 1);
    unsigned long long dropped = wl_mpsc_take_dropped(&wl_api_ring);
    printf("calls drained %llu, dropped (ring full) %llu\n", (unsigned long long)atomic_load(&g_drained), dropped);
    return 0;
}
