// Launch-bound workload for bench/overhead.py: many empty kernels back to back on one stream, in
// segments of 2000 launches each followed by a synchronisation. Prints the median over segments of
// host time per launch, so a burst of interference on the machine moves one segment, not the result.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty_kernel(int x)
{
    if (x == -1)
        printf("never\n");
}

#include <algorithm>
#include <vector>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    const int seg = 2000;
    if (n < seg)
        return 2;
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess) {
        fprintf(stderr, "bench_launch: no CUDA device\n");
        return 1;
    }
    for (int i = 0; i < 1000; i++) // warm-up: module load, first-launch costs
        empty_kernel<<<1, 32, 0, s>>>(i);
    cudaStreamSynchronize(s);
    std::vector<double> per_launch;
    for (int done = 0; done + seg <= n; done += seg) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < seg; i++)
            empty_kernel<<<1, 32, 0, s>>>(i);
        cudaError_t e = cudaStreamSynchronize(s);
        auto t1 = std::chrono::steady_clock::now();
        if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
            fprintf(stderr, "bench_launch: %s\n", cudaGetErrorString(e));
            return 1;
        }
        per_launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / seg);
    }
    std::sort(per_launch.begin(), per_launch.end());
    printf("US_PER_KERNEL %.4f\n", per_launch[per_launch.size() / 2]);
    return 0;
}
