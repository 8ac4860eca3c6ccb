/* Cost of in-kernel tracing on the GPU (run on the H100).
 *
 * 1. Cycles per device event. One block, clock64() read once before and once after a loop whose
 *    body is unrolled to 16 events (8 begin/end pairs, or 16 single events), so neither clock64
 *    nor the loop's own branch is paid per event: cycles/event = (c1 - c0) / (iterations * 16).
 *    Rows:
 *      empty loop            the same loop (counter, compare, branch) with one IMAD in it, so
 *                            that "net" subtracts the loop's own overhead (ptxas deletes a loop
 *                            with an empty body; the empty loop then read 0.00). With
 *                            -DWARPLENS_INKERNEL=0 the recording loop compiles to the same as an
 *                            empty loop (tests/gpu/check_sass_disabled.sh: byte-identical code)
 *      floor, 1 event/step   %globaltimer_lo read + 64-bit store + membar.cta, nothing else: the
 *                            loop of the notes' 26-cycle measurement (the store address is a
 *                            constant offset from a pointer bumped once per 16 events; the read
 *                            is the header's per-thread CS2R, not S2UR)
 *      floor, begin/end      the same three operations in the order a begin/end pair needs them
 *                            (timer, store, fence | fence, timer, store): the floor for pairs
 *      recording begin/end   warplens_ik_begin/_end, the leader alone in its warp
 *      ... leader + 31       the leader's warp full (31 threads that do not record run along)
 *      instant               warplens_ik_instant (no fence)
 *      warp not recording    begin/end in a warp without a recorder (what the other warps of a
 *                            warp group pay)
 *    "net" = recording - empty loop; the target is net <= 28 cycles per event (issue 21).
 * 2. Slowdown of a real kernel: a tiled FMA kernel over global memory, one region per tile per
 *    warp group. Three variants with identical work: compiled out (no tracing code), tracing
 *    code present but off at run time (NULL buffer), recording. Same grid, same FMA count (a
 *    run-time value), same loads and stores, the tile loop kept rolled in every variant and the
 *    register budget pinned by __launch_bounds__ so the variants get the same occupancy (printed:
 *    registers and resident blocks per SM of each); the outputs of the three are compared
 *    bit for bit. cudaEvents, variants interleaved (rotating order), median of 9 after a
 *    warm-up round.
 * usage: bench_inkernel_cost [iterations, default 1024 (x 16 events)] */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "warplens/device.cuh"

#define CUDA_OK(x)                                                                                 \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "bench_inkernel_cost: %s: %s\n", #x, cudaGetErrorString(e_));          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { M_EMPTY, M_FLOOR, M_FLOOR_PAIR, M_ON, M_INSTANT, M_SKIP, M_COUNT };
constexpr int EVENTS_PER_ITER = 16;

/* The floor's record: the same instructions as the header's store (a per-thread CS2R read straight
 * into the store's register pair, one 64-bit STG to a global-space address), with no predicate and
 * no bookkeeping. (Written as `*p = (u64)warplens_ik_timer() << 32 | low`, ptxas reads the timer
 * with S2UR + MOV instead, which made this "floor" ~60 cycles per event, above the recording.) */
__device__ __forceinline__ void floor_put(unsigned long long *p, unsigned low)
{
    asm volatile("{\n\t.reg .b32 t;\n\t"
                 "mov.u32 t, %%globaltimer_lo;\n\t"
                 "st.global.v2.u32 [%0], {%1, t};\n\t}"
                 :
                 : "l"(p), "r"(low)
                 : "memory");
}
__device__ __forceinline__ void floor_fence() { asm volatile("membar.cta;" : : : "memory"); }

/* Thread 0 is the recorder (except M_SKIP); cycles[threadIdx.x] = c1 - c0. */
template <int MODE>
__global__ void cost_kernel(warplens_ik_args ik, int iters, long long *cycles)
{
    warplens_ik_lane lane;
    warplens_ik_init(&lane, ik, 0, MODE != M_SKIP && threadIdx.x == 0);
    unsigned long long *p = ik.buf + 1 + threadIdx.x * (size_t)iters * EVENTS_PER_ITER, *g;
    asm("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(p)); /* st.global wants a global address */
    p = g;
    unsigned x = (unsigned)iters; /* M_EMPTY's loop-carried value */
    const long long c0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
        if (MODE == M_EMPTY) {
            /* The same loop (counter, compare, branch) with one multiply-add in it: ptxas deletes
             * a loop whose body emits no instruction (an empty asm statement does not keep it),
             * and then "empty" measured 0 cycles and subtracted none of the loop's own cost. */
            asm volatile("mad.lo.u32 %0, %0, 3, 1;" : "+r"(x));
        } else if (MODE == M_FLOOR) {
#pragma unroll
            for (int k = 0; k < EVENTS_PER_ITER; k++) {
                floor_put(p + k, 4u);
                floor_fence();
            }
            p += EVENTS_PER_ITER;
        } else if (MODE == M_FLOOR_PAIR) {
#pragma unroll
            for (int k = 0; k < EVENTS_PER_ITER; k += 2) {
                floor_put(p + k, 4u);
                floor_fence();
                floor_fence();
                floor_put(p + k + 1, 5u);
            }
            p += EVENTS_PER_ITER;
        } else if (MODE == M_ON || MODE == M_SKIP) {
#pragma unroll
            for (int k = 0; k < EVENTS_PER_ITER; k += 2) {
                warplens_ik_begin(&lane, 1);
                warplens_ik_end(&lane, 1);
            }
        } else if (MODE == M_INSTANT) {
#pragma unroll
            for (int k = 0; k < EVENTS_PER_ITER; k++)
                warplens_ik_instant(&lane, 2);
        }
    }
    const long long c1 = clock64();
    warplens_ik_finalize(&lane);
    cycles[threadIdx.x] = c1 - c0;
    if (MODE == M_EMPTY)
        *p = x; /* keeps the loop's value live (this run's records are not checked) */
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct CostRun {
    double cycles_per_event;
    unsigned long long nonzero;   /* words written (header + records), last run */
    unsigned counters[2];         /* last run */
};

template <int MODE>
static CostRun cost(int iters, int threads)
{
    const size_t body = (size_t)threads * iters * EVENTS_PER_ITER + 2; /* + finalize */
    const size_t words = 1 + body;
    unsigned long long *buf = nullptr;
    unsigned *counters = nullptr;
    long long *d_cycles = nullptr;
    CUDA_OK(cudaMalloc(&buf, words * 8));
    CUDA_OK(cudaMalloc(&counters, 8));
    CUDA_OK(cudaMalloc(&d_cycles, threads * sizeof(long long)));
    warplens_ik_args ik = {buf, counters, 1, 0, (unsigned)body};
    std::vector<double> v;
    CostRun r = {};
    std::vector<unsigned long long> h(words);
    for (int rep = 0; rep < 8; rep++) { /* round 0: warm-up */
        CUDA_OK(cudaMemset(buf, 0, words * 8));
        CUDA_OK(cudaMemset(counters, 0, 8));
        cost_kernel<MODE><<<1, threads>>>(ik, iters, d_cycles);
        CUDA_OK(cudaGetLastError());
        long long c = 0;
        CUDA_OK(cudaMemcpy(&c, d_cycles, sizeof c, cudaMemcpyDeviceToHost)); /* thread 0 */
        if (rep > 0)
            v.push_back((double)c / ((double)iters * EVENTS_PER_ITER));
    }
    CUDA_OK(cudaMemcpy(h.data(), buf, words * 8, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(r.counters, counters, 8, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < words; i++)
        r.nonzero += h[i] != 0;
    r.cycles_per_event = median(v);
    cudaFree(buf);
    cudaFree(counters);
    cudaFree(d_cycles);
    return r;
}

/* ---- 2. slowdown of a real kernel ---- */

enum { V_COMPILED_OUT, V_RUNTIME_OFF, V_ON, V_COUNT };

constexpr int FMA_THREADS = 256;

/* TRACE = false: no tracing code at all (what -DWARPLENS_INKERNEL=0 gives). Both instantiations
 * keep the tile loop rolled and are held to the same register budget (8 blocks of 256 threads per
 * SM: <= 32 registers), so neither gets a different schedule or occupancy from the other. */
template <bool TRACE>
__global__ void __launch_bounds__(FMA_THREADS, 8)
    fma_kernel(const float4 *__restrict__ in, float4 *__restrict__ out, int tiles, int fmas,
               warplens_ik_args ik)
{
    warplens_ik_lane lane;
    if (TRACE)
        warplens_ik_init(&lane, ik, threadIdx.x / 128, threadIdx.x % 128 == 0);
    const size_t base = (size_t)blockIdx.x * tiles * blockDim.x + threadIdx.x;
#pragma unroll 1
    for (int k = 0; k < tiles; k++) {
        if (TRACE)
            warplens_ik_begin(&lane, 1);
        float4 v = in[base + (size_t)k * blockDim.x];
#pragma unroll 4
        for (int r = 0; r < fmas; r++) {
            v.x = fmaf(v.x, 0.999f, 0.5f);
            v.y = fmaf(v.y, 0.999f, 0.25f);
            v.z = fmaf(v.z, 0.999f, 0.125f);
            v.w = fmaf(v.w, 0.999f, 0.0625f);
        }
        out[base + (size_t)k * blockDim.x] = v;
        if (TRACE)
            warplens_ik_end(&lane, 1);
    }
    if (TRACE)
        warplens_ik_finalize(&lane);
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 1024;
    if (iters < 1 || iters > (1 << 20)) {
        fprintf(stderr, "usage: bench_inkernel_cost [iterations 1..1048576]\n");
        return 2;
    }
    int dev = 0, sms = 0, clock_khz = 0;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_OK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    printf("bench_inkernel_cost: %s, %d SMs, peak SM clock %.0f MHz\n", prop.name, sms,
           clock_khz / 1e3);

    /* 1. cycles per event */
    const int events = iters * EVENTS_PER_ITER;
    cost<M_ON>(iters, 1); /* module load, clocks up */
    const CostRun empty = cost<M_EMPTY>(iters, 1);
    const CostRun floor1 = cost<M_FLOOR>(iters, 1);
    const CostRun floor2 = cost<M_FLOOR_PAIR>(iters, 1);
    const CostRun on = cost<M_ON>(iters, 1);
    const CostRun on_warp = cost<M_ON>(iters, 32);
    const CostRun instant = cost<M_INSTANT>(iters, 1);
    const CostRun skip = cost<M_SKIP>(iters, 32);
    printf("\nper-event cost: 1 block, clock64 around %d iterations x %d events (unrolled), "
           "median of 7\n",
           iters, EVENTS_PER_ITER);
    printf("  %-46s %12s\n", "variant", "cycles/event");
    printf("  %-46s %12.2f\n", "empty loop (counter+branch+1 IMAD per 16 events)",
           empty.cycles_per_event);
    printf("  %-46s %12.2f\n", "floor: timer + store + fence, 1 event/step", floor1.cycles_per_event);
    printf("  %-46s %12.2f\n", "floor: begin/end order (t,st,fence|fence,t,st)",
           floor2.cycles_per_event);
    printf("  %-46s %12.2f\n", "recording begin/end, leader alone", on.cycles_per_event);
    printf("  %-46s %12.2f\n", "recording begin/end, leader + 31 threads", on_warp.cycles_per_event);
    printf("  %-46s %12.2f\n", "recording instant (no fence)", instant.cycles_per_event);
    printf("  %-46s %12.2f\n", "begin/end in a warp without a recorder", skip.cycles_per_event);
    const double net = on.cycles_per_event - empty.cycles_per_event;
    printf("  %-46s %12.2f  (target <= 28: %s)\n", "net cost per event (recording - empty)", net,
           net <= 28.0 ? "met" : "NOT met");
    printf("  %-46s %12.2f\n", "bookkeeping over the begin/end floor",
           on.cycles_per_event - floor2.cycles_per_event);
    /* every event recorded (header + events + finalize), nothing dropped or invalid */
    const bool rec_ok = on.nonzero == (unsigned long long)events + 2 && on.counters[0] == 0 &&
                        on.counters[1] == 0 && on_warp.nonzero == (unsigned long long)events + 2 &&
                        instant.nonzero == (unsigned long long)events + 2 && skip.nonzero == 0;
    printf("  records check: %s (recording: %llu words written of %d + 2; leader+31: %llu; "
           "instant: %llu; no recorder: %llu; counters %u/%u)\n",
           rec_ok ? "ok" : "WRONG", on.nonzero, events, on_warp.nonzero, instant.nonzero,
           skip.nonzero, on.counters[0], on.counters[1]);

    /* 2. slowdown of a real kernel */
    const int threads = FMA_THREADS, groups = threads / 128, blocks = sms * 8, tiles = 64;
    const size_t n4 = (size_t)blocks * tiles * threads;
    std::vector<float4> h_in(n4);
    for (size_t i = 0; i < n4; i++)
        h_in[i] = make_float4((float)(i % 997) * 1e-3f, (float)(i % 991) * 1e-3f,
                              (float)(i % 983) * 1e-3f, (float)(i % 977) * 1e-3f);
    float4 *in = nullptr, *out[V_COUNT] = {};
    CUDA_OK(cudaMalloc(&in, n4 * sizeof(float4)));
    CUDA_OK(cudaMemcpy(in, h_in.data(), n4 * sizeof(float4), cudaMemcpyHostToDevice));
    for (int v = 0; v < V_COUNT; v++)
        CUDA_OK(cudaMalloc(&out[v], n4 * sizeof(float4)));
    unsigned long long need = 0;
    const unsigned max_records = 2 * tiles + 1;
    if (warplens_ik_buffer_words(blocks, groups, 0, max_records, &need)) {
        fprintf(stderr, "bench_inkernel_cost: bad trace configuration\n");
        return 1;
    }
    unsigned long long *buf = nullptr;
    unsigned *counters = nullptr;
    CUDA_OK(cudaMalloc(&buf, need * 8));
    CUDA_OK(cudaMalloc(&counters, 8));
    const warplens_ik_args ik_on = {buf, counters, (unsigned)groups, 0, max_records};
    const warplens_ik_args ik_off = {nullptr, nullptr, (unsigned)groups, 0, max_records};

    cudaFuncAttributes fa[2];
    int resident[2];
    CUDA_OK(cudaFuncGetAttributes(&fa[0], fma_kernel<false>));
    CUDA_OK(cudaFuncGetAttributes(&fa[1], fma_kernel<true>));
    CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident[0], fma_kernel<false>, threads, 0));
    CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident[1], fma_kernel<true>, threads, 0));
    printf("\nkernel slowdown: tiled FMA, %d blocks x %d threads (%d groups), %d tiles, one region "
           "per tile per group\n",
           blocks, threads, groups, tiles);
    printf("  without tracing code: %d registers, %d blocks/SM; with: %d registers, %d blocks/SM%s\n",
           fa[0].numRegs, resident[0], fa[1].numRegs, resident[1],
           resident[0] == resident[1] ? "" : "  (OCCUPANCY DIFFERS: comparison not like for like)");
    printf("  variants interleaved (rotating order), median of 9 after a warm-up round\n");
    printf("  %-9s %13s %13s %13s %10s %10s %10s %s\n", "fma/elem", "compiled_us", "off_us",
           "on_us", "off vs co", "on vs co", "on vs off", "outputs");
    const int fma_counts[] = {4, 64, 256};
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    std::vector<float4> h_out[V_COUNT];
    bool all_ok = rec_ok;
    for (int fi = 0; fi < 3; fi++) {
        const int fmas = fma_counts[fi];
        std::vector<double> t[V_COUNT];
        unsigned h_counters[2] = {0, 0};
        for (int rep = 0; rep < 10; rep++) {
            for (int j = 0; j < V_COUNT; j++) {
                const int v = (rep + j) % V_COUNT; /* rotate who runs first */
                CUDA_OK(cudaMemsetAsync(out[v], 0, n4 * sizeof(float4)));
                if (v == V_ON) {
                    CUDA_OK(cudaMemsetAsync(buf, 0, need * 8));
                    CUDA_OK(cudaMemsetAsync(counters, 0, 8));
                }
                CUDA_OK(cudaEventRecord(e0));
                if (v == V_COMPILED_OUT)
                    fma_kernel<false><<<blocks, threads>>>(in, out[v], tiles, fmas, ik_off);
                else
                    fma_kernel<true><<<blocks, threads>>>(in, out[v], tiles, fmas,
                                                          v == V_ON ? ik_on : ik_off);
                CUDA_OK(cudaGetLastError());
                CUDA_OK(cudaEventRecord(e1));
                CUDA_OK(cudaEventSynchronize(e1));
                float ms = 0;
                CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
                if (rep > 0)
                    t[v].push_back(ms * 1e3);
            }
        }
        for (int v = 0; v < V_COUNT; v++) {
            h_out[v].resize(n4);
            CUDA_OK(cudaMemcpy(h_out[v].data(), out[v], n4 * sizeof(float4), cudaMemcpyDeviceToHost));
        }
        CUDA_OK(cudaMemcpy(h_counters, counters, 8, cudaMemcpyDeviceToHost));
        std::vector<unsigned long long> words(need);
        CUDA_OK(cudaMemcpy(words.data(), buf, need * 8, cudaMemcpyDeviceToHost));
        unsigned long long recs = 0;
        for (unsigned long long w : words)
            recs += w != 0;
        const unsigned long long want = (unsigned long long)blocks * groups * max_records + 1;
        const bool same = memcmp(h_out[0].data(), h_out[1].data(), n4 * sizeof(float4)) == 0 &&
                          memcmp(h_out[0].data(), h_out[2].data(), n4 * sizeof(float4)) == 0;
        const bool recs_ok = recs == want && h_counters[0] == 0 && h_counters[1] == 0;
        all_ok = all_ok && same && recs_ok;
        const double co = median(t[V_COMPILED_OUT]), off = median(t[V_RUNTIME_OFF]),
                     onv = median(t[V_ON]);
        printf("  %-9d %13.1f %13.1f %13.1f %9.2f%% %9.2f%% %9.2f%% %s, %llu words%s\n", fmas, co,
               off, onv, (off / co - 1) * 100, (onv / co - 1) * 100, (onv / off - 1) * 100,
               same ? "identical" : "DIFFER", recs, recs_ok ? "" : " (WRONG record count)");
    }
    cudaFree(in);
    for (int v = 0; v < V_COUNT; v++)
        cudaFree(out[v]);
    cudaFree(buf);
    cudaFree(counters);
    printf("bench_inkernel_cost: %s\n", all_ok ? "checks ok" : "CHECKS FAILED");
    return all_ok ? 0 : 1;
}
