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

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--workload"))
        return workload();
    const char *w = getenv("WARPLENS_BIN");
    if (!w) {
        fprintf(stderr, "usage: WARPLENS_BIN=path/to/warplens %s\n", argv[0]);
        return 2;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 2;
    self[n] = 0;
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s' run -o /tmp/wl_held.wlsession -- '%s' --workload 2>/tmp/wl_held.err", w, self);
    int rc = system(cmd);
    int passed = 0, failed = 0;
    int ok = WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
    printf("%s program ran normally and its exit status came through (%d)\n", ok ? "PASS" : "FAIL",
           WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
    ok ? passed++ : failed++;
    FILE *f = fopen("/tmp/wl_held.err", "r");
    int lines = 0, held = 0;
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        lines++;
        if (strstr(line, "CUPTI is already in use"))
            held++;
        printf("  stderr: %s", line);
    }
    if (f)
        fclose(f);
    ok = held == 1;
    printf("%s exactly one line says CUPTI is held by another tool (%d)\n", ok ? "PASS" : "FAIL", held);
    ok ? passed++ : failed++;
    printf("cupti_held: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
