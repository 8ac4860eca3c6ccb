// GPU suite: NVML device sampling (`warplens run --nvml-interval`). Three parts, well under 30 s:
//  1. NVML directly: loads libnvidia-ml.so.1, finds CUDA device 0 by its PCI bus id and times the
//     sampler's seven reads per sample (the cost behind the 100 ms default), printing the values.
//  2. Runs itself (--workload: ~1.5 s of a kernel that fills the GPU, then ~0.4 s idle) under
//     `warplens run --nvml-interval 50` and checks the session: samples arrive for device 0 with
//     the PCI bus id of the device row, SM clock > 0, memory clock > 0, power > 0, temperature > 0,
//     memory used > 0, windows chained, and the windows attributed exactly to the busy kernel show a
//     high GPU utilisation (a wrong PCI match would read another GPU's idle counters).
//  3. The same workload with --nvml-interval 0: the busy kernel's mean duration with and without
//     sampling (INFO: what the sampler costs the program).
// Prints PASS/FAIL lines and "nvml: N passed, M failed"; exits non-zero on failure.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu_ck.h"

static int passed, failed;
__attribute__((format(printf, 2, 3))) static void check(int ok, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("%s: %s\n", ok ? "PASS" : "FAIL", msg);
    ok ? passed++ : failed++;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

extern "C" __global__ void wl_nvml_busy_kernel(float *out, int iters)
{
    float y = (float)threadIdx.x;
    for (int k = 0; k < iters; k++)
        y = fmaf(y, 0.9999f, 1e-4f);
    out[blockIdx.x * blockDim.x + threadIdx.x] = y;
}

static int workload(void)
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float *out;
    int blocks = sms * 8, threads = 256;
    CK(cudaMalloc(&out, (size_t)blocks * threads * sizeof(float)));
    double t0 = now_s();
    while (now_s() - t0 < 1.5) { // launches longer than a 50 ms window: most windows hold one kernel
        wl_nvml_busy_kernel<<<blocks, threads>>>(out, 15000000); // ~0.1-0.3 s per launch
        CK(cudaDeviceSynchronize());
    }
    usleep(400000); // idle windows at the end
    CK(cudaFree(out));
    return 0;
}

// ---- part 1: NVML directly -------------------------------------------------------------------
typedef struct nvml_dev_st *nvml_dev;
typedef struct { unsigned int gpu, memory; } nvml_util;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvml_memory_v2;

static void nvml_direct(const char *pci)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    check(lib != NULL, "dlopen libnvidia-ml.so.1 (%s)", lib ? "ok" : dlerror());
    if (!lib)
        return;
    int (*init)(void) = (int (*)(void))dlsym(lib, "nvmlInit_v2");
    int (*by_pci)(const char *, nvml_dev *) = (int (*)(const char *, nvml_dev *))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    int (*util)(nvml_dev, nvml_util *) = (int (*)(nvml_dev, nvml_util *))dlsym(lib, "nvmlDeviceGetUtilizationRates");
    int (*clk)(nvml_dev, int, unsigned *) = (int (*)(nvml_dev, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
    int (*power)(nvml_dev, unsigned *) = (int (*)(nvml_dev, unsigned *))dlsym(lib, "nvmlDeviceGetPowerUsage");
    int (*temp)(nvml_dev, int, unsigned *) = (int (*)(nvml_dev, int, unsigned *))dlsym(lib, "nvmlDeviceGetTemperature");
    int (*mem)(nvml_dev, nvml_memory_v2 *) = (int (*)(nvml_dev, nvml_memory_v2 *))dlsym(lib, "nvmlDeviceGetMemoryInfo_v2");
    int (*energy)(nvml_dev, unsigned long long *) =
        (int (*)(nvml_dev, unsigned long long *))dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption");
    int (*shutdown)(void) = (int (*)(void))dlsym(lib, "nvmlShutdown");
    int all = init && by_pci && util && clk && power && temp && mem && energy && shutdown;
    check(all, "all NVML symbols the sampler uses are present");
    if (!all)
        return;
    check(init() == 0, "nvmlInit_v2");
    nvml_dev d = NULL;
    int st = by_pci(pci, &d);
    check(st == 0, "NVML device found by CUDA 0's PCI bus id %s (status %d)", pci, st);
    if (st != 0)
        return;
    enum { ROUNDS = 200 };
    nvml_util u = {0, 0};
    unsigned sm = 0, mc = 0, mw = 0, c = 0;
    unsigned long long mj = 0;
    nvml_memory_v2 m;
    int errors = 0;
    double t0 = now_s();
    for (int i = 0; i < ROUNDS; i++) {
        memset(&m, 0, sizeof m);
        m.version = (unsigned)(sizeof m | (2u << 24));
        errors += util(d, &u) != 0;
        errors += clk(d, 1, &sm) != 0;
        errors += clk(d, 2, &mc) != 0;
        errors += power(d, &mw) != 0;
        errors += temp(d, 0, &c) != 0;
        errors += mem(d, &m) != 0;
        errors += energy(d, &mj) != 0;
    }
    double us = (now_s() - t0) / ROUNDS * 1e6;
    check(errors == 0, "%d rounds of the 7 reads, %d errors", (int)ROUNDS, errors);
    printf("INFO: one sample (7 NVML reads) costs %.1f us of the sampler thread: %.3f %% of one core at 100 ms,"
           " %.3f %% at 10 ms\n", us, us / 1000.0, us / 100.0);
    printf("INFO: NVML now: util %u %% / mem %u %%, SM %u MHz, mem %u MHz, %.1f W, %u C, %.0f MiB used, %llu mJ\n",
           u.gpu, u.memory, sm, mc, mw / 1000.0, c, (double)m.used / 1048576.0, mj);
    check(sm > 0 && mc > 0 && mw > 0, "direct read: SM clock %u MHz, memory clock %u MHz, power %u mW", sm, mc, mw);
    shutdown();
}

// ---- parts 2 and 3: under warplens run -----------------------------------------------------------
static int run_under(const char *warplens, const char *self, const char *session, const char *interval)
{
    unlink(session);
    pid_t pid = fork();
    if (pid == 0) {
        execl(warplens, warplens, "run", "-q", "--nvml-interval", interval, "-o", session, "--", self, "--workload",
              (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static double scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    double v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void check_session(const char *session, const char *pci)
{
    sqlite3 *db;
    if (sqlite3_open_v2(session, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        check(0, "session %s opens", session);
        return;
    }
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM device WHERE device_id = 0 AND lower(pci_bus_id) = lower('%s')", pci);
    check(scalar(db, sql) == 1, "device 0 recorded with PCI bus id %s", pci);
    double n = scalar(db, "SELECT count(*) FROM device_sample WHERE device_id = 0");
    check(n >= 20, "%.0f samples of device 0 in ~2 s at 50 ms (want >= 20)", n);
    double sm = scalar(db, "SELECT min(sm_clock_mhz) FROM device_sample WHERE device_id = 0");
    double smx = scalar(db, "SELECT max(sm_clock_mhz) FROM device_sample WHERE device_id = 0");
    double mc = scalar(db, "SELECT min(mem_clock_mhz) FROM device_sample WHERE device_id = 0");
    double pw = scalar(db, "SELECT min(power_mw) FROM device_sample WHERE device_id = 0");
    double pwx = scalar(db, "SELECT max(power_mw) FROM device_sample WHERE device_id = 0");
    double tc = scalar(db, "SELECT min(temperature_c) FROM device_sample WHERE device_id = 0");
    double mu = scalar(db, "SELECT max(memory_used_bytes) FROM device_sample WHERE device_id = 0");
    double en = scalar(db, "SELECT max(energy_mj) - min(energy_mj) FROM device_sample WHERE device_id = 0");
    double nulls = scalar(db, "SELECT count(*) FROM device_sample WHERE sm_clock_mhz IS NULL OR power_mw IS NULL"
                              " OR gpu_util_pct IS NULL OR temperature_c IS NULL OR memory_used_bytes IS NULL");
    check(sm > 0 && smx > 0, "SM clock %.0f..%.0f MHz", sm, smx);
    check(mc > 0, "memory clock >= %.0f MHz", mc);
    check(pw > 0, "power %.1f..%.1f W", pw / 1000, pwx / 1000);
    check(tc > 0, "temperature >= %.0f C", tc);
    check(mu > 0, "memory used up to %.0f MiB", mu / 1048576);
    check(nulls == 0, "%.0f samples with a value NVML did not give", nulls);
    printf("INFO: energy over the samples %.1f J\n", en / 1000);
    double broken = scalar(db, "SELECT count(*) FROM device_sample WHERE ts_ns <= window_start_ns");
    check(broken == 0, "%.0f empty or reversed windows", broken);
    double busy = scalar(db, "SELECT max(gpu_util_pct) FROM device_sample WHERE device_id = 0 AND ts_ns < "
                             "(SELECT max(end_ns) FROM kernel) AND window_start_ns > (SELECT min(start_ns) FROM kernel)");
    check(busy >= 50, "GPU utilisation while the busy kernel ran: max %.0f %% (want >= 50: the matched GPU is ours)", busy);
    double idle = scalar(db, "SELECT min(gpu_util_pct) FROM device_sample WHERE device_id = 0 AND window_start_ns > "
                             "(SELECT max(end_ns) FROM kernel) + 200000000");
    printf("INFO: GPU utilisation in the idle tail: min %.0f %% (-1: no window fully inside it)\n", idle);
    sqlite3_close(db);
}

static double mean_kernel_ms(const char *session)
{
    sqlite3 *db;
    if (sqlite3_open_v2(session, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return -1;
    double v = scalar(db, "SELECT avg(duration_ns) / 1e6 FROM kernels WHERE short_name LIKE 'wl_nvml_busy_kernel%'");
    sqlite3_close(db);
    return v;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--workload"))
        return workload();
    char pci[64] = "";
    CK(cudaDeviceGetPCIBusId(pci, sizeof pci, 0));
    printf("INFO: CUDA device 0 is at PCI %s\n", pci);
    nvml_direct(pci);
    const char *warplens = getenv("WARPLENS_BIN");
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!warplens || n <= 0) {
        printf("WARPLENS_BIN not set: the run under warplens is skipped\n");
    } else {
        self[n] = 0;
        const char *on = "/tmp/wl_nvml.wlsession", *off = "/tmp/wl_nvml_off.wlsession";
        int rc = run_under(warplens, self, on, "50");
        check(rc == 0, "workload under warplens run --nvml-interval 50 exits 0 (%d)", rc);
        check_session(on, pci);
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "'%s' samples '%s' --csv | grep -c ',exact,1,'", warplens, on);
        FILE *p = popen(cmd, "r");
        int exact = 0;
        if (p && fscanf(p, "%d", &exact) != 1)
            exact = 0;
        if (p)
            pclose(p);
        check(exact > 0, "warplens samples: %d windows attributed exactly to one kernel", exact);
        rc = run_under(warplens, self, off, "0");
        check(rc == 0, "workload with --nvml-interval 0 exits 0 (%d)", rc);
        double a = mean_kernel_ms(on), b = mean_kernel_ms(off);
        printf("INFO: busy kernel mean %.3f ms with sampling every 50 ms, %.3f ms without (%+.2f %%)\n", a, b,
               b > 0 ? (a - b) / b * 100 : 0);
    }
    printf("nvml: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
