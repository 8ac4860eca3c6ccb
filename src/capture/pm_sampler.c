/* PM sampling (`warplens run --pm-sampling`): CUPTI's device-wide hardware counters over fixed
 * GPU-time windows (default 100 us), with no kernel replay and no serialisation. This file owns
 * the settings (WARPLENS_PM_SAMPLING, WARPLENS_PM_INTERVAL_US, WARPLENS_PM_HW_BUFFER,
 * WARPLENS_PM_DECODE_MS), the sampler thread, which devices have a live context, and the
 * hand-over to the writer thread; pm_device.c makes the CUPTI calls for one device.
 *
 * Application threads only bump a context count under a short lock (resource callbacks). A
 * device starts being sampled when its first context appears; when its last context is being
 * destroyed (cudaDeviceReset, cuCtxDestroy) the destroying thread waits, at most 2 s, for the
 * sampler to stop the device and decode what is left, and a later context starts it again.
 * The sampler thread decodes every WARPLENS_PM_DECODE_MS (default: ~100 windows, 10..100 ms) and
 * pushes fixed-size items into a bounded ring the writer drains: metric definitions (they wait
 * for room, so they always precede their samples) and samples (a full ring loses the sample,
 * counted). Status lines (why sampling is off, the final counts) go through a small locked queue.
 * Losses reach the capture as DROPPED records of source WLCAP_DROP_PMSAMPLING per device. */
#include "capture/pm_sampler.h"
#include "capture/recorder.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"

#define RING_ITEMS 16384u               /* 1.8 MiB: ~1.6 s of 8-metric windows at 100 us */
#define STATUS_SLOTS 128
#define DEF_WAIT_NS 1000000000ull
#define DESTROY_WAIT_NS 2000000000ull
#define DEFAULT_DECODE_MS 10u          /* the shortest automatic decode period */
#define MAX_DECODE_MS 100u
#define HOLD_UP_MS 120u                /* the longest late decode the image has room for */
#define DEFAULT_HW_BUFFER (128ull << 20)

enum { ITEM_SAMPLE = 1, ITEM_DEF = 2 };

typedef struct pm_item {
    uint32_t kind, pad;
    union {
        wlcap_pm_sample sample;
        struct {
            uint64_t interval_ns;
            uint32_t device, index, name, type; /* name: index into g_names */
            char unit[40];
        } def;
    } u;
} pm_item;

typedef struct status_line {
    uint32_t device, off;
    char text[400];
} status_line;

static pm_settings g_set;
static char g_names[WL_PM_METRICS_MAX][WL_METRIC_NAME_MAX];
static pm_device g_dev[PM_MAX_DEVICES]; /* sampler thread only */
static wl_mpsc g_ring;
static _Atomic int g_ring_ready;        /* the writer may drain */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake, g_done;   /* the sampler waits on wake; a destroying context on done */
static uint64_t g_live;                 /* under g_lock: devices with a live context */
static uint64_t g_release;              /* under g_lock: devices whose last context is going away */
static unsigned g_contexts[PM_MAX_DEVICES];
static int g_stop, g_kick;
static status_line g_status[STATUS_SLOTS]; /* under g_lock: FIFO for the writer */
static unsigned g_status_head, g_status_n;
static _Atomic uint64_t g_ring_lost[PM_MAX_DEVICES], g_gaps[PM_MAX_DEVICES];
static _Atomic int g_any_lost;
static pthread_t g_thread;
static _Atomic int g_started;

/* ---- settings ----------------------------------------------------------------------------------- */

/* Unsigned decimal with an optional K/M/G suffix; 0, or -1 (logged, default kept). */
static int env_number(const char *name, unsigned long long lo, unsigned long long hi, unsigned long long *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
    if (shift)
        end++;
    if (errno || end == v || *end || x > (hi >> shift) || (x << shift) < lo) {
        wl_log("%s=%s is not valid (%llu..%llu); using the default", name, v, lo, hi);
        return -1;
    }
    *out = x << shift;
    return 0;
}

static int read_settings(void)
{
    const char *spec = getenv("WARPLENS_PM_SAMPLING");
    if (!spec || !*spec)
        return -1;
    const char *metrics = getenv("WARPLENS_METRICS"), *pc = getenv("WARPLENS_PC_SAMPLING");
    if (metrics && *metrics) {
        wl_log("PM sampling is off: it cannot run together with hardware metrics (WARPLENS_METRICS), which take"
               " the same performance counters and profile kernels one at a time; tracing continues");
        return -1;
    }
    if (pc && *pc && strcmp(pc, "0") != 0) {
        wl_log("PM sampling is off: it cannot run together with warp stall sampling (WARPLENS_PC_SAMPLING), which"
               " takes the GPU's profiling hardware and runs kernels one at a time; tracing continues");
        return -1;
    }
    char err[400];
    int n = wl_pm_metrics_expand(spec, g_names, g_set.from_preset, WL_PM_METRICS_MAX, err, sizeof err);
    if (n < 0) {
        wl_log("PM sampling is off: WARPLENS_PM_SAMPLING: %s; tracing continues", err);
        return -1;
    }
    g_set.n = n;
    for (int i = 0; i < n; i++)
        g_set.names[i] = g_names[i];
    unsigned long long x;
    unsigned long long us = WL_PM_DEFAULT_INTERVAL_US;
    if (env_number("WARPLENS_PM_INTERVAL_US", WL_PM_MIN_INTERVAL_US, WL_PM_MAX_INTERVAL_US, &x) == 0)
        us = x;
    g_set.interval_ns = us * 1000ull;
    g_set.hw_buffer_bytes = DEFAULT_HW_BUFFER;
    if (env_number("WARPLENS_PM_HW_BUFFER", 1ull << 20, 4ull << 30, &x) == 0)
        g_set.hw_buffer_bytes = (size_t)x;
    /* about 100 windows per decode: each decode call and image reset has a fixed cost (~0.5 ms and
     * ~1.7 ms on the H100), so longer intervals decode less often, between 10 and 100 ms */
    unsigned long long dms = us * 100 / 1000;
    g_set.decode_ms = (unsigned)(dms < DEFAULT_DECODE_MS ? DEFAULT_DECODE_MS : dms > MAX_DECODE_MS ? MAX_DECODE_MS : dms);
    if (env_number("WARPLENS_PM_DECODE_MS", 1, 1000, &x) == 0)
        g_set.decode_ms = (unsigned)x;
    /* room for four decode periods of windows and for HOLD_UP_MS of them, so a late decode still
     * empties the buffer in one go: windows decoded past a full image are lost, and a decode can be
     * held up behind a long kernel (37-82 ms late in the GPU suite on the H100, 43-50 ms kernels;
     * bench/results/gpu-pm-sampling-flake-h100.log). The image is reset after every decode, at a
     * cost that grows with it, so only short intervals pay for the extra room. */
    unsigned long long per_decode = (unsigned long long)g_set.decode_ms * 1000ull / us;
    unsigned long long cap = 4 * per_decode + 64, hold = HOLD_UP_MS * 1000ull / us + 64;
    if (cap < hold)
        cap = hold;
    g_set.max_samples = (uint32_t)(cap < 256 ? 256 : cap > 65536 ? 65536 : cap);
    return 0;
}

/* ---- hand-over to the writer (sampler thread) ------------------------------------------------ */

int pm_emit_sample(uint32_t device, uint64_t index, uint64_t start, uint64_t end, const double *values, int n)
{
    for (int first = 0; first < n; first += WLCAP_PM_CHUNK) {
        pm_item it;
        memset(&it, 0, sizeof it);
        it.kind = ITEM_SAMPLE;
        wlcap_pm_sample *s = &it.u.sample;
        s->start = start;
        s->end = end;
        s->sample_index = index;
        s->device_id = device;
        s->first_metric = (uint32_t)first;
        s->count = (uint32_t)(n - first < WLCAP_PM_CHUNK ? n - first : WLCAP_PM_CHUNK);
        memcpy(s->values, values + first, s->count * sizeof(double));
        if (wl_mpsc_push(&g_ring, &it) != 0) {
            if (device < PM_MAX_DEVICES)
                atomic_fetch_add(&g_ring_lost[device], 1);
            atomic_store(&g_any_lost, 1);
            return -1;
        }
    }
    return 0;
}

int pm_emit_def(uint32_t device, uint32_t index, const char *name, const char *unit, int metric_type,
                uint64_t interval_ns)
{
    pm_item it;
    memset(&it, 0, sizeof it);
    it.kind = ITEM_DEF;
    it.u.def.interval_ns = interval_ns;
    it.u.def.device = device;
    it.u.def.index = index;
    it.u.def.type = metric_type < 0 ? 0 : (uint32_t)metric_type;
    for (int i = 0; i < g_set.n; i++)
        if (g_set.names[i] == name)
            it.u.def.name = (uint32_t)i;
    snprintf(it.u.def.unit, sizeof it.u.def.unit, "%s", unit ? unit : "");
    uint64_t deadline = wl_monotonic_ns() + DEF_WAIT_NS;
    while (wl_mpsc_push(&g_ring, &it) != 0) {
        if (wl_monotonic_ns() > deadline)
            return -1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    (void)wl_mpsc_take_dropped(&g_ring); /* the failed tries above were not losses */
    return 0;
}

void pm_emit_status(uint32_t device, int off, int log, const char *fmt, ...)
{
    status_line s;
    s.device = device;
    s.off = (uint32_t)off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s.text, sizeof s.text, fmt, ap);
    va_end(ap);
    if (log)
        wl_log("%s", s.text);
    pthread_mutex_lock(&g_lock);
    if (g_status_n < STATUS_SLOTS) /* else it was logged; the session keeps the earlier lines */
        g_status[(g_status_head + g_status_n++) % STATUS_SLOTS] = s;
    pthread_mutex_unlock(&g_lock);
}

void pm_count_gaps(uint32_t device, uint64_t n)
{
    if (device < PM_MAX_DEVICES) {
        atomic_fetch_add(&g_gaps[device], n);
        atomic_store(&g_any_lost, 1);
    }
}

/* ---- the sampler thread ------------------------------------------------------------------------- */

static void deadline_in(struct timespec *t, uint64_t ns)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    uint64_t v = (uint64_t)t->tv_nsec + ns;
    t->tv_sec += (time_t)(v / 1000000000ull);
    t->tv_nsec = (long)(v % 1000000000ull);
}

static void *sampler_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        uint64_t live = g_live, release = g_release;
        int stop = g_stop;
        g_kick = 0;
        pthread_mutex_unlock(&g_lock);
        for (uint32_t i = 0; i < PM_MAX_DEVICES; i++) {
            pm_device *d = &g_dev[i];
            uint64_t bit = 1ull << i;
            if (release & bit) {
                pm_device_pause(d, &g_set);
            } else if ((live & bit) && !stop) {
                if (d->state == PM_PAUSED)
                    pm_device_resume(d); /* on failure sampling stays off on the device */
                if (d->state == PM_IDLE)
                    pm_device_setup(d, &g_set);
            }
            pm_device_decode(d, &g_set);
        }
        pthread_mutex_lock(&g_lock);
        if (release) {
            g_release &= ~release;
            pthread_cond_broadcast(&g_done);
        }
        if (stop)
            break;
        if (!g_stop && !g_kick) {
            struct timespec t;
            deadline_in(&t, (uint64_t)g_set.decode_ms * 1000000ull);
            pthread_cond_timedwait(&g_wake, &g_lock, &t);
        }
    }
    pthread_mutex_unlock(&g_lock);
    for (uint32_t i = 0; i < PM_MAX_DEVICES; i++)
        pm_device_finish(&g_dev[i], &g_set);
    return NULL;
}

int wl_pm_start(void)
{
    if (read_settings() != 0)
        return 0;
    for (uint32_t i = 0; i < PM_MAX_DEVICES; i++)
        g_dev[i].id = i;
    if (wl_mpsc_init(&g_ring, RING_ITEMS, sizeof(pm_item)) != 0) {
        wl_log("PM sampling is off: out of memory for its ring; tracing continues");
        return -1;
    }
    wl_mpsc_set_spill(&g_ring, WL_SPILL_SAMPLES, wl_pool_wake);
    atomic_store(&g_ring_ready, 1);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_wake, &ca);
    pthread_cond_init(&g_done, &ca);
    pthread_condattr_destroy(&ca);
    int rc = wl_thread_start(&g_thread, "warplens-pm", sampler_main);
    if (rc != 0) {
        wl_log("PM sampling is off: cannot start its thread (%s); tracing continues", strerror(rc));
        return -1;
    }
    atomic_store(&g_started, 1);
    return 0;
}

void wl_pm_context_created(uint32_t device_id)
{
    if (!atomic_load(&g_started) || device_id >= PM_MAX_DEVICES)
        return;
    pthread_mutex_lock(&g_lock);
    g_contexts[device_id]++;
    g_live |= 1ull << device_id;
    g_kick = 1;
    pthread_cond_signal(&g_wake);
    pthread_mutex_unlock(&g_lock);
}

void wl_pm_context_destroying(uint32_t device_id)
{
    if (!atomic_load(&g_started) || device_id >= PM_MAX_DEVICES)
        return;
    uint64_t bit = 1ull << device_id;
    pthread_mutex_lock(&g_lock);
    if (g_contexts[device_id] && --g_contexts[device_id] == 0 && !g_stop) {
        g_live &= ~bit;
        g_release |= bit;
        g_kick = 1;
        pthread_cond_signal(&g_wake);
        struct timespec t;
        deadline_in(&t, DESTROY_WAIT_NS);
        while ((g_release & bit) && !g_stop) {
            if (pthread_cond_timedwait(&g_done, &g_lock, &t) == ETIMEDOUT) {
                static atomic_flag once = ATOMIC_FLAG_INIT;
                wl_log_once(&once, "PM sampling on GPU %u: the last decode before the context's destruction did"
                            " not finish within 2 s; samples of its last moments may be missing", device_id);
                break;
            }
        }
    }
    pthread_mutex_unlock(&g_lock);
}

void wl_pm_stop(void)
{
    if (!atomic_load(&g_started))
        return;
    pthread_mutex_lock(&g_lock);
    g_stop = 1;
    pthread_cond_signal(&g_wake);
    pthread_cond_broadcast(&g_done);
    pthread_mutex_unlock(&g_lock);
    pthread_join(g_thread, NULL);
    atomic_store(&g_started, 0);
}

/* ---- the writer thread ------------------------------------------------------------------------ */

static void write_lost(uint32_t device, uint64_t count, uint32_t reason)
{
    if (!count)
        return;
    wlcap_dropped r = {count, WLCAP_DROP_PMSAMPLING, device, reason, 0};
    wl_capw_record(WLCAP_DROPPED, &r, sizeof r);
}

void wl_pm_write_pending(void)
{
    if (!atomic_load(&g_ring_ready))
        return;
    for (;;) {
        status_line batch[8];
        unsigned n = 0;
        pthread_mutex_lock(&g_lock);
        while (n < 8 && g_status_n) {
            batch[n++] = g_status[g_status_head];
            g_status_head = (g_status_head + 1) % STATUS_SLOTS;
            g_status_n--;
        }
        pthread_mutex_unlock(&g_lock);
        for (unsigned i = 0; i < n; i++) {
            wlcap_pm_metric_def d = {0, WLCAP_PM_STATUS, batch[i].device, wl_capw_string(batch[i].text), 0,
                                     batch[i].off ? WLCAP_PM_OFF : WLCAP_PM_ON, 0};
            wl_capw_record(WLCAP_PM_METRIC_DEF, &d, sizeof d);
        }
        if (n < 8)
            break;
    }
    pm_item it;
    while (wl_mpsc_pop(&g_ring, &it)) {
        if (it.kind == ITEM_SAMPLE) {
            wl_capw_record(WLCAP_PM_SAMPLE, &it.u.sample, sizeof it.u.sample);
        } else {
            wlcap_pm_metric_def d = {it.u.def.interval_ns, it.u.def.index, it.u.def.device,
                                     wl_capw_string(g_names[it.u.def.name % WL_PM_METRICS_MAX]),
                                     wl_capw_string(it.u.def.unit), it.u.def.type, 0};
            wl_capw_record(WLCAP_PM_METRIC_DEF, &d, sizeof d);
        }
    }
    (void)wl_mpsc_take_dropped(&g_ring); /* counted per device by the pusher */
    if (atomic_exchange(&g_any_lost, 0)) {
        for (uint32_t i = 0; i < PM_MAX_DEVICES; i++) {
            write_lost(i, atomic_exchange(&g_ring_lost[i], 0), 0);
            write_lost(i, atomic_exchange(&g_gaps[i], 0), 1);
        }
    }
}
