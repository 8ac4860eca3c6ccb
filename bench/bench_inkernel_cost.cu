/* Cost of in-kernel tracing on the GPU (run on the H100):
 *  1. cycles per device event: one thread doing begin/end pairs in a loop, clock64() around it,
 *     against the same loop without instrumentation (what -DWARPLENS_INKERNEL=0 compiles to:
 *     tests/gpu/check_sass_disabled.sh shows the code is byte-identical) and against the floor
 *     (%globaltimer read + store + block fence, no bookkeeping). Target <= 32 cycles per event.
 *  2. slowdown of a real kernel (tiled FMA over global memory, one region per tile per warp
 *     group) with recording on vs off: cudaEvents, median of 7 interleaved runs.
 * usage: bench_inkernel_cost [iterations] */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "warplens/device.cuh"

#define CUDA_OK(x)                                                                                 \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "bench_inkernel_cost: %s: %s\n", #x, cudaGetErrorString(e_));          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { MODE_OFF, MODE_ON, MODE_FLOOR };

template <int MODE>
__global__ void cost_kernel(warplens_ik_args ik, int iters, long long *cycles)
{
    warplens_ik_lane lane;
    warplens_ik_init(&lane, ik, 0, threadIdx.x == 0);
    unsigned long long *p = ik.buf + 1;
    long long c0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
        if (MODE == MODE_ON) {
            warplens_ik_begin(&lane, 1);
            warplens_ik_end(&lane, 1);
        } else if (MODE == MODE_FLOOR) {
            unsigned t0 = warplens_ik_timer();
            p[0] = (unsigned long long)t0 << 32 | 4u;
            __threadfence_block();
            __threadfence_block();
            unsigned t1 = warplens_ik_timer();
            p[1] = (unsigned long long)t1 << 32 | 5u;
            p += 2;
        } else {
            asm volatile("" : : : "memory"); /* keeps the empty loop */
        }
    }
    long long c1 = clock64();
    warplens_ik_finalize(&lane);
    cycles[0] = c1 - c0;
}

template <bool ON>
__global__ void fma_kernel(const float4 *__restrict__ in, float4 *__restrict__ out, int tiles,
                           int fmas, warplens_ik_args ik)
{
    warplens_ik_lane lane;
    if (ON)
        warplens_ik_init(&lane, ik, threadIdx.x / 128, threadIdx.x % 128 == 0);
    const size_t base = (size_t)blockIdx.x * tiles * blockDim.x + threadIdx.x;
    for (int k = 0; k < tiles; k++) {
        if (ON)
            warplens_ik_begin(&lane, 1);
        float4 v = in[base + (size_t)k * blockDim.x];
#pragma unroll 4
        for (int r = 0; r < fmas; r++) {
            v.x = fmaf(v.x, 0.999f, 0.5f);
            v.y = fmaf(v.y, 0.999f, 0.25f);
            v.z = fmaf(v.z, 0.999f, 0.125f);
            v.w = fmaf(v.w, 0.999f, 0.0625f);
        }
        out[base + (size_t)k * blockDim.x] = v;
        if (ON)
            warplens_ik_end(&lane, 1);
    }
    if (ON)
        warplens_ik_finalize(&lane);
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* threads: 1 = the leader alone; 32 = the leader with 31 non-recording lanes of its warp (the
 * usual case: they take the not-recording branch, which the warp executes too). */
template <int MODE>
static double cycles_per_pair(int iters, unsigned long long *buf, unsigned *counters,
                              long long *d_cycles, int threads = 1)
{
    warplens_ik_args ik = {buf, counters, 1, 0, (unsigned)(2 * iters + 2)};
    std::vector<double> v;
    for (int rep = 0; rep < 7; rep++) {
        cost_kernel<MODE><<<1, threads>>>(ik, iters, d_cycles);
        CUDA_OK(cudaGetLastError());
        long long c = 0;
        CUDA_OK(cudaMemcpy(&c, d_cycles, sizeof c, cudaMemcpyDeviceToHost));
        v.push_back((double)c / iters);
    }
    return median(v);
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 4096;
    int dev = 0, sms = 0, clock_khz = 0;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_OK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    printf("bench_inkernel_cost: %s, %d SMs, peak SM clock %.0f MHz\n", prop.name, sms,
           clock_khz / 1e3);

    /* 1. cycles per event */
    unsigned long long *buf = nullptr;
    unsigned *counters = nullptr;
    long long *d_cycles = nullptr;
    const size_t words = 1 + 2 * (size_t)iters + 2 + 2 * (size_t)iters;
    CUDA_OK(cudaMalloc(&buf, words * 8));
    CUDA_OK(cudaMalloc(&counters, 8));
    CUDA_OK(cudaMalloc(&d_cycles, sizeof(long long)));
    CUDA_OK(cudaMemset(buf, 0, words * 8));
    CUDA_OK(cudaMemset(counters, 0, 8));
    cycles_per_pair<MODE_ON>(iters, buf, counters, d_cycles); /* warm-up */
    const double on = cycles_per_pair<MODE_ON>(iters, buf, counters, d_cycles);
    const double off = cycles_per_pair<MODE_OFF>(iters, buf, counters, d_cycles);
    const double floor_ = cycles_per_pair<MODE_FLOOR>(iters, buf, counters, d_cycles);
    const double on_warp = cycles_per_pair<MODE_ON>(iters, buf, counters, d_cycles, 32);
    unsigned h_counters[2];
    CUDA_OK(cudaMemcpy(h_counters, counters, 8, cudaMemcpyDeviceToHost));
    printf("\nper-event cost: 1 thread, %d begin/end pairs, clock64, median of 7\n", iters);
    printf("  %-44s %10s\n", "variant", "cycles/event");
    printf("  %-44s %10.1f\n", "recording (begin + end)", on / 2);
    printf("  %-44s %10.1f\n", "recording, leader in a full warp (32 threads)", on_warp / 2);
    printf("  %-44s %10.1f\n", "compiled out (empty loop)", off / 2);
    printf("  %-44s %10.1f\n", "floor: timer + store + fence, no bookkeeping", floor_ / 2);
    printf("  %-44s %10.1f  (target <= 32, floor measured 26)\n", "net cost per event",
           (on - off) / 2);
    printf("  device counters: dropped %u, invalid %u\n", h_counters[0], h_counters[1]);
    cudaFree(buf);
    cudaFree(counters);
    cudaFree(d_cycles);

    /* 2. slowdown of a real kernel */
    const int threads = 256, groups = threads / 128, blocks = sms * 8, tiles = 64;
    const size_t n4 = (size_t)blocks * tiles * threads;
    float4 *in = nullptr, *out = nullptr;
    CUDA_OK(cudaMalloc(&in, n4 * sizeof(float4)));
    CUDA_OK(cudaMalloc(&out, n4 * sizeof(float4)));
    CUDA_OK(cudaMemset(in, 0, n4 * sizeof(float4)));
    unsigned long long need = 0;
    const unsigned max_records = 2 * tiles + 1;
    if (warplens_ik_buffer_words(blocks, groups, 0, max_records, &need)) {
        fprintf(stderr, "bench_inkernel_cost: bad trace configuration\n");
        return 1;
    }
    CUDA_OK(cudaMalloc(&buf, need * 8));
    CUDA_OK(cudaMalloc(&counters, 8));
    warplens_ik_args ik = {buf, counters, (unsigned)groups, 0, max_records};
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    printf("\nkernel slowdown: tiled FMA, %d blocks x %d threads (%d groups), %d tiles, "
           "one region per tile per group; median of 7 interleaved runs\n",
           blocks, threads, groups, tiles);
    printf("  %-10s %12s %12s %10s %12s\n", "fma/elem", "off_us", "on_us", "slowdown", "records");
    const int fma_counts[] = {4, 64, 256};
    for (int fi = 0; fi < 3; fi++) {
        const int fmas = fma_counts[fi];
        std::vector<double> t_on, t_off;
        for (int rep = 0; rep < 8; rep++) {
            for (int on = 0; on < 2; on++) {
                if (on)
                    CUDA_OK(cudaMemsetAsync(buf, 0, need * 8));
                CUDA_OK(cudaEventRecord(e0));
                if (on)
                    fma_kernel<true><<<blocks, threads>>>(in, out, tiles, fmas, ik);
                else
                    fma_kernel<false><<<blocks, threads>>>(in, out, tiles, fmas, ik);
                CUDA_OK(cudaGetLastError());
                CUDA_OK(cudaEventRecord(e1));
                CUDA_OK(cudaEventSynchronize(e1));
                float ms = 0;
                CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
                if (rep > 0) /* first round: warm-up */
                    (on ? t_on : t_off).push_back(ms * 1e3);
            }
        }
        const double a = median(t_off), b = median(t_on);
        printf("  %-10d %12.1f %12.1f %9.2f%% %12llu\n", fmas, a, b, (b / a - 1) * 100,
               (unsigned long long)blocks * groups * (2ull * tiles + 1));
    }
    cudaFree(in);
    cudaFree(out);
    cudaFree(buf);
    cudaFree(counters);
    return 0;
}
