// Benchmark of the explicit timers (include/warplens/timer.h): host cost per timed GPU interval
// (begin + end + its share of one collect) against raw cudaEventRecord pairs + cudaEventElapsedTime
// on pre-created events, and the cost of the calls at verbosity none. The stream carries only the
// events, so this is the CPU cost the API adds around real work. libwarplens.so is opened with dlopen
// ($WARPLENS_LIB, else ../lib/libwarplens.so next to this binary) since benchmarks link only the
// static layers. Prints a table of medians over 7 runs of N intervals.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tests/gpu/gpu_ck.h" /* CK(call): the GPU suite's must-succeed check */
#include "warplens/timer.h"

enum { N = 20000, RUNS = 7 };

static struct {
    int64_t (*gpu_begin)(int, void *, const char *, ...);
    int (*gpu_end)(int, void *, const char *, ...);
    int (*end_id)(int64_t);
    int (*collect)(void);
    void (*set_verbosity)(int);
    void (*reset)(void);
    int (*set_capacity)(uint64_t);
    void (*get_stats)(wl_timer_stats *);
} T;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v)
{
    qsort(v, RUNS, sizeof *v, cmp_d);
    return v[RUNS / 2];
}

static void *open_lib(void)
{
    const char *env = getenv("WARPLENS_LIB");
    char path[4096];
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 40);
        if (n <= 0)
            return NULL;
        path[n] = 0;
        char *slash = strrchr(path, '/');
        strcpy(slash ? slash + 1 : path, "../lib/libwarplens.so");
    }
    void *h = dlopen(path, RTLD_NOW);
    if (!h)
        fprintf(stderr, "bench_timer: cannot open %s: %s (set WARPLENS_LIB)\n", path, dlerror());
    return h;
}

#define SYM(field, name)                                                                           \
    do {                                                                                           \
        *(void **)&T.field = dlsym(h, name);                                                       \
        if (!T.field) {                                                                            \
            fprintf(stderr, "bench_timer: %s missing\n", name);                                    \
            return 2;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    void *h = open_lib();
    if (!h)
        return 2;
    SYM(gpu_begin, "wl_timer_gpu_begin");
    SYM(gpu_end, "wl_timer_gpu_end");
    SYM(end_id, "wl_timer_end_id");
    SYM(collect, "wl_timer_collect");
    SYM(set_verbosity, "wl_timer_set_verbosity");
    SYM(reset, "wl_timer_reset");
    SYM(set_capacity, "wl_timer_set_capacity");
    SYM(get_stats, "wl_timer_get_stats");
    CK(cudaFree(0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t *ev = (cudaEvent_t *)malloc(2 * N * sizeof *ev);
    for (int i = 0; i < 2 * N; i++)
        CK(cudaEventCreate(&ev[i]));
    T.set_verbosity(WL_TIMER_DEFAULT);
    T.reset();
    T.set_capacity(N + 16);

    double raw_rec[RUNS], raw_all[RUNS], wl_rec[RUNS], wl_all[RUNS], wlf_all[RUNS], wlid_all[RUNS], none[RUNS];
    for (int run = -1; run < RUNS; run++) { // run -1 warms the pools and the driver
        int r = run < 0 ? 0 : run;
        // raw: record pairs, sync, elapsed
        double t0 = now_ns();
        for (int i = 0; i < N; i++) {
            CK(cudaEventRecord(ev[2 * i], s));
            CK(cudaEventRecord(ev[2 * i + 1], s));
        }
        double t1 = now_ns();
        CK(cudaStreamSynchronize(s));
        double t2 = now_ns();
        float ms, acc = 0;
        for (int i = 0; i < N; i++) {
            CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            acc += ms;
        }
        double t3 = now_ns();
        raw_rec[r] = (t1 - t0) / N;
        raw_all[r] = (t1 - t0 + t3 - t2) / N;
        // warplens, constant name
        T.reset();
        t0 = now_ns();
        for (int i = 0; i < N; i++) {
            T.gpu_begin(WL_TIMER_RUNTIME, s, "interval");
            T.gpu_end(WL_TIMER_RUNTIME, s, "interval");
        }
        t1 = now_ns();
        CK(cudaStreamSynchronize(s));
        t2 = now_ns();
        int pending = T.collect();
        t3 = now_ns();
        wl_rec[r] = (t1 - t0) / N;
        wl_all[r] = (t1 - t0 + t3 - t2) / N;
        if (pending)
            printf("unexpected: %d pending after sync\n", pending);
        // warplens, printf name
        T.reset();
        t0 = now_ns();
        for (int i = 0; i < N; i++) {
            T.gpu_begin(WL_TIMER_RUNTIME, s, "kernel_chunk_%d", i);
            T.gpu_end(WL_TIMER_RUNTIME, s, "kernel_chunk_%d", i);
        }
        t1 = now_ns();
        CK(cudaStreamSynchronize(s));
        t2 = now_ns();
        T.collect();
        t3 = now_ns();
        wlf_all[r] = (t1 - t0 + t3 - t2) / N;
        // warplens, end by id
        T.reset();
        t0 = now_ns();
        for (int i = 0; i < N; i++)
            T.end_id(T.gpu_begin(WL_TIMER_RUNTIME, s, "interval"));
        t1 = now_ns();
        CK(cudaStreamSynchronize(s));
        t2 = now_ns();
        T.collect();
        t3 = now_ns();
        wlid_all[r] = (t1 - t0 + t3 - t2) / N;
        // verbosity none
        T.set_verbosity(WL_TIMER_NONE);
        t0 = now_ns();
        for (int i = 0; i < N; i++) {
            T.gpu_begin(WL_TIMER_RUNTIME, s, "kernel_chunk_%d", i);
            T.gpu_end(WL_TIMER_RUNTIME, s, "kernel_chunk_%d", i);
        }
        t1 = now_ns();
        none[r] = (t1 - t0) / N;
        T.set_verbosity(WL_TIMER_DEFAULT);
        if (acc < 0)
            printf("?\n");
    }
    wl_timer_stats st;
    T.get_stats(&st);
    printf("timer cost per interval (host ns, median of %d runs x %d intervals, empty stream)\n", RUNS, N);
    printf("%-52s %10s\n", "variant", "ns");
    printf("%-52s %10.0f\n", "raw cudaEventRecord x2 (record only)", median(raw_rec));
    printf("%-52s %10.0f\n", "raw cudaEventRecord x2 + cudaEventElapsedTime", median(raw_all));
    printf("%-52s %10.0f\n", "wl_timer gpu_begin+gpu_end (record only)", median(wl_rec));
    printf("%-52s %10.0f\n", "wl_timer gpu_begin+gpu_end + collect", median(wl_all));
    printf("%-52s %10.0f\n", "wl_timer printf name (\"kernel_chunk_%d\") + collect", median(wlf_all));
    printf("%-52s %10.0f\n", "wl_timer gpu_begin+end_id + collect", median(wlid_all));
    printf("%-52s %10.1f\n", "wl_timer begin+end at verbosity none", median(none));
    printf("events created by the pool in total: %llu (for %d intervals per run)\n",
           (unsigned long long)st.events_created, N);
    for (int i = 0; i < 2 * N; i++)
        CK(cudaEventDestroy(ev[i]));
    free(ev);
    CK(cudaStreamDestroy(s));
    return 0;
}
