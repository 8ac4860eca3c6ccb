// Known GPU work for the capture test (gpu_test_capture.cu): every launch, copy and range the
// workload makes is also written to a manifest so the checker can demand each one exactly once.
#pragma once
#include <cooperative_groups.h>

__global__ void wl_test_fill(float *out, float v)
{
    __shared__ float tile[1024]; // 4096 bytes of static shared memory
    tile[threadIdx.x] = v + threadIdx.x;
    __syncthreads();
    out[(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

__global__ void wl_test_saxpy(const float *x, float *y, float a, int n)
{
    extern __shared__ float scratch[]; // dynamic shared memory, size set at launch
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    scratch[threadIdx.x % 256] = a;
    __syncthreads();
    if (i < n)
        y[i] = scratch[threadIdx.x % 256] * x[i] + y[i];
}

__global__ void wl_test_coop(int *counter)
{
    cooperative_groups::this_grid().sync();
    if (threadIdx.x == 0)
        atomicAdd(counter, 1);
}

__global__ void __cluster_dims__(2, 1, 1) wl_test_cluster(float *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = (float)blockIdx.x;
}

__global__ void wl_test_cluster_ex(float *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f * blockIdx.x;
}

__global__ void wl_test_graph_node(float *x, float s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = x[i] * s + 1.0f;
}

__global__ void wl_test_spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles)
        ;
}
