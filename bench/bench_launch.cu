// Launch-bound workload for bench/overhead.py: many empty kernels back to back on one stream.
// Two measures, each the median over segments so a burst of interference moves one segment:
//  US_HOST_PER_LAUNCH  time of the launch calls alone, in segments of 256 launches (fewer than the
//                      launch queue holds) with the synchronisation outside the timed part: the CPU
//                      cost of a launch, which is what a profiler adds to a launch-bound thread;
//  US_PER_KERNEL       segments of 2000 launches plus their synchronisation: end to end. One-warp
//                      kernels back to back on one stream run at about the rate the host issues
//                      them on the H100, so this measure is partly GPU-bound and hides host cost.
// With "toggle" as the second argument it measures instead what recording adds *within* this one
// process: rounds of host segments with recording off (after cudaProfilerStop) and on (after
// cudaProfilerStart), in alternating order; a profiler that records only between the two calls
// (warplens --capture-range profiler-api, the floor with WL_FLOOR_RANGE=1) shows its added cost as
// the paired on - off difference, free of the differences between processes (layout, placement,
// clocks) that move whole runs. US_HOST_OFF, US_HOST_ON (medians of the rounds) and
// US_HOST_ADDED (median of the rounds' on - off); US_HOST_PRE: before the first cudaProfilerStart.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

__global__ void empty_kernel(int x)
{
    if (x == -1)
        printf("never\n");
}

#include <algorithm>
#include <cstring>
#include <vector>

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median host time per launch over `segments` segments of 256 launches, synchronised between them.
static double host_segments(cudaStream_t s, int segments)
{
    std::vector<double> per;
    for (int k = 0; k < segments; k++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 256; i++)
            empty_kernel<<<1, 32, 0, s>>>(i);
        auto t1 = std::chrono::steady_clock::now();
        if (cudaStreamSynchronize(s) != cudaSuccess)
            return -1;
        per.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 256);
    }
    return median(per);
}

static int toggle(cudaStream_t s, int n)
{
    const int segments = 10, rounds = n / (2 * segments * 256) > 4 ? n / (2 * segments * 256) : 4;
    std::vector<double> off, on, added;
    // before any cudaProfilerStart: the profiler loaded but never switched on (does "off" return to it?)
    double pre = host_segments(s, 4 * segments);
    for (int r = 0; r < rounds; r++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int rec = (k + r) % 2; // alternate which state goes first
            if ((rec ? cudaProfilerStart() : cudaProfilerStop()) != cudaSuccess)
                return 1;
            if (cudaStreamSynchronize(s) != cudaSuccess)
                return 1;
            host_segments(s, 2); // the switch's own first launches are not the steady state
            t[rec] = host_segments(s, segments);
            if (t[rec] < 0)
                return 1;
        }
        off.push_back(t[0]);
        on.push_back(t[1]);
        added.push_back(t[1] - t[0]);
    }
    if (cudaProfilerStop() != cudaSuccess)
        return 1;
    printf("US_HOST_PRE %.4f\n", pre);
    printf("US_HOST_OFF %.4f\nUS_HOST_ON %.4f\nUS_HOST_ADDED %.4f\nTOGGLE_ROUNDS %d\n", median(off), median(on),
           median(added), rounds);
    return 0;
}

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
    if (argc > 2 && !strcmp(argv[2], "toggle"))
        return toggle(s, n);
    double host = host_segments(s, n / 256);
    if (host < 0)
        return 1;
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
    printf("US_PER_KERNEL %.4f\n", median(per_launch));
    printf("US_HOST_PER_LAUNCH %.4f\n", host);
    return 0;
}
