// warplens demo: a small program with what warplens is built to show. A batched "inference" loop
// on two streams (copies in, three kernels of different shapes, copies out), NVTX ranges, warplens
// scopes naming each batch, a named worker thread, and a CUDA graph replayed a few times.
// Without a GPU it exits quietly under `warplens run` (which already said why) and with one clear
// line otherwise.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "warplens/warplens.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "warplens-demo: %s failed: %s\n", #call, cudaGetErrorString(e_));      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void scale_bias(const float *x, float *y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b;
}

// Tiled matrix product: 16x16 tiles in shared memory (static shared memory shows in the profile).
__global__ void tiled_matmul(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[16][16], Bs[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < n; t += 16) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; k++)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// Block sum with dynamic shared memory.
__global__ void block_sum(const float *x, float *out, int n)
{
    extern __shared__ float s[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = s[0];
}

enum { N = 512, VEC = N * N, BATCHES = 8 };

typedef struct worker {
    cudaStream_t stream;
    int id;
} worker;

static void *run_batches(void *arg)
{
    worker *w = (worker *)arg;
    char name[32];
    snprintf(name, sizeof name, "batcher-%d", w->id);
    warplens_thread_name(name);
    float *h_in, *h_out, *d_a, *d_b, *d_c, *d_sum;
    CHECK(cudaMallocHost(&h_in, VEC * sizeof(float)));
    CHECK(cudaMallocHost(&h_out, VEC * sizeof(float)));
    for (int i = 0; i < VEC; i++)
        h_in[i] = (float)(i % 17) * 0.25f;
    CHECK(cudaMalloc(&d_a, VEC * sizeof(float)));
    CHECK(cudaMalloc(&d_b, VEC * sizeof(float)));
    CHECK(cudaMalloc(&d_c, VEC * sizeof(float)));
    CHECK(cudaMalloc(&d_sum, (VEC / 256) * sizeof(float)));
    for (int b = 0; b < BATCHES; b++) {
        warplens_scope_beginf("stream%d-batch-%d", w->id, b);
        nvtxRangePushA("batch");
        CHECK(cudaMemcpyAsync(d_a, h_in, VEC * sizeof(float), cudaMemcpyHostToDevice, w->stream));
        scale_bias<<<VEC / 256, 256, 0, w->stream>>>(d_a, d_b, 2.0f, 1.0f, VEC);
        tiled_matmul<<<dim3(N / 16, N / 16), dim3(16, 16), 0, w->stream>>>(d_a, d_b, d_c, N);
        block_sum<<<VEC / 256, 256, 256 * sizeof(float), w->stream>>>(d_c, d_sum, VEC);
        CHECK(cudaMemcpyAsync(h_out, d_sum, (VEC / 256) * sizeof(float), cudaMemcpyDeviceToHost, w->stream));
        CHECK(cudaGetLastError());
        nvtxRangePop();
        warplens_scope_end();
    }
    CHECK(cudaStreamSynchronize(w->stream));
    cudaFree(d_a), cudaFree(d_b), cudaFree(d_c), cudaFree(d_sum);
    cudaFreeHost(h_in), cudaFreeHost(h_out);
    return NULL;
}

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        if (!getenv("WARPLENS_NO_GPU"))
            fprintf(stderr, "warplens-demo: no CUDA device available\n");
        return getenv("WARPLENS_NO_GPU") ? 0 : 1;
    }
    warplens_thread_name("main");
    nvtxRangePushA("setup");
    float *d_x, *d_y;
    CHECK(cudaMalloc(&d_x, VEC * sizeof(float)));
    CHECK(cudaMalloc(&d_y, VEC * sizeof(float)));
    CHECK(cudaMemset(d_x, 0, VEC * sizeof(float)));
    float *h = (float *)malloc(VEC * sizeof(float)); // pageable: slower copies, visible in the profile
    for (int i = 0; i < VEC; i++)
        h[i] = 1.0f;
    CHECK(cudaMemcpy(d_x, h, VEC * sizeof(float), cudaMemcpyHostToDevice));
    nvtxRangePop();

    nvtxRangePushA("two-stream batches");
    worker w[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        w[i].id = i;
        CHECK(cudaStreamCreateWithFlags(&w[i].stream, cudaStreamNonBlocking));
        pthread_create(&t[i], NULL, run_batches, &w[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    nvtxRangePop();

    // A graph of three small kernels, replayed: each replay's kernels belong to its launch.
    warplens_scope_begin("graph-replays");
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < 3; k++)
        scale_bias<<<VEC / 512, 512, 0, s>>>(d_x, d_y, 1.0f + k, 0.5f, VEC);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 5; r++)
        CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaStreamSynchronize(s));
    warplens_scope_end();

    CHECK(cudaMemcpy(h, d_y, VEC * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaDeviceSynchronize());
    printf("warplens-demo: done (y[0] = %.2f)\n", h[0]);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaFree(d_x), cudaFree(d_y);
    free(h);
    return 0;
}
