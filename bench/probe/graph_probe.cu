// Discovery workload for rp_probe: kernels told apart by their instruction counts (spin trips),
// with copies and sets between them, on two streams and two threads, and a captured graph
// (kernel, set, kernel, copy, kernel) launched three times between regular kernels.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)
__global__ void spin(float *o, int trips) { float a = threadIdx.x; for (int i = 0; i < trips; i++) a = a * 0.999f + 0.5f; o[threadIdx.x] = a; }
static float *g_a, *g_b;
enum { MB16 = 16 << 20 };
static void *thread_main(void *arg) {
    int id = (int)(long)arg;
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < 5; i++) {
        spin<<<1, 32, 0, s>>>(g_b + 64 * (id + 1), 100 + id * 10 + i);
        CK(cudaMemcpyAsync(g_a + (id + 1) * (MB16 / 4), g_a, 1 << 20, cudaMemcpyDeviceToDevice, s));
    }
    CK(cudaStreamSynchronize(s)); CK(cudaStreamDestroy(s));
    return NULL;
}
int main() {
    CK(cudaMalloc(&g_a, 4 * MB16)); CK(cudaMalloc(&g_b, 1 << 20));
    void *host = malloc(MB16), *pinned; CK(cudaMallocHost(&pinned, MB16));
    printf("phase 1: sync memset, pageable H2D, pinned H2D async\n"); fflush(stdout);
    CK(cudaMemset(g_a, 0, MB16));
    CK(cudaMemcpy(g_a, host, MB16, cudaMemcpyHostToDevice));
    CK(cudaMemcpyAsync(g_a, pinned, MB16, cudaMemcpyHostToDevice, 0));
    CK(cudaDeviceSynchronize());
    printf("phase 2: two streams, kernels with set and copy between\n"); fflush(stdout);
    cudaStream_t s0, s1; CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    spin<<<1, 32, 0, s0>>>(g_b, 1);
    CK(cudaMemsetAsync(g_a, 1, MB16, s0));
    spin<<<1, 32, 0, s1>>>(g_b, 2);
    CK(cudaMemcpyAsync(g_a + MB16 / 4, g_a, MB16, cudaMemcpyDeviceToDevice, s1));
    spin<<<1, 32, 0, s0>>>(g_b, 3);
    CK(cudaDeviceSynchronize());
    printf("phase 3: two threads\n"); fflush(stdout);
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("phase 4: graph\n"); fflush(stdout);
    cudaStream_t sg; CK(cudaStreamCreateWithFlags(&sg, cudaStreamNonBlocking));
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(sg, cudaStreamCaptureModeGlobal));
    spin<<<1, 32, 0, sg>>>(g_b, 10);
    CK(cudaMemsetAsync(g_a, 2, MB16, sg));
    spin<<<1, 32, 0, sg>>>(g_b, 11);
    CK(cudaMemcpyAsync(g_a + MB16 / 4, g_a, MB16, cudaMemcpyDeviceToDevice, sg));
    spin<<<1, 32, 0, sg>>>(g_b, 12);
    CK(cudaStreamEndCapture(sg, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 3; r++) {
        spin<<<1, 32, 0, sg>>>(g_b, 20 + r);
        CK(cudaGraphLaunch(ge, sg));
    }
    spin<<<1, 32, 0, sg>>>(g_b, 30);
    CK(cudaStreamSynchronize(sg));
    printf("phase 5: D2H\n"); fflush(stdout);
    CK(cudaMemcpy(host, g_a, MB16, cudaMemcpyDeviceToHost));
    CK(cudaDeviceSynchronize());
    printf("done\n");
    return 0;
}
