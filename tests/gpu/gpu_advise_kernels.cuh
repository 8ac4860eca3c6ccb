// The kernels of the planted-problem programs (gpu_advise_planted.cu): arithmetic-, bandwidth- and
// latency-bound work, tiny element-wise ops, and blocks of a fixed wall-clock duration. Each writes its
// result, so none can be optimised away.
#pragma once
#include <cuda_runtime.h>

// Two dependent FMA chains per element, `iters` long: arithmetic-bound at full occupancy (the
// launch bounds keep registers at <= 32 so that 8 blocks of 256 fit on an SM).
__global__ void __launch_bounds__(256, 8)
    fma_work(const float *in, unsigned in_n, float *out, unsigned n, int iters)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i % in_n], y = 0.5f * x;
#pragma unroll 8
    for (int k = 0; k < iters; k++) {
        x = fmaf(x, 0.9999f, 0.0001f);
        y = fmaf(y, 0.9997f, 0.0003f);
    }
    out[i] = x + y;
}

// y = a*x + y over n elements, grid-stride: bandwidth-bound.
__global__ void __launch_bounds__(256, 8) mem_axpy(const float *x, float *y, size_t n, float a)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fmaf(a, x[i], y[i]);
}

// The tiny element-wise op of launch_bound: x = x*a + b applied `iters` times on n elements (about
// 2-3 us of GPU time on 4K elements).
__global__ void small_op(float *x, int n, int iters, float a, float b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    for (int k = 0; k < iters; k++)
        v = fmaf(v, a, b);
    x[i] = v;
}

__device__ __forceinline__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Every block computes (dependent FMAs) for exactly `ns` nanoseconds of wall time from its start,
// whatever else shares its SM: blocks of uniform, fixed duration, as a latency-bound block behaves.
// That makes a grid's time (waves x block time) exact, for tail and serial_streams.
__global__ void timed_work(float *out, long long ns)
{
    __shared__ unsigned long long start;
    if (threadIdx.x == 0)
        start = global_ns();
    __syncthreads();
    unsigned long long end = start + (unsigned long long)ns;
    float v = (float)threadIdx.x;
    do {
#pragma unroll
        for (int k = 0; k < 16; k++)
            v = fmaf(v, 0.999f, 0.001f);
    } while (global_ns() < end);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// next[i] = (a*i + c) mod 2^k: a full-period LCG (a = 1 mod 4, c odd), so following next[] from
// any index visits every word once, in a cache-hostile order.
__global__ void chain_fill(unsigned *next, unsigned mask)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i <= mask; i += gridDim.x * blockDim.x)
        next[i] = (i * 1664525u + 1013904223u) & mask;
}

// Each warp follows one chain of `hops` dependent loads through next[] (all its lanes load the same
// word: one load in flight per warp). Latency-bound: its speed is proportional to the warps resident
// per SM, i.e. to the occupancy, while the memory system is far from its bandwidth.
__global__ void chase(const unsigned *__restrict__ next, unsigned *out, unsigned mask, int hops,
                      unsigned threads)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= threads)
        return;
    unsigned idx = ((tid / 32) * 2654435761u) & mask;
    for (int h = 0; h < hops; h++)
        idx = next[idx];
    out[tid] = idx ^ (tid & 31);
}
