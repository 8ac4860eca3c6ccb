// Launch-bound workload for bench/overhead.py: many empty kernels back to back on one stream.
// Two measures, each the median over segments so a burst of interference moves one segment:
//  US_HOST_PER_LAUNCH  time of the launch calls alone, in segments of 256 launches (fewer than the
//                      launch queue holds) with the synchronisation outside the timed part: the CPU
//                      cost of a launch, which is what a profiler adds to a launch-bound thread;
//  US_PER_KERNEL       segments of 2000 launches plus their synchronisation: end to end. One-warp
//                      kernels back to back on one stream run at about the rate the host issues
//                      them on the H100, so this measure is partly GPU-bound and hides host cost.
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
    const int host_seg = 256;
    std::vector<double> host;
    for (int done = 0; done + host_seg <= n; done += host_seg) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < host_seg; i++)
            empty_kernel<<<1, 32, 0, s>>>(i);
        auto t1 = std::chrono::steady_clock::now();
        if (cudaStreamSynchronize(s) != cudaSuccess)
            return 1;
        host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / host_seg);
    }
    std::sort(host.begin(), host.end());
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
    printf("US_HOST_PER_LAUNCH %.4f\n", host[host.size() / 2]);
    return 0;
}
