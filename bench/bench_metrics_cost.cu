// Cost of hardware metrics per kernel (scripts/gpu-metrics-cost.sh runs it under `warplens run
// --metrics` with one-pass and multi-pass sets, with and without replay): N one-warp FMA kernels
// back to back, optionally with EXTRA_MIB of device memory allocated (and touched) that kernel
// replay must save and restore. Prints host time per kernel over the whole loop.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void tiny_fma(float *out, int k, float b, float c)
{
    float a = threadIdx.x;
    for (int i = 0; i < k; i++)
        a = fmaf(a, b, c);
    out[threadIdx.x] = a;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long extra_mib = argc > 2 ? atol(argv[2]) : 0;
    if (n < 1 || extra_mib < 0)
        return 2;
    float *out = nullptr;
    void *extra = nullptr;
    if (cudaMalloc(&out, 32 * sizeof(float)) != cudaSuccess) {
        fprintf(stderr, "bench_metrics_cost: no CUDA device\n");
        return 1;
    }
    if (extra_mib && (cudaMalloc(&extra, (size_t)extra_mib << 20) != cudaSuccess ||
                      cudaMemset(extra, 1, (size_t)extra_mib << 20) != cudaSuccess)) {
        fprintf(stderr, "bench_metrics_cost: cannot allocate %ld MiB\n", extra_mib);
        return 1;
    }
    tiny_fma<<<1, 32>>>(out, 1, 0.999f, 0.001f); // module load outside the timed loop
    cudaDeviceSynchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; i++)
        tiny_fma<<<1, 32>>>(out, (int)(i % 7) + 1, 0.999f, 0.001f);
    cudaError_t e = cudaDeviceSynchronize();
    auto t1 = std::chrono::steady_clock::now();
    if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
        fprintf(stderr, "bench_metrics_cost: %s\n", cudaGetErrorString(e));
        return 1;
    }
    double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    printf("METRICS_COST kernels=%ld extra_mib=%ld total_s=%.3f us_per_kernel=%.1f\n", n, extra_mib, us / 1e6, us / n);
    cudaFree(extra);
    cudaFree(out);
    return 0;
}
