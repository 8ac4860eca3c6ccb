/* %globaltimer placed in CUPTI's own clock domain (inkernel_capture.h, common/clock_fit.h): the
 * recorder launches one-thread probe kernels (capture/clock_probe_ptx.h) on a private stream, each
 * reading %globaltimer as its first and last instructions; CUPTI records each kernel's [start, end]
 * like any other. Each probe bounds c = CUPTI clock - %globaltimer to an interval; the
 * intersection over a batch is the offset with a hard error bound, tightened by the probe's
 * measured gap floors where the GPU model has them (common/probe_floors.c): from about ±450 ns to
 * the gaps' jitter plus the drift over the batch, ±25-50 ns on the H100.
 *
 * c drifts (15-23 µs/s measured on the H100: CUPTI maps the GPU's timer to CLOCK_REALTIME), so
 * one batch after the kernels is not enough: the first registration after a collect launches a
 * small early batch without waiting for it (wl_calibrate_cupti_early), the collect launches the
 * main batch, and the importer interpolates between the two, which bracket every kernel
 * registered in between. The price, measured on the H100: the first registration of a context
 * loads the probe module and the early batch runs just before the program's kernel, and that
 * kernel's first regions ran longer than their cycles (README, Limits).
 *
 * Probes come from embedded PTX (cuModuleLoadData: no CUDA compiler needed to build the recorder),
 * loaded once per context and unloaded when the context is destroyed, and are launched with
 * wl_tls.internal_calls raised, so the API callbacks skip them and their kernel records are kept
 * out of the session (activity_decode.c hands their times to wl_calib_note instead). Waiting for
 * their records (a forced CUPTI flush, at most ~1 s) happens only in warplens_inkernel_collect(),
 * a cold call the program makes after synchronising. */
#include "capture/inkernel_capture.h"

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/clock_probe_ptx.h"
#include "capture/recorder.h"
#include "common/clock.h"
#include "common/clock_fit.h"
#include "common/log.h"
#include "common/probe_floors.h"

#define KERNELS 48u               /* the main batch, at collect */
#define EARLY 16u                 /* the early batch, at the first registration after a collect */
#define TIMER_STEP_NS 32u         /* %globaltimer's resolution on H100 (shared/notes/h100.md) */
#define ROUNDING_NS 1             /* CUPTI's conversion to CLOCK_REALTIME rounds to 1 ns */
#define DRIFT_BOUND_PPB 100000u   /* the offset's drift over one batch, at most (15-23 ppm measured) */
#define WAIT_NS 1000000000ull     /* for the records, after the flush */
#define REFLUSH_NS 50000000ull
#define NOTES 1024u               /* > EARLY + KERNELS: one collect's records never evict each other */
#define CONTEXTS 16

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

/* Per context: the probe's module, a private stream, device memory for the reads (early batch
 * first, then the main batch) and the early batch in flight. Guarded by g_lock; the early path
 * only tries the lock, so a registering thread never waits for a collect. */
typedef struct probe_ctx {
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream stream;
    CUdeviceptr reads;
    unsigned early_n;             /* probes of the early batch in flight (0: none) */
    uint32_t early_corr[EARLY];
} probe_ctx;
static probe_ctx g_ctx[CONTEXTS];
static int g_ctx_n;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void release(probe_ctx *pc)
{
    if (pc->stream)
        (void)cuStreamDestroy(pc->stream);
    if (pc->reads)
        (void)cuMemFree(pc->reads);
    if (pc->mod)
        (void)cuModuleUnload(pc->mod);
    memset(pc, 0, sizeof *pc);
}

/* The current context's probe state, set up on first use (g_lock held, internal_calls raised).
 * NULL with why. */
static probe_ctx *probe_ctx_get(char *why, size_t why_size)
{
    CUcontext ctx = NULL;
    if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
        snprintf(why, why_size, "no current CUDA context");
        return NULL;
    }
    for (int i = 0; i < g_ctx_n; i++)
        if (g_ctx[i].ctx == ctx)
            return &g_ctx[i];
    if (g_ctx_n == CONTEXTS) {
        snprintf(why, why_size, "more than %d contexts calibrated", CONTEXTS);
        return NULL;
    }
    probe_ctx *pc = &g_ctx[g_ctx_n];
    memset(pc, 0, sizeof *pc);
    pc->ctx = ctx;
    const char *step = "cuModuleLoadData";
    CUresult r = cuModuleLoadData(&pc->mod, wl_clock_probe_ptx);
    if (r == CUDA_SUCCESS && (step = "cuModuleGetFunction"))
        r = cuModuleGetFunction(&pc->fn, pc->mod, WL_CLOCK_PROBE_NAME);
    if (r == CUDA_SUCCESS && (step = "cuMemAlloc")) /* device memory: no PCIe write in the kernel's tail */
        r = cuMemAlloc(&pc->reads, 16u * (EARLY + KERNELS));
    if (r == CUDA_SUCCESS && (step = "cuStreamCreate"))
        r = cuStreamCreate(&pc->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        cuGetErrorName(r, &name);
        snprintf(why, why_size, "%s failed (%s)", step, name ? name : "?");
        release(pc);
        return NULL;
    }
    g_ctx_n++;
    return pc;
}

void wl_calib_context_destroyed(void *context)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_ctx_n; i++)
        if (g_ctx[i].ctx == (CUcontext)context) {
            wl_tls.internal_calls++;
            release(&g_ctx[i]); /* the context is still alive while it is being destroyed */
            wl_tls.internal_calls--;
            g_ctx[i] = g_ctx[--g_ctx_n];
            break;
        }
    pthread_mutex_unlock(&g_lock);
}

/* Launches n probes writing to slots [first, first + n), back to back: the batch spans a few
 * hundred µs, over which the offset drifts a few ns (the gaps were the same from an idle and from a
 * busy launch queue). corr[i]: 0 when the callback did not run. */
static CUresult launch_probes(probe_ctx *pc, unsigned first, unsigned n, uint32_t *corr)
{
    CUresult r = CUDA_SUCCESS;
    for (unsigned i = 0; r == CUDA_SUCCESS && i < n; i++) {
        CUdeviceptr out = pc->reads + (CUdeviceptr)(first + i) * 16;
        void *args[] = {&out};
        wl_tls.last_internal_corr = 0;
        r = cuLaunchKernel(pc->fn, 1, 1, 1, 1, 1, 1, 0, pc->stream, args, NULL);
        corr[i] = r == CUDA_SUCCESS ? wl_tls.last_internal_corr : 0;
    }
    return r;
}

void wl_calibrate_cupti_early(void)
{
    if (pthread_mutex_trylock(&g_lock) != 0)
        return; /* a collect is calibrating: the registration goes on without an early batch */
    char why[160];
    wl_tls.internal_calls++;
    probe_ctx *pc = probe_ctx_get(why, sizeof why);
    if (pc && !pc->early_n) {
        uint32_t corr[EARLY];
        if (launch_probes(pc, 0, EARLY, corr) == CUDA_SUCCESS) {
            memcpy(pc->early_corr, corr, sizeof corr);
            pc->early_n = EARLY;
        }
    }
    wl_tls.internal_calls--;
    pthread_mutex_unlock(&g_lock);
}

/* 1 and the floors of this context's GPU model, 0 when none were measured. WARPLENS_PROBE_FLOORS
 * (START_NS,END_NS, measured with bench_ik_probe_gaps --raw) stands in for the table: for a GPU
 * it lacks, or to check an entry. A wrong value is the user's to see: floors above the true gaps
 * empty the intersection, which fit_probes reports, and the plain bound is used. */
static int floors_of_device(wl_probe_floors *f)
{
    const char *env = getenv("WARPLENS_PROBE_FLOORS");
    if (env && *env) {
        if (wl_probe_floors_parse(env, f) == 0)
            return 1;
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "WARPLENS_PROBE_FLOORS=%s is not START_NS,END_NS (0..1000000 each); using the "
                           "table of measured GPUs", env);
    }
    CUdevice dev;
    char name[256];
    return cuCtxGetDevice(&dev) == CUDA_SUCCESS && cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS &&
           wl_probe_floors_for(name, f);
}

/* Waits for the records of n probes whose reads are in slots [first, first + n), fits them.
 * 0 with the calibration, or -1 with why. */
static int fit_probes(probe_ctx *pc, unsigned first, unsigned n, const uint32_t *corr, wl_cupti_calibration *out,
                      char *why, size_t why_size)
{
    uint64_t reads[2 * KERNELS];
    CUresult r = cuStreamSynchronize(pc->stream);
    if (r == CUDA_SUCCESS)
        r = cuMemcpyDtoH(reads, pc->reads + (CUdeviceptr)first * 16, (size_t)n * 16);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        cuGetErrorName(r, &name);
        snprintf(why, why_size, "reading the calibration kernels' clocks failed (%s)", name ? name : "?");
        return -1;
    }
    unsigned with_id = 0;
    for (unsigned i = 0; i < n; i++)
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
        for (unsigned i = 0; i < n; i++) {
            uint64_t st, en;
            if (corr[i] && !arrived[i] && note_get(corr[i], &st, &en)) {
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
    wl_probe_floors f = {0, 0};
    const int have_floors = floors_of_device(&f);
    const int64_t fl[2] = {f.start_ns, f.end_ns};
    int used_floors = 0;
    int64_t empty_by = 0;
    if (wl_clock_fit_batch(s, n, TIMER_STEP_NS, have_floors ? fl : NULL, ROUNDING_NS, DRIFT_BOUND_PPB, &fit,
                           &out->at_ns, &used_floors, &empty_by) != 0) {
        if (fit.used)
            snprintf(why, why_size, "the %u calibration kernels' windows do not intersect (CUPTI's clock and "
                                    "%%globaltimer are not related as assumed)", fit.used);
        else
            snprintf(why, why_size, "no CUPTI record of the calibration kernels arrived within 1 s");
        return -1;
    }
    if (have_floors && !used_floors) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "in-kernel clock calibration: this GPU's probe gaps fell under their measured floors "
                           "(by %lld ns); using the plain bound (about +-%llu ns)",
                    (long long)empty_by, (unsigned long long)fit.uncertainty_ns);
    }
    out->floors = used_floors;
    out->offset_ns = fit.offset_ns;
    out->uncertainty_ns = fit.uncertainty_ns;
    out->samples = fit.used;
    return 0;
}

int wl_calibrate_cupti(wl_cupti_calibration *out, wl_cupti_calibration *early, int *has_early, char *why,
                       size_t why_size)
{
    memset(out, 0, sizeof *out);
    *has_early = 0;
    pthread_mutex_lock(&g_lock);
    wl_tls.internal_calls++;
    int rc = -1;
    probe_ctx *pc = probe_ctx_get(why, why_size);
    if (pc) {
        if (pc->early_n) { /* first, so its records are in before the main batch's (NOTES) */
            char why_early[160];
            *has_early = fit_probes(pc, 0, pc->early_n, pc->early_corr, early, why_early, sizeof why_early) == 0;
            pc->early_n = 0;
        }
        uint32_t corr[KERNELS];
        CUresult r = launch_probes(pc, EARLY, KERNELS, corr);
        if (r != CUDA_SUCCESS) {
            const char *name = NULL;
            cuGetErrorName(r, &name);
            snprintf(why, why_size, "launching the calibration kernels failed (%s)", name ? name : "?");
        } else {
            rc = fit_probes(pc, EARLY, KERNELS, corr, out, why, why_size);
        }
    }
    wl_tls.internal_calls--;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
