// How a GPU starts the blocks of a grid, measured: the data behind the tail-effect estimate of
// `warplens advise` (docs/advise.md, "Tail effect"). Every block records, from its first thread,
// the %globaltimer at its start and end and the SM it ran on; each configuration (block size,
// blocks per SM, block duration, grid in waves) runs REPS times and the run with the median span
// is kept.
//
//   bench_tail_dispatch [OUTDIR]
//
// One line per configuration on stdout:
//   name block smem per_sm W grid waves b_us | span_us (median, min, max of REPS) ev_us (the
//   cudaEvent time of one launch) b2b_us (per kernel, 10 launched back to back) | F = span / b
//   (block times the grid took; the ideal wave model says ceil(waves)) | the first W blocks to
//   start: p50, p90, max start offset, how many started > 2 us late, SMs that started fewer than
//   per_sm blocks in the first 2 us | the last block's start, per-block duration median and of the
//   blocks that started after the first wave's median end (the tail's blocks).
// With OUTDIR, OUTDIR/blocks.csv holds every block of every kept run: cfg,block,sm,start_ns,end_ns
// (offsets from the run's first start).
//
// Blocks are of three kinds (names start c, g, work): spins of a fixed number of SM clock cycles or
// of a fixed wall time on %globaltimer (the planted tail program's blocks), whatever shares their SM;
// and blocks of a fixed number of dependent FMAs, which finish sooner when fewer blocks share the SM.
// Results: bench/results/tail-dispatch-h100.txt.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#include "../tests/gpu/gpu_ck.h"

struct rec {
    unsigned long long start, end;
    unsigned sm, flag;
};

__device__ __forceinline__ unsigned long long gns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned smid(void)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

enum { SPIN_GLOBALTIMER, SPIN_CLOCK, WORK };

// SPIN_GLOBALTIMER: spin for `amount` ns of wall time from the block's start, polling %globaltimer
// (as the planted tail program's timed_work does); SPIN_CLOCK: spin for `amount` SM clock cycles,
// polling the SM's own clock64(); WORK: `amount` rounds of two dependent FMA chains per thread.
// Thread 0 reads %globaltimer once at the start and once at the end. Dynamic shared memory only
// limits the blocks per SM.
__global__ void probe(rec *r, int kind, long long amount)
{
    __shared__ unsigned long long t0;
    if (threadIdx.x == 0)
        t0 = gns();
    __syncthreads();
    float x = (float)threadIdx.x, y = 0.5f * x;
    if (kind == SPIN_GLOBALTIMER) {
        unsigned long long end = t0 + (unsigned long long)amount;
        do {
#pragma unroll
            for (int k = 0; k < 16; k++)
                x = fmaf(x, 0.999f, 0.001f);
        } while (gns() < end);
    } else if (kind == SPIN_CLOCK) {
        long long c0 = clock64();
        do {
#pragma unroll
            for (int k = 0; k < 16; k++)
                x = fmaf(x, 0.999f, 0.001f);
        } while (clock64() - c0 < amount);
    } else {
#pragma unroll 8
        for (long long k = 0; k < amount; k++) {
            x = fmaf(x, 0.9999f, 0.0001f);
            y = fmaf(y, 0.9997f, 0.0003f);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        rec *o = &r[blockIdx.x];
        o->start = t0;
        o->end = gns();
        o->sm = smid();
        o->flag = x + y == -1.0f; // keeps the arithmetic
    }
}

struct cfg {
    const char *name;
    int kind;       // SPIN_GLOBALTIMER, SPIN_CLOCK or WORK
    int block;      // threads per block
    int per_sm;     // wanted blocks per SM (dynamic shared memory lowers it to this); 0: as the block allows
    double waves;   // grid = floor(waves * W) + extra
    int extra;
    double us;      // block duration: wall time (spins), or the time with 8 blocks of 256 on each SM (WORK)
};

#define C SPIN_CLOCK
#define G SPIN_GLOBALTIMER
#define K WORK
static const cfg CFGS[] = {
    // 50 us clock-spin blocks of 256 threads, 8 per SM: 1/8 to 4 waves
    {"c50", C, 256, 0, 0.125, 0, 50}, {"c50", C, 256, 0, 0.875, 0, 50}, {"c50", C, 256, 0, 1.0, 0, 50},
    {"c50", C, 256, 0, 1.0, 1, 50},   {"c50", C, 256, 0, 1.1, 0, 50},   {"c50", C, 256, 0, 1.25, 0, 50},
    {"c50", C, 256, 0, 1.5, 0, 50},   {"c50", C, 256, 0, 2.0, 0, 50},   {"c50", C, 256, 0, 2.0, 1, 50},
    {"c50", C, 256, 0, 2.5, 0, 50},   {"c50", C, 256, 0, 3.0, 0, 50},   {"c50", C, 256, 0, 4.0, 0, 50},
    // short (5 us) and long (500 us) blocks
    {"c5", C, 256, 0, 1.0, 0, 5},     {"c5", C, 256, 0, 1.0, 1, 5},     {"c5", C, 256, 0, 1.5, 0, 5},
    {"c5", C, 256, 0, 2.5, 0, 5},     {"c5", C, 256, 0, 4.0, 0, 5},
    {"c500", C, 256, 0, 1.0, 0, 500}, {"c500", C, 256, 0, 1.0, 1, 500}, {"c500", C, 256, 0, 1.1, 0, 500},
    {"c500", C, 256, 0, 2.5, 0, 500},
    // other block sizes and blocks per SM
    {"c50b1024", C, 1024, 0, 1.0, 0, 50}, {"c50b1024", C, 1024, 0, 1.0, 1, 50}, {"c50b1024", C, 1024, 0, 2.5, 0, 50},
    {"c50b128", C, 128, 0, 1.0, 0, 50},   {"c50b128", C, 128, 0, 1.0, 1, 50},   {"c50b128", C, 128, 0, 2.5, 0, 50},
    {"c50s1", C, 256, 1, 1.0, 0, 50},     {"c50s1", C, 256, 1, 1.0, 1, 50},     {"c50s1", C, 256, 1, 2.5, 0, 50},
    {"c50s4", C, 256, 4, 1.0, 0, 50},     {"c50s4", C, 256, 4, 1.0, 1, 50},     {"c50s4", C, 256, 4, 2.5, 0, 50},
    // issue-bound blocks of fixed work: faster when fewer share their SM
    {"work50", K, 256, 0, 1.0, 0, 50},    {"work50", K, 256, 0, 1.0, 1, 50},    {"work50", K, 256, 0, 1.1, 0, 50},
    {"work50", K, 256, 0, 1.5, 0, 50},    {"work50", K, 256, 0, 2.5, 0, 50},
    {"work5", K, 256, 0, 1.0, 0, 5},      {"work5", K, 256, 0, 1.0, 1, 5},      {"work5", K, 256, 0, 2.5, 0, 5},
    // %globaltimer spins (the planted program's blocks), for comparison
    {"g50", G, 256, 0, 1.0, 0, 50},       {"g50", G, 256, 0, 1.0, 1, 50},       {"g50", G, 256, 0, 2.5, 0, 50},
    {"g50b1024", G, 1024, 0, 1.0, 0, 50}, {"g50s4", G, 256, 4, 1.0, 0, 50},    {"g50s4", G, 256, 4, 2.5, 0, 50},
    {"g50s4", G, 256, 4, 2.0, 0, 50},     {"g50s6", G, 256, 6, 1.0, 0, 50},    {"g500", G, 256, 0, 1.1, 0, 500},
    {"g500", G, 256, 0, 1.0, 0, 500},     {"g10s4", G, 256, 4, 1.5, 0, 10},    {"g10s4", G, 256, 4, 1.0, 0, 10},
};
#undef C
#undef G
#undef K
enum { NCFG = sizeof CFGS / sizeof CFGS[0], REPS = 7, B2B = 10 };

static int g_sms;

// dynamic shared memory that brings `block`-thread blocks down to `want` per SM (0 bytes when the
// block alone allows at most that many); sets *per_sm to what the calculator then gives
static size_t smem_for(int block, int want, int *per_sm)
{
    size_t smem = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, probe, block, smem));
    if (want <= 0)
        return 0;
    int max_smem = 0;
    CK(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, probe));
    max_smem -= (int)fa.sharedSizeBytes;
    CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
    while (*per_sm > want && smem + 1024 <= (size_t)max_smem) {
        smem += 1024;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, probe, block, smem));
    }
    return smem;
}

static double pct(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    size_t i = (size_t)(p * (double)(v.size() - 1) + 0.5);
    return v[i];
}

int main(int argc, char **argv)
{
    const char *outdir = argc > 1 ? argv[1] : NULL;
    FILE *csv = NULL;
    if (outdir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/blocks.csv", outdir);
        csv = fopen(path, "w");
        if (!csv) {
            perror(path);
            return 1;
        }
        fprintf(csv, "cfg,block,sm,start_ns,end_ns\n");
    }
    CK(cudaSetDevice(0));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# device %s, %d SMs\n", prop.name, g_sms);
    size_t max_grid = (size_t)g_sms * 32 * 5;
    rec *d_rec;
    CK(cudaMalloc((void **)&d_rec, max_grid * sizeof(rec)));
    std::vector<rec> h(max_grid);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    // per microsecond of block time, with 8 blocks of 256 on every SM: clock cycles and FMA rounds
    double per_us[3] = {1000.0, 0, 0};
    {
        int per_sm;
        smem_for(256, 0, &per_sm);
        unsigned grid = (unsigned)(per_sm * g_sms);
        long long amount[3] = {0, 100000, 10000};
        for (int kind = SPIN_CLOCK; kind <= WORK; kind++) {
            for (int round = 0; round < 3; round++) {
                probe<<<grid, 256>>>(d_rec, kind, amount[kind]);
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(h.data(), d_rec, grid * sizeof(rec), cudaMemcpyDeviceToHost));
                std::vector<double> d;
                for (unsigned b = 0; b < grid; b++)
                    d.push_back((double)(h[b].end - h[b].start));
                per_us[kind] = (double)amount[kind] / (pct(d, 0.5) / 1e3);
                amount[kind] = (long long)(per_us[kind] * 50);
            }
        }
        printf("# per us: %.1f clock cycles, %.1f FMA rounds\n", per_us[SPIN_CLOCK], per_us[WORK]);
    }

    for (int c = 0; c < NCFG; c++) {
        const cfg &k = CFGS[c];
        int per_sm = 0;
        size_t smem = smem_for(k.block, k.per_sm, &per_sm);
        long long w = (long long)per_sm * g_sms;
        long long grid = (long long)(k.waves * (double)w) + k.extra;
        if (grid < 1 || (size_t)grid > max_grid) {
            fprintf(stderr, "cfg %d: grid %lld out of range\n", c, grid);
            return 1;
        }
        long long amount = (long long)(k.us * per_us[k.kind]);
        probe<<<(unsigned)grid, k.block, smem>>>(d_rec, k.kind, amount); // warm-up
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<double> spans, evs;
        std::vector<std::vector<rec>> runs;
        for (int r = 0; r < REPS; r++) {
            CK(cudaEventRecord(e0));
            probe<<<(unsigned)grid, k.block, smem>>>(d_rec, k.kind, amount);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            evs.push_back(ms * 1e6);
            CK(cudaMemcpy(h.data(), d_rec, (size_t)grid * sizeof(rec), cudaMemcpyDeviceToHost));
            unsigned long long lo = ~0ull, hi = 0;
            for (long long b = 0; b < grid; b++) {
                lo = std::min(lo, h[b].start);
                hi = std::max(hi, h[b].end);
            }
            spans.push_back((double)(hi - lo));
            runs.push_back(std::vector<rec>(h.begin(), h.begin() + grid));
        }
        CK(cudaEventRecord(e0));
        for (int r = 0; r < B2B; r++)
            probe<<<(unsigned)grid, k.block, smem>>>(d_rec, k.kind, amount);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float b2b_ms = 0;
        CK(cudaEventElapsedTime(&b2b_ms, e0, e1));
        // the run with the median span
        std::vector<size_t> order(REPS);
        for (int r = 0; r < REPS; r++)
            order[r] = (size_t)r;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
        const std::vector<rec> &v = runs[order[REPS / 2]];
        unsigned long long lo = ~0ull;
        for (const rec &x : v)
            lo = std::min(lo, x.start);
        std::vector<double> starts, durs;
        for (const rec &x : v) {
            starts.push_back((double)(x.start - lo));
            durs.push_back((double)(x.end - x.start));
        }
        std::vector<double> sorted = starts;
        std::sort(sorted.begin(), sorted.end());
        size_t first = (size_t)std::min<long long>(grid, w);
        std::vector<double> fw(sorted.begin(), sorted.begin() + (long)first);
        int late = 0;
        for (double s : fw)
            late += s > 2000.0;
        std::vector<int> early((size_t)g_sms + 64, 0);
        for (const rec &x : v)
            if ((double)(x.start - lo) <= 2000.0 && x.sm < early.size())
                early[x.sm]++;
        int short_sms = 0;
        for (int s = 0; s < g_sms; s++)
            short_sms += early[(size_t)s] < per_sm && grid >= w;
        // blocks that started after the first wave's median end: the tail's
        std::vector<double> ends;
        for (const rec &x : v)
            ends.push_back((double)(x.end - lo));
        double wave_end = pct(std::vector<double>(ends), 0.5);
        std::vector<double> tail_durs;
        for (size_t b = 0; b < v.size(); b++)
            if (starts[b] >= wave_end * 0.9 && grid > w)
                tail_durs.push_back(durs[b]);
        double b_ns = pct(durs, 0.5);
        printf("%-9s block %4d smem %6zu per_sm %2d W %5lld grid %5lld waves %.3f b_us %7.2f | span_us %8.2f %8.2f "
               "%8.2f ev_us %8.2f b2b_us %8.2f | F %.3f ideal %.0f | first-wave start p50 %.2f p90 %.2f max %.2f us, "
               "late>2us %d, short SMs %d | last start %.2f us, tail blocks %zu dur %.2f us\n",
               k.name, k.block, smem, per_sm, w, grid, (double)grid / (double)w, b_ns / 1e3,
               pct(spans, 0.5) / 1e3, pct(spans, 0) / 1e3, pct(spans, 1) / 1e3, pct(evs, 0.5) / 1e3,
               b2b_ms * 1e3 / B2B, pct(spans, 0.5) / b_ns, ceil((double)grid / (double)w), pct(fw, 0.5) / 1e3,
               pct(fw, 0.9) / 1e3, pct(fw, 1) / 1e3, late, short_sms, sorted.back() / 1e3, tail_durs.size(),
               pct(tail_durs, 0.5) / 1e3);
        fflush(stdout);
        if (csv)
            for (size_t b = 0; b < v.size(); b++)
                fprintf(csv, "%d,%zu,%u,%.0f,%.0f\n", c, b, v[b].sm, starts[b], starts[b] + durs[b]);
    }
    if (csv)
        fclose(csv);
    CK(cudaFree(d_rec));
    return 0;
}
