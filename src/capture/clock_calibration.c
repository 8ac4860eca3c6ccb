/* Measures CLOCK_REALTIME - %globaltimer in the calling thread's current context, for placing
 * in-kernel records (which carry %globaltimer) on the session clock (CUPTI's, CLOCK_REALTIME).
 * The same ping-pong as include/warplens/calibrate.cuh, done with the driver API and a PTX kernel
 * so the C recorder needs no CUDA compiler: a one-thread kernel waits on a flag in mapped host
 * memory; the host reads the clock (t0), raises the flag, spins until the kernel has written its
 * %globaltimer (g), reads the clock again (t1): offset = (t0 + t1) / 2 - g, uncertainty =
 * (t1 - t0) / 2; the round with the shortest round trip wins. Runs only inside
 * warplens_inkernel_collect(), a call the program makes after synchronising. */
#include "capture/inkernel_capture.h"

#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"

#define ROUNDS 64u
#define STOP_FLAG 0xffffffffu
#define ROUND_TIMEOUT_NS 2000000000ull

static const char k_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry warplens_clock_calibration(.param .u64 p_cmd, .param .u64 p_reply, .param .u32 p_rounds)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [p_cmd];\n"
    "  ld.param.u64 %rd2, [p_reply];\n"
    "  ld.param.u32 %r1, [p_rounds];\n"
    "  mov.u32 %r2, 0;\n"
    "LOOP:\n"
    "  setp.ge.u32 %p1, %r2, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  add.u32 %r3, %r2, 1;\n"
    "WAIT:\n"
    "  ld.volatile.u32 %r4, [%rd1];\n"
    "  setp.eq.u32 %p2, %r4, 0xffffffff;\n"
    "  @%p2 bra DONE;\n"
    "  setp.ne.u32 %p3, %r4, %r3;\n"
    "  @%p3 bra WAIT;\n"
    "  mov.u64 %rd3, %globaltimer;\n"
    "  mul.wide.u32 %rd4, %r2, 8;\n"
    "  add.u64 %rd5, %rd2, %rd4;\n"
    "  st.volatile.u64 [%rd5], %rd3;\n"
    "  membar.sys;\n"
    "  mov.u32 %r2, %r3;\n"
    "  bra LOOP;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

int wl_calibrate_globaltimer(int64_t *offset_ns, uint64_t *uncertainty_ns, char *why, size_t why_size)
{
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    CUstream stream = NULL;
    volatile uint32_t *cmd = NULL;
    volatile uint64_t *reply = NULL;
    CUdeviceptr cmd_d = 0, reply_d = 0;
    const char *step = "cuModuleLoadData";
    CUresult r = cuModuleLoadData(&mod, k_ptx);
    if (r == CUDA_SUCCESS && (step = "cuModuleGetFunction"))
        r = cuModuleGetFunction(&fn, mod, "warplens_clock_calibration");
    if (r == CUDA_SUCCESS && (step = "cuMemHostAlloc"))
        r = cuMemHostAlloc((void **)&cmd, sizeof *cmd, CU_MEMHOSTALLOC_DEVICEMAP);
    if (r == CUDA_SUCCESS)
        r = cuMemHostAlloc((void **)&reply, sizeof *reply * ROUNDS, CU_MEMHOSTALLOC_DEVICEMAP);
    if (r == CUDA_SUCCESS && (step = "cuMemHostGetDevicePointer"))
        r = cuMemHostGetDevicePointer(&cmd_d, (void *)cmd, 0);
    if (r == CUDA_SUCCESS)
        r = cuMemHostGetDevicePointer(&reply_d, (void *)reply, 0);
    if (r == CUDA_SUCCESS && (step = "cuStreamCreate"))
        r = cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
    int launched = 0;
    if (r == CUDA_SUCCESS && (step = "cuLaunchKernel")) {
        *cmd = 0;
        memset((void *)reply, 0, sizeof *reply * ROUNDS);
        unsigned rounds = ROUNDS;
        void *args[] = {&cmd_d, &reply_d, &rounds};
        r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL);
        launched = r == CUDA_SUCCESS;
    }
    int64_t best_rtt = -1, best_off = 0;
    int timed_out = 0;
    if (launched) {
        for (unsigned i = 0; i < ROUNDS; i++) {
            uint64_t t0 = wl_realtime_ns(), t1 = t0;
            *cmd = i + 1;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            while (reply[i] == 0) {
                t1 = wl_realtime_ns();
                if (t1 - t0 > ROUND_TIMEOUT_NS)
                    break;
            }
            t1 = wl_realtime_ns();
            if (reply[i] == 0) {
                timed_out = 1;
                break;
            }
            int64_t rtt = (int64_t)(t1 - t0);
            if (best_rtt < 0 || rtt < best_rtt) {
                best_rtt = rtt;
                best_off = (int64_t)t0 + rtt / 2 - (int64_t)reply[i];
            }
        }
        if (timed_out) {
            *cmd = STOP_FLAG; /* the kernel leaves whenever it gets to run */
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
        }
        CUresult s = cuStreamSynchronize(stream);
        if (s != CUDA_SUCCESS) {
            r = s;
            step = "cuStreamSynchronize";
        }
    }
    if (stream)
        (void)cuStreamDestroy(stream);
    if (reply)
        (void)cuMemFreeHost((void *)reply);
    if (cmd)
        (void)cuMemFreeHost((void *)cmd);
    if (mod)
        (void)cuModuleUnload(mod);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        cuGetErrorName(r, &name);
        snprintf(why, why_size, "%s failed (%s)", step, name ? name : "?");
        return -1;
    }
    if (timed_out || best_rtt < 0) {
        snprintf(why, why_size, "the calibration kernel did not answer within 2 s (GPU busy?)");
        return -1;
    }
    *offset_ns = best_off;
    *uncertainty_ns = (uint64_t)(best_rtt + 1) / 2;
    return 0;
}
