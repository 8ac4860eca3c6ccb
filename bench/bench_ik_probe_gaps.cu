/* The start and end gaps of the recorder's clock probe (capture/clock_probe_ptx.h) against CUPTI's
 * kernel timestamps, on the GPU it runs on: the floors of common/probe_floors.c come from here.
 *
 * CUPTI's kernel start and end are semaphore timestamps written by the GPU's front end before and
 * after the kernel, converted to CLOCK_REALTIME with a drifting linear map. With the map known, a
 * probe's gaps (first %globaltimer read - start, end - last read) are physical latencies, nearly
 * constant; without it only their sum is visible. `--raw` turns the map off for this process
 * (cuptiActivityEnableRawTimestamps, exported by libcupti but absent from CUDA 13.0's headers:
 * looked up with dlsym, used by this bench alone, never by the recorder), so start and end are raw
 * %globaltimer values and the gaps are measured directly. The floors printed are the minima over
 * the first half of the probes less one 32 ns timer step; the second half checks them: with raw
 * timestamps the true offset is 0, and every batch's interval with floors must contain it.
 *
 * Without --raw (the recorder's situation), it runs the same batches, intersects each with and
 * without the floors (given with --floors START,END or from the table), and fits the estimates
 * over time: the residuals against the fitted drift are the method's real scatter.
 *
 * Batches are launched and fitted like the recorder's calibration (48 probes back to back on a
 * private non-blocking stream, wl_clock_fit_batch with its drift bound), 20 of them 25 ms apart;
 * every 5th batch is paced instead (each 4th probe waited for: an idle launch queue). Prints a
 * report; exits 1 when a check fails. */
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "capture/clock_probe_ptx.h"
extern "C" { /* C headers without C++ guards */
#include "common/clock_fit.h"
#include "common/probe_floors.h"
}

#define DRV(x) drv((x), #x, __LINE__)
static void drv(CUresult r, const char *what, int line)
{
    if (r == CUDA_SUCCESS)
        return;
    const char *n = "?";
    cuGetErrorName(r, &n);
    fprintf(stderr, "bench_ik_probe_gaps: line %d: %s failed: %s\n", line, what, n);
    exit(2);
}
#define CUP(x) cup((x), #x, __LINE__)
static void cup(CUptiResult r, const char *what, int line)
{
    if (r == CUPTI_SUCCESS)
        return;
    const char *n = "?";
    cuptiGetResultString(r, &n);
    fprintf(stderr, "bench_ik_probe_gaps: line %d: %s failed: %s\n", line, what, n);
    exit(2);
}

enum { PROBES = 48, BATCHES = 20, GAP_MS = 25, STEP = 32, ROUNDING = 1 };
static const uint32_t DRIFT_BOUND_PPB = 100000; /* as capture/clock_calibration_cupti.c */

struct rec {
    uint32_t corr;
    uint64_t start, end;
};
static std::vector<rec> g_recs;
static uint32_t g_last_corr;

static void CUPTIAPI buf_req(uint8_t **buf, size_t *size, size_t *max)
{
    *size = 4u << 20;
    *buf = (uint8_t *)aligned_alloc(8, *size);
    *max = 0;
}
static void CUPTIAPI buf_done(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid)
{
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
            g_recs.push_back({k->correlationId, k->start, k->end});
        }
    free(buf);
}
static void CUPTIAPI on_api(void *, CUpti_CallbackDomain, CUpti_CallbackId, const CUpti_CallbackData *cb)
{
    if (cb->callbackSite == CUPTI_API_ENTER)
        g_last_corr = cb->correlationId;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

struct stats {
    int64_t min, med, max;
};
static stats stats_of(std::vector<int64_t> v)
{
    std::sort(v.begin(), v.end());
    return {v.front(), v[v.size() / 2], v.back()};
}

static void histogram(const char *what, const std::vector<int64_t> &v)
{
    std::vector<std::pair<int64_t, int>> h;
    for (int64_t x : v) {
        auto it = std::find_if(h.begin(), h.end(), [x](const std::pair<int64_t, int> &p) { return p.first == x; });
        if (it == h.end())
            h.push_back({x, 1});
        else
            it->second++;
    }
    std::sort(h.begin(), h.end());
    printf("  %s histogram (ns: probes):", what);
    for (auto &p : h)
        printf(" %lld:%d", (long long)p.first, p.second);
    printf("\n");
}

int main(int argc, char **argv)
{
    int raw = 0;
    int64_t f_start = 0, f_end = 0;
    int have_floors = 0;
    for (int i = 1; i < argc; i++) {
        long long a, b;
        if (!strcmp(argv[i], "--raw"))
            raw = 1;
        else if (!strcmp(argv[i], "--floors") && i + 1 < argc && sscanf(argv[++i], "%lld,%lld", &a, &b) == 2) {
            f_start = a;
            f_end = b;
            have_floors = 1;
        } else {
            fprintf(stderr, "usage: bench_ik_probe_gaps [--raw] [--floors START_NS,END_NS]\n");
            return 2;
        }
    }
    DRV(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    char name[256];
    int drv_version = 0;
    DRV(cuDeviceGet(&dev, 0));
    DRV(cuDeviceGetName(name, sizeof name, dev));
    DRV(cuDriverGetVersion(&drv_version));
    DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
    DRV(cuCtxSetCurrent(ctx));
    if (!have_floors) {
        wl_probe_floors f;
        if (wl_probe_floors_for(name, &f)) {
            f_start = f.start_ns;
            f_end = f.end_ns;
            have_floors = 1;
        }
    }

    CUpti_SubscriberHandle sub;
    CUP(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_api, NULL));
    CUP(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    CUP(cuptiActivityRegisterCallbacks(buf_req, buf_done));
    if (raw) {
        typedef CUptiResult (*raw_fn)(uint8_t);
        raw_fn f = (raw_fn)dlsym(RTLD_DEFAULT, "cuptiActivityEnableRawTimestamps");
        if (!f) {
            fprintf(stderr, "bench_ik_probe_gaps: this libcupti has no cuptiActivityEnableRawTimestamps\n");
            return 2;
        }
        CUP(f(1));
    }
    CUP(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));

    CUmodule mod;
    CUfunction fn;
    CUstream stream;
    CUdeviceptr reads_d;
    DRV(cuModuleLoadData(&mod, wl_clock_probe_ptx));
    DRV(cuModuleGetFunction(&fn, mod, WL_CLOCK_PROBE_NAME));
    DRV(cuMemAlloc(&reads_d, 16 * PROBES));
    DRV(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    std::vector<uint64_t> reads(2 * PROBES * BATCHES);
    std::vector<uint32_t> corr(PROBES * BATCHES);
    for (int b = 0; b < BATCHES; b++) {
        for (int i = 0; i < PROBES; i++) {
            CUdeviceptr out = reads_d + (CUdeviceptr)i * 16;
            void *args[] = {&out};
            DRV(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL));
            corr[b * PROBES + i] = g_last_corr;
            if (b % 5 == 4 && (i & 3) == 3)
                DRV(cuStreamSynchronize(stream));
        }
        DRV(cuStreamSynchronize(stream));
        DRV(cuMemcpyDtoH(&reads[2 * PROBES * b], reads_d, 16 * PROBES));
        sleep_ms(GAP_MS);
    }
    CUP(cuptiActivityFlushAll(1));

    std::vector<wl_clock_sample> s(PROBES * BATCHES);
    unsigned found = 0;
    for (int i = 0; i < PROBES * BATCHES; i++) {
        memset(&s[i], 0, sizeof s[i]);
        for (const rec &r : g_recs)
            if (r.corr == corr[i]) {
                s[i] = {r.start, r.end, reads[2 * i], reads[2 * i + 1]};
                found++;
                break;
            }
    }
    printf("bench_ik_probe_gaps: %s, driver %d, %s CUPTI timestamps, %d batches x %d probes, %u records\n", name,
           drv_version, raw ? "raw GPU" : "converted (CLOCK_REALTIME)", BATCHES, PROBES, found);
    if (found < (unsigned)(PROBES * BATCHES * 9 / 10)) {
        printf("FAIL: too few CUPTI records\n");
        return 1;
    }
    int fails = 0;
    if (raw) {
        /* the gaps, in the values compared (both 32 ns-quantized %globaltimer values) */
        std::vector<int64_t> gs[2], ge[2];
        for (int i = 0; i < PROBES * BATCHES; i++) {
            if (!s[i].cupti_start_ns)
                continue;
            const int half = i >= PROBES * BATCHES / 2;
            gs[half].push_back((int64_t)s[i].gpu_first_ns - (int64_t)s[i].cupti_start_ns);
            ge[half].push_back((int64_t)s[i].cupti_end_ns - (int64_t)s[i].gpu_last_ns);
        }
        for (int h = 0; h < 2; h++) {
            stats a = stats_of(gs[h]), b = stats_of(ge[h]);
            printf("%s half: start gap (first read - CUPTI start) min %lld median %lld max %lld ns; end gap (CUPTI end - "
                   "last read) min %lld median %lld max %lld ns\n",
                   h ? "second" : "first", (long long)a.min, (long long)a.med, (long long)a.max, (long long)b.min,
                   (long long)b.med, (long long)b.max);
            histogram("start gap", gs[h]);
            histogram("end gap", ge[h]);
        }
        const int64_t fs = stats_of(gs[0]).min - STEP, fe = stats_of(ge[0]).min - STEP;
        printf("floors (first half's minima less one %d ns step): start %lld ns, end %lld ns\n", STEP, (long long)fs,
               (long long)fe);
        /* second half: every batch with these floors must contain the true offset, 0 */
        unsigned ok = 0, n = 0;
        int64_t worst = 0;
        std::vector<int64_t> widths;
        const int64_t fl[2] = {fs, fe};
        for (int b = BATCHES / 2; b < BATCHES; b++) {
            wl_clock_fit fit;
            uint64_t at;
            int used;
            int64_t empty_by;
            n++;
            if (wl_clock_fit_batch(&s[b * PROBES], PROBES, STEP, fl, ROUNDING, DRIFT_BOUND_PPB, &fit, &at, &used,
                                   &empty_by) == 0 &&
                used && fit.lo_ns <= 0 && fit.hi_ns >= 0)
                ok++;
            widths.push_back(fit.hi_ns - fit.lo_ns);
            worst = std::max(worst, (int64_t)std::llabs(fit.offset_ns));
        }
        stats w = stats_of(widths);
        printf("%s second half: %u of %u batches' intervals with these floors contain the true offset 0; widths "
               "min %lld median %lld max %lld ns; worst |estimate| %lld ns\n",
               ok == n ? "PASS" : "FAIL", ok, n, (long long)w.min, (long long)w.med, (long long)w.max, (long long)worst);
        fails += ok != n;
        if (have_floors) {
            unsigned okt = 0;
            const int64_t ft[2] = {f_start, f_end};
            for (int b = 0; b < BATCHES; b++) {
                wl_clock_fit fit;
                uint64_t at;
                int used;
                int64_t empty_by;
                okt += wl_clock_fit_batch(&s[b * PROBES], PROBES, STEP, ft, ROUNDING, DRIFT_BOUND_PPB, &fit, &at, &used,
                                          &empty_by) == 0 &&
                       used && fit.lo_ns <= 0 && fit.hi_ns >= 0;
            }
            printf("%s table floors (start %lld, end %lld): %u of %d batches contain the true offset 0\n",
                   okt == BATCHES ? "PASS" : "FAIL", (long long)f_start, (long long)f_end, okt, BATCHES);
            fails += okt != BATCHES;
        }
    } else {
        /* per batch: plain intersection vs floors; then the estimates' scatter about a fitted drift */
        std::vector<double> t, c, u;
        std::vector<int64_t> wp, wf;
        int empty = 0;
        const int64_t ft[2] = {f_start, f_end};
        for (int b = 0; b < BATCHES; b++) {
            wl_clock_fit plain, fl;
            uint64_t at;
            int used;
            int64_t empty_by;
            if (wl_clock_fit_batch(&s[b * PROBES], PROBES, STEP, NULL, ROUNDING, DRIFT_BOUND_PPB, &plain, &at, &used,
                                   &empty_by) != 0) {
                printf("FAIL: batch %d: plain intersection empty\n", b);
                fails++;
                continue;
            }
            wp.push_back((int64_t)plain.uncertainty_ns);
            if (!have_floors)
                continue;
            const uint64_t span = s[b * PROBES + PROBES - 1].cupti_end_ns - s[b * PROBES].cupti_start_ns;
            if (wl_clock_fit_batch(&s[b * PROBES], PROBES, STEP, ft, ROUNDING, DRIFT_BOUND_PPB, &fl, &at, &used,
                                   &empty_by) != 0 ||
                !used) {
                printf("  batch %2d%s: span %6.1f us: floors' intersection empty by %lld ns\n", b,
                       b % 5 == 4 ? " (paced)" : "", span / 1e3, (long long)empty_by);
                empty++;
                continue;
            }
            printf("  batch %2d%s: span %6.1f us, %u probes: offset %lld +- %llu ns (plain +- %llu)\n", b,
                   b % 5 == 4 ? " (paced)" : "", span / 1e3, fl.used, (long long)fl.offset_ns,
                   (unsigned long long)fl.uncertainty_ns, (unsigned long long)plain.uncertainty_ns);
            wf.push_back((int64_t)fl.uncertainty_ns);
            if (fl.lo_ns < plain.lo_ns || fl.hi_ns > plain.hi_ns) {
                printf("FAIL: batch %d: the floors' interval leaves the plain one\n", b);
                fails++;
            }
            t.push_back((double)(at - s[0].cupti_start_ns) / 1e9);
            c.push_back((double)fl.offset_ns);
            u.push_back((double)fl.uncertainty_ns);
        }
        stats p = stats_of(wp);
        printf("plain intersection: uncertainty min %lld median %lld max %lld ns\n", (long long)p.min, (long long)p.med,
               (long long)p.max);
        if (have_floors) {
            printf("%s floors (start %lld, end %lld): %d of %d batches empty\n", empty ? "FAIL" : "PASS",
                   (long long)f_start, (long long)f_end, empty, BATCHES);
            fails += empty != 0;
            if (wf.size() >= 3) {
                stats f = stats_of(wf);
                double mt = 0, mc = 0, sxy = 0, sxx = 0, worst = 0;
                for (size_t i = 0; i < t.size(); i++)
                    mt += t[i] / t.size(), mc += c[i] / c.size();
                for (size_t i = 0; i < t.size(); i++)
                    sxy += (t[i] - mt) * (c[i] - mc), sxx += (t[i] - mt) * (t[i] - mt);
                const double slope = sxy / sxx;
                double worst_excess = -1e9;
                for (size_t i = 0; i < t.size(); i++) {
                    const double r = std::abs(c[i] - (mc + slope * (t[i] - mt)));
                    worst = std::max(worst, r);
                    worst_excess = std::max(worst_excess, r - u[i]);
                }
                printf("with floors: uncertainty min %lld median %lld max %lld ns; offsets drift %.0f ns/s over %.2f s, "
                       "worst residual about the fitted drift %.1f ns (residual - own uncertainty at most %.1f ns)\n",
                       (long long)f.min, (long long)f.med, (long long)f.max, slope, t.back() - t.front(), worst,
                       worst_excess);
                /* the fitted line has its own error: a residual may exceed its batch's bound by the
                 * others' (the median bound) */
                const bool ok = worst_excess <= (double)f.med;
                printf("%s residuals within the stated uncertainty\n", ok ? "PASS" : "FAIL");
                fails += !ok;
            }
        } else {
            printf("no floors for this device (give --floors START,END from a --raw run)\n");
        }
    }
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiUnsubscribe(sub);
    cuMemFree(reads_d);
    cuStreamDestroy(stream);
    cuModuleUnload(mod);
    printf("bench_ik_probe_gaps: %s\n", fails ? "checks FAILED" : "checks ok");
    return fails ? 1 : 0;
}
