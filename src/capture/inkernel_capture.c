/* In-kernel buffers for the session timeline (inkernel_capture.h). Registration and the launch
 * hook only touch a fixed table of slots; the copy, the clock calibration and the file write
 * happen in warplens_inkernel_collect(), which the program calls after synchronising — never on
 * a launch path. Memory is bounded: SLOTS registrations, one 4 MiB staging buffer per collect. */
#include "capture/inkernel_capture.h"

#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capfile/inkernel_file.h"
#include "capture/recorder.h"
#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/clock_fit.h"
#include "common/log.h"

#define SLOTS 256
#define NAMES_MAX 4096
#define STAGING_BYTES (4u << 20)
#define MAX_CONTEXTS 16

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_PENDING, SLOT_LAUNCHED, SLOT_COLLECTING };

typedef struct ik_slot {
    atomic_int state;
    uint32_t correlation_id;
    CUcontext context;
    CUdeviceptr buffer, counters;
    uint64_t words, stride;
    uint32_t max_records;
    int graph;                /* registered for a graph launch (binds to cuGraphLaunch, not cuLaunch*) */
    uint32_t graph_flags;     /* WLIK_GRAPH_* of the side file */
    uint64_t graph_node_id;   /* the registered (original) node's id; at the launch, its copy's */
    char events[NAMES_MAX], groups[NAMES_MAX];
} ik_slot;

static ik_slot g_slots[SLOTS];
static atomic_ullong g_lost;
static char g_dir[4096];

/* Correlation ids of the recorder's own calls, direct-mapped by their low bits: the writer thread
 * asks for every kernel and copy record, so a look-up is one load. Ids are consecutive, so the
 * calls of one collect never evict each other; an id is only replaced 4096 calls later. */
#define INTERNAL_IDS 4096u
static atomic_uint g_internal[INTERNAL_IDS];

void wl_internal_corr_add(uint32_t id)
{
    atomic_store_explicit(&g_internal[id % INTERNAL_IDS], id, memory_order_release);
}

int wl_internal_corr_is(uint32_t id)
{
    return id != 0 && atomic_load_explicit(&g_internal[id % INTERNAL_IDS], memory_order_acquire) == id;
}

void wl_inkernel_init(const char *capture_path)
{
    const char *slash = strrchr(capture_path, '/');
    if (!slash)
        snprintf(g_dir, sizeof g_dir, ".");
    else
        snprintf(g_dir, sizeof g_dir, "%.*s", (int)(slash - capture_path), capture_path);
}

static void copy_names(char *dst, const char *src)
{
    if (!src) {
        dst[0] = '\0';
        return;
    }
    size_t n = strnlen(src, NAMES_MAX);
    if (n == NAMES_MAX) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "in-kernel name list longer than %d bytes: truncated", NAMES_MAX - 1);
        n = NAMES_MAX - 1;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Graph nodes copied into executable graphs at instantiation (CUPTI's resource callback), so a
 * registration naming a node of the original graph finds the id CUPTI puts on the kernel records
 * of a launch of one executable graph. Bounded: the oldest entries are overwritten. */
#define CLONES 4096
static struct {
    void *exec;
    uint64_t original, clone;
} g_clones[CLONES];
static unsigned g_clones_next, g_clones_n;
static pthread_mutex_t g_clones_lock = PTHREAD_MUTEX_INITIALIZER;

void wl_inkernel_on_node_cloned(uint64_t original_id, uint64_t clone_id, void *graph_exec)
{
    pthread_mutex_lock(&g_clones_lock);
    g_clones[g_clones_next].exec = graph_exec;
    g_clones[g_clones_next].original = original_id;
    g_clones[g_clones_next].clone = clone_id;
    g_clones_next = (g_clones_next + 1) % CLONES;
    if (g_clones_n < CLONES)
        g_clones_n++;
    pthread_mutex_unlock(&g_clones_lock);
}

/* The copy of node `original` in executable graph `exec` (newest first), or 0. */
static uint64_t clone_of(void *exec, uint64_t original)
{
    uint64_t id = 0;
    pthread_mutex_lock(&g_clones_lock);
    for (unsigned k = 0; k < g_clones_n && !id; k++) {
        unsigned i = (g_clones_next + CLONES - 1 - k) % CLONES;
        if (g_clones[i].original == original && (g_clones[i].exec == exec || !g_clones[i].exec))
            id = g_clones[i].clone;
    }
    pthread_mutex_unlock(&g_clones_lock);
    return id;
}

static int register_buffer(const wl_bridge_inkernel_buffer *b, int graph, uint64_t node_id);

int wl_inkernel_next_launch(const wl_bridge_inkernel_buffer *b) { return register_buffer(b, 0, 0); }

int wl_inkernel_next_graph_launch(const wl_bridge_inkernel_buffer *b, void *graph_node)
{
    if (atomic_load(&wl_state) != WL_STATE_RUNNING)
        return -1;
    uint64_t id = 0;
    CUptiResult r = graph_node ? cuptiGetGraphNodeId((CUgraphNode)graph_node, &id) : CUPTI_ERROR_INVALID_PARAMETER;
    if (r != CUPTI_SUCCESS) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "warplens_inkernel_next_graph_launch: cannot identify the graph node (%s); ignored",
                    graph_node ? "cuptiGetGraphNodeId failed" : "NULL node");
        return -1;
    }
    return register_buffer(b, 1, id);
}

static int register_buffer(const wl_bridge_inkernel_buffer *b, int graph, uint64_t node_id)
{
    if (atomic_load(&wl_state) != WL_STATE_RUNNING)
        return -1;
    if (!b || !b->buffer || b->words < 2) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "warplens_inkernel_next_launch: needs a device buffer of at least 2 words; ignored");
        return -1;
    }
    /* before a slot is pending, so the probes' launches cannot take it */
    wl_calibrate_cupti_early();
    ik_slot *s = NULL;
    if (wl_tls.inkernel_pending) { /* registered twice before launching: the newer registration wins */
        s = &g_slots[wl_tls.inkernel_pending - 1];
    } else {
        for (int i = 0; i < SLOTS && !s; i++) {
            int expect = SLOT_FREE;
            if (atomic_compare_exchange_strong(&g_slots[i].state, &expect, SLOT_FILLING)) {
                s = &g_slots[i];
                wl_tls.inkernel_pending = i + 1;
            }
        }
        if (!s) {
            static atomic_flag once = ATOMIC_FLAG_INIT;
            wl_log_once(&once, "more than %d in-kernel buffers registered and not collected; further ones are "
                               "not recorded (call warplens_inkernel_collect() after the kernels finished)", SLOTS);
            atomic_fetch_add(&g_lost, 1);
            return -1;
        }
    }
    s->buffer = (CUdeviceptr)(uintptr_t)b->buffer;
    s->counters = (CUdeviceptr)(uintptr_t)b->counters;
    s->words = b->words;
    s->stride = b->stride;
    s->max_records = b->max_records;
    s->graph = graph;
    s->graph_flags = 0;
    s->graph_node_id = node_id;
    copy_names(s->events, b->event_names);
    copy_names(s->groups, b->group_names);
    atomic_store(&s->state, SLOT_PENDING);
    return 0;
}

void wl_inkernel_on_launch(uint32_t correlation_id, void *context)
{
    if (!wl_tls.inkernel_pending)
        return;
    ik_slot *s = &g_slots[wl_tls.inkernel_pending - 1];
    if (s->graph) /* waits for its graph launch */
        return;
    wl_tls.inkernel_pending = 0;
    s->correlation_id = correlation_id;
    s->context = (CUcontext)context;
    atomic_store_explicit(&s->state, SLOT_LAUNCHED, memory_order_release);
}

void wl_inkernel_on_graph_launch(uint32_t correlation_id, void *context, void *graph_exec)
{
    if (!wl_tls.inkernel_pending)
        return;
    ik_slot *s = &g_slots[wl_tls.inkernel_pending - 1];
    if (!s->graph) /* a plain registration waits for a kernel launch */
        return;
    wl_tls.inkernel_pending = 0;
    uint64_t clone = clone_of(graph_exec, s->graph_node_id);
    s->graph_flags = WLIK_GRAPH_LAUNCH | (clone ? 0u : WLIK_GRAPH_NODE_ORIGINAL);
    if (clone)
        s->graph_node_id = clone;
    s->correlation_id = correlation_id;
    s->context = (CUcontext)context;
    atomic_store_explicit(&s->state, SLOT_LAUNCHED, memory_order_release);
}

static const char *cu_name(CUresult r)
{
    const char *n = NULL;
    cuGetErrorName(r, &n);
    return n ? n : "?";
}

typedef struct calib_entry {
    CUcontext ctx;
    int status;               /* WLIK_CALIB_CUPTI, _OK (ping-pong) or _FAILED */
    int64_t offset;
    uint64_t uncertainty;
    uint64_t at_ns;           /* CUPTI: when it was measured */
    uint32_t samples;
    int32_t drift_ppb;        /* between the early and main batches, else since the previous collect's */
} calib_entry;

/* The last CUPTI calibration of each context, across collects: the next one gives the drift, so a
 * buffer is placed with the offset interpolated to its kernel's time. */
static struct {
    CUcontext ctx;
    uint64_t at_ns;
    int64_t offset;
} g_prev_calib[MAX_CONTEXTS];
static int g_prev_n;
static pthread_mutex_t g_prev_lock = PTHREAD_MUTEX_INITIALIZER; /* threads may collect at once */

/* Drift since the context's previous CUPTI calibration (a previous collect's) when it is at least a
 * second old: over less, it is mostly the two calibrations' error. Remembers this one. */
static int32_t drift_since_previous(CUcontext ctx, uint64_t at_ns, int64_t offset)
{
    pthread_mutex_lock(&g_prev_lock);
    int i = 0;
    while (i < g_prev_n && g_prev_calib[i].ctx != ctx)
        i++;
    int32_t ppb = 0;
    if (i < g_prev_n)
        ppb = at_ns - g_prev_calib[i].at_ns >= 1000000000ull
                  ? wl_clock_drift_ppb(g_prev_calib[i].at_ns, g_prev_calib[i].offset, at_ns, offset)
                  : 0;
    else if (g_prev_n < MAX_CONTEXTS)
        i = g_prev_n++;
    else
        i = MAX_CONTEXTS - 1;
    g_prev_calib[i].ctx = ctx;
    g_prev_calib[i].at_ns = at_ns;
    g_prev_calib[i].offset = offset;
    pthread_mutex_unlock(&g_prev_lock);
    return ppb;
}

#define BRACKET_MIN_NS 1000000ull /* early and main batches closer than this: no slope from them */

/* One calibration per context per collect: measured close to the kernels it places. CUPTI's own
 * records first (the lanes' kernel windows come from them too); the ping-pong when that fails.
 * With an early batch from the first registration since the previous collect, the two bracket
 * every kernel registered in between: the side file gets the main batch's offset and the slope
 * between them (the importer interpolates to the kernel's start), and the larger of the two
 * bounds, which holds for any time between them as the offset is linear there. */
static const calib_entry *calibration_for(CUcontext ctx, calib_entry *cache, int *n)
{
    for (int i = 0; i < *n; i++)
        if (cache[i].ctx == ctx)
            return &cache[i];
    calib_entry e = {ctx, WLIK_CALIB_FAILED, 0, 0, 0, 0, 0};
    char why[200], why2[160];
    wl_cupti_calibration main_cal, early;
    int has_early = 0;
    if (wl_calibrate_cupti(&main_cal, &early, &has_early, why, sizeof why) == 0) {
        e.status = WLIK_CALIB_CUPTI;
        e.offset = main_cal.offset_ns;
        e.uncertainty = main_cal.uncertainty_ns;
        e.at_ns = main_cal.at_ns;
        e.samples = main_cal.samples;
        const int32_t since_previous = drift_since_previous(ctx, e.at_ns, e.offset);
        if (has_early && early.at_ns + BRACKET_MIN_NS <= e.at_ns) {
            e.drift_ppb = wl_clock_drift_ppb(early.at_ns, early.offset_ns, e.at_ns, e.offset);
            if (early.uncertainty_ns > e.uncertainty)
                e.uncertainty = early.uncertainty_ns;
            e.samples += early.samples;
        } else {
            e.drift_ppb = since_previous;
        }
    } else if (wl_calibrate_globaltimer(&e.offset, &e.uncertainty, why2, sizeof why2) == 0) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        e.status = WLIK_CALIB_OK;
        wl_log_once(&once, "in-kernel clock calibration against CUPTI's records failed: %s; using the "
                           "host ping-pong (uncertainty about a PCIe round trip)", why);
    } else {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "in-kernel clock calibration failed: %s; %s; lanes are placed inside their kernel's "
                           "window instead", why, why2);
    }
    if (*n < MAX_CONTEXTS) {
        cache[*n] = e;
        return &cache[(*n)++];
    }
    cache[MAX_CONTEXTS - 1] = e;
    return &cache[MAX_CONTEXTS - 1];
}

/* Copies the slot's buffer and counters and writes the side file. 0, or -1 (said once). */
static int collect_slot(const ik_slot *s, const calib_entry *cal, uint8_t *staging)
{
    static atomic_flag once_copy = ATOMIC_FLAG_INIT, once_file = ATOMIC_FLAG_INIT;
    wlik_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, WLIK_MAGIC, WLIK_MAGIC_LEN);
    h.version = WLIK_VERSION;
    h.header_size = sizeof h;
    h.pid = (uint64_t)getpid();
    h.correlation_id = s->correlation_id;
    CUdevice dev = 0;
    if (cuCtxGetDevice(&dev) == CUDA_SUCCESS)
        h.device_id = (uint32_t)dev;
    h.n_words = s->words;
    h.stride = s->stride;
    h.max_records = s->max_records;
    h.calibration = (uint32_t)cal->status;
    h.realtime_minus_globaltimer_ns = cal->offset;
    h.calibration_uncertainty_ns = cal->uncertainty;
    h.calibration_samples = cal->samples;
    h.calibration_at_ns = cal->at_ns;
    h.drift_ppb = cal->drift_ppb;
    h.graph_launch = s->graph_flags;
    h.graph_node_id = s->graph_node_id;
    h.collected_ns = wl_realtime_ns();
    h.events_len = (uint32_t)strlen(s->events);
    h.groups_len = (uint32_t)strlen(s->groups);
    if (s->counters) {
        uint32_t c[2] = {0, 0};
        CUresult r = cuMemcpyDtoH(c, s->counters, sizeof c);
        if (r == CUDA_SUCCESS) {
            h.counters_valid = 1;
            h.dropped_on_device = c[0];
            h.invalid_on_device = c[1];
        } else {
            wl_log_once(&once_copy, "cannot copy an in-kernel buffer's counters (%s)", cu_name(r));
        }
    }
    char path[4300];
    snprintf(path, sizeof path, "%s/%llu.%u.wlik", g_dir, (unsigned long long)h.pid, h.correlation_id);
    wl_atomic_file f;
    if (wl_atomic_file_open(&f, path) != 0) {
        wl_log_once(&once_file, "cannot write in-kernel buffer file %s", path);
        return -1;
    }
    int ok = wlik_write_header(f.fp, &h, s->events, s->groups) == 0;
    for (uint64_t off = 0; ok && off < s->words;) {
        uint64_t n = s->words - off;
        if (n > STAGING_BYTES / 8)
            n = STAGING_BYTES / 8;
        CUresult r = cuMemcpyDtoH(staging, s->buffer + off * 8, (size_t)n * 8);
        if (r != CUDA_SUCCESS) {
            wl_log_once(&once_copy, "cannot copy an in-kernel buffer (%s): was it freed before "
                                    "warplens_inkernel_collect()?", cu_name(r));
            wl_atomic_file_abort(&f);
            return -1;
        }
        ok = fwrite(staging, 8, (size_t)n, f.fp) == (size_t)n;
        off += n;
    }
    if (!ok) {
        wl_log_once(&once_file, "cannot write in-kernel buffer file %s", path);
        wl_atomic_file_abort(&f);
        return -1;
    }
    if (wl_atomic_file_commit(&f) != 0) {
        wl_log_once(&once_file, "cannot write in-kernel buffer file %s", path);
        return -1;
    }
    return 0;
}

int wl_inkernel_collect(void)
{
    if (atomic_load(&wl_state) != WL_STATE_RUNNING)
        return -1;
    uint8_t *staging = NULL;
    calib_entry cache[MAX_CONTEXTS];
    int n_cache = 0, collected = 0;
    wl_tls.internal_calls++;
    for (int i = 0; i < SLOTS; i++) {
        ik_slot *s = &g_slots[i];
        int expect = SLOT_LAUNCHED;
        if (!atomic_compare_exchange_strong(&s->state, &expect, SLOT_COLLECTING))
            continue;
        if (!staging && !(staging = malloc(STAGING_BYTES))) {
            static atomic_flag once = ATOMIC_FLAG_INIT;
            wl_log_once(&once, "out of memory collecting in-kernel buffers");
            atomic_store(&s->state, SLOT_LAUNCHED);
            break;
        }
        CUcontext cur = NULL;
        int pushed = 0;
        if (cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != s->context) {
            CUresult r = cuCtxPushCurrent(s->context);
            if (r != CUDA_SUCCESS) {
                static atomic_flag once = ATOMIC_FLAG_INIT;
                wl_log_once(&once, "cannot enter an in-kernel buffer's context (%s); buffer lost", cu_name(r));
                atomic_fetch_add(&g_lost, 1);
                atomic_store(&s->state, SLOT_FREE);
                continue;
            }
            pushed = 1;
        }
        const calib_entry *cal = calibration_for(s->context, cache, &n_cache);
        if (collect_slot(s, cal, staging) == 0)
            collected++;
        else
            atomic_fetch_add(&g_lost, 1);
        if (pushed) {
            CUcontext popped;
            (void)cuCtxPopCurrent(&popped);
        }
        atomic_store(&s->state, SLOT_FREE);
    }
    wl_tls.internal_calls--;
    free(staging);
    return collected;
}

uint64_t wl_inkernel_take_lost(void) { return atomic_exchange(&g_lost, 0); }

void wl_inkernel_shutdown(void)
{
    unsigned left = 0;
    for (int i = 0; i < SLOTS; i++) {
        int st = atomic_load(&g_slots[i].state);
        if (st == SLOT_LAUNCHED || st == SLOT_PENDING) {
            left++;
            atomic_store(&g_slots[i].state, SLOT_FREE);
        }
    }
    if (left) {
        wl_log("%u in-kernel buffer%s registered but never collected (call warplens_inkernel_collect() "
               "after the kernels finished); not in the session", left, left == 1 ? " was" : "s were");
        atomic_fetch_add(&g_lost, left);
    }
}
