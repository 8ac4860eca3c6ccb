/* GPU test of in-kernel placement in CUPTI's clock domain and of graph-node buffers (run on the
 * H100 by scripts/gpu-suite.sh). The program profiles itself with `warplens run`:
 *
 * 1. A warp-specialised kernel unlike the other tests': three groups per block with uneven work
 *    (producer 2-4 "load" regions, consumer 1-4 "mma" regions, epilogue one "store" region and an
 *    instant, the counts and lengths varying with the block), one block per SM forced by dynamic
 *    shared memory and three blocks per SM of grid, so the kernel runs in three waves. Every region
 *    also counts its SM cycles (clock64) into a side array.
 * 2. A CUDA graph (memset -> kernel A -> kernel B -> kernel C, all the same function, only B
 *    traced) replayed 3 times, each replay registered with warplens_inkernel_next_graph_launch()
 *    for node B and collected.
 *
 * The checker opens the session and requires: every buffer placed `calibrated` with no clamping,
 * calibration uncertainty <= 200 ns (printed per buffer), every event inside its kernel's CUPTI
 * [start, end], every region decoded, each region's duration equal to its cycle count / the SM
 * clock within 2 % (+ one step of %globaltimer, read off the durations; the clock is the median
 * cycles / ns of all regions),
 * and each graph buffer under the second kernel of its own graph launch, on 3 distinct kernels.
 * Prints PASS/FAIL lines and "inkernel_calibration: N passed, N failed". */
#include <stdarg.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

extern "C" { /* the store is C without C++ guards */
#include "store/inkernel_store.h"
}
#include "gpu_check.h"
#include "gpu_ck.h"
#include "warplens/device.cuh"
#include "warplens/warplens.h"

/* verdict() with a formatted detail */
static void check(bool ok, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vverdictf(what, ok, fmt, ap);
    va_end(ap);
}

constexpr int GROUPS = 3, WG = 128, MAX_REGIONS = 4, WAVES = 3, GRAPH_BLOCKS = 132, REPLAYS = 3;
constexpr unsigned MAX_RECORDS = 2 * MAX_REGIONS + 2;
constexpr size_t SMEM = 160 * 1024; /* one block per SM */
enum { EV_LOAD, EV_MMA, EV_STORE, EV_DONE };
/* scratch files (removed when every check passed): the workload's cycle counts, the session, the log */
#define DIR "/tmp/wl_gpu_ik_calibration"
static const char *CYCLES_FILE = DIR "/cycles", *SESSION = DIR "/session.wlsession", *LOG = DIR "/run.log";

/* Regions of a lane: how many, and their spin counts (uneven across groups and blocks). */
__host__ __device__ static int regions_of(unsigned block, unsigned group)
{
    return group == 0 ? 2 + (int)(block % 3) : group == 1 ? 1 + (int)(block % 4) : 1;
}
__device__ static int spin_of(unsigned block, unsigned group, int k)
{
    /* >= 12000 dependent FMAs (~48k cycles, ~24 us): the begin/end fences' few dozen cycles outside
     * the clock64 reads stay far below 2 %, and so does one step of %globaltimer, which can be
     * hundreds of ns (the bound is 2 % of the region plus one step) */
    return group == 0 ? 12000 + 3000 * (int)(block % 2) : group == 1 ? 18000 + 3000 * k : 12000;
}

/* cycles: [lane][MAX_REGIONS] SM cycles of each region, or NULL */
__global__ void __launch_bounds__(GROUPS *WG) pipeline(float *out, unsigned long long *cycles, warplens_ik_args ik)
{
    extern __shared__ float stage[];
    const unsigned group = threadIdx.x / WG, block = blockIdx.x;
    const bool leader = threadIdx.x % WG == 0;
    warplens_ik_lane lane;
    warplens_ik_init(&lane, ik, group, leader);
    float x = threadIdx.x * 1e-3f;
    const int n = regions_of(block, group);
    const unsigned ev = group == 0 ? EV_LOAD : group == 1 ? EV_MMA : EV_STORE;
    for (int k = 0; k < n; k++) {
        warplens_ik_begin(&lane, ev);
        const long long c0 = clock64();
        for (int i = 0; i < spin_of(block, group, k); i++)
            x = x * 0.9999f + 1e-4f; /* dependent FMAs: a fixed number of cycles */
        const long long c1 = clock64();
        warplens_ik_end(&lane, ev);
        if (leader && cycles)
            cycles[((size_t)block * GROUPS + group) * MAX_REGIONS + k] = (unsigned long long)(c1 - c0);
    }
    if (group == 2)
        warplens_ik_instant(&lane, EV_DONE);
    warplens_ik_finalize(&lane);
    stage[threadIdx.x] = x;
    out[(size_t)block * blockDim.x + threadIdx.x] = stage[threadIdx.x];
}

static int grid_blocks(void)
{
    int dev = 0, sms = 0, per_sm = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaFuncSetAttribute(pipeline, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pipeline, GROUPS * WG, SMEM));
    return WAVES * sms * (per_sm > 0 ? per_sm : 1);
}

static int workload(int, char **)
{
    const int blocks = grid_blocks();
    unsigned long long words = 0, gwords = 0;
    if (warplens_ik_buffer_words(blocks, GROUPS, 0, MAX_RECORDS, &words) != 0 ||
        warplens_ik_buffer_words(GRAPH_BLOCKS, GROUPS, 0, MAX_RECORDS, &gwords) != 0)
        return 4;
    const size_t lanes = (size_t)blocks * GROUPS;
    unsigned long long *buf, *gbuf, *cycles;
    unsigned *cnt;
    float *out;
    CK(cudaMalloc(&out, sizeof(float) * blocks * GROUPS * WG));
    CK(cudaMalloc(&buf, words * 8));
    CK(cudaMemset(buf, 0, words * 8));
    CK(cudaMalloc(&gbuf, gwords * 8));
    CK(cudaMalloc(&cnt, 8));
    CK(cudaMemset(cnt, 0, 8));
    CK(cudaMalloc(&cycles, lanes * MAX_REGIONS * 8));
    CK(cudaMemset(cycles, 0, lanes * MAX_REGIONS * 8));
    CK(cudaDeviceSynchronize());

    /* 1: the multi-wave kernel */
    warplens_inkernel_buffer reg = {buf, words, cnt, 0, MAX_RECORDS, "load,mma,store,done",
                                    "producer,consumer,epilogue"};
    if (warplens_inkernel_next_launch(&reg) != 0)
        return 5;
    warplens_ik_args a = {buf, cnt, GROUPS, 0, MAX_RECORDS};
    pipeline<<<blocks, GROUPS * WG, SMEM>>>(out, cycles, a);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int got = warplens_inkernel_collect();
    std::vector<unsigned long long> host(lanes * MAX_REGIONS);
    CK(cudaMemcpy(host.data(), cycles, host.size() * 8, cudaMemcpyDeviceToHost));
    FILE *fp = fopen(CYCLES_FILE, "wb");
    if (!fp || fwrite(&blocks, sizeof blocks, 1, fp) != 1 || fwrite(host.data(), 8, host.size(), fp) != host.size())
        return 7;
    fclose(fp);

    /* 2: the graph, node B traced, replayed */
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t zero, ka, kb, kc;
    cudaMemsetParams mp = {};
    mp.dst = gbuf;
    mp.elementSize = 4;
    mp.width = gwords * 2;
    mp.height = 1;
    mp.value = 0;
    CK(cudaGraphAddMemsetNode(&zero, g, NULL, 0, &mp));
    warplens_ik_args off = {NULL, NULL, GROUPS, 0, MAX_RECORDS}, on = {gbuf, NULL, GROUPS, 0, MAX_RECORDS};
    unsigned long long *no_cycles = NULL;
    void *args_off[] = {&out, &no_cycles, &off}, *args_on[] = {&out, &no_cycles, &on};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)pipeline;
    kp.gridDim = dim3(GRAPH_BLOCKS);
    kp.blockDim = dim3(GROUPS * WG);
    kp.sharedMemBytes = SMEM;
    kp.kernelParams = args_off;
    CK(cudaGraphAddKernelNode(&ka, g, &zero, 1, &kp));
    kp.kernelParams = args_on;
    CK(cudaGraphAddKernelNode(&kb, g, &ka, 1, &kp));
    kp.kernelParams = args_off;
    CK(cudaGraphAddKernelNode(&kc, g, &kb, 1, &kp));
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, g, 0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int gotg = 0;
    for (int r = 0; r < REPLAYS; r++) {
        warplens_inkernel_buffer greg = {gbuf, gwords, NULL, 0, MAX_RECORDS, "load,mma,store,done", NULL};
        if (warplens_inkernel_next_graph_launch(&greg, (void *)kb) != 0)
            return 8;
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        gotg += warplens_inkernel_collect();
    }
    printf("grid %d blocks (%d waves), %d + %d buffers collected\n", blocks, WAVES, got, gotg);
    return got == 1 && gotg == REPLAYS ? 0 : 6;
}

/* qd() with a formatted query, as an integer */
static long long scalar(sqlite3 *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static long long scalar(sqlite3 *db, const char *fmt, ...)
{
    char sql[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    return (long long)qd(db, sql);
}

struct ev_row {
    uint32_t block, group, event, kind;
    uint64_t start, dur;
};
struct ev_list {
    std::vector<ev_row> v;
    uint64_t lo, hi;
    long long outside;
};
static int on_event(const wl_iks_event *e, void *arg)
{
    ev_list *l = (ev_list *)arg;
    l->v.push_back({e->block, e->group, e->event, e->kind, e->start_ns, e->dur_ns});
    const uint64_t end = e->start_ns + (e->kind == WL_IKS_SLICE ? e->dur_ns : 0);
    l->outside += e->start_ns < l->lo || end > l->hi;
    return 0;
}

/* placement, calibration bound, containment: the checks every buffer gets */
static void check_placed(const wl_iks_buffer *b, const ev_list &l, const char *what)
{
    char w[160];
    snprintf(w, sizeof w, "%s: placed 'calibrated', not clamped, uncertainty <= 200 ns", what);
    check(strcmp(b->placement, "calibrated") == 0 && b->clamp_ns == 0 && b->uncertainty_ns <= 200 &&
              b->calibration_uncertainty_ns <= 200,
          w, "placement %s, clamp %lld ns, uncertainty %llu ns, calibration offset %lld +- %llu ns", b->placement,
          (long long)b->clamp_ns, (unsigned long long)b->uncertainty_ns, (long long)b->calibration_offset_ns,
          (unsigned long long)b->calibration_uncertainty_ns);
    uint64_t first = UINT64_MAX, last = 0;
    for (const ev_row &e : l.v) {
        first = std::min(first, e.start);
        last = std::max(last, e.start + e.dur);
    }
    snprintf(w, sizeof w, "%s: every event inside its kernel's CUPTI [start, end]", what);
    check(l.outside == 0 && !l.v.empty(), w, "%lld of %zu outside; events [%+.3f, %+.3f] us vs kernel [0, %.3f] us",
          l.outside, l.v.size(), ((double)first - (double)l.lo) / 1e3, ((double)last - (double)l.lo) / 1e3,
          ((double)l.hi - (double)l.lo) / 1e3);
}

static int checker(const char *warplens, const char *self)
{
    mkdir(DIR, 0755);
    unlink(CYCLES_FILE);
    unlink(SESSION);
    const int rc = run_self(warplens, "", self, "--workload", SESSION, LOG);
    sqlite3 *db = judge_run("workload under warplens exits 0, 1 kernel buffer and 3 graph-node buffers collected", rc,
                            SESSION);
    if (!db)
        return 1;
    int blocks = 0;
    std::vector<unsigned long long> cycles;
    FILE *fp = fopen(CYCLES_FILE, "rb");
    if (fp && fread(&blocks, sizeof blocks, 1, fp) == 1 && blocks > 0 && blocks < (1 << 18)) {
        cycles.resize((size_t)blocks * GROUPS * MAX_REGIONS);
        if (fread(cycles.data(), 8, cycles.size(), fp) != cycles.size())
            cycles.clear();
    }
    if (fp)
        fclose(fp);
    check(!cycles.empty(), "cycle counts written by the workload", "%d blocks", blocks);
    char err[512];
    wl_session *s = wl_session_open(SESSION, err, sizeof err);
    check(s != NULL, "session opens", "%s", s ? "" : err);
    if (!s || cycles.empty())
        return 1;
    wl_iks_buffer *b = NULL;
    size_t n = 0;
    check(wl_session_inkernel_buffers(s, &b, &n) == 0 && n == 1 + REPLAYS, "four in-kernel buffers in the session",
          "%zu", n);
    std::vector<long long> graph_kernels;
    for (size_t i = 0; i < n; i++) {
        ev_list l;
        l.lo = b[i].kernel_start_ns;
        l.hi = b[i].kernel_end_ns;
        l.outside = 0;
        wl_session_inkernel_each_event(s, b[i].id, on_event, &l);
        const bool main_buffer = b[i].num_blocks == (uint32_t)blocks;
        char what[96];
        snprintf(what, sizeof what, "%s buffer (launch %u)", main_buffer ? "multi-wave kernel" : "graph node B",
                 b[i].correlation_id);
        check(b[i].kernel_id > 0 && !b[i].error[0], what, "kernel %lld, error '%s'", (long long)b[i].kernel_id,
              b[i].error);
        check_placed(&b[i], l, what);
        long long regions = 0;
        for (int blk = 0; blk < (int)b[i].num_blocks; blk++)
            for (int g = 0; g < GROUPS; g++)
                regions += regions_of(blk, g);
        check(b[i].slices == (uint64_t)regions && b[i].unmatched == 0 && b[i].instants == b[i].num_blocks,
              "every region and instant decoded", "%llu slices (expected %lld), %llu instants, %llu unmatched",
              (unsigned long long)b[i].slices, regions, (unsigned long long)b[i].instants,
              (unsigned long long)b[i].unmatched);
        if (main_buffer) {
            /* durations vs cycles: k-th slice of a lane in time order <-> k-th region's cycles */
            std::vector<ev_row> sl;
            for (const ev_row &e : l.v)
                if (e.kind == WL_IKS_SLICE)
                    sl.push_back(e);
            std::sort(sl.begin(), sl.end(), [](const ev_row &x, const ev_row &y) {
                return x.block != y.block ? x.block < y.block : x.group != y.group ? x.group < y.group : x.start < y.start;
            });
            std::vector<double> ghz;
            std::vector<std::pair<double, double>> pairs; /* (dur ns, cycles) */
            for (size_t k = 0; k < sl.size();) {
                size_t j = k;
                while (j < sl.size() && sl[j].block == sl[k].block && sl[j].group == sl[k].group)
                    j++;
                for (size_t r = k; r < j && r - k < (size_t)MAX_REGIONS; r++) {
                    const double c = (double)cycles[((size_t)sl[k].block * GROUPS + sl[k].group) * MAX_REGIONS + (r - k)];
                    pairs.push_back({(double)sl[r].dur, c});
                    if (sl[r].dur)
                        ghz.push_back(c / (double)sl[r].dur);
                }
                k = j;
            }
            std::vector<double> sorted = ghz;
            std::sort(sorted.begin(), sorted.end());
            const double f = sorted.empty() ? 0 : sorted[sorted.size() / 2];
            /* the timer's step: the largest power of two that 99 % of the durations are multiples of
             * (within 2 ns: placement may scale them by the clock drift) */
            long long step = 1;
            for (long long st = 4096; st > 1 && step == 1; st /= 2) {
                size_t on = 0;
                for (auto &p : pairs) {
                    const long long r = (long long)p.first % st;
                    on += r <= 2 || st - r <= 2;
                }
                if (!pairs.empty() && on * 100 >= pairs.size() * 99)
                    step = st;
            }
            long long bad = 0;
            double worst = 0;
            for (auto &p : pairs) {
                const double expect = f > 0 ? p.second / f : 0, diff = p.first > expect ? p.first - expect : expect - p.first;
                worst = std::max(worst, p.first > 0 ? diff / p.first : 1.0);
                bad += diff > 0.02 * p.first + (double)step;
            }
            check(f > 0.5 && f < 2.5 && bad == 0 && pairs.size() == (size_t)regions,
                  "every region's duration = its cycles / SM clock within 2 % + one timer step",
                  "%zu regions, SM clock %.3f GHz (median, %.3f-%.3f), timer step %lld ns, %lld off by > 2 %% + step, "
                  "worst %.2f %%",
                  pairs.size(), f, sorted.empty() ? 0 : sorted.front(), sorted.empty() ? 0 : sorted.back(), step, bad,
                  worst * 100);
            long long waves = scalar(db, "SELECT grid_x FROM kernel WHERE id = %lld", (long long)b[i].kernel_id);
            check(waves == blocks, "the traced kernel ran the multi-wave grid", "grid_x %lld, blocks %d", waves, blocks);
        } else {
            long long node = scalar(db, "SELECT graph_node_id FROM kernel WHERE id = %lld", (long long)b[i].kernel_id);
            long long before = scalar(db,
                                      "SELECT count(*) FROM kernel WHERE pid = %u AND correlation_id = %u AND "
                                      "start_ns < %llu",
                                      b[i].pid, b[i].correlation_id, (unsigned long long)b[i].kernel_start_ns);
            long long in_launch = scalar(db, "SELECT count(*) FROM kernel WHERE pid = %u AND correlation_id = %u",
                                         b[i].pid, b[i].correlation_id);
            check(node > 0 && before == 1 && in_launch == 3, "graph buffer nests under node B of its own launch",
                  "graph node %lld, %lld kernels of the launch before it, %lld in the launch", node, before, in_launch);
            graph_kernels.push_back(b[i].kernel_id);
        }
    }
    std::sort(graph_kernels.begin(), graph_kernels.end());
    check(graph_kernels.size() == REPLAYS &&
              std::unique(graph_kernels.begin(), graph_kernels.end()) == graph_kernels.end(),
          "each replay's buffer under its own kernel", "%zu graph buffers", graph_kernels.size());
    long long own = scalar(db, "SELECT count(*) FROM kernels WHERE name LIKE '%%warplens_clock%%'");
    check(own == 0, "the recorder's calibration kernels are not in the program's kernels", "%lld", own);
    free(b);
    sqlite3_close(db);
    wl_session_close(s);
    return gpu_test_done(DIR, "inkernel_calibration");
}

int main(int argc, char **argv) { return gpu_test_main(argc, argv, workload, checker); }
