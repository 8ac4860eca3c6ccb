// GPU suite: when another tool already holds CUPTI (one subscriber per process on CUDA 13.0),
// `warplens run` must say so in exactly one line and the program must run normally. The workload
// subscribes to CUPTI itself before its first CUDA call, as a profiler linked into the program
// would, then launches a kernel and checks its result.
#include <cuda_runtime.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_check.h"

__global__ void add_one(int *x) { x[threadIdx.x] += 1; }

static void CUPTIAPI noop(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

static int workload(void)
{
    CUpti_SubscriberHandle h;
    if (cuptiSubscribe(&h, noop, NULL) != CUPTI_SUCCESS) {
        fprintf(stderr, "workload: could not take CUPTI first\n");
        return 3;
    }
    int *d, host[32] = {0};
    if (cudaMalloc(&d, sizeof host) != cudaSuccess || cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice))
        return 4;
    add_one<<<1, 32>>>(d);
    if (cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess)
        return 5;
    for (int i = 0; i < 32; i++)
        if (host[i] != 1)
            return 6;
    cuptiUnsubscribe(h);
    return 0;
}

static int workloads(int argc, char **argv)
{
    (void)argc, (void)argv;
    return workload();
}

static int checker(const char *warplens, const char *self)
{
    const char *session = "/tmp/wl_held.wlsession", *log = "/tmp/wl_held.err";
    /* only the recorder's stderr: the summary on stdout may repeat its notices */
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s' run -o '%s' -- '%s' --workload 2>'%s'", warplens, session, self, log);
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    char d[128];
    snprintf(d, sizeof d, "exit status %d", rc);
    verdict("program ran normally and its exit status came through", rc == 0, d);
    FILE *f = fopen(log, "r");
    int held = 0;
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, "CUPTI is already in use"))
            held++;
        printf("  stderr: %s", line);
    }
    if (f)
        fclose(f);
    snprintf(d, sizeof d, "%d such lines", held);
    verdict("exactly one line says CUPTI is held by another tool", held == 1, d);
    printf("cupti_held: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail != 0;
}

int main(int argc, char **argv) { return gpu_test_main(argc, argv, workloads, checker); }
