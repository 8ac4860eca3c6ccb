/* %globaltimer placed in CUPTI's own clock domain (inkernel_capture.h, common/clock_fit.h): the
 * recorder launches KERNELS one-thread kernels on a private stream, each reading %globaltimer as
 * its first and last instructions; CUPTI records each kernel's [start, end] like any other. The
 * reads lie inside their kernel's window, so every kernel bounds CUPTI clock - %globaltimer to an
 * interval, and the intersection over all of them is the offset with a hard error bound — measured
 * against the same records the lanes are nested under, unlike the ping-pong, which measures
 * CLOCK_REALTIME across PCIe.
 *
 * The kernels come from embedded PTX (cuModuleLoadData: no CUDA compiler needed to build the
 * recorder) and are launched with wl_tls.internal_calls raised, so the API callbacks skip them and
 * their kernel records are kept out of the session (activity_decode.c hands their times to
 * wl_calib_note instead). Runs only in warplens_inkernel_collect(), a cold call the program makes
 * after synchronising: it forces a CUPTI flush and waits (at most ~1 s) for the writer thread to
 * have seen the records. */
#include "capture/inkernel_capture.h"

#include <cuda.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capture/recorder.h"
#include "common/clock.h"
#include "common/clock_fit.h"

#define KERNELS 48u
#define TIMER_STEP_NS 32u         /* %globaltimer's resolution on H100 (shared/notes/h100.md) */
#define WAIT_NS 1000000000ull     /* for the records, after the flush */
#define REFLUSH_NS 50000000ull
#define NOTES 256u                /* > KERNELS: one collect's records never evict each other */

static const char k_probe_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry warplens_clock_probe(.param .u64 p_out)\n"
    "{\n"
    "  .reg .b64 %rd<5>;\n"
    "  mov.u64 %rd1, %globaltimer;\n"
    "  ld.param.u64 %rd2, [p_out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mov.u64 %rd4, %globaltimer;\n"
    "  st.global.v2.u64 [%rd3], {%rd1, %rd4};\n"
    "  ret;\n"
    "}\n";

/* CUPTI times of the recorder's own kernels, by correlation id (written by the writer thread,
 * read by the collecting thread: a sequence check around the two times). */
typedef struct note {
    atomic_uint corr;
    atomic_ullong start, end;
} note;
static note g_notes[NOTES];

void wl_calib_note(uint32_t correlation_id, uint64_t start_ns, uint64_t end_ns)
{
    note *n = &g_notes[correlation_id % NOTES];
    atomic_store_explicit(&n->corr, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&n->start, start_ns, memory_order_relaxed);
    atomic_store_explicit(&n->end, end_ns, memory_order_relaxed);
    atomic_store_explicit(&n->corr, correlation_id, memory_order_release);
}

/* 1 and the times when the record of `corr` has arrived. */
static int note_get(uint32_t corr, uint64_t *start, uint64_t *end)
{
    note *n = &g_notes[corr % NOTES];
    if (atomic_load_explicit(&n->corr, memory_order_acquire) != corr)
        return 0;
    *start = atomic_load_explicit(&n->start, memory_order_relaxed);
    *end = atomic_load_explicit(&n->end, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&n->corr, memory_order_relaxed) == corr;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

int wl_calibrate_cupti(int64_t *offset_ns, uint64_t *uncertainty_ns, uint64_t *at_ns, uint32_t *samples, char *why,
                       size_t why_size)
{
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    CUstream stream = NULL;
    CUdeviceptr reads_d = 0;
    uint64_t reads[2 * KERNELS];
    uint32_t corr[KERNELS];
    const char *step = "cuModuleLoadData";
    memset(corr, 0, sizeof corr);
    wl_tls.internal_calls++;
    CUresult r = cuModuleLoadData(&mod, k_probe_ptx);
    if (r == CUDA_SUCCESS && (step = "cuModuleGetFunction"))
        r = cuModuleGetFunction(&fn, mod, "warplens_clock_probe");
    if (r == CUDA_SUCCESS && (step = "cuMemAlloc")) /* device memory: no PCIe write in the kernel's tail */
        r = cuMemAlloc(&reads_d, sizeof reads);
    if (r == CUDA_SUCCESS && (step = "cuStreamCreate"))
        r = cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
    for (unsigned i = 0; r == CUDA_SUCCESS && i < KERNELS; i++) {
        CUdeviceptr out = reads_d + (CUdeviceptr)i * 16;
        void *args[] = {&out};
        step = "cuLaunchKernel";
        wl_tls.last_internal_corr = 0;
        r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL);
        corr[i] = wl_tls.last_internal_corr; /* 0 when the API callback did not run */
        /* every 4th waits for its kernel: samples from an idle and from a busy launch queue */
        if (r == CUDA_SUCCESS && (i & 3) == 3 && (step = "cuStreamSynchronize"))
            r = cuStreamSynchronize(stream);
    }
    if (r == CUDA_SUCCESS && (step = "cuStreamSynchronize"))
        r = cuStreamSynchronize(stream);
    if (r == CUDA_SUCCESS && (step = "cuMemcpyDtoH"))
        r = cuMemcpyDtoH(reads, reads_d, sizeof reads);
    if (stream)
        (void)cuStreamDestroy(stream);
    if (reads_d)
        (void)cuMemFree(reads_d);
    if (mod)
        (void)cuModuleUnload(mod);
    wl_tls.internal_calls--;
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        cuGetErrorName(r, &name);
        snprintf(why, why_size, "%s failed (%s)", step, name ? name : "?");
        return -1;
    }
    unsigned with_id = 0;
    for (unsigned i = 0; i < KERNELS; i++)
        with_id += corr[i] != 0;
    if (!with_id) {
        snprintf(why, why_size, "the calibration launches had no correlation id (API callbacks off?)");
        return -1;
    }

    /* the records: forced flush, then wait for the writer thread to decode them */
    wl_clock_sample s[KERNELS];
    unsigned char arrived[KERNELS];
    memset(s, 0, sizeof s);
    memset(arrived, 0, sizeof arrived);
    unsigned have = 0;
    const uint64_t t0 = wl_monotonic_ns();
    uint64_t last_flush = 0;
    for (;;) {
        const uint64_t now = wl_monotonic_ns();
        if (last_flush == 0 || now - last_flush >= REFLUSH_NS) {
            wl_cupti_flush(1);
            wl_pool_wake();
            last_flush = now ? now : 1;
        }
        for (unsigned i = 0; i < KERNELS; i++) {
            if (!corr[i] || arrived[i])
                continue;
            uint64_t st, en;
            if (note_get(corr[i], &st, &en)) {
                arrived[i] = 1;
                s[i].cupti_start_ns = st; /* 0: no timestamp; wl_clock_intersect skips it */
                s[i].cupti_end_ns = en;
                s[i].gpu_first_ns = reads[2 * i];
                s[i].gpu_last_ns = reads[2 * i + 1];
                have++;
            }
        }
        if (have == with_id || now - t0 > WAIT_NS)
            break;
        pause_us(200);
    }
    wl_clock_fit fit;
    if (wl_clock_intersect(s, KERNELS, TIMER_STEP_NS, &fit) != 0) {
        if (fit.used)
            snprintf(why, why_size, "the %u calibration kernels' windows do not intersect (CUPTI's clock and "
                                    "%%globaltimer are not related as assumed)", fit.used);
        else
            snprintf(why, why_size, "no CUPTI record of the calibration kernels arrived within 1 s");
        return -1;
    }
    *offset_ns = fit.offset_ns;
    *uncertainty_ns = fit.uncertainty_ns;
    *samples = fit.used;
    /* the time the offset belongs to: the middle of the kernels' span on the CUPTI clock */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (unsigned i = 0; i < KERNELS; i++)
        if (s[i].cupti_start_ns) {
            lo = s[i].cupti_start_ns < lo ? s[i].cupti_start_ns : lo;
            hi = s[i].cupti_end_ns > hi ? s[i].cupti_end_ns : hi;
        }
    *at_ns = lo + (hi - lo) / 2;
    return 0;
}
