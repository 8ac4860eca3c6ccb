/* Runs the recorder's hardware-metrics modules (src/capture/range_profiler.c, metric_calls.c,
 * metric_filter.c, metric_match.c) for real without a GPU, against the fake CUPTI range profiler
 * of fake_cupti_rp.c: this program plays the driver callbacks of launches, copies, sets and graph
 * launches (entry, the GPU work the call does, exit), NVTX callbacks, the writer thread and the
 * recorder's exit, writes the activity records CUPTI would have written, and leaves a capture file
 * for tests/cli/test_metrics_attrib_cli.sh to import and check.
 *
 * Every piece of work carries its identity in its values: a kernel launch with correlation id c
 * reads c*10 in every metric (its grid size in sm__ctas_launched.sum), part p of a copy or graph
 * launch reads c*10+p, work the driver does inside a launch call c*10+5 (1 CTA), work no call
 * accounts for 7 (1 CTA). So a range tied to the wrong activity shows.
 *
 * usage: range_profiler_driver SCENARIO CAPTURE.wlcap [N]
 *   mixed    the program shape: kernels, copies and sets interleaved, a first launch with
 *            the driver's own work inside, copies with 0, 1 and 2 ranges, a copy split into two
 *            records, a failed launch, a launch into a capture, cuLaunchKernelEx, batches
 *   hidden   batches of known kernels with work no call accounts for in the middle
 *   threads  4 threads x N calls (kernels of 3 functions, copies), each thread its own stream
 *   graphs   kernels and graph launches of 3 nodes (2 kernels, 1 set); FAKE_GRAPH_STOP_FAILS=1
 *            makes the Stop after the second graph launch fail
 *   capture  kernels in a batch while another stream captures a graph: launches, a copy and a set
 *            into the capture, others on other streams, nothing started or stopped meanwhile
 *   filters  kernels of three names inside and outside an NVTX range "step"
 *   long     N launches, then "READY" and a pause until killed (interruption)
 *   deny     no counter permission
 * Prints what the fake saw on stdout; exits 1 when the recorder misused the API. */
#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/metric_filter.h"
#include "capture/recorder.h"
#include "../driver_capture.h"
#include "common/clock.h"
#include "fake_cupti_rp.h"

void wl_pool_wake(void) {}

#define CTX ((CUcontext)(uintptr_t)1)
#define CAPTURING ((CUstream)(uintptr_t)0x99)

/* activity records, written by the main thread after the calls (the capture writer has one thread) */
typedef struct act {
    uint16_t type;                 /* WLCAP_KERNEL, _MEMCPY, _MEMSET or _API (cbid in grid) */
    uint32_t corr, grid, graph, stream;
    uint64_t start, node;          /* node: the graph node (graph id << 32 | place in the graph), 0 outside graphs */
    char name[64];
} act;
static act g_acts[8192];
static size_t g_nacts;
static pthread_mutex_t g_act_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_t0;
static uint32_t g_corr = 100;
static pthread_mutex_t g_corr_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int g_writer_stop;

static uint32_t next_corr(void)
{
    pthread_mutex_lock(&g_corr_lock);
    uint32_t c = g_corr++;
    pthread_mutex_unlock(&g_corr_lock);
    return c;
}

static void record(uint16_t type, uint32_t corr, const char *name, uint32_t grid, uint32_t graph, uint32_t stream)
{
    pthread_mutex_lock(&g_act_lock);
    if (g_nacts < sizeof g_acts / sizeof g_acts[0]) {
        act *a = &g_acts[g_nacts++];
        a->type = type, a->corr = corr, a->grid = grid, a->graph = graph, a->stream = stream;
        a->start = g_t0 + 1000 * g_nacts; /* GPU order = the order the work ran */
        static uint32_t graph_corr, graph_seq; /* a launch's nodes, numbered as the graph was built */
        if (graph && corr != graph_corr)
            graph_corr = corr, graph_seq = 0;
        a->node = graph ? (uint64_t)graph << 32 | graph_seq++ : 0;
        snprintf(a->name, sizeof a->name, "%s", name ? name : "");
    }
    pthread_mutex_unlock(&g_act_lock);
}

static void write_acts(void)
{
    static const struct { uint32_t cbid; const char *name; } names[] = {
        {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
        {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync"},
        {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, "cuMemsetD32Async"},
        {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        wlcap_api_name n = {WLCAP_API_DRIVER, names[i].cbid, wl_capw_string(names[i].name), 0};
        wl_capw_record(WLCAP_API_NAME, &n, sizeof n);
    }
    for (size_t i = 0; i < g_nacts; i++) {
        const act *a = &g_acts[i];
        if (a->type == WLCAP_KERNEL) {
            wlcap_kernel k;
            memset(&k, 0, sizeof k);
            k.start = a->start, k.end = a->start + 500, k.correlation_id = a->corr, k.stream_id = a->stream;
            k.graph_id = a->graph, k.graph_node_id = a->node;
            k.name_str = wl_capw_string(a->name);
            k.grid_x = a->grid, k.grid_y = k.grid_z = 1, k.block_x = 128, k.block_y = k.block_z = 1;
            k.carveout_requested = 0xff;
            wl_capw_record(WLCAP_KERNEL, &k, sizeof k);
        } else if (a->type == WLCAP_API) {
            wlcap_api r;
            memset(&r, 0, sizeof r);
            r.start = a->start, r.end = a->start + 100, r.cbid = a->grid, r.tid = 1, r.correlation_id = a->corr;
            r.domain = WLCAP_API_DRIVER;
            wl_capw_record(WLCAP_API, &r, sizeof r);
        } else if (a->type == WLCAP_MEMCPY) {
            wlcap_memcpy m;
            memset(&m, 0, sizeof m);
            m.start = a->start, m.end = a->start + 500, m.correlation_id = a->corr, m.bytes = 1 << 20;
            m.copy_kind = 8 /* DtoD */, m.src_kind = m.dst_kind = 3, m.graph_id = a->graph, m.stream_id = a->stream;
            m.graph_node_id = a->node;
            wl_capw_record(WLCAP_MEMCPY, &m, sizeof m);
        } else {
            wlcap_memset m;
            memset(&m, 0, sizeof m);
            m.start = a->start, m.end = a->start + 500, m.correlation_id = a->corr, m.bytes = 4096;
            m.memory_kind = 3, m.graph_id = a->graph, m.stream_id = a->stream, m.graph_node_id = a->node;
            wl_capw_record(WLCAP_MEMSET, &m, sizeof m);
        }
    }
}

/* the writer thread's pass */
static void writer_pass(void)
{
    wl_metrics_drain();
    wl_capw_flush();
}

typedef struct work {
    int kind;             /* 0 kernel, 1 copy, 2 set, 3 graph */
    const char *name;     /* kernel: mangled name (also its function handle) */
    uint32_t grid, stream;
    int ranges;           /* copies: how many ranges the copy makes (0, 1, 2) */
    int records;          /* copies: activity records (2: split) */
    int internal;         /* kernels: the driver's own work inside the call first */
    int hidden;           /* work no call accounts for, before the kernel */
    CUresult rv;
} work;

static const void *fn_of(const char *name) { return name; } /* distinct string literals: distinct handles */

static void do_work(CUcontext c, uint32_t corr, const work *w)
{
    if (w->rv != CUDA_SUCCESS)
        return;
    if (w->hidden)
        fake_rp_run(c, 7, 1);
    switch (w->kind) {
    case 0:
        if (w->internal)
            fake_rp_run(c, corr * 10.0 + 5, 1);
        fake_rp_run(c, corr * 10.0, w->grid);
        record(WLCAP_KERNEL, corr, w->name, w->grid, 0, w->stream);
        break;
    case 1:
        for (int p = 0; p < w->ranges; p++)
            fake_rp_run(c, corr * 10.0 + p, 0);
        for (int r = 0; r < (w->records ? w->records : 1); r++)
            record(WLCAP_MEMCPY, corr, NULL, 0, 0, w->stream);
        break;
    case 2:
        fake_rp_run(c, corr * 10.0, 0);
        record(WLCAP_MEMSET, corr, NULL, 0, 0, w->stream);
        break;
    default: /* a graph of kernel (4 CTAs), kernel (8), set; the Stop after it may be made to fail */
        static int graphs;
        if (++graphs == 2 && getenv("FAKE_GRAPH_STOP_FAILS"))
            fake_rp.fail_next_stop = 1;
        fake_rp_run(c, corr * 10.0, 4);
        record(WLCAP_KERNEL, corr, "_Z10graph_nodev", 4, 77, w->stream);
        fake_rp_run(c, corr * 10.0 + 1, 8);
        record(WLCAP_KERNEL, corr, "_Z10graph_nodev", 8, 77, w->stream);
        fake_rp_run(c, corr * 10.0 + 2, 0);
        record(WLCAP_MEMSET, corr, NULL, 0, 77, w->stream);
        break;
    }
}

static uint32_t call(CUcontext c, const work *w)
{
    uint32_t corr = next_corr();
    cuLaunchKernel_params lk;
    memset(&lk, 0, sizeof lk);
    lk.f = (CUfunction)(uintptr_t)fn_of(w->name);
    lk.gridDimX = w->grid, lk.gridDimY = lk.gridDimZ = 1;
    lk.blockDimX = 128, lk.blockDimY = lk.blockDimZ = 1;
    lk.hStream = (CUstream)(uintptr_t)w->stream;
    cuGraphLaunch_params gl = {NULL, (CUstream)(uintptr_t)w->stream};
    static const uint32_t cbids[] = {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
                                     CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch};
    CUresult rv = w->rv;
    CUpti_CallbackData cd;
    memset(&cd, 0, sizeof cd);
    cd.context = c;
    cd.correlationId = corr;
    cd.functionParams = w->kind == 0 ? (const void *)&lk : w->kind == 3 ? (const void *)&gl : NULL;
    cd.symbolName = w->kind == 0 ? w->name : NULL;
    cd.functionReturnValue = &rv;
    cd.callbackSite = CUPTI_API_ENTER;
    wl_metrics_call(cbids[w->kind], &cd);
    if ((uintptr_t)w->stream != 0x99)
        do_work(c, corr, w);
    cd.callbackSite = CUPTI_API_EXIT;
    wl_metrics_call(cbids[w->kind], &cd);
    record(WLCAP_API, corr, NULL, cbids[w->kind], 0, 0);
    return corr;
}

static void kernel(const char *name, uint32_t grid, uint32_t stream) { call(CTX, &(work){0, name, grid, stream, 0, 0, 0, 0, 0}); }

static void scenario_mixed(void)
{
    static const char *randn = "_Z5randnPfi", *add = "_Z3addPKfS0_Pf", *mul = "_Z3mulPff", *gemm = "_Z4gemmv",
                      *ex = "_Z2exv";
    kernel(randn, 528, 7);
    kernel(randn, 528, 7);
    for (int i = 0; i < 3; i++) {
        kernel(add, 1056, 7);
        kernel(mul, 1056, 7);
        call(CTX, &(work){1, NULL, 0, 7, 1, 1, 0, 0, 0}); /* x.copy_(z): one range */
    }
    kernel(randn, 64, 7);
    call(CTX, &(work){0, gemm, 256, 7, 0, 0, 1, 0, 0}); /* first launch: module loading inside */
    call(CTX, &(work){0, gemm, 256, 7, 0, 0, 0, 0, 0});
    call(CTX, &(work){2, NULL, 0, 8, 0, 0, 0, 0, 0});     /* a set on another stream */
    call(CTX, &(work){1, NULL, 0, 8, 0, 1, 0, 0, 0});     /* a copy that makes no range */
    call(CTX, &(work){1, NULL, 0, 8, 2, 1, 0, 0, 0});     /* a copy of two ranges */
    call(CTX, &(work){1, NULL, 0, 8, 1, 2, 0, 0, 0});     /* a copy split into two records */
    call(CTX, &(work){0, add, 1056, 7, 0, 0, 0, 0, CUDA_ERROR_INVALID_VALUE}); /* fails: no range */
    call(CTX, &(work){0, add, 1056, (uint32_t)(uintptr_t)CAPTURING, 0, 0, 0, 0, 0}); /* into a capture */
    /* cuLaunchKernelEx */
    uint32_t corr = next_corr();
    CUlaunchConfig lc;
    memset(&lc, 0, sizeof lc);
    lc.gridDimX = 64, lc.gridDimY = lc.gridDimZ = 1, lc.hStream = (CUstream)(uintptr_t)9;
    cuLaunchKernelEx_params kp = {&lc, (CUfunction)(uintptr_t)ex, NULL, NULL};
    CUresult ok = CUDA_SUCCESS;
    CUpti_CallbackData cd;
    memset(&cd, 0, sizeof cd);
    cd.context = CTX, cd.correlationId = corr, cd.functionParams = &kp, cd.symbolName = ex;
    cd.functionReturnValue = &ok, cd.callbackSite = CUPTI_API_ENTER;
    wl_metrics_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &cd);
    fake_rp_run(CTX, corr * 10.0, 64);
    record(WLCAP_KERNEL, corr, ex, 64, 0, 9);
    cd.callbackSite = CUPTI_API_EXIT;
    wl_metrics_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &cd);
    for (int i = 0; i < 50; i++) { /* batches of known kernels, two streams */
        kernel(add, 1056, 7);
        kernel(mul, 1056, 8);
    }
}

static void scenario_hidden(void)
{
    static const char *a = "_Z1av", *b = "_Z1bv", *c = "_Z1cv";
    kernel(a, 10, 7), kernel(b, 20, 7), kernel(c, 30, 7); /* first launches: alone */
    for (int i = 0; i < 5; i++) {
        kernel(a, 10, 7);
        call(CTX, &(work){0, b, 20, 7, 0, 0, 0, 1, 0}); /* something no call accounts for runs first */
        kernel(c, 30, 7);
    }
}

static void *thread_main(void *arg)
{
    long id = (long)arg;
    static const char *names[3] = {"_Z2k0v", "_Z2k1v", "_Z2k2v"};
    int n = atoi(getenv("DRIVER_N") ? getenv("DRIVER_N") : "300");
    for (int i = 0; i < n; i++) {
        if (i % 10 == 9)
            call(CTX, &(work){1, NULL, 0, (uint32_t)(10 + id), 1, 1, 0, 0, 0});
        else
            kernel(names[i % 3], (uint32_t)(100 * (id + 1) + i % 3), (uint32_t)(10 + id));
    }
    return NULL;
}

static void *writer_main(void *arg)
{
    (void)arg;
    while (!g_writer_stop) {
        writer_pass();
        usleep(1000);
    }
    return NULL;
}

static void scenario_threads(void)
{
    pthread_t w, t[4];
    pthread_create(&w, NULL, writer_main, NULL);
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    g_writer_stop = 1;
    pthread_join(w, NULL);
}

static void scenario_graphs(void)
{
    static const char *a = "_Z1av";
    kernel(a, 10, 7);
    call(CTX, &(work){3, NULL, 0, 7, 0, 0, 0, 0, 0});
    kernel(a, 10, 7);
    call(CTX, &(work){3, NULL, 0, 7, 0, 0, 0, 0, 0});
    kernel(a, 10, 7);
    kernel(a, 10, 7);
}

static void capture_call(uint32_t cbid, int begin)
{
    CUresult ok = CUDA_SUCCESS;
    CUpti_CallbackData cd;
    memset(&cd, 0, sizeof cd);
    cd.context = CTX, cd.correlationId = next_corr(), cd.functionReturnValue = &ok;
    cd.callbackSite = CUPTI_API_ENTER;
    wl_metrics_call(cbid, &cd);
    fake_rp.capturing = begin;
    cd.callbackSite = CUPTI_API_EXIT;
    wl_metrics_call(cbid, &cd);
}

/* a set whose stream the recorder reads (cuMemsetD32Async) */
static void set_on(uint32_t stream)
{
    uint32_t corr = next_corr();
    cuMemsetD32Async_params p = {0, 0, 16, (CUstream)(uintptr_t)stream};
    CUresult ok = CUDA_SUCCESS;
    CUpti_CallbackData cd;
    memset(&cd, 0, sizeof cd);
    cd.context = CTX, cd.correlationId = corr, cd.functionParams = &p, cd.functionReturnValue = &ok;
    cd.callbackSite = CUPTI_API_ENTER;
    wl_metrics_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, &cd);
    if (stream != 0x99) {
        fake_rp_run(CTX, corr * 10.0, 0);
        record(WLCAP_MEMSET, corr, NULL, 0, 0, stream);
    }
    cd.callbackSite = CUPTI_API_EXIT;
    wl_metrics_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, &cd);
    record(WLCAP_API, corr, NULL, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, 0, 0);
}

static void scenario_capture(void)
{
    static const char *a = "_Z1av", *b = "_Z1bv";
    kernel(a, 10, 7), kernel(b, 20, 7);           /* first launches */
    kernel(a, 10, 7);                              /* a batch is open */
    capture_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, 1);
    kernel(a, 10, 0x99);                           /* into the capture: runs nothing */
    set_on(0x99);                                  /* likewise */
    kernel(b, 20, 8);                              /* another stream: joins the open batch */
    set_on(8);                                     /* a set there: joins it too, not alone */
    kernel(a, 10, 8);
    capture_call(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, 0);
    kernel(b, 20, 7);
    set_on(7);                                     /* alone again */
    kernel(a, 10, 7);
}

static void nvtx(uint32_t cbid, const char *message)
{
    nvtxRangePushA_params p = {message};
    CUpti_NvtxData d = {"nvtx", &p, NULL};
    wl_mf_nvtx_callback(cbid, &d);
}

static void scenario_filters(void)
{
    static const char *gemm = "_Z4gemmPfi", *add = "_Z3addv", *ew = "elementwise_kernel";
    for (int step = 0; step < 3; step++) {
        kernel(ew, 1, 7);                                 /* outside the NVTX range */
        nvtx(CUPTI_CBID_NVTX_nvtxRangePushA, "step");
        kernel(gemm, 2, 7);
        nvtx(CUPTI_CBID_NVTX_nvtxRangePushA, "inner");    /* nested: still inside "step" */
        kernel(add, 3, 7);
        call(CTX, &(work){1, NULL, 0, 7, 1, 1, 0, 0, 0}); /* a copy inside */
        nvtx(CUPTI_CBID_NVTX_nvtxRangePop, NULL);
        nvtx(CUPTI_CBID_NVTX_nvtxRangePop, NULL);
        kernel(gemm, 2, 7);                               /* outside again */
    }
}

static void finish_capture(uint32_t reason)
{
    writer_pass();
    wl_metrics_stop(); /* the recorder's exit: the last batch */
    writer_pass();
    write_acts();
    if (driver_end_record(reason) != 0)
        fprintf(stderr, "closing the capture failed\n");
}

static void on_signal_finish(void) { finish_capture(WLCAP_END_SIGNAL); }

static void scenario_long(int n)
{
    if (getenv("DRIVER_KEEP_SIGNALS"))
        wl_signals_keep(on_signal_finish); /* as the recorder does with --metrics */
    static const char *a = "_Z1av", *b = "_Z1bv";
    for (int i = 0; i < n; i++) {
        kernel(i % 2 ? b : a, 10 + i % 2, 7);
        writer_pass();
    }
    pthread_mutex_lock(&g_act_lock);
    write_acts(); /* the kernels' activity records, as CUPTI's flushes would have brought them */
    g_nacts = 0;
    pthread_mutex_unlock(&g_act_lock);
    wl_capw_flush();
    printf("READY\n");
    fflush(stdout);
    for (;;)
        pause(); /* killed here: whatever was decoded must already be on disk */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: range_profiler_driver SCENARIO CAPTURE.wlcap [N]\n");
        return 2;
    }
    const char *sc = argv[1];
    fake_rp.deny = getenv("FAKE_RP_DENY") != NULL;
    fake_rp.no_cta = getenv("FAKE_RP_NO_CTA") != NULL;
    fake_rp.cta_costs_pass = getenv("FAKE_RP_CTA_PASS") != NULL;
    g_t0 = wl_realtime_ns();
    if (wl_capw_open(argv[2], (uint64_t)getpid(), g_t0) != 0)
        return 1;
    driver_process_record(g_t0);
    int on = wl_metrics_init(argv[2]);
    if (!strcmp(sc, "mixed") || !strcmp(sc, "deny"))
        scenario_mixed();
    else if (!strcmp(sc, "hidden"))
        scenario_hidden();
    else if (!strcmp(sc, "threads"))
        scenario_threads();
    else if (!strcmp(sc, "graphs"))
        scenario_graphs();
    else if (!strcmp(sc, "capture"))
        scenario_capture();
    else if (!strcmp(sc, "filters"))
        scenario_filters();
    else if (!strcmp(sc, "long"))
        scenario_long(argc > 3 ? atoi(argv[3]) : 100);
    else
        return 2;
    finish_capture(WLCAP_END_EXIT);
    printf("on=%d enables=%d disables=%d configs=%d auto=%d user=%d kernel_replay=%d starts=%d stops=%d decodes=%d"
           " pushes=%d pops=%d profiled=%llu unprofiled=%llu passes=%d misuse=%d\n",
           on, fake_rp.enables, fake_rp.disables, fake_rp.configs, fake_rp.auto_configs, fake_rp.user_configs,
           fake_rp.kernel_replay_configs, fake_rp.starts, fake_rp.stops, fake_rp.decodes, fake_rp.pushes, fake_rp.pops,
           (unsigned long long)fake_rp.profiled, (unsigned long long)fake_rp.unprofiled, fake_rp.passes, fake_rp.misuse);
    return fake_rp.misuse ? 1 : 0;
}
