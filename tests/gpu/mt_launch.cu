// Multi-threaded launch workload for the lossless-capture checks (gpu_threads.py) and the
// recorder-memory benchmark: T host threads (raw pthreads), each with S non-blocking streams of its
// own, launch N empty kernels round-robin over their streams as fast as the driver takes them,
// then synchronise. With --graph NODES, each thread instead captures NODES empty kernels on its
// first stream into a CUDA graph and replays it N times (kernels = T * NODES * N).
// Prints, on stdout:
//   KERNELS   the exact number of kernels this process launched (warm-up included)
//   SECONDS   wall time of the launch phase (all threads, launch to last synchronisation)
//   RATE      kernels per second over that phase, summed over threads
//   VMHWM_KB  the process's peak resident set (VmHWM), read at the end of main
#include <cuda_runtime.h>
#include <pthread.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void empty_kernel(int x)
{
    if (x == -1)
        printf("never\n");
}

struct job {
    int streams, n, graph_nodes;
    pthread_barrier_t *go;
    int failed;
};

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "mt_launch: %s: %s\n", #call, cudaGetErrorString(e_));                \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

// Streams and, with --graph, the thread's graph: made before the common start.
static int setup(job *j, std::vector<cudaStream_t> &s, cudaGraphExec_t *exec)
{
    for (auto &st : s)
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    if (j->graph_nodes) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < j->graph_nodes; i++)
            empty_kernel<<<1, 32, 0, s[0]>>>(i);
        CK(cudaStreamEndCapture(s[0], &g));
        CK(cudaGraphInstantiate(exec, g, 0));
        CK(cudaGraphDestroy(g));
    }
    return 0;
}

static int launch_all(job *j, std::vector<cudaStream_t> &s, cudaGraphExec_t exec)
{
    for (int i = 0; i < j->n; i++) {
        cudaStream_t st = s[i % j->streams];
        if (exec)
            CK(cudaGraphLaunch(exec, st));
        else
            empty_kernel<<<1, 32, 0, st>>>(i);
    }
    CK(cudaGetLastError());
    for (auto &st : s)
        CK(cudaStreamSynchronize(st));
    if (exec)
        CK(cudaGraphExecDestroy(exec));
    for (auto &st : s)
        CK(cudaStreamDestroy(st));
    return 0;
}

static void *worker(void *arg)
{
    job *j = (job *)arg;
    std::vector<cudaStream_t> s(j->streams);
    cudaGraphExec_t exec = NULL;
    int ok = setup(j, s, &exec) == 0;
    pthread_barrier_wait(j->go); // always: main waits for every thread here
    j->failed = !ok || launch_all(j, s, exec) != 0;
    return NULL;
}

static long vmhwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: mt_launch THREADS STREAMS N [--graph NODES]\n");
        return 2;
    }
    int t = atoi(argv[1]), streams = atoi(argv[2]), n = atoi(argv[3]), nodes = 0;
    if (argc > 5 && !strcmp(argv[4], "--graph"))
        nodes = atoi(argv[5]);
    if (t < 1 || streams < 1 || n < 1 || nodes < 0)
        return 2;
    const int warm = 100;
    for (int i = 0; i < warm; i++)
        empty_kernel<<<1, 32>>>(i);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "mt_launch: no CUDA device\n");
        return 1;
    }
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)t + 1);
    std::vector<job> jobs(t, job{streams, n, nodes, &go, 0});
    std::vector<pthread_t> th(t);
    for (int i = 0; i < t; i++)
        if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0) {
            fprintf(stderr, "mt_launch: pthread_create failed at thread %d\n", i);
            return 1;
        }
    pthread_barrier_wait(&go);
    auto t0 = std::chrono::steady_clock::now();
    int failed = 0;
    for (int i = 0; i < t; i++) {
        pthread_join(th[i], NULL);
        failed |= jobs[i].failed;
    }
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (failed)
        return 1;
    long long kernels = (long long)t * n * (nodes ? nodes : 1) + warm;
    printf("KERNELS %lld\nSECONDS %.3f\nRATE %.0f\nVMHWM_KB %ld\n", kernels, sec, (kernels - warm) / sec, vmhwm_kb());
    return 0;
}
