/* warplens clock calibration for in-kernel traces (host + device, CUDA C++; not for NVRTC).
 *
 * In-kernel records carry %globaltimer, which on the H100 runs ~0.5 ms away from CLOCK_REALTIME,
 * the clock of CUPTI's kernel records. warplens_calibrate() measures the offset once per process:
 * a one-thread kernel waits on a flag in mapped host memory; the host reads CLOCK_REALTIME (t0),
 * raises the flag, and spins until the kernel has answered with its 64-bit %globaltimer (g),
 * then reads CLOCK_REALTIME again (t1). offset = (t0 + t1) / 2 - g, uncertainty = (t1 - t0) / 2;
 * the round with the shortest round trip wins. Pass the result to wl_ik_place()
 * (src/analysis/inkernel_decode.h) as wl_ik_calibration. */
#ifndef WARPLENS_CALIBRATE_CUH
#define WARPLENS_CALIBRATE_CUH

#include <cuda_runtime.h>
#include <string.h>
#include <time.h>

typedef struct warplens_clock_calibration {
    long long realtime_minus_globaltimer_ns;
    unsigned long long uncertainty_ns; /* half the best round trip */
    int rounds;                        /* rounds that completed */
} warplens_clock_calibration;

#define WARPLENS_CALIB_STOP 0xffffffffu

__device__ __forceinline__ unsigned long long warplens_globaltimer64(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
    return t;
}

static __global__ void warplens_calibrate_kernel(volatile unsigned int *cmd,
                                                 volatile unsigned long long *reply, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        unsigned int c;
        while ((c = *cmd) != (unsigned int)(i + 1))
            if (c == WARPLENS_CALIB_STOP)
                return;
        reply[i] = warplens_globaltimer64();
        __threadfence_system();
    }
}

static inline long long warplens_realtime_ns_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* rounds: 16..1024 (64 is plenty). Uses the current device; returns cudaSuccess, a CUDA error, or
 * cudaErrorNotReady when the kernel did not answer within 5 s (e.g. the GPU is busy). */
static inline cudaError_t warplens_calibrate(int rounds, warplens_clock_calibration *out)
{
    memset(out, 0, sizeof *out);
    if (rounds < 1)
        rounds = 64;
    if (rounds > 1024)
        rounds = 1024;
    unsigned int *cmd_h = NULL;
    unsigned long long *reply_h = NULL;
    unsigned int *cmd_d = NULL;
    unsigned long long *reply_d = NULL;
    cudaStream_t stream = NULL;
    cudaError_t e = cudaHostAlloc((void **)&cmd_h, sizeof *cmd_h, cudaHostAllocMapped);
    if (e == cudaSuccess)
        e = cudaHostAlloc((void **)&reply_h, sizeof *reply_h * (size_t)rounds, cudaHostAllocMapped);
    if (e == cudaSuccess)
        e = cudaHostGetDevicePointer((void **)&cmd_d, cmd_h, 0);
    if (e == cudaSuccess)
        e = cudaHostGetDevicePointer((void **)&reply_d, reply_h, 0);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) {
        *(volatile unsigned int *)cmd_h = 0;
        memset(reply_h, 0, sizeof *reply_h * (size_t)rounds);
        warplens_calibrate_kernel<<<1, 1, 0, stream>>>(cmd_d, reply_d, rounds);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        long long best_rtt = -1, best_off = 0;
        for (int i = 0; i < rounds; i++) {
            volatile unsigned long long *r = (volatile unsigned long long *)reply_h + i;
            long long t0 = warplens_realtime_ns_();
            *(volatile unsigned int *)cmd_h = (unsigned int)(i + 1);
            __sync_synchronize();
            long long t1;
            while (*r == 0) {
                t1 = warplens_realtime_ns_();
                if (t1 - t0 > 5000000000ll)
                    break;
            }
            t1 = warplens_realtime_ns_();
            if (*r == 0) {
                e = cudaErrorNotReady;
                break;
            }
            long long g = (long long)*r;
            long long rtt = t1 - t0;
            if (best_rtt < 0 || rtt < best_rtt) {
                best_rtt = rtt;
                best_off = t0 + rtt / 2 - g;
            }
            out->rounds++;
        }
        if (e != cudaSuccess) {
            *(volatile unsigned int *)cmd_h = WARPLENS_CALIB_STOP;
            __sync_synchronize();
        }
        cudaError_t s = cudaStreamSynchronize(stream);
        if (e == cudaSuccess)
            e = s;
        if (e == cudaSuccess) {
            out->realtime_minus_globaltimer_ns = best_off;
            out->uncertainty_ns = (unsigned long long)(best_rtt + 1) / 2;
        }
    }
    if (stream)
        cudaStreamDestroy(stream);
    if (cmd_h)
        cudaFreeHost(cmd_h);
    if (reply_h)
        cudaFreeHost(reply_h);
    return e;
}

#endif /* WARPLENS_CALIBRATE_CUH */
