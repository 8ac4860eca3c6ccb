/* Device-wide sampling through NVML (`warplens run --nvml-interval MS`): a thread of the recorder's
 * own reads utilisation, clocks, power, temperature, memory used and energy of every CUDA device
 * the session records, every interval, and hands fixed-size samples to the writer through a ring.
 * Nothing here serialises kernels or touches the application's threads.
 *
 * libnvidia-ml is loaded with dlopen (no nvml.h in the toolkit; WARPLENS_NVML_LIBRARY overrides
 * the name, which the tests use for a fake library). CUDA devices are matched to NVML devices by
 * PCI bus id, never by index (CUDA_VISIBLE_DEVICES and NVML order differ). A missing library,
 * symbol or permission is reported once in one line and tracing goes on without that series.
 * This file uses no CUDA header: device_info.c passes each device's PCI bus id in. */
#include "capture/recorder.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"

#define MAX_DEVICES 64
#define RING_SAMPLES 1024u /* ~10 s of 8 devices at 10 ms; the writer drains every 50 ms */

typedef struct nvml_dev_st *nvml_dev;
typedef struct { unsigned int gpu, memory; } nvml_util;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvml_memory_v2;
#define NVML_MEMORY_V2 ((unsigned int)(sizeof(nvml_memory_v2) | (2u << 24)))
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMP_GPU = 0 };

static struct {
    int (*init)(void);
    int (*shutdown)(void);
    const char *(*error_string)(int);
    int (*by_pci)(const char *, nvml_dev *);
    int (*util)(nvml_dev, nvml_util *);
    int (*clock)(nvml_dev, int, unsigned *);
    int (*power)(nvml_dev, unsigned *);
    int (*temp)(nvml_dev, int, unsigned *);
    int (*memory)(nvml_dev, nvml_memory_v2 *);
    int (*energy)(nvml_dev, unsigned long long *);
} nv;

typedef struct sampled_dev {
    uint32_t device_id;
    char pci[32];
    int state;                 /* 0 waiting for the sampler, 1 sampled, 2 not found in NVML */
    int fresh;                 /* matched this round: its first window starts now */
    nvml_dev handle;
    uint64_t last_ts;
    uint32_t reported;         /* WLCAP_SAMPLE_* whose failure was reported */
} sampled_dev;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond;
static sampled_dev g_devs[MAX_DEVICES]; /* under g_lock */
static int g_ndevs;
static int g_stop, g_added;             /* under g_lock: exit asked, a device registered */
static pthread_t g_thread;
static int g_started;
static unsigned g_interval_ms;
static char g_library[512];
static wl_mpsc g_ring;                  /* wlcap_device_sample: sampler -> writer */

static const char *nv_err(int st)
{
    const char *s = nv.error_string ? nv.error_string(st) : NULL;
    return s ? s : "unknown NVML error";
}

static void *sym(void *lib, const char *name, int required)
{
    void *p = dlsym(lib, name);
    if (!p && !required)
        wl_log("NVML: %s has no %s; that series is not sampled", g_library, name);
    return p;
}

/* Loads the library and the symbols; 0 when sampling can run. */
static int load(void)
{
    void *lib = dlopen(g_library, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        wl_log("NVML sampling is off: cannot load %s (%s); tracing continues", g_library, dlerror());
        return -1;
    }
    static const char *const required[] = {"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString",
                                           "nvmlDeviceGetHandleByPciBusId_v2"};
    void *req[4];
    for (int i = 0; i < 4; i++) {
        if (!(req[i] = dlsym(lib, required[i]))) {
            wl_log("NVML sampling is off: %s has no %s; tracing continues", g_library, required[i]);
            dlclose(lib);
            return -1;
        }
    }
    /* data pointers to function pointers: POSIX dlsym guarantees the conversion */
    memcpy(&nv.init, &req[0], sizeof req[0]);
    memcpy(&nv.shutdown, &req[1], sizeof req[1]);
    memcpy(&nv.error_string, &req[2], sizeof req[2]);
    memcpy(&nv.by_pci, &req[3], sizeof req[3]);
    void *p;
    p = sym(lib, "nvmlDeviceGetUtilizationRates", 0), memcpy(&nv.util, &p, sizeof p);
    p = sym(lib, "nvmlDeviceGetClockInfo", 0), memcpy(&nv.clock, &p, sizeof p);
    p = sym(lib, "nvmlDeviceGetPowerUsage", 0), memcpy(&nv.power, &p, sizeof p);
    p = sym(lib, "nvmlDeviceGetTemperature", 0), memcpy(&nv.temp, &p, sizeof p);
    p = sym(lib, "nvmlDeviceGetMemoryInfo_v2", 0), memcpy(&nv.memory, &p, sizeof p);
    p = sym(lib, "nvmlDeviceGetTotalEnergyConsumption", 0), memcpy(&nv.energy, &p, sizeof p);
    int st = nv.init();
    if (st != 0) {
        wl_log("NVML sampling is off: nvmlInit failed (%s); tracing continues", nv_err(st));
        return -1; /* the library stays loaded: unloading a half-initialised NVML is not worth it */
    }
    return 0;
}

/* Reports the first failure of one series on one device; returns 0 so `ok || failed()` reads as
 * "the value is valid". */
static int failed(sampled_dev *d, uint32_t bit, const char *what, int st)
{
    if (!(d->reported & bit)) {
        d->reported |= bit;
        wl_log("NVML cannot read %s of CUDA device %u (%s); that series is missing", what, d->device_id, nv_err(st));
    }
    return 0;
}

static void sample(sampled_dev *d)
{
    wlcap_device_sample s;
    memset(&s, 0, sizeof s);
    s.timestamp = wl_realtime_ns();
    s.window_start = d->last_ts;
    s.device_id = d->device_id;
    int st;
    nvml_util u;
    if (nv.util && ((st = nv.util(d->handle, &u)) == 0 || failed(d, WLCAP_SAMPLE_UTIL, "utilisation", st)))
        s.valid |= WLCAP_SAMPLE_UTIL, s.gpu_util_pct = u.gpu, s.mem_util_pct = u.memory;
    if (nv.clock && ((st = nv.clock(d->handle, NVML_CLOCK_SM, &s.sm_clock_mhz)) == 0 ||
                     failed(d, WLCAP_SAMPLE_SM_CLOCK, "the SM clock", st)))
        s.valid |= WLCAP_SAMPLE_SM_CLOCK;
    if (nv.clock && ((st = nv.clock(d->handle, NVML_CLOCK_MEM, &s.mem_clock_mhz)) == 0 ||
                     failed(d, WLCAP_SAMPLE_MEM_CLOCK, "the memory clock", st)))
        s.valid |= WLCAP_SAMPLE_MEM_CLOCK;
    if (nv.power && ((st = nv.power(d->handle, &s.power_mw)) == 0 || failed(d, WLCAP_SAMPLE_POWER, "power", st)))
        s.valid |= WLCAP_SAMPLE_POWER;
    if (nv.temp && ((st = nv.temp(d->handle, NVML_TEMP_GPU, &s.temperature_c)) == 0 ||
                    failed(d, WLCAP_SAMPLE_TEMP, "the temperature", st)))
        s.valid |= WLCAP_SAMPLE_TEMP;
    nvml_memory_v2 m;
    memset(&m, 0, sizeof m);
    m.version = NVML_MEMORY_V2;
    if (nv.memory && ((st = nv.memory(d->handle, &m)) == 0 || failed(d, WLCAP_SAMPLE_MEM_USED, "memory used", st)))
        s.valid |= WLCAP_SAMPLE_MEM_USED, s.memory_used_bytes = m.used;
    unsigned long long mj = 0;
    if (nv.energy && ((st = nv.energy(d->handle, &mj)) == 0 || failed(d, WLCAP_SAMPLE_ENERGY, "energy", st)))
        s.valid |= WLCAP_SAMPLE_ENERGY, s.energy_mj = mj;
    d->last_ts = s.timestamp;
    wl_mpsc_push(&g_ring, &s); /* a full ring counts the loss */
}

/* Matches devices registered since the last round (sampler thread, g_lock held). */
static void match_new(void)
{
    for (int i = 0; i < g_ndevs; i++) {
        sampled_dev *d = &g_devs[i];
        if (d->state != 0)
            continue;
        int st = nv.by_pci(d->pci, &d->handle);
        if (st != 0) {
            d->state = 2;
            wl_log("NVML has no device with PCI bus id %s (CUDA device %u: %s); it is not sampled", d->pci,
                   d->device_id, nv_err(st));
            continue;
        }
        d->state = 1;
        d->fresh = 1;
        d->last_ts = wl_realtime_ns();
    }
}

static void *sampler_main(void *arg)
{
    (void)arg;
    if (load() != 0)
        return NULL;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        match_new();
        int stop = g_stop;
        /* NVML calls are made outside the lock so registering a device never waits on them */
        int n = g_ndevs;
        pthread_mutex_unlock(&g_lock);
        /* state 1 is final and only this thread writes the rest of a matched device */
        for (int i = 0; i < n; i++) {
            if (g_devs[i].state == 1 && !g_devs[i].fresh)
                sample(&g_devs[i]);
            g_devs[i].fresh = 0;
        }
        pthread_mutex_lock(&g_lock);
        if (stop)
            break; /* the last round closed every device's final window at exit */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t ns = (uint64_t)t.tv_nsec + (uint64_t)g_interval_ms * 1000000ull;
        t.tv_sec += (time_t)(ns / 1000000000ull);
        t.tv_nsec = (long)(ns % 1000000000ull);
        while (!g_stop && !g_added && pthread_cond_timedwait(&g_cond, &g_lock, &t) == 0)
            ;
        g_added = 0;
    }
    pthread_mutex_unlock(&g_lock);
    int st = nv.shutdown();
    if (st != 0)
        wl_log("nvmlShutdown failed (%s)", nv_err(st));
    return NULL;
}

int wl_nvml_start(unsigned interval_ms, const char *library)
{
    if (interval_ms == 0)
        return 0;
    g_interval_ms = interval_ms;
    snprintf(g_library, sizeof g_library, "%s", library && *library ? library : "libnvidia-ml.so.1");
    if (wl_mpsc_init(&g_ring, RING_SAMPLES, sizeof(wlcap_device_sample)) != 0) {
        wl_log("NVML sampling is off: out of memory for the sample ring; tracing continues");
        return -1;
    }
    wl_mpsc_set_spill(&g_ring, WL_SPILL_SAMPLES, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cond, &ca);
    pthread_condattr_destroy(&ca);
    int rc = wl_thread_start(&g_thread, "warplens-nvml", sampler_main);
    if (rc != 0) {
        wl_log("NVML sampling is off: cannot start its thread (%s); tracing continues", strerror(rc));
        return -1;
    }
    g_started = 1;
    return 0;
}

void wl_nvml_add_device(uint32_t device_id, const char *pci_bus_id)
{
    /* kept even before the sampler starts (a context created while the recorder is starting) */
    if (!pci_bus_id || !*pci_bus_id)
        return;
    pthread_mutex_lock(&g_lock);
    int known = 0;
    for (int i = 0; i < g_ndevs; i++)
        known |= g_devs[i].device_id == device_id;
    if (!known && g_ndevs < MAX_DEVICES) {
        sampled_dev *d = &g_devs[g_ndevs++];
        memset(d, 0, sizeof *d);
        d->device_id = device_id;
        snprintf(d->pci, sizeof d->pci, "%s", pci_bus_id);
        g_added = 1; /* match it now, so its first window starts with it rather than a tick later */
        pthread_cond_signal(&g_cond);
    }
    pthread_mutex_unlock(&g_lock);
}

void wl_nvml_write_pending(void)
{
    wlcap_device_sample s;
    while (wl_mpsc_pop(&g_ring, &s))
        wl_capw_record(WLCAP_DEVICE_SAMPLE, &s, sizeof s);
    uint64_t lost = wl_mpsc_take_dropped(&g_ring);
    if (lost) {
        wlcap_dropped r = {lost, WLCAP_DROP_SAMPLES, 0, 0, 0};
        wl_capw_record(WLCAP_DROPPED, &r, sizeof r);
    }
}

void wl_nvml_stop(void)
{
    if (!g_started)
        return;
    pthread_mutex_lock(&g_lock);
    g_stop = 1;
    pthread_cond_signal(&g_cond);
    pthread_mutex_unlock(&g_lock);
    pthread_join(g_thread, NULL);
    g_started = 0;
}
