/* GPU test of in-kernel lanes on the session timeline (run on the H100): the program profiles
 * itself with `warplens run`. The workload launches a 4-group warp-specialised kernel twice, on two
 * streams, each time registering a device.cuh buffer with warplens_inkernel_next_launch(), then
 * synchronises and calls warplens_inkernel_collect(); a third registered launch is never collected.
 * The checker opens the session and verifies: both buffers decoded and placed with a measured
 * calibration (not clamped, not the fallback window), every decoded event inside its kernel's
 * CUPTI [start, end], the expected region counts, the uncollected buffer counted as lost, none of
 * the recorder's own work (calibration kernel, copies) in the program's records, and the lanes in
 * the Perfetto export. Prints PASS/FAIL lines and "inkernel_session: N passed, N failed". */
#include <cuda_runtime.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern "C" { /* the store and exporters are C without C++ guards */
#include "export/session_export.h"
#include "store/inkernel_store.h"
}
#include "warplens/device.cuh"
#include "warplens/warplens.h"

static int passed, failed;
static void check(bool ok, const char *what, const char *fmt = "", ...) __attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *what, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    printf("%s: %s%s%s\n", ok ? "PASS" : "FAIL", what, detail[0] ? " -- " : "", detail);
    (ok ? passed : failed)++;
}

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                              \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

constexpr int GROUPS = 4, WG = 128, BLOCKS = 264, TILES = 8, SPIN = 2000;
enum { EV_TILE, EV_WORK, NEV };

/* Each group: per tile, a "tile" region around a nested "work" region of dependent FMAs. Groups
 * spin different amounts so their lanes differ. */
__global__ void warp_specialised(float *out, warplens_ik_args ik)
{
    unsigned group = threadIdx.x / WG;
    warplens_ik_lane lane;
    warplens_ik_init(&lane, ik, group, threadIdx.x % WG == 0);
    float x = threadIdx.x * 1e-3f;
    for (int t = 0; t < TILES; t++) {
        warplens_ik_begin(&lane, EV_TILE);
        warplens_ik_begin(&lane, EV_WORK);
        for (int i = 0; i < SPIN * (int)(group + 1); i++)
            x = x * 0.9999f + 1e-4f;
        warplens_ik_end(&lane, EV_WORK);
        __syncwarp();
        warplens_ik_end(&lane, EV_TILE);
    }
    warplens_ik_finalize(&lane);
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

static int workload(void)
{
    const unsigned max_records = 2 * 2 * TILES + 2;
    unsigned long long words = 0;
    if (warplens_ik_buffer_words(BLOCKS, GROUPS, 0, max_records, &words) != 0)
        return 4;
    cudaStream_t s[2];
    unsigned long long *buf[3];
    unsigned *cnt[3];
    float *out;
    CK(cudaMalloc(&out, sizeof(float) * BLOCKS * GROUPS * WG));
    for (int i = 0; i < 2; i++)
        CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    for (int i = 0; i < 3; i++) {
        CK(cudaMalloc(&buf[i], words * 8));
        CK(cudaMemset(buf[i], 0, words * 8));
        CK(cudaMalloc(&cnt[i], 8));
        CK(cudaMemset(cnt[i], 0, 8));
    }
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < 2; i++) {
        warplens_inkernel_buffer reg = {buf[i], words, cnt[i], 0, max_records, "tile,work",
                                        "producer,consumer0,consumer1,epilogue"};
        if (warplens_inkernel_next_launch(&reg) != 0) {
            fprintf(stderr, "registration %d refused\n", i);
            return 5;
        }
        warplens_ik_args a = {buf[i], cnt[i], GROUPS, 0, max_records};
        warp_specialised<<<BLOCKS, GROUPS * WG, 0, s[i]>>>(out, a);
        CK(cudaGetLastError());
    }
    CK(cudaDeviceSynchronize());
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int got = warplens_inkernel_collect();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("collected %d buffers of %llu words in %.2f ms\n", got, words,
           (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
    /* registered and launched, never collected: must be reported lost, not silently vanish */
    warplens_inkernel_buffer reg = {buf[2], words, cnt[2], 0, max_records, NULL, NULL};
    warplens_inkernel_next_launch(&reg);
    warplens_ik_args a = {buf[2], cnt[2], GROUPS, 0, max_records};
    warp_specialised<<<BLOCKS, GROUPS * WG, 0, s[0]>>>(out, a);
    CK(cudaDeviceSynchronize());
    return got == 2 ? 0 : 6;
}

static long long scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

typedef struct span_check {
    uint64_t lo, hi, first, last;
    long long n, slices, outside, tiles, works;
} span_check;

static int on_event(const wl_iks_event *e, void *arg)
{
    span_check *c = (span_check *)arg;
    uint64_t end = e->start_ns + (e->kind == WL_IKS_SLICE ? e->dur_ns : 0);
    c->n++;
    c->slices += e->kind == WL_IKS_SLICE;
    c->tiles += e->kind == WL_IKS_SLICE && e->event == EV_TILE;
    c->works += e->kind == WL_IKS_SLICE && e->event == EV_WORK;
    if (e->start_ns < c->lo || end > c->hi)
        c->outside++;
    if (!c->first || e->start_ns < c->first)
        c->first = e->start_ns;
    if (end > c->last)
        c->last = end;
    return 0;
}

static int checker(const char *warplens, const char *self)
{
    const char *out = "/tmp/wl_gpu_inkernel.wlsession";
    pid_t pid = fork();
    if (pid == 0) {
        execl(warplens, warplens, "run", "-o", out, "--", self, "--workload", (char *)NULL);
        _exit(126);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    check(rc == 0, "workload under warplens exits 0 and collects 2 buffers", "exit %d", rc);
    char err[512];
    wl_session *s = wl_session_open(out, err, sizeof err);
    check(s != NULL, "session opens", "%s", s ? "" : err);
    if (!s)
        return 1;
    wl_iks_buffer *b = NULL;
    size_t n = 0;
    check(wl_session_inkernel_buffers(s, &b, &n) == 0 && n == 2, "two in-kernel buffers in the session", "%zu", n);
    long long expect_slices = (long long)BLOCKS * GROUPS * TILES * 2;
    for (size_t i = 0; i < n; i++) {
        char what[128];
        snprintf(what, sizeof what, "buffer of launch %u", b[i].correlation_id);
        check(b[i].kernel_id > 0 && !b[i].error[0], what, "kernel %lld, error '%s'", (long long)b[i].kernel_id,
              b[i].error);
        /* the calibration measures realtime - %globaltimer on the host; CUPTI maps GPU time to
         * realtime its own way: a small residual is corrected by clamping into the kernel window */
        long long clamp = b[i].clamp_ns < 0 ? -b[i].clamp_ns : b[i].clamp_ns;
        check((strcmp(b[i].placement, "calibrated") == 0 || strcmp(b[i].placement, "clamped") == 0) && clamp <= 5000,
              "placed with the measured calibration, residual vs CUPTI's clock <= 5 us",
              "placement %s, clamp %lld ns, calibration offset %lld ns +- %llu ns", b[i].placement,
              (long long)b[i].clamp_ns, (long long)b[i].calibration_offset_ns,
              (unsigned long long)b[i].calibration_uncertainty_ns);
        check(b[i].has_calibration && b[i].calibration_uncertainty_ns < 5000, "calibration uncertainty < 5 us",
              "%llu ns", (unsigned long long)b[i].calibration_uncertainty_ns);
        check(b[i].slices == (uint64_t)expect_slices && b[i].unmatched == 0 && b[i].dropped_on_device == 0,
              "every region decoded, none unmatched or dropped", "%llu slices (expected %lld), %llu unmatched, %lld dropped",
              (unsigned long long)b[i].slices, expect_slices, (unsigned long long)b[i].unmatched,
              (long long)b[i].dropped_on_device);
        span_check c = {b[i].kernel_start_ns, b[i].kernel_end_ns, 0, 0, 0, 0, 0, 0, 0};
        wl_session_inkernel_each_event(s, b[i].id, on_event, &c);
        check(c.slices == expect_slices && c.tiles == c.works, "session rows hold every region", "%lld rows", c.n);
        check(c.outside == 0, "every decoded event inside its kernel's CUPTI [start, end]",
              "%lld outside; events [%+.3f, %+.3f] us vs kernel [0, %.3f] us", c.outside,
              ((double)c.first - (double)c.lo) / 1e3, ((double)c.last - (double)c.lo) / 1e3,
              ((double)c.hi - (double)c.lo) / 1e3);
    }
    free(b);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        long long lost = scalar(db, "SELECT coalesce(sum(count), 0) FROM lost WHERE source = 'inkernel_buffers'");
        check(lost == 1, "the registered but uncollected buffer is counted lost", "%lld", lost);
        long long k = scalar(db, "SELECT count(*) FROM kernels WHERE short_name LIKE '%warp_specialised%'");
        long long own = scalar(db, "SELECT count(*) FROM kernels WHERE name LIKE '%calibration%'");
        long long d2h = scalar(db, "SELECT count(*) FROM memcpy");
        check(k == 3 && own == 0 && d2h == 0, "the recorder's own kernel and copies are not in the program's records",
              "%lld workload kernels, %lld calibration kernels, %lld memcpys", k, own, d2h);
        sqlite3_close(db);
    }
    FILE *fp = fopen("/tmp/wl_gpu_inkernel.pftrace", "wb");
    wl_export_stats es;
    memset(&es, 0, sizeof es);
    wl_tl_options o = {};
    o.inkernel_max_lanes = BLOCKS * GROUPS;
    int erc = fp ? wl_export_perfetto(s, fp, &o, &es, err, sizeof err) : -1;
    if (fp)
        fclose(fp);
    check(erc == 0 && es.tl.slices >= (uint64_t)(2 * expect_slices) && es.tl.slices_dropped == 0,
          "Perfetto export carries the lanes", "%llu slices, %llu dropped", (unsigned long long)es.tl.slices,
          (unsigned long long)es.tl.slices_dropped);
    wl_session_close(s);
    printf("inkernel_session: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--workload"))
        return workload();
    const char *warplens = getenv("WARPLENS_BIN");
    if (!warplens) {
        fprintf(stderr, "usage: WARPLENS_BIN=path/to/warplens %s\n", argv[0]);
        return 2;
    }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return 2;
    self[len] = 0;
    return checker(warplens, self);
}
