/* GPU test of in-kernel tracing (run on the H100): a warp-specialised producer / 2 consumers /
 * epilogue kernel (4 warp groups, shared-memory double buffer, named barriers) instrumented with
 * warplens/device.cuh. The buffer is decoded with the C decoder and checked: every lane finalized,
 * nothing unmatched, expected slice counts and nesting, each region's decoded duration against
 * two clock64() pairs the recording thread reads inside and around the same region (per region
 * instance; see REGION for which pair checks what), events inside the kernel's
 * cudaEvent duration, placement on CLOCK_REALTIME with the calibration, device-side record limit.
 * Prints PASS/FAIL lines and "inkernel: N passed, N failed"; exits non-zero on failure. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "analysis/inkernel_decode.h"
#include "warplens/calibrate.cuh"
#include "warplens/device.cuh"

namespace {

constexpr int WG = 128;         /* threads per warp group */
constexpr int GROUPS = 4;       /* producer, consumer 0, consumer 1, epilogue */
constexpr int TILE = 4096;      /* floats per stage */
constexpr int HALF = TILE / 2;  /* each consumer takes half a tile */
constexpr int FMAS = 16;        /* dependent FMAs per element: makes compute regions ~us long */
constexpr int BAR_N = 3 * WG;   /* threads meeting at each named barrier */
enum { EV_LANE, EV_LOAD, EV_WAIT_EMPTY, EV_WAIT_FULL, EV_COMPUTE, EV_WAIT_DONE, EV_STORE, EV_TILE,
       EV_EPILOGUE, NEV };
const char *EVENT_NAMES = "lane,load,wait_empty,wait_full,compute,wait_done,store,tile,epilogue";

int passed, failed;
void check(bool ok, const char *what, const char *fmt = "", ...) __attribute__((format(printf, 3, 4)));
void check(bool ok, const char *what, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    printf("%s: %s%s%s\n", ok ? "PASS" : "FAIL", what, detail[0] ? " -- " : "", detail);
    (ok ? passed : failed)++;
}

#define CUDA_OK(x)                                                                                 \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            printf("FAIL: %s: %s\ninkernel: %d passed, %d failed\n", #x, cudaGetErrorString(e_),   \
                   passed, failed + 1);                                                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__device__ __forceinline__ void bar_sync(unsigned id, unsigned n)
{
    asm volatile("barrier.sync %0, %1;" : : "r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned id, unsigned n)
{
    asm volatile("barrier.arrive %0, %1;" : : "r"(id), "r"(n) : "memory");
}

/* clock64 with a memory clobber: the region's own memory accesses stay between the two reads
 * (CUDA's clock64() has no clobber, so the compiler may move loads and stores across it). */
__device__ __forceinline__ long long clk()
{
    long long c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c) : : "memory");
    return c;
}

/* Per lane, the leader logs (event, inner cycles, outer cycles) of every clock-measured region in
 * the order the regions end, which is the order of their end records in the lane: the host pairs
 * the n-th log entry with the n-th decoded slice of those events. */
__host__ __device__ constexpr int max_logged(int tiles) { return 2 * tiles + 2; }
constexpr int LOG_W = 3; /* long longs per log entry */

/* A recorded region with two clock64() pairs, read by the recording thread itself:
 *   outer: just before warplens_ik_begin and just after warplens_ik_end. In issue order
 *          o0 < the begin's timer read and the end's timer read < o1 (the SASS keeps the special
 *          register reads in program order), so the outer pair contains the records' interval
 *          plus a few instructions: it sees whatever the records see, waits included.
 *   inner: just after the begin (after its store and fence) and just before the end. Inside the
 *          records' interval, so cycles / (fastest clock) can never exceed the decoded duration.
 *          It can miss a wait: on the H100 (2026-11-22) the inner pair around bar.sync measured
 *          ~2 us (wait_full) and ~93 us (wait_done) less than the records, whose end timestamp is
 *          read after the end's fence, although the SASS order is clock64, BAR.SYNC, clock64
 *          (checked in the cubin): the clock64 read right after the barrier does not see its
 *          release the way the timer read after the fence does. The host checks the waits with
 *          the outer pair and everything else with the inner one. */
#define REGION(ev, ...)                                                                            \
    do {                                                                                           \
        const long long o0_ = clk();                                                               \
        warplens_ik_begin(&lane, (ev));                                                            \
        const long long c0_ = clk();                                                               \
        __VA_ARGS__;                                                                               \
        const long long c1_ = clk();                                                               \
        warplens_ik_end(&lane, (ev));                                                              \
        const long long o1_ = clk();                                                               \
        if (t == 0 && nlog < maxlog) {                                                             \
            rlog[LOG_W * nlog] = (ev);                                                             \
            rlog[LOG_W * nlog + 1] = c1_ - c0_;                                                    \
            rlog[LOG_W * nlog + 2] = o1_ - o0_;                                                    \
        }                                                                                          \
        nlog++;                                                                                    \
    } while (0)

__global__ void __launch_bounds__(WG *GROUPS)
    ws_pipeline(const float *__restrict__ in, float *__restrict__ out, int tiles,
                warplens_ik_args ik, long long *cycles)
{
    __shared__ float stage[2][TILE];
    __shared__ float partial[2][WG];
    const unsigned group = threadIdx.x / WG, t = threadIdx.x % WG;
    warplens_ik_lane lane;
    warplens_ik_init(&lane, ik, group, t == 0);
    const int maxlog = max_logged(tiles);
    long long *rlog = cycles + ((size_t)blockIdx.x * GROUPS + group) * LOG_W * maxlog;
    int nlog = 0;
    const long long lane_o0 = clk();
    warplens_ik_begin(&lane, EV_LANE);
    const long long lane_c0 = clk();
    const float *src = in + (size_t)blockIdx.x * tiles * TILE;

    if (group == 0) { /* producer: fills stage k & 1 once the consumers released it */
        for (int k = 0; k < tiles; k++) {
            const int s = k & 1;
            if (k >= 2)
                REGION(EV_WAIT_EMPTY, bar_sync(3 + s, BAR_N));
            REGION(EV_LOAD, for (int i = t; i < TILE; i += WG) stage[s][i] = src[(size_t)k * TILE + i]);
            warplens_ik_instant(&lane, EV_TILE);
            bar_arrive(1 + s, BAR_N);
        }
    } else if (group <= 2) { /* consumers: each reduces its half of every tile */
        const int c = group - 1;
        float acc = 0.f;
        for (int k = 0; k < tiles; k++) {
            const int s = k & 1;
            REGION(EV_WAIT_FULL, bar_sync(1 + s, BAR_N));
            REGION(EV_COMPUTE, for (int i = c * HALF + t; i < (c + 1) * HALF; i += WG) {
                const float x = stage[s][i];
                for (int r = 0; r < FMAS; r++)
                    acc = fmaf(acc, 0.999f, x);
            });
            if (k + 2 < tiles)
                bar_arrive(3 + s, BAR_N);
        }
        partial[c][t] = acc;
        bar_arrive(5, BAR_N);
    } else { /* epilogue: waits for both consumers, writes the result */
        WARPLENS_IK_SCOPE(lane, EV_EPILOGUE);
        REGION(EV_WAIT_DONE, bar_sync(5, BAR_N));
        REGION(EV_STORE, out[(size_t)blockIdx.x * WG + t] = partial[0][t] + partial[1][t]);
    }
    const long long lane_c1 = clk();
    warplens_ik_end(&lane, EV_LANE);
    const long long lane_o1 = clk();
    if (t == 0 && nlog < maxlog) {
        rlog[LOG_W * nlog] = EV_LANE;
        rlog[LOG_W * nlog + 1] = lane_c1 - lane_c0;
        rlog[LOG_W * nlog + 2] = lane_o1 - lane_o0;
    }
    warplens_ik_finalize(&lane);
}

long long realtime_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

struct Run {
    std::vector<unsigned long long> words; /* buffer + guard */
    std::vector<long long> cycles;
    unsigned counters[2];
    float kernel_ms;
    long long host_t0, host_t1;
};

/* Launches once with the given record limit (0 = tracing off at run time) and copies back. */
void launch(const float *d_in, float *d_out, int blocks, int tiles, unsigned max_records,
            size_t guard, Run &run)
{
    unsigned long long words = 0;
    if (max_records)
        CUDA_OK(warplens_ik_buffer_words(blocks, GROUPS, 0, max_records, &words) == 0
                    ? cudaSuccess
                    : cudaErrorInvalidValue);
    const size_t total = words + guard;
    unsigned long long *d_buf = nullptr;
    unsigned *d_counters = nullptr;
    long long *d_cycles = nullptr;
    CUDA_OK(cudaMalloc(&d_buf, total * 8));
    CUDA_OK(cudaMalloc(&d_counters, 2 * sizeof(unsigned)));
    const size_t n_log = (size_t)blocks * GROUPS * LOG_W * max_logged(tiles);
    CUDA_OK(cudaMalloc(&d_cycles, n_log * sizeof(long long)));
    CUDA_OK(cudaMemset(d_cycles, 0xff, n_log * sizeof(long long))); /* -1: nothing logged */
    CUDA_OK(cudaMemset(d_buf, 0, total * 8));
    CUDA_OK(cudaMemset(d_counters, 0, 2 * sizeof(unsigned)));
    warplens_ik_args ik = {max_records ? d_buf : nullptr, d_counters, GROUPS, 0, max_records};
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    CUDA_OK(cudaDeviceSynchronize());
    run.host_t0 = realtime_ns();
    CUDA_OK(cudaEventRecord(e0));
    ws_pipeline<<<blocks, WG * GROUPS>>>(d_in, d_out, tiles, ik, d_cycles);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaEventRecord(e1));
    CUDA_OK(cudaEventSynchronize(e1));
    run.host_t1 = realtime_ns();
    CUDA_OK(cudaEventElapsedTime(&run.kernel_ms, e0, e1));
    run.words.resize(total);
    run.cycles.resize(n_log);
    CUDA_OK(cudaMemcpy(run.words.data(), d_buf, total * 8, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(run.counters, d_counters, sizeof run.counters, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(run.cycles.data(), d_cycles, run.cycles.size() * sizeof(long long),
                       cudaMemcpyDeviceToHost));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(d_buf);
    cudaFree(d_counters);
    cudaFree(d_cycles);
}

bool guard_clean(const Run &run, size_t words)
{
    for (size_t i = words; i < run.words.size(); i++)
        if (run.words[i])
            return false;
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const int tiles = argc > 1 ? atoi(argv[1]) : 32;
    int dev = 0, sms = 0, clock_khz = 0;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_OK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    const int blocks = 2 * sms;
    const int lanes = blocks * GROUPS;
    const double clock_ghz = clock_khz / 1e6;
    printf("device %s, %d SMs, peak SM clock %.3f GHz; %d blocks x %d groups, %d tiles\n",
           prop.name, sms, clock_ghz, blocks, GROUPS, tiles);

    warplens_clock_calibration cal;
    cudaError_t ce = warplens_calibrate(64, &cal);
    check(ce == cudaSuccess && cal.rounds == 64, "clock calibration", "%s, offset %lld ns +- %llu ns",
          cudaGetErrorString(ce), cal.realtime_minus_globaltimer_ns, cal.uncertainty_ns);

    const size_t n_in = (size_t)blocks * tiles * TILE;
    std::vector<float> h_in(n_in);
    for (size_t i = 0; i < n_in; i++)
        h_in[i] = (float)(i % 1000) * 1e-3f;
    float *d_in = nullptr, *d_out = nullptr;
    CUDA_OK(cudaMalloc(&d_in, n_in * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_out, (size_t)blocks * WG * sizeof(float)));
    CUDA_OK(cudaMemcpy(d_in, h_in.data(), n_in * sizeof(float), cudaMemcpyHostToDevice));

    const unsigned max_records = 5 * tiles + 32;
    const size_t guard = 64;
    unsigned long long words = 0;
    warplens_ik_buffer_words(blocks, GROUPS, 0, max_records, &words);
    Run warm, run;
    launch(d_in, d_out, blocks, tiles, max_records, guard, warm); /* module load, clocks up */
    launch(d_in, d_out, blocks, tiles, max_records, guard, run);

    /* the pipeline computed the right thing */
    std::vector<float> h_out((size_t)blocks * WG);
    CUDA_OK(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < WG; t++) {
            float p[2];
            for (int c = 0; c < 2; c++) {
                float acc = 0.f;
                for (int k = 0; k < tiles; k++)
                    for (int i = c * HALF + t; i < (c + 1) * HALF; i += WG) {
                        const float x = h_in[(size_t)b * tiles * TILE + (size_t)k * TILE + i];
                        for (int r = 0; r < FMAS; r++)
                            acc = fmaf(acc, 0.999f, x);
                    }
                p[c] = acc;
            }
            const float want = p[0] + p[1], got = h_out[(size_t)b * WG + t];
            wrong += fabsf(got - want) > 1e-5f * fabsf(want) + 1e-6f;
        }
    check(wrong == 0, "producer/consumer pipeline result", "%zu of %d outputs wrong", wrong, blocks * WG);

    check(guard_clean(run, words), "no write past the buffer", "%zu guard words", guard);
    check(run.counters[0] == 0 && run.counters[1] == 0, "no dropped or invalid records",
          "dropped %u, invalid %u", run.counters[0], run.counters[1]);

    wl_ik_options opt = {(uint64_t)lanes, max_records};
    wl_ik_result r;
    wl_ik_error err;
    int rc = wl_ik_decode(run.words.data(), words, &opt, &r, &err);
    check(rc == 0, "decode", "%s", rc ? err.msg : "");
    if (rc) {
        printf("inkernel: %d passed, %d failed\n", passed, failed);
        return 1;
    }
    const wl_ik_counts &c = r.counts;
    /* slots the kernel's events ask for (a begin 2, with its end; an instant 1): the run with a
     * small limit below must count as dropped exactly those it did not write */
    const uint64_t wanted_slots = 2 * c.slices + c.instants;
    check(r.num_blocks == (uint32_t)blocks && r.num_groups == GROUPS, "header",
          "%u blocks x %u groups", r.num_blocks, r.num_groups);
    check(c.lanes_seen == (uint64_t)lanes && c.lanes_finalized == (uint64_t)lanes,
          "every lane finalized", "%llu seen, %llu finalized of %d",
          (unsigned long long)c.lanes_seen, (unsigned long long)c.lanes_finalized, lanes);
    check(c.unmatched_begins == 0 && c.unmatched_ends == 0 && c.crossed == 0 &&
              c.after_finalize == 0 && c.over_capacity == 0,
          "nothing unmatched, crossed or dropped", "unmatched %llu/%llu crossed %llu",
          (unsigned long long)c.unmatched_begins, (unsigned long long)c.unmatched_ends,
          (unsigned long long)c.crossed);

    /* per lane and event: slice counts, nesting under the lane slice */
    std::vector<uint64_t> n(lanes * NEV, 0), lane_dur(lanes, 0),
        lane_start(lanes, 0), children(lanes, 0);
    for (size_t i = 0; i < r.n_slices; i++) {
        const wl_ik_slice &s = r.slices[i];
        const size_t lane = (size_t)s.block * GROUPS + s.group;
        n[lane * NEV + s.event]++;
        if (s.event == EV_LANE) {
            lane_dur[lane] = s.dur_ns;
            lane_start[lane] = s.start_ns;
        }
    }
    size_t bad_nest = 0, bad_depth = 0;
    for (size_t i = 0; i < r.n_slices; i++) {
        const wl_ik_slice &s = r.slices[i];
        const size_t lane = (size_t)s.block * GROUPS + s.group;
        if (s.event == EV_LANE) {
            bad_depth += s.depth != 0;
            continue;
        }
        bad_depth += s.depth < 1;
        bad_nest += s.start_ns < lane_start[lane] ||
                    s.start_ns + s.dur_ns > lane_start[lane] + lane_dur[lane];
        if (s.depth == 1)
            children[lane] += s.dur_ns;
    }
    check(bad_nest == 0 && bad_depth == 0, "regions nest inside their lane slice",
          "%zu outside, %zu wrong depth", bad_nest, bad_depth);
    size_t bad_counts = 0;
    for (int lane = 0; lane < lanes; lane++) {
        const uint64_t *m = &n[(size_t)lane * NEV];
        const int g = lane % GROUPS;
        const uint64_t T = (uint64_t)tiles;
        bool ok = m[EV_LANE] == 1;
        if (g == 0)
            ok = ok && m[EV_LOAD] == T && m[EV_WAIT_EMPTY] == T - 2 && m[EV_COMPUTE] == 0;
        else if (g <= 2)
            ok = ok && m[EV_WAIT_FULL] == T && m[EV_COMPUTE] == T && m[EV_LOAD] == 0;
        else
            ok = ok && m[EV_EPILOGUE] == 1 && m[EV_WAIT_DONE] == 1 && m[EV_STORE] == 1;
        bad_counts += !ok;
    }
    check(bad_counts == 0, "slice counts per lane and event", "%zu lanes off", bad_counts);
    size_t tile_instants = 0;
    for (size_t i = 0; i < r.n_instants; i++)
        tile_instants += r.instants[i].event == EV_TILE && r.instants[i].group == 0;
    check(tile_instants == (size_t)blocks * tiles && r.n_instants == tile_instants,
          "tile instants", "%zu", tile_instants);

    /* Durations against clock64(), per region instance, read by the recording thread (see REGION):
     * an inner pair inside the records' interval and an outer pair around it. The SM clock is not
     * assumed to be the peak (the GPU need not be at boost): it is measured from the longest
     * regions, the lane slices (tens of us each), as the median over lanes of inner cycles /
     * decoded ns. The timer steps by 32 ns (sometimes 64 ns between reads). Then:
     *   long regions (decoded >= 2 us): |decoded - cycles/clock| <= 10% + 64 ns;
     *   short regions: within the timer step, the records' cost (store, fence: up to 256 ns on the
     *     side where the pair includes it) and 10%;
     *   every region: inner cycles / fastest clock <= decoded + 64 ns, where the fastest clock is
     *     the nominal peak or, when higher, the fastest lane's measured rate (capped at the median
     *     + 1%): on 2026-11-22 the lanes measured 1.990 GHz against a nominal 1.980 GHz (clock64
     *     cycles per %globaltimer ns; the two clocks need not agree to 0.5%), so the nominal peak
     *     alone flagged every lane slice (~60 us x 0.5% > 64 ns).
     * Which pair the first two checks use: the inner one for regions that do not wait (lane,
     * load, compute, store: as before); the outer one for the barrier waits (wait_empty,
     * wait_full, wait_done), because the inner pair does not contain the wait there (on the H100
     * every wait_full measured ~2 us and every wait_done ~93 us less than the records, while
     * the non-waiting regions agreed within ~40 ns). The outer pair brackets the records' own
     * timer reads in issue order, so it contains whatever the records contain. */
    {
        const int maxlog = max_logged(tiles);
        auto measured = [](int e) {
            return e == EV_LANE || e == EV_LOAD || e == EV_WAIT_EMPTY || e == EV_WAIT_FULL ||
                   e == EV_COMPUTE || e == EV_WAIT_DONE || e == EV_STORE;
        };
        auto waits = [](int e) {
            return e == EV_WAIT_EMPTY || e == EV_WAIT_FULL || e == EV_WAIT_DONE;
        };
        /* per lane: indices of the measured slices, in end-record order */
        std::vector<std::vector<size_t>> per_lane(lanes);
        for (size_t i = 0; i < r.n_slices; i++)
            if (measured(r.slices[i].event))
                per_lane[(size_t)r.slices[i].block * GROUPS + r.slices[i].group].push_back(i);
        size_t bad_pairing = 0, not_nested = 0;
        std::vector<double> lane_ghz;
        for (int lane = 0; lane < lanes; lane++) {
            std::vector<size_t> &v = per_lane[lane];
            std::sort(v.begin(), v.end(), [&](size_t x, size_t y) {
                return r.slices[x].end_seq < r.slices[y].end_seq;
            });
            const long long *lg = &run.cycles[(size_t)lane * LOG_W * maxlog];
            bool ok = v.size() <= (size_t)maxlog;
            for (size_t k = 0; ok && k < v.size(); k++) {
                ok = lg[LOG_W * k] == r.slices[v[k]].event && lg[LOG_W * k + 1] >= 0 &&
                     lg[LOG_W * k + 2] >= 0;
                not_nested += ok && lg[LOG_W * k + 1] > lg[LOG_W * k + 2];
            }
            ok = ok && (v.size() == (size_t)maxlog || lg[LOG_W * v.size()] == -1);
            bad_pairing += !ok;
            if (ok && !v.empty() && r.slices[v.back()].event == EV_LANE &&
                r.slices[v.back()].dur_ns >= 10000)
                lane_ghz.push_back((double)lg[LOG_W * (v.size() - 1) + 1] /
                                   (double)r.slices[v.back()].dur_ns);
        }
        check(bad_pairing == 0, "clock64 log pairs with the decoded regions",
              "%zu lanes whose logged (event, cycles) sequence differs from the decoded slices",
              bad_pairing);
        check(bad_pairing == 0 && not_nested == 0, "inner clock64 pair inside the outer pair",
              "%zu regions whose inner cycles exceed the outer cycles", not_nested);
        std::sort(lane_ghz.begin(), lane_ghz.end());
        const double eff_ghz = lane_ghz.empty() ? 0 : lane_ghz[lane_ghz.size() / 2];
        const double spread = lane_ghz.empty() ? 0
                                               : (lane_ghz.back() - lane_ghz.front()) / eff_ghz;
        const double fastest_ghz =
            lane_ghz.empty() ? clock_ghz
                             : std::max(clock_ghz, std::min(lane_ghz.back(), 1.01 * eff_ghz));
        check(!lane_ghz.empty() && eff_ghz > 0.3 * clock_ghz && eff_ghz < 1.05 * clock_ghz,
              "effective SM clock from the lane regions",
              "%.3f GHz (median of %zu lanes >= 10 us, spread %.1f%%; nominal peak %.3f GHz, "
              "fastest used %.3f GHz)",
              eff_ghz, lane_ghz.size(), spread * 100, clock_ghz, fastest_ghz);
        size_t n_long = 0, n_short = 0, bad_long = 0, bad_short = 0, over_peak = 0;
        size_t n_wait = 0, bad_wait = 0;
        double worst_long = 0, worst_short_ns = 0, worst_wait_ns = 0;
        size_t per_event_bad[NEV] = {0}, per_event_n[NEV] = {0}, per_event_over[NEV] = {0};
        double per_event_inner[NEV] = {0}, per_event_outer[NEV] = {0}; /* sums of decoded - pair */
        /* the check of one region against one pair; `outside`: the pair contains the records */
        auto consistent = [](double dec, double pair_ns, bool outside) {
            if (dec >= 2000.0)
                return fabs(dec - pair_ns) <= 0.10 * dec + 64.0;
            const double tol = 64.0 + 0.10 * (dec > pair_ns ? dec : pair_ns);
            return outside ? !(pair_ns > dec + tol + 256.0 || dec > pair_ns + tol)
                           : !(pair_ns > dec + tol || dec > pair_ns + tol + 256.0);
        };
        for (int lane = 0; lane < lanes && eff_ghz > 0 && bad_pairing == 0; lane++) {
            const std::vector<size_t> &v = per_lane[lane];
            const long long *lg = &run.cycles[(size_t)lane * LOG_W * maxlog];
            for (size_t k = 0; k < v.size(); k++) {
                const wl_ik_slice &sl = r.slices[v[k]];
                const double dec = (double)sl.dur_ns;
                const double inner = (double)lg[LOG_W * k + 1], outer = (double)lg[LOG_W * k + 2];
                const double inner_ns = inner / eff_ghz, outer_ns = outer / eff_ghz;
                const bool over = inner / fastest_ghz > dec + 64.0;
                over_peak += over;
                per_event_over[sl.event] += over;
                per_event_n[sl.event]++;
                per_event_inner[sl.event] += dec - inner_ns;
                per_event_outer[sl.event] += dec - outer_ns;
                bool bad;
                if (waits(sl.event)) {
                    n_wait++;
                    bad = !consistent(dec, outer_ns, true);
                    bad_wait += bad;
                    if (fabs(dec - outer_ns) > worst_wait_ns)
                        worst_wait_ns = fabs(dec - outer_ns);
                } else if (dec >= 2000.0) {
                    n_long++;
                    const double rel = fabs(dec - inner_ns) / dec;
                    bad = !consistent(dec, inner_ns, false);
                    bad_long += bad;
                    if (rel > worst_long)
                        worst_long = rel;
                } else {
                    n_short++;
                    bad = !consistent(dec, inner_ns, false);
                    bad_short += bad;
                    if (fabs(dec - inner_ns) > worst_short_ns)
                        worst_short_ns = fabs(dec - inner_ns);
                }
                per_event_bad[sl.event] += bad;
            }
        }
        const char *names[NEV] = {"lane", "load", "wait_empty", "wait_full", "compute",
                                  "wait_done", "store", "tile", "epilogue"};
        char over_by[256] = "";
        for (int e = 0, at = 0; e < NEV; e++)
            if (per_event_over[e] && at < (int)sizeof over_by - 32)
                at += snprintf(over_by + at, sizeof over_by - at, " %s %zu", names[e],
                               per_event_over[e]);
        check(over_peak == 0, "inner clock64 at the fastest clock never exceeds the decoded duration",
              "%zu of %zu regions exceed%s%s", over_peak, n_long + n_short + n_wait,
              over_peak ? ":" : "", over_by);
        check(n_long > 0 && bad_long == 0,
              "long regions (>= 2 us) that do not wait: decoded matches the inner clock64",
              "%zu checked, %zu off by more than 10%% + 64 ns; worst relative difference %.3f",
              n_long, bad_long, worst_long);
        check(n_short > 0 && bad_short == 0,
              "short regions (< 2 us) that do not wait: decoded consistent with the inner clock64",
              "%zu checked, %zu outside 64 ns + 10%% (+ 256 ns records' cost); worst |difference| "
              "%.0f ns",
              n_short, bad_short, worst_short_ns);
        check(n_wait > 0 && bad_wait == 0,
              "barrier waits: decoded consistent with the outer clock64 (the inner pair misses "
              "the wait)",
              "%zu checked, %zu outside the same tolerances; worst |difference| %.0f ns", n_wait,
              bad_wait, worst_wait_ns);
        printf("info: per event: regions, failed, mean (decoded - inner clock64/clock) ns, mean "
               "(decoded - outer clock64/clock) ns:");
        for (int e = 0; e < NEV; e++)
            if (per_event_n[e])
                printf(" %s %zu/%zu/%.0f/%.0f", names[e], per_event_n[e], per_event_bad[e],
                       per_event_inner[e] / per_event_n[e], per_event_outer[e] / per_event_n[e]);
        printf("\n");
    }

    /* Inside the kernel's own duration (cudaEvents, ~0.5 us resolution). */
    const double kernel_ns = run.kernel_ms * 1e6;
    const double extent = (double)(r.max_ts - r.min_ts);
    uint64_t max_lane = 0;
    size_t bad_sum = 0;
    for (int lane = 0; lane < lanes; lane++) {
        if (lane_dur[lane] > max_lane)
            max_lane = lane_dur[lane];
        bad_sum += children[lane] > lane_dur[lane];
    }
    check(extent <= kernel_ns + 2000, "event extent inside the kernel duration",
          "extent %.1f us, kernel %.1f us", extent / 1e3, kernel_ns / 1e3);
    check((double)max_lane <= kernel_ns + 2000 && bad_sum == 0,
          "lane slices (and the sum of their children) inside the kernel",
          "longest lane %.1f us, %zu lanes whose children sum past them", max_lane / 1e3, bad_sum);

    /* Placement on CLOCK_REALTIME with the calibration: must land inside the host's window. */
    if (ce == cudaSuccess) {
        wl_ik_calibration wc = {cal.realtime_minus_globaltimer_ns, cal.uncertainty_ns};
        wl_ik_placement pl;
        int prc = wl_ik_place(&r, (uint64_t)run.host_t0, (uint64_t)run.host_t1, &wc, &pl, &err);
        check(prc == 0 && pl.method == WL_IK_PLACE_CALIBRATED,
              "calibrated placement agrees with the host window",
              "method %d, clamp %lld ns, window %.1f us", pl.method, (long long)pl.clamp_ns,
              (run.host_t1 - run.host_t0) / 1e3);
        if (prc == 0 && wl_ik_shift(&r, pl.delta_ns) == 0)
            printf("info: first event %.1f us after the host launch call, last %.1f us before "
                   "the host saw completion\n",
                   ((double)r.min_ts - (double)run.host_t0) / 1e3,
                   ((double)run.host_t1 - (double)r.max_ts) / 1e3);
    }
    wl_ik_stat *st;
    size_t n_st;
    if (wl_ik_summarize(&r, &st, &n_st) == 0) {
        wl_ik_names names;
        wl_ik_names_parse(&names, EVENT_NAMES, "producer,consumer0,consumer1,epilogue", &err);
        wl_ik_write_summary(stdout, &r, &names);
        wl_ik_names_free(&names);
        free(st);
    }
    wl_ik_result_free(&r);

    /* Device-side record limit: 9 records per lane. Nothing written past a lane's slots, the
     * finalize always fits, dropped begins take their ends with them. */
    const unsigned small = 9;
    Run lim;
    unsigned long long small_words = 0;
    warplens_ik_buffer_words(blocks, GROUPS, 0, small, &small_words);
    launch(d_in, d_out, blocks, tiles, small, guard, lim);
    check(guard_clean(lim, small_words), "limit: no write past the buffer", "%zu guard words", guard);
    check(lim.counters[0] > 0 && lim.counters[1] == 0, "limit: drops counted on the device",
          "dropped %u, invalid %u", lim.counters[0], lim.counters[1]);
    opt.max_records = small;
    rc = wl_ik_decode(lim.words.data(), small_words, &opt, &r, &err);
    check(rc == 0 && r.counts.lanes_finalized == (uint64_t)lanes && r.counts.unmatched_begins == 0 &&
              r.counts.unmatched_ends == 0 && r.counts.over_capacity == 0,
          "limit: lanes finalized, complete regions only", "%s", rc ? err.msg : "");
    if (rc == 0) {
        /* every region of the kernel is closed before its finalize, so each dropped begin counts
         * 2 and each dropped instant 1: what the full run wrote less what this one did */
        const uint64_t used = 2 * r.counts.slices + r.counts.instants;
        check(wanted_slots - used == (uint64_t)lim.counters[0], "limit: the drop count is exact",
              "device %u, expected %llu", lim.counters[0],
              (unsigned long long)(wanted_slots - used));
        wl_ik_result_free(&r);
    }

    /* Tracing off at run time (NULL buffer): the kernel still runs and computes. */
    Run off;
    launch(d_in, d_out, blocks, tiles, 0, guard, off);
    std::vector<float> h_out2(h_out.size());
    CUDA_OK(cudaMemcpy(h_out2.data(), d_out, h_out2.size() * sizeof(float), cudaMemcpyDeviceToHost));
    check(memcmp(h_out.data(), h_out2.data(), h_out.size() * sizeof(float)) == 0 &&
              off.counters[0] == 0,
          "tracing off at run time: same result", "kernel %.1f us traced, %.1f us not",
          run.kernel_ms * 1e3, off.kernel_ms * 1e3);

    cudaFree(d_in);
    cudaFree(d_out);
    printf("inkernel: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
