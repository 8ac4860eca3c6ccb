// The planted-problem programs of `warplens advise` (GPU suite, scripts/gpu-advise.sh): one program,
// each MODE plants one performance problem that an advise rule must find, and --fixed runs the same
// work with the problem's fix applied, so (planted time - fixed time) is the gain the rule's estimate
// is judged against. `control` is a healthy program that no rule should fire on (its --fixed is the
// same work again: the two give the run-to-run noise).
//
//   gpu_advise_planted MODE [--fixed] [--steps N]
//
// Every mode: setup and a warm-up inside the NVTX range "setup", then N steps, each inside an NVTX
// range "step" and each ending synchronised, timed on the host with CLOCK_MONOTONIC. Prints lines
// starting with "# " (sizes chosen at run time: blocks per wave, block sizes, occupancy) and last
// one result line:
//   MODE fixed=0|1 steps=N step_ns_median=NS total_ns=NS
// Step counts keep each planted session near or under 2 MiB (about 400 bytes per kernel and its
// launch call, 250 per copy or synchronising call), which is what caps the launch-, copy- and
// sync-heavy modes below the 0.3 s that the others run for. Exit status 3 on any CUDA error.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#include "gpu_advise_kernels.cuh"
#include "gpu_ck.h"

// ---- host helpers --------------------------------------------------------------------------------

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

// The host's own work between launches (input preparation in a real loop): busy, not sleeping.
static void host_work(long long ns)
{
    long long end = now_ns() + ns;
    while (now_ns() < end)
        ;
}

template <class T> struct same_type {
    typedef T type;
};

// kernel<<<grid, block, 0, stream>>>(args...) through cudaLaunchKernel, so the launch is checked
// without a cudaGetLastError call (which would be one more recorded API call per launch).
template <class... P>
static void launch(void (*kernel)(P...), unsigned grid, unsigned block, cudaStream_t s,
                   typename same_type<P>::type... args)
{
    void *argv[] = {(void *)&args...};
    CK(cudaLaunchKernel((const void *)kernel, dim3(grid), dim3(block), argv, 0, s));
}

static int g_sms; // multiprocessors of device 0

// blocks of `block` threads that run at once on the whole GPU (one full wave)
static unsigned blocks_per_wave(const void *kernel, int block)
{
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
    return (unsigned)(per_sm * g_sms);
}

// ---- modes ----------------------------------------------------------------------------------------

struct mode {
    const char *name;
    int steps;                 // default step count
    void (*setup)(int fixed);  // allocations and warm-up (outside the steps)
    void (*step)(int fixed, int s);
    void (*teardown)(void);
};

// control: five large kernels (arithmetic and bandwidth, whole waves, full occupancy) per step on a
// compute stream, while the next input is copied from pinned memory on a copy stream; one sync.
static struct {
    cudaStream_t sc, sx;
    float *stage[2], *a, *b, *x, *y, *host;
    unsigned n_stage, n_fma, grid_fma, grid_axpy;
    size_t n_axpy;
} ctl;

static void control_setup(int fixed)
{
    (void)fixed;
    ctl.n_stage = 2u << 20; // 8 MiB per copy
    ctl.grid_fma = 16 * blocks_per_wave((const void *)fma_work, 256);
    ctl.n_fma = ctl.grid_fma * 256;
    ctl.grid_axpy = 16 * blocks_per_wave((const void *)mem_axpy, 256);
    ctl.n_axpy = (size_t)ctl.grid_axpy * 256 * 16;
    printf("# control: fma_work grid %u x 256 (16 waves), mem_axpy grid %u x 256 over %zu floats, "
           "%u-byte pinned copies on a second stream\n",
           ctl.grid_fma, ctl.grid_axpy, ctl.n_axpy, ctl.n_stage * 4);
    CK(cudaStreamCreateWithFlags(&ctl.sc, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&ctl.sx, cudaStreamNonBlocking));
    CK(cudaMallocHost((void **)&ctl.host, ctl.n_stage * sizeof(float)));
    for (unsigned i = 0; i < ctl.n_stage; i++)
        ctl.host[i] = (float)(i % 1000) * 0.001f;
    for (int k = 0; k < 2; k++)
        CK(cudaMalloc((void **)&ctl.stage[k], ctl.n_stage * sizeof(float)));
    CK(cudaMalloc((void **)&ctl.a, ctl.n_fma * sizeof(float)));
    CK(cudaMalloc((void **)&ctl.b, ctl.n_fma * sizeof(float)));
    CK(cudaMalloc((void **)&ctl.x, ctl.n_axpy * sizeof(float)));
    CK(cudaMalloc((void **)&ctl.y, ctl.n_axpy * sizeof(float)));
    CK(cudaMemsetAsync(ctl.x, 0, ctl.n_axpy * sizeof(float), ctl.sc));
    CK(cudaMemsetAsync(ctl.y, 0, ctl.n_axpy * sizeof(float), ctl.sc));
    for (int k = 0; k < 2; k++)
        CK(cudaMemcpyAsync(ctl.stage[k], ctl.host, ctl.n_stage * sizeof(float), cudaMemcpyHostToDevice, ctl.sx));
    CK(cudaDeviceSynchronize());
    launch(fma_work, ctl.grid_fma, 256, ctl.sc, (const float *)ctl.stage[0], ctl.n_stage, ctl.a, ctl.n_fma, 16);
    launch(mem_axpy, ctl.grid_axpy, 256, ctl.sc, (const float *)ctl.x, ctl.y, ctl.n_axpy, 0.5f);
}

static void control_step(int fixed, int s)
{
    (void)fixed;
    // the input of the next step goes up while this step computes on the one copied before
    CK(cudaMemcpyAsync(ctl.stage[s & 1], ctl.host, ctl.n_stage * sizeof(float), cudaMemcpyHostToDevice, ctl.sx));
    const float *in = ctl.stage[(s + 1) & 1];
    launch(fma_work, ctl.grid_fma, 256, ctl.sc, in, ctl.n_stage, ctl.a, ctl.n_fma, 1024);
    launch(mem_axpy, ctl.grid_axpy, 256, ctl.sc, (const float *)ctl.x, ctl.y, ctl.n_axpy, 0.5f);
    launch(fma_work, ctl.grid_fma, 256, ctl.sc, (const float *)ctl.a, ctl.n_fma, ctl.b, ctl.n_fma, 1024);
    launch(mem_axpy, ctl.grid_axpy, 256, ctl.sc, (const float *)ctl.y, ctl.x, ctl.n_axpy, 0.25f);
    launch(fma_work, ctl.grid_fma, 256, ctl.sc, (const float *)ctl.b, ctl.n_fma, ctl.a, ctl.n_fma, 1024);
    CK(cudaDeviceSynchronize());
}

static void control_teardown(void)
{
    for (int k = 0; k < 2; k++)
        CK(cudaFree(ctl.stage[k]));
    CK(cudaFree(ctl.a));
    CK(cudaFree(ctl.b));
    CK(cudaFree(ctl.x));
    CK(cudaFree(ctl.y));
    CK(cudaFreeHost(ctl.host));
    CK(cudaStreamDestroy(ctl.sc));
    CK(cudaStreamDestroy(ctl.sx));
}

// launch_bound: LB_KERNELS tiny kernels per step, each launched by the host (shorter on the GPU than
// its launch costs the host); fixed: the same kernels captured once into a CUDA graph, one
// cudaGraphLaunch per step.
enum { LB_KERNELS = 1000, LB_N = 4096, LB_ITERS = 256 };
static struct {
    cudaStream_t s;
    float *x;
    cudaGraphExec_t exec;
} lb;

static void launch_bound_kernels(void)
{
    for (int i = 0; i < LB_KERNELS; i++)
        launch(small_op, LB_N / 256, 256, lb.s, lb.x, (int)LB_N, (int)LB_ITERS, (i & 1) ? 0.999f : 1.001f,
               (i & 1) ? 0.001f : -0.001f);
}

static void launch_bound_setup(int fixed)
{
    CK(cudaStreamCreateWithFlags(&lb.s, cudaStreamNonBlocking));
    CK(cudaMalloc((void **)&lb.x, LB_N * sizeof(float)));
    CK(cudaMemsetAsync(lb.x, 0, LB_N * sizeof(float), lb.s));
    if (fixed) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(lb.s, cudaStreamCaptureModeThreadLocal));
        launch_bound_kernels();
        CK(cudaStreamEndCapture(lb.s, &g));
        CK(cudaGraphInstantiate(&lb.exec, g, 0));
        CK(cudaGraphDestroy(g));
        CK(cudaGraphUpload(lb.exec, lb.s));
        CK(cudaGraphLaunch(lb.exec, lb.s));
    } else {
        for (int i = 0; i < 50; i++)
            launch(small_op, LB_N / 256, 256, lb.s, lb.x, (int)LB_N, (int)LB_ITERS, 1.0f, 0.0f);
    }
    CK(cudaStreamSynchronize(lb.s));
    printf("# launch_bound: %d kernels of %d x 256 threads per step%s\n", LB_KERNELS, LB_N / 256,
           fixed ? ", as one CUDA graph" : "");
}

static void launch_bound_step(int fixed, int s)
{
    (void)s;
    if (fixed)
        CK(cudaGraphLaunch(lb.exec, lb.s));
    else
        launch_bound_kernels();
    CK(cudaStreamSynchronize(lb.s));
}

static void launch_bound_teardown(void)
{
    if (lb.exec)
        CK(cudaGraphExecDestroy(lb.exec));
    CK(cudaFree(lb.x));
    CK(cudaStreamDestroy(lb.s));
}

// sync: SY_KERNELS medium kernels (~40 us) per step with ~10 us of host work before each launch,
// each followed by cudaDeviceSynchronize (the GPU waits for the host every time); fixed: one
// cudaDeviceSynchronize at the end of the step.
enum { SY_KERNELS = 100, SY_ITERS = 640, SY_HOST_NS = 10000 };
static struct {
    float *buf[2];
    unsigned grid, n;
} sy;

static void sync_setup(int fixed)
{
    (void)fixed;
    sy.grid = 4 * blocks_per_wave((const void *)fma_work, 256);
    sy.n = sy.grid * 256;
    for (int k = 0; k < 2; k++) {
        CK(cudaMalloc((void **)&sy.buf[k], sy.n * sizeof(float)));
        CK(cudaMemset(sy.buf[k], 0, sy.n * sizeof(float)));
    }
    launch(fma_work, sy.grid, 256, 0, (const float *)sy.buf[0], sy.n, sy.buf[1], sy.n, (int)SY_ITERS);
    CK(cudaDeviceSynchronize());
    printf("# sync: %d x fma_work grid %u x 256 (4 waves), %d iterations, %d ns host work before each\n",
           SY_KERNELS, sy.grid, SY_ITERS, SY_HOST_NS);
}

static void sync_step(int fixed, int s)
{
    (void)s;
    for (int i = 0; i < SY_KERNELS; i++) {
        host_work(SY_HOST_NS);
        launch(fma_work, sy.grid, 256, 0, (const float *)sy.buf[i & 1], sy.n, sy.buf[(i + 1) & 1], sy.n,
               (int)SY_ITERS);
        if (!fixed)
            CK(cudaDeviceSynchronize());
    }
    if (fixed)
        CK(cudaDeviceSynchronize());
}

static void sync_teardown(void)
{
    for (int k = 0; k < 2; k++)
        CK(cudaFree(sy.buf[k]));
}

// pageable: PG_COPIES host-to-device cudaMemcpyAsync of 32 MiB per step from malloc'ed (pageable)
// memory; fixed: the same copies from cudaMallocHost (pinned) memory.
enum { PG_COPIES = 8 };
static const size_t PG_BYTES = 32u << 20;
static struct {
    cudaStream_t s;
    void *host[PG_COPIES], *dev[PG_COPIES];
    int pinned;
} pg;

static void pageable_setup(int fixed)
{
    pg.pinned = fixed;
    CK(cudaStreamCreateWithFlags(&pg.s, cudaStreamNonBlocking));
    for (int i = 0; i < PG_COPIES; i++) {
        if (fixed) {
            CK(cudaMallocHost(&pg.host[i], PG_BYTES));
        } else if (!(pg.host[i] = malloc(PG_BYTES))) {
            fprintf(stderr, "pageable: out of host memory\n");
            exit(3);
        }
        memset(pg.host[i], i + 1, PG_BYTES); // touched: no first-touch page faults in the steps
        CK(cudaMalloc(&pg.dev[i], PG_BYTES));
    }
    CK(cudaMemcpyAsync(pg.dev[0], pg.host[0], PG_BYTES, cudaMemcpyHostToDevice, pg.s));
    CK(cudaStreamSynchronize(pg.s));
    printf("# pageable: %d x %zu-byte host-to-device copies per step from %s memory\n", PG_COPIES, PG_BYTES,
           fixed ? "pinned" : "pageable");
}

static void pageable_step(int fixed, int s)
{
    (void)fixed;
    (void)s;
    for (int i = 0; i < PG_COPIES; i++)
        CK(cudaMemcpyAsync(pg.dev[i], pg.host[i], PG_BYTES, cudaMemcpyHostToDevice, pg.s));
    CK(cudaStreamSynchronize(pg.s));
}

static void pageable_teardown(void)
{
    for (int i = 0; i < PG_COPIES; i++) {
        if (pg.pinned)
            CK(cudaFreeHost(pg.host[i]));
        else
            free(pg.host[i]);
        CK(cudaFree(pg.dev[i]));
    }
    CK(cudaStreamDestroy(pg.s));
}

// small_copies: SC_COPIES synchronous cudaMemcpy of 4 KiB host-to-device per step, from pinned
// memory; fixed: the same bytes in one cudaMemcpy (also from pinned memory).
enum { SC_COPIES = 2000, SC_BYTES = 4096 };
static struct {
    char *host, *dev;
} sc;

static void small_copies_setup(int fixed)
{
    (void)fixed;
    size_t total = (size_t)SC_COPIES * SC_BYTES;
    CK(cudaMallocHost((void **)&sc.host, total));
    memset(sc.host, 7, total);
    CK(cudaMalloc((void **)&sc.dev, total));
    CK(cudaMemcpy(sc.dev, sc.host, total, cudaMemcpyHostToDevice)); // the initial upload
    for (int i = 0; i < 16; i++)
        CK(cudaMemcpy(sc.dev + (size_t)i * SC_BYTES, sc.host + (size_t)i * SC_BYTES, SC_BYTES,
                      cudaMemcpyHostToDevice));
    printf("# small_copies: %s per step, pinned host memory\n",
           fixed ? "one cudaMemcpy of 2000 x 4096 bytes" : "2000 cudaMemcpy of 4096 bytes");
}

static void small_copies_step(int fixed, int s)
{
    (void)s;
    if (fixed) {
        CK(cudaMemcpy(sc.dev, sc.host, (size_t)SC_COPIES * SC_BYTES, cudaMemcpyHostToDevice));
    } else {
        for (int i = 0; i < SC_COPIES; i++)
            CK(cudaMemcpy(sc.dev + (size_t)i * SC_BYTES, sc.host + (size_t)i * SC_BYTES, SC_BYTES,
                          cudaMemcpyHostToDevice));
    }
    CK(cudaDeviceSynchronize());
}

static void small_copies_teardown(void)
{
    CK(cudaFree(sc.dev));
    CK(cudaFreeHost(sc.host));
}

// tail shapes: `kernels` launches per step of timed_work, a planted grid of G = floor(waves x W) +
// extra blocks of block_ns each (W: blocks per wave); fixed: the same block-ns in whole waves,
// F = floor(G / W) x W blocks of block_ns x G / F each. 256 threads per block; smem (dynamic shared
// memory) caps the blocks per SM below the 8 that fill an H100 SM's 64 warps, which decides how the
// blocks of a wave start (bench/bench_tail_dispatch.cu, docs/advise.md "Tail effect").
struct tail_shape {
    const char *name;
    size_t smem;
    double waves;
    int extra;
    long long block_ns;
    int kernels;
};
static const tail_shape TAIL_SHAPES[] = {
    {"tail", 0, 1.0, 1, 50000, 10},              // full SM (8 blocks of 256), one wave + 1 block
    {"tail_long", 0, 1.1, 0, 500000, 3},         // full SM, 1.1 waves of long blocks
    {"tail_half", 45u << 10, 2.5, 0, 50000, 8},  // half the SM's warps (4 blocks), 2.5 waves
    {"tail_short", 45u << 10, 1.5, 0, 10000, 20}, // half the SM's warps, 1.5 waves of short blocks
};
static struct {
    const tail_shape *t;
    cudaStream_t s;
    float *out;
    unsigned grid;
    long long ns;
} tl;

static void tail_setup(const tail_shape *t, int fixed)
{
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, timed_work, 256, t->smem));
    unsigned w = (unsigned)(per_sm * g_sms), g = (unsigned)(t->waves * w) + (unsigned)t->extra;
    unsigned f = g / w * w;
    long long fns = t->block_ns * g / f;
    tl.t = t;
    tl.grid = fixed ? f : g;
    tl.ns = fixed ? fns : t->block_ns;
    CK(cudaStreamCreateWithFlags(&tl.s, cudaStreamNonBlocking));
    CK(cudaMalloc((void **)&tl.out, (size_t)g * 256 * sizeof(float)));
    printf("# %s: %d SMs x %d blocks/SM (%zu B dynamic shared memory) = %u blocks per wave; planted grid %u x %lld"
           " ns (%.3f waves), fixed grid %u x %lld ns; %d kernels per step\n",
           t->name, g_sms, per_sm, t->smem, w, g, t->block_ns, (double)g / w, f, fns, t->kernels);
    void *argv[] = {(void *)&tl.out, (void *)&tl.ns};
    long long warm = 1000;
    argv[1] = &warm;
    CK(cudaLaunchKernel((const void *)timed_work, dim3(tl.grid), dim3(256), argv, t->smem, tl.s));
    CK(cudaStreamSynchronize(tl.s));
}

static void tail_step(int fixed, int s)
{
    (void)fixed;
    (void)s;
    void *argv[] = {(void *)&tl.out, (void *)&tl.ns};
    for (int i = 0; i < tl.t->kernels; i++)
        CK(cudaLaunchKernel((const void *)timed_work, dim3(tl.grid), dim3(256), argv, tl.t->smem, tl.s));
    CK(cudaStreamSynchronize(tl.s));
}

template <int I> static void tail_setup_n(int fixed)
{
    tail_setup(&TAIL_SHAPES[I], fixed);
}

static void tail_teardown(void)
{
    CK(cudaFree(tl.out));
    CK(cudaStreamDestroy(tl.s));
}

// occupancy: OC_KERNELS latency-bound chase kernels per step with 32-thread blocks (the 32
// blocks/SM limit caps them at 32 warps/SM, 50 %); fixed: cudaOccupancyMaxPotentialBlockSize's
// block size, the same threads and hops.
enum { OC_KERNELS = 2, OC_HOPS = 2048, OC_LOG2_WORDS = 26 }; // 2^26 words: 256 MiB, 5x the L2
static struct {
    unsigned *next, *out, threads, block, grid;
} oc;

static void occupancy_setup(int fixed)
{
    unsigned mask = (1u << OC_LOG2_WORDS) - 1;
    int max_threads_sm = 0, per_sm = 0, min_grid = 0, best = 0;
    CK(cudaDeviceGetAttribute(&max_threads_sm, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
    CK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &best, chase, 0, 0));
    oc.threads = 4u * g_sms * max_threads_sm; // 4 waves at full occupancy
    oc.block = fixed ? (unsigned)best : 32;
    oc.grid = (oc.threads + oc.block - 1) / oc.block;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, chase, oc.block, 0));
    printf("# occupancy: chase, %u threads, %d hops; block %u -> %d blocks/SM = %d warps/SM of %d (%.0f %%); "
           "cudaOccupancyMaxPotentialBlockSize suggests block %d (min grid %d)\n",
           oc.threads, OC_HOPS, oc.block, per_sm, per_sm * (int)oc.block / 32, max_threads_sm / 32,
           100.0 * per_sm * oc.block / max_threads_sm, best, min_grid);
    CK(cudaMalloc((void **)&oc.next, ((size_t)mask + 1) * sizeof(unsigned)));
    CK(cudaMalloc((void **)&oc.out, (size_t)oc.threads * sizeof(unsigned)));
    launch(chain_fill, 8u * g_sms, 256, 0, oc.next, mask);
    launch(chase, oc.grid, oc.block, 0, (const unsigned *)oc.next, oc.out, mask, 16, oc.threads);
    CK(cudaDeviceSynchronize());
}

static void occupancy_step(int fixed, int s)
{
    (void)fixed;
    (void)s;
    unsigned mask = (1u << OC_LOG2_WORDS) - 1;
    for (int i = 0; i < OC_KERNELS; i++)
        launch(chase, oc.grid, oc.block, 0, (const unsigned *)oc.next, oc.out, mask, (int)OC_HOPS, oc.threads);
    CK(cudaDeviceSynchronize());
}

static void occupancy_teardown(void)
{
    CK(cudaFree(oc.next));
    CK(cudaFree(oc.out));
}

// serial_streams: two independent chains (stream A, stream B), SS_PAIRS kernels each per step, each
// kernel 16 blocks (a few SMs) for ~100 us; planted: events make each stream wait for the other's
// last kernel, so they never overlap; fixed: no cross-stream waits, the two chains run side by side.
enum { SS_PAIRS = 20, SS_GRID = 16, SS_NS = 100000 };
static struct {
    cudaStream_t a, b;
    cudaEvent_t ea, eb;
    float *outa, *outb;
} ss;

static void serial_streams_setup(int fixed)
{
    CK(cudaStreamCreateWithFlags(&ss.a, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&ss.b, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&ss.ea, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ss.eb, cudaEventDisableTiming));
    CK(cudaMalloc((void **)&ss.outa, SS_GRID * 256 * sizeof(float)));
    CK(cudaMalloc((void **)&ss.outb, SS_GRID * 256 * sizeof(float)));
    launch(timed_work, SS_GRID, 256, ss.a, ss.outa, 1000LL);
    launch(timed_work, SS_GRID, 256, ss.b, ss.outb, 1000LL);
    CK(cudaDeviceSynchronize());
    printf("# serial_streams: 2 streams x %d kernels of %d x 256 for %d ns per step, %s\n", SS_PAIRS, SS_GRID,
           SS_NS, fixed ? "independent" : "serialised by cudaStreamWaitEvent");
}

static void serial_streams_step(int fixed, int s)
{
    (void)s;
    for (int i = 0; i < SS_PAIRS; i++) {
        launch(timed_work, SS_GRID, 256, ss.a, ss.outa, (long long)SS_NS);
        if (!fixed) {
            CK(cudaEventRecord(ss.ea, ss.a));
            CK(cudaStreamWaitEvent(ss.b, ss.ea, 0));
        }
        launch(timed_work, SS_GRID, 256, ss.b, ss.outb, (long long)SS_NS);
        if (!fixed) {
            CK(cudaEventRecord(ss.eb, ss.b));
            CK(cudaStreamWaitEvent(ss.a, ss.eb, 0));
        }
    }
    CK(cudaDeviceSynchronize());
}

static void serial_streams_teardown(void)
{
    CK(cudaFree(ss.outa));
    CK(cudaFree(ss.outb));
    CK(cudaEventDestroy(ss.ea));
    CK(cudaEventDestroy(ss.eb));
    CK(cudaStreamDestroy(ss.a));
    CK(cudaStreamDestroy(ss.b));
}

static const mode MODES[] = {
    {"control", 240, control_setup, control_step, control_teardown},
    {"launch_bound", 4, launch_bound_setup, launch_bound_step, launch_bound_teardown},
    {"sync", 25, sync_setup, sync_step, sync_teardown},
    {"pageable", 10, pageable_setup, pageable_step, pageable_teardown},
    {"small_copies", 3, small_copies_setup, small_copies_step, small_copies_teardown},
    {"tail", 300, tail_setup_n<0>, tail_step, tail_teardown},
    {"tail_long", 100, tail_setup_n<1>, tail_step, tail_teardown},
    {"tail_half", 250, tail_setup_n<2>, tail_step, tail_teardown},
    {"tail_short", 200, tail_setup_n<3>, tail_step, tail_teardown},
    {"occupancy", 20, occupancy_setup, occupancy_step, occupancy_teardown},
    {"serial_streams", 60, serial_streams_setup, serial_streams_step, serial_streams_teardown},
};

static int usage(void)
{
    fprintf(stderr, "usage: gpu_advise_planted MODE [--fixed] [--steps N]\nmodes:");
    for (const mode &m : MODES)
        fprintf(stderr, " %s", m.name);
    fprintf(stderr, "\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    const mode *m = NULL;
    for (const mode &c : MODES)
        if (!strcmp(argv[1], c.name))
            m = &c;
    if (!m)
        return usage();
    int fixed = 0, steps = m->steps;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--fixed"))
            fixed = 1;
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            steps = atoi(argv[++i]);
        else
            return usage();
    }
    CK(cudaSetDevice(0));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));

    nvtxRangePushA("setup");
    m->setup(fixed);
    CK(cudaDeviceSynchronize());
    nvtxRangePop();

    std::vector<long long> step_ns((size_t)steps);
    long long t0 = now_ns();
    for (int s = 0; s < steps; s++) {
        long long a = now_ns();
        nvtxRangePushA("step");
        m->step(fixed, s); // ends synchronised
        nvtxRangePop();
        step_ns[(size_t)s] = now_ns() - a;
    }
    long long total = now_ns() - t0;
    m->teardown();

    std::sort(step_ns.begin(), step_ns.end());
    size_t h = step_ns.size() / 2;
    long long median = step_ns.size() % 2 ? step_ns[h] : (step_ns[h - 1] + step_ns[h]) / 2;
    printf("%s fixed=%d steps=%d step_ns_median=%lld total_ns=%lld\n", m->name, fixed, steps, median, total);
    return 0;
}
