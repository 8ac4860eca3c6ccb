/* Warp stall reasons per kernel (`warplens run --stalls`) from CUPTI's PC sampling API: every
 * 2^period cycles each SM samples one of its active warps and reports the warp's PC and why it
 * was not issuing (its stall reason). In KERNEL_SERIALIZED collection mode CUPTI runs one kernel
 * at a time and tags each PC record with the launch's correlation id, so every sample belongs to
 * one kernel launch; the recorder keeps only (correlation id, stall reason) -> samples, not PCs.
 *
 * Set-up per context at its first launch entry: enable, stall-reason names and indices (the
 * device's own numbering), configuration (serialised mode, period, all reasons, the configuration
 * buffer CUPTI leaves records in at Disable), two pre-allocated record buffers.
 *
 * Collection: CUPTI's header asks for a flush after every kernel in this mode, and the mode already
 * makes each launch wait for its kernel, so cuptiPCSamplingGetData runs at the exit of every launch
 * call on the launching thread. It only fills pre-allocated buffers; the sums go to the writer
 * thread through a ring as KERNEL_STALL records (nothing is formatted or written there). At exit and
 * when a context is destroyed: a last GetData, Disable, then what CUPTI left in the configuration
 * buffer.
 *
 * Failures (no permission to profile, unsupported GPU or configuration, the profiler held by
 * another tool) are reported once with the remedy; tracing continues without stall samples, and
 * the session's stall_config.status says why. Lost samples and records are counted (DROPPED source
 * WLCAP_DROP_PCSAMPLING). */
#include "capture/cupti_errors.h"
#include "capture/recorder.h"

#include <cupti.h>
#include <cupti_pcsampling.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

#define MAX_CTX 16
#define MAX_REASONS 256          /* CUPTI names about 40 on sm_90 */
#define BUF_PCS 2048             /* PC records per GetData; a kernel with more takes further calls */
#define AGG_SLOTS 1024           /* (correlation id, reason) sums between pushes; power of two */
#define AGG_PUSH_AT 768          /* push the sums before probing gets long */
#define MAX_ROUNDS 64            /* GetData calls per flush point; the rest waits for the next one */
#define RING_CAPACITY (1u << 15) /* KERNEL_STALL records (24 bytes) between writer passes */

enum { P_OFF = 0, P_RUNNING, P_FAILED, P_DONE };

typedef struct agg_entry {
    uint32_t corr, reason;
    uint64_t samples; /* 0 = empty slot */
} agg_entry;

typedef struct pctx {
    CUcontext ctx;              /* NULL once the context was destroyed */
    uint32_t device_id;
    int state;
    int enabled;                /* cuptiPCSamplingEnable succeeded: Disable at the end */
    _Atomic int defs_pending;   /* STALL_REASON records to write (writer thread) */
    char status[200];           /* why sampling is off here ("" while it runs); under g_setup */
    /* the device's reasons, under g_setup; freed by the writer once written */
    size_t nreasons;
    uint32_t *reason_index;
    char *reason_text;          /* nreasons * CUPTI_STALL_REASON_STRING_SIZE */
    char **reason_names;
    size_t nconfigured;         /* reasons CUPTI was asked for (and may report per PC) */
    uint8_t known[WLCAP_STALL_INDEX_MAX / 8]; /* reason indices CUPTI named */
    CUpti_PCSamplingData config; /* CUPTI leaves records here at Disable */
    CUpti_PCSamplingData out;   /* cuptiPCSamplingGetData fills this */
    agg_entry *agg;
    size_t nagg;
    wl_pc_names_batch names;
    pthread_mutex_t lock;       /* collection and teardown; taken before g_setup, never after */
} pctx;

static int g_on;
static uint32_t g_period = WL_PC_PERIOD_DEFAULT;
static pctx g_ctx[MAX_CTX];
static pthread_mutex_t g_setup = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_defs_ready;
static _Atomic uint64_t g_dropped_samples, g_ring_lost, g_overflows;
static wl_mpsc g_ring;
/* WARPLENS_PC_DEBUG=1: one line at the end with what CUPTI did (calls, records, where they came
 * from, names), to check this file's assumptions about CUPTI on a new GPU or CUDA version */
static int g_debug;
static _Atomic uint64_t g_st_calls, g_st_pcs, g_st_config_pcs, g_st_samples, g_st_cupti_total, g_st_exits,
    g_st_exits_with_data, g_st_max_rounds;
static atomic_flag g_overflow_once = ATOMIC_FLAG_INIT, g_unknown_once = ATOMIC_FLAG_INIT,
                   g_rounds_once = ATOMIC_FLAG_INIT, g_ring_once = ATOMIC_FLAG_INIT;

/* One line that says why and what to do; `what` is the step that failed. Caller holds g_setup or
 * m->lock (then g_setup is taken here: the lock order is m->lock before g_setup). */
static void explain_locked(pctx *m, const char *what, CUptiResult st)
{
    const char *remedy = wl_cupti_remedy(st,
                                         "this GPU or its configuration (vGPU, MIG, confidential computing) does not"
                                         " support PC sampling: use a supported GPU (compute capability 7.0 or newer,"
                                         " bare metal)",
                                         "the process is short of host memory");
    wl_log("warp stall sampling is off on GPU %u: %s: %s; %s. Tracing continues without stall samples.",
           m->device_id, what, wl_cupti_result_text(st), remedy);
    snprintf(m->status, sizeof m->status, "%s failed (%s)", what, wl_cupti_result_text(st));
    m->state = P_FAILED;
    atomic_store(&m->defs_pending, 1);
    atomic_store(&g_defs_ready, 1);
}

static void explain(pctx *m, const char *what, CUptiResult st)
{
    pthread_mutex_lock(&g_setup);
    explain_locked(m, what, st);
    pthread_mutex_unlock(&g_setup);
}

int wl_stalls_init(void)
{
    const char *on = getenv("WARPLENS_PC_SAMPLING");
    if (!on || !*on || !strcmp(on, "0"))
        return 0;
    if (wl_metrics_enabled()) {
        wl_log("warp stall sampling is off: hardware metrics are on, and both need the GPU's profiling"
               " hardware; record them in separate runs. Tracing continues.");
        return 0;
    }
    const char *p = getenv("WARPLENS_PC_PERIOD");
    if (p && *p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (!*end && v >= WL_PC_PERIOD_MIN && v <= WL_PC_PERIOD_MAX)
            g_period = (uint32_t)v;
        else
            wl_log("WARPLENS_PC_PERIOD=%s is not valid (%d..%d); using %u", p, WL_PC_PERIOD_MIN, WL_PC_PERIOD_MAX,
                   g_period);
    }
    const char *dbg = getenv("WARPLENS_PC_DEBUG");
    g_debug = dbg && *dbg && strcmp(dbg, "0") != 0;
    if (wl_mpsc_init(&g_ring, RING_CAPACITY, sizeof(wlcap_kernel_stall)) != 0) {
        wl_log("out of memory for the stall ring; tracing continues without stall samples");
        return 0;
    }
    wl_mpsc_set_spill(&g_ring, WL_SPILL_SAMPLES, wl_pool_wake);
    g_on = 1;
    return 1;
}

int wl_stalls_enabled(void) { return g_on; }

static int alloc_data(CUpti_PCSamplingData *d, size_t nreasons)
{
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->collectNumPcs = BUF_PCS;
    d->pPcData = calloc(BUF_PCS, sizeof *d->pPcData);
    CUpti_PCSamplingStallReason *r = calloc(BUF_PCS * nreasons, sizeof *r);
    if (!d->pPcData || !r) {
        free(d->pPcData);
        free(r);
        d->pPcData = NULL;
        return -1;
    }
    for (size_t i = 0; i < BUF_PCS; i++) {
        d->pPcData[i].size = sizeof d->pPcData[i];
        d->pPcData[i].stallReason = r + i * nreasons;
    }
    return 0;
}

static void free_data(CUpti_PCSamplingData *d)
{
    if (d->pPcData) {
        free(d->pPcData[0].stallReason);
        free(d->pPcData);
    }
    d->pPcData = NULL;
}

#define TRY(call, what)                                                                                        \
    do {                                                                                                       \
        CUptiResult st_ = (call);                                                                              \
        if (st_ != CUPTI_SUCCESS) {                                                                            \
            explain_locked(m, what, st_);                                                                      \
            return -1;                                                                                         \
        }                                                                                                      \
    } while (0)

/* Enable, reasons, buffers, configuration. Holds g_setup; the context is current. */
static int setup(pctx *m)
{
    CUpti_PCSamplingEnableParams ep;
    memset(&ep, 0, sizeof ep);
    ep.size = CUpti_PCSamplingEnableParamsSize;
    ep.ctx = m->ctx;
    TRY(cuptiPCSamplingEnable(&ep), "enabling PC sampling");
    m->enabled = 1;

    size_t n = 0;
    CUpti_PCSamplingGetNumStallReasonsParams np;
    memset(&np, 0, sizeof np);
    np.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
    np.ctx = m->ctx;
    np.numStallReasons = &n;
    TRY(cuptiPCSamplingGetNumStallReasons(&np), "counting stall reasons");
    if (n == 0 || n > MAX_REASONS) {
        char what[96];
        snprintf(what, sizeof what, "reading stall reasons (CUPTI reports %zu; expected 1..%d)", n, MAX_REASONS);
        explain_locked(m, what, CUPTI_ERROR_NOT_SUPPORTED);
        return -1;
    }
    m->reason_index = calloc(n, sizeof *m->reason_index);
    m->reason_text = calloc(n, CUPTI_STALL_REASON_STRING_SIZE);
    m->reason_names = calloc(n, sizeof *m->reason_names);
    m->agg = calloc(AGG_SLOTS, sizeof *m->agg);
    if (!m->reason_index || !m->reason_text || !m->reason_names || !m->agg || alloc_data(&m->config, n) != 0 ||
        alloc_data(&m->out, n) != 0 || wl_pc_names_batch_init(&m->names, BUF_PCS) != 0) {
        explain_locked(m, "allocating PC sampling buffers", CUPTI_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        m->reason_names[i] = m->reason_text + i * CUPTI_STALL_REASON_STRING_SIZE;
    CUpti_PCSamplingGetStallReasonsParams rp;
    memset(&rp, 0, sizeof rp);
    rp.size = CUpti_PCSamplingGetStallReasonsParamsSize;
    rp.ctx = m->ctx;
    rp.numStallReasons = n;
    rp.stallReasonIndex = m->reason_index;
    rp.stallReasons = m->reason_names;
    TRY(cuptiPCSamplingGetStallReasons(&rp), "reading stall reason names");
    /* keep the reasons a capture can carry (indices below WLCAP_STALL_INDEX_MAX: all of them on
     * the GPUs seen so far), in CUPTI's order */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        m->reason_text[(i + 1) * CUPTI_STALL_REASON_STRING_SIZE - 1] = 0;
        uint32_t idx = m->reason_index[i];
        if (idx >= WLCAP_STALL_INDEX_MAX || (m->known[idx / 8] & (1u << (idx % 8))))
            continue;
        m->known[idx / 8] |= (uint8_t)(1u << (idx % 8));
        m->reason_index[kept] = idx;
        if (kept != i)
            memcpy(m->reason_names[kept], m->reason_names[i], CUPTI_STALL_REASON_STRING_SIZE);
        kept++;
    }
    if (kept < n)
        wl_log("PC sampling on GPU %u: %zu of %zu stall reasons have indices warplens cannot store; they are"
               " not sampled", m->device_id, n - kept, n);
    m->nreasons = kept;
    m->nconfigured = kept;

    CUpti_PCSamplingConfigurationInfo info[4];
    memset(info, 0, sizeof info);
    info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[0].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
    info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    info[1].attributeData.samplingPeriodData.samplingPeriod = g_period;
    info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    info[2].attributeData.stallReasonData.stallReasonCount = kept;
    info[2].attributeData.stallReasonData.pStallReasonIndex = m->reason_index;
    info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[3].attributeData.samplingDataBufferData.samplingDataBuffer = &m->config;
    CUpti_PCSamplingConfigurationInfoParams cp;
    memset(&cp, 0, sizeof cp);
    cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
    cp.ctx = m->ctx;
    cp.numAttributes = sizeof info / sizeof info[0];
    cp.pPCSamplingConfigurationInfo = info;
    CUptiResult st = cuptiPCSamplingSetConfigurationAttribute(&cp);
    static const char *const step[4] = {"setting the serialised collection mode", "setting the sampling period",
                                        "selecting the stall reasons", "setting the sampling buffer"};
    for (int i = 0; i < 4; i++)
        if (info[i].attributeStatus != CUPTI_SUCCESS) {
            explain_locked(m, step[i], info[i].attributeStatus);
            return -1;
        }
    TRY(st, "configuring PC sampling");
    m->state = P_RUNNING;
    atomic_store(&m->defs_pending, 1);
    atomic_store(&g_defs_ready, 1);
    wl_log("warp stall sampling on GPU %u: one warp sample per SM every 2^%u cycles, %zu stall reasons; kernels"
           " run one at a time (serialised), so timings differ from an unprofiled run",
           m->device_id, g_period, kept);
    return 0;
}

/* Pushes one sum, waiting briefly for the writer when the ring is full: the launching thread
 * already waits for its kernel in this mode, and a record dropped here is samples lost. */
static void push(uint32_t corr, uint32_t dev, uint32_t reason, uint64_t samples)
{
    wlcap_kernel_stall r = {corr, dev, reason, 0, samples};
    for (int tries = 0;; tries++) {
        if (wl_mpsc_push(&g_ring, &r) == 0)
            return;
        (void)wl_mpsc_take_dropped(&g_ring); /* only this file pushes: counted below instead */
        if (tries == 200) {
            atomic_fetch_add(&g_ring_lost, 1);
            wl_log_once(&g_ring_once, "warp stall records lost: the recorder's writer fell behind (counted in the"
                                      " session)");
            return;
        }
        wl_pool_wake();
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static void push_all(pctx *m)
{
    if (!m->nagg)
        return;
    for (size_t i = 0; i < AGG_SLOTS; i++) {
        agg_entry *e = &m->agg[i];
        if (e->samples)
            push(e->corr, m->device_id, e->reason, e->samples);
        *e = (agg_entry){0, 0, 0};
    }
    m->nagg = 0;
    wl_pool_wake();
}

static void add(pctx *m, uint32_t corr, uint32_t reason, uint64_t samples)
{
    if (m->nagg >= AGG_PUSH_AT)
        push_all(m);
    uint32_t h = (corr * 2654435761u) ^ (reason * 40503u);
    for (uint32_t i = h & (AGG_SLOTS - 1);; i = (i + 1) & (AGG_SLOTS - 1)) {
        agg_entry *e = &m->agg[i];
        if (!e->samples) {
            *e = (agg_entry){corr, reason, samples};
            m->nagg++;
            return;
        }
        if (e->corr == corr && e->reason == reason) {
            e->samples += samples;
            return;
        }
    }
}

/* Sums one buffer of PC records by (correlation id, reason), then hands the sums to the writer
 * and CUPTI's function names back (pc_names.c). */
static void take(pctx *m, CUpti_PCSamplingData *d)
{
    size_t n = d->totalNumPcs < BUF_PCS ? d->totalNumPcs : BUF_PCS;
    uint64_t unknown = 0;
    for (size_t i = 0; i < n; i++) {
        CUpti_PCSamplingPCData *pc = &d->pPcData[i];
        size_t nr = pc->stallReasonCount < m->nconfigured ? pc->stallReasonCount : m->nconfigured;
        for (size_t k = 0; k < nr; k++) {
            uint32_t idx = pc->stallReason[k].pcSamplingStallReasonIndex, s = pc->stallReason[k].samples;
            if (!s)
                continue;
            if (idx >= WLCAP_STALL_INDEX_MAX || !(m->known[idx / 8] & (1u << (idx % 8)))) {
                unknown += s;
                continue;
            }
            add(m, pc->correlationId, idx, s);
            if (g_debug)
                atomic_fetch_add(&g_st_samples, s);
        }
        wl_pc_names_note(&m->names, pc->cubinCrc, pc->functionIndex, pc->functionName);
        pc->functionName = NULL;
    }
    if (unknown) {
        wl_log_once(&g_unknown_once, "PC sampling on GPU %u reported a stall reason it did not name; such samples"
                                     " are counted as lost", m->device_id);
        atomic_fetch_add(&g_dropped_samples, unknown);
    }
    if (d->droppedSamples)
        atomic_fetch_add(&g_dropped_samples, d->droppedSamples);
    d->totalNumPcs = 0;
    d->droppedSamples = 0;
    push_all(m);
    wl_pc_names_end_batch(&m->names);
}

/* Everything CUPTI has for this context now: GetData until nothing remains. Holds m->lock. */
static void collect(pctx *m)
{
    for (int round = 0; round < MAX_ROUNDS; round++) {
        m->out.totalNumPcs = m->out.remainingNumPcs = 0;
        m->out.totalSamples = m->out.droppedSamples = 0;
        m->out.hardwareBufferFull = 0;
        CUpti_PCSamplingGetDataParams gp;
        memset(&gp, 0, sizeof gp);
        gp.size = CUpti_PCSamplingGetDataParamsSize;
        gp.ctx = m->ctx;
        gp.pcSamplingData = &m->out;
        CUptiResult st = cuptiPCSamplingGetData(&gp);
        if (g_debug) {
            atomic_fetch_add(&g_st_calls, 1);
            atomic_fetch_add(&g_st_pcs, m->out.totalNumPcs);
            atomic_fetch_add(&g_st_cupti_total, m->out.totalSamples);
            uint64_t r = (uint64_t)round + 1, cur = atomic_load(&g_st_max_rounds);
            while (r > cur && !atomic_compare_exchange_weak(&g_st_max_rounds, &cur, r))
                ;
        }
        if (st == CUPTI_ERROR_OUT_OF_MEMORY && m->out.hardwareBufferFull) {
            /* samples were lost in the hardware; what CUPTI still has comes with later calls */
            atomic_fetch_add(&g_overflows, 1);
            wl_log_once(&g_overflow_once, "PC sampling: CUPTI's hardware buffer filled up on GPU %u and samples"
                                          " were lost (counted); a larger --pc-period samples less often",
                        m->device_id);
            take(m, &m->out);
            return;
        }
        if (st != CUPTI_SUCCESS && st != CUPTI_ERROR_OUT_OF_MEMORY) {
            explain(m, "collecting PC samples", st);
            return;
        }
        size_t got = m->out.totalNumPcs;
        take(m, &m->out);
        /* done when CUPTI has nothing left, or when a call brought nothing (no progress) */
        if (!got || (!m->out.remainingNumPcs && !m->config.totalNumPcs))
            return;
    }
    wl_log_once(&g_rounds_once, "PC sampling: CUPTI still had records after %d collections on GPU %u; the rest is"
                                " collected at the next launch", MAX_ROUNDS, m->device_id);
}

/* Disable (CUPTI then leaves its last records in the configuration buffer, taken when `records`)
 * and free the buffers. Holds m->lock, or g_setup while the context is being set up (no records
 * yet: nothing to push). The reason names stay for the writer (write_defs frees them). Idempotent. */
static void teardown(pctx *m, int records)
{
    if (m->enabled) {
        m->enabled = 0;
        CUpti_PCSamplingDisableParams dp;
        memset(&dp, 0, sizeof dp);
        dp.size = CUpti_PCSamplingDisableParamsSize;
        dp.ctx = m->ctx;
        CUptiResult st = cuptiPCSamplingDisable(&dp);
        if (st != CUPTI_SUCCESS)
            wl_log("PC sampling: disabling it on GPU %u failed: %s", m->device_id, wl_cupti_result_text(st));
        else if (records && m->config.pPcData && m->config.totalNumPcs && m->agg) {
            if (g_debug)
                atomic_fetch_add(&g_st_config_pcs, m->config.totalNumPcs);
            take(m, &m->config);
        }
    }
    free_data(&m->config);
    free_data(&m->out);
    free(m->agg);
    m->agg = NULL;
    m->nagg = 0;
    wl_pc_names_batch_free(&m->names);
}

/* The context's state, set up on its first launch (the context is current on the launching
 * thread); with create 0 only an existing one. */
static pctx *context_state(CUcontext ctx, int create)
{
    pthread_mutex_lock(&g_setup);
    pctx *m = NULL;
    for (int i = 0; i < MAX_CTX && !m; i++)
        if (g_ctx[i].state != P_OFF && g_ctx[i].ctx == ctx)
            m = &g_ctx[i];
    if (!m && create) {
        for (int i = 0; i < MAX_CTX && !m; i++)
            if (g_ctx[i].state == P_OFF)
                m = &g_ctx[i];
        if (!m) {
            static atomic_flag once = ATOMIC_FLAG_INIT;
            wl_log_once(&once, "PC sampling: more than %d CUDA contexts; later contexts get no stall samples", MAX_CTX);
        } else {
            m->ctx = ctx;
            uint32_t dev = 0;
            CUptiResult st = cuptiGetDeviceId(ctx, &dev);
            m->device_id = dev;
            pthread_mutex_init(&m->lock, NULL);
            m->state = P_FAILED; /* until set-up works */
            if (st != CUPTI_SUCCESS)
                explain_locked(m, "finding the context's device", st);
            else if (setup(m) != 0)
                teardown(m, 0); /* nobody else can reach m before g_setup is released */
        }
    }
    pthread_mutex_unlock(&g_setup);
    return m;
}

/* Launch callback (application thread): set-up at the first entry of a context, collection at
 * every exit. */
void wl_stalls_launch(uint32_t cbid, const void *data)
{
    (void)cbid;
    const CUpti_CallbackData *cd = data;
    if (!g_on)
        return;
    CUcontext ctx = cd->context;
    if (!ctx && (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx))
        return;
    pctx *m = context_state(ctx, cd->callbackSite == CUPTI_API_ENTER);
    if (!m || cd->callbackSite != CUPTI_API_EXIT)
        return;
    pthread_mutex_lock(&m->lock);
    if (m->state == P_RUNNING) {
        uint64_t before = g_debug ? atomic_load(&g_st_pcs) : 0;
        collect(m);
        if (g_debug) {
            atomic_fetch_add(&g_st_exits, 1);
            if (atomic_load(&g_st_pcs) != before)
                atomic_fetch_add(&g_st_exits_with_data, 1);
        }
        if (m->state != P_RUNNING)
            teardown(m, 1);
    }
    pthread_mutex_unlock(&m->lock);
}

static void finish(pctx *m)
{
    pthread_mutex_lock(&m->lock);
    if (m->state == P_RUNNING)
        collect(m);
    if (m->state == P_RUNNING || m->state == P_FAILED)
        teardown(m, 1);
    if (m->state == P_RUNNING)
        m->state = P_DONE;
    pthread_mutex_unlock(&m->lock);
}

void wl_stalls_context_destroyed(void *ctx)
{
    if (!g_on || !ctx)
        return;
    pctx *m = context_state((CUcontext)ctx, 0);
    if (!m)
        return;
    finish(m);
    pthread_mutex_lock(&g_setup);
    m->ctx = NULL; /* a context created later at the same address is a new one */
    if (m->state == P_RUNNING)
        m->state = P_DONE;
    pthread_mutex_unlock(&g_setup);
}

void wl_stalls_stop(void)
{
    if (!g_on)
        return;
    for (int i = 0; i < MAX_CTX; i++) {
        pthread_mutex_lock(&g_setup);
        int live = g_ctx[i].state != P_OFF && g_ctx[i].ctx;
        pthread_mutex_unlock(&g_setup);
        if (live)
            finish(&g_ctx[i]);
    }
    if (g_debug) {
        unsigned kept = 0;
        int fresh = 0;
        wl_pc_names_stats(&kept, &fresh);
        wl_log("PC sampling debug: %llu GetData calls (at most %llu in one flush), %llu PC records (+%llu left in the"
               " configuration buffer at Disable), %llu samples over all reasons (CUPTI's totalSamples: %llu), records"
               " found at %llu of %llu launch exits, function names: %u kept, %s",
               (unsigned long long)g_st_calls, (unsigned long long)g_st_max_rounds, (unsigned long long)g_st_pcs,
               (unsigned long long)g_st_config_pcs, (unsigned long long)g_st_samples,
               (unsigned long long)g_st_cupti_total, (unsigned long long)g_st_exits_with_data,
               (unsigned long long)g_st_exits, kept,
               fresh ? "CUPTI hands out a fresh copy per call (freed per batch)"
                     : "CUPTI hands out each one once (freed at the end)");
    }
    wl_pc_names_release_all();
}

/* Writer thread: each context's reasons (or why sampling is off there), once; the names are
 * freed when written, since only these records need them. */
static void write_defs(void)
{
    pthread_mutex_lock(&g_setup);
    for (int i = 0; i < MAX_CTX; i++) {
        pctx *m = &g_ctx[i];
        if (!atomic_exchange(&m->defs_pending, 0))
            continue;
        for (size_t k = 0; k < m->nreasons && m->reason_names; k++) {
            wlcap_stall_reason r = {m->device_id, m->reason_index[k], wl_capw_string(m->reason_names[k]), g_period};
            wl_capw_record(WLCAP_STALL_REASON, &r, sizeof r);
        }
        m->nreasons = 0;
        free(m->reason_index), free(m->reason_text), free(m->reason_names);
        m->reason_index = NULL, m->reason_text = NULL, m->reason_names = NULL;
        if (m->status[0]) {
            wlcap_stall_reason r = {m->device_id, WLCAP_STALL_STATUS, wl_capw_string(m->status), g_period};
            wl_capw_record(WLCAP_STALL_REASON, &r, sizeof r);
        }
    }
    pthread_mutex_unlock(&g_setup);
}

void wl_stalls_drain(void)
{
    if (!g_on)
        return;
    if (atomic_exchange(&g_defs_ready, 0))
        write_defs();
    wlcap_kernel_stall r;
    while (wl_mpsc_pop(&g_ring, &r)) {
        /* a record pushed after the check above may come from a context set up since: its reasons first */
        if (atomic_exchange(&g_defs_ready, 0))
            write_defs();
        wl_capw_record(WLCAP_KERNEL_STALL, &r, sizeof r);
    }
    const struct { _Atomic uint64_t *n; uint32_t what; } lost[] = {
        {&g_dropped_samples, WLCAP_PCS_LOST_SAMPLES},
        {&g_ring_lost, WLCAP_PCS_LOST_RECORDS},
        {&g_overflows, WLCAP_PCS_LOST_OVERFLOWS},
    };
    for (size_t i = 0; i < sizeof lost / sizeof lost[0]; i++) {
        uint64_t n = atomic_exchange(lost[i].n, 0);
        if (n) {
            wlcap_dropped d = {n, WLCAP_DROP_PCSAMPLING, 0, lost[i].what, 0};
            wl_capw_record(WLCAP_DROPPED, &d, sizeof d);
        }
    }
}
