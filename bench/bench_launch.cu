// Launch-bound workload for bench/overhead.py: many empty kernels back to back on one stream.
// Prints the host time per launch over the timed loop (launches + final synchronisation).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty_kernel(int x)
{
    if (x == -1)
        printf("never\n");
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n <= 0)
        return 2;
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess) {
        fprintf(stderr, "bench_launch: no CUDA device\n");
        return 1;
    }
    for (int i = 0; i < 1000; i++) // warm-up: module load, first-launch costs
        empty_kernel<<<1, 32, 0, s>>>(i);
    cudaStreamSynchronize(s);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++)
        empty_kernel<<<1, 32, 0, s>>>(i);
    cudaError_t e = cudaStreamSynchronize(s);
    auto t1 = std::chrono::steady_clock::now();
    if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
        fprintf(stderr, "bench_launch: %s\n", cudaGetErrorString(e));
        return 1;
    }
    double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    printf("US_PER_KERNEL %.4f\n", us / n);
    return 0;
}
