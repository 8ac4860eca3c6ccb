/* Hardware metrics per user range and in the trace exports, without a GPU. A crafted capture (two
 * threads, nested scopes, nested NVTX push/pop ranges including two of one name, a start/end range
 * closed on another thread, six kernels of which five have metrics and one has no GPU timestamps,
 * as in metrics mode) is imported into a session, then:
 *  - attribution: which kernels each range holds (nesting; a kernel launched on another thread
 *    inside a push/pop range's time is not in it; the start/end range takes every thread's);
 *  - numbers: a range's DRAM bandwidth is summed bytes / summed time and its L2 hit rate summed
 *    hits / summed lookups, not the mean of the kernels' ratios; a name counts a kernel once;
 *  - the Perfetto export, decoded here: kernel slices carry their own metrics, scope and NVTX
 *    slices the combined metrics of their kernels, the launch call of the untimed kernel its
 *    metrics; slices without metrics carry none;
 *  - the same capture without metric records, and the metric session with its metric tables
 *    dropped, export the same bytes (Perfetto and JSON): metrics add args and nothing else;
 *  - range_attrib on hand-made arrays: an NVTX range of unknown thread, a scope parent loop.
 * `test_range_metrics --make-session FILE` writes the metric session for tests/cli/test_ranges_cli.sh. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/range_attrib.h"
#include "analysis/range_view.h"
#include "capture_builder.h"
#include "export/session_export.h"
#include "pb_reader.h"
#include "store/session_writer.h"
#include "test.h"

#define T0 1700000000000000000ull
#define PID 4242
#define T_MAIN 100
#define T_WORK 200
#define CBID_LAUNCH 13
#define FFMA "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
#define NM 9

static const char *const MNAMES[NM] = {WL_METRIC_GPU_TIME, "dram__bytes_read.sum", "dram__bytes_write.sum",
                                       "lts__t_sector_hit_rate.pct", "lts__t_sectors_lookup_hit.sum",
                                       "lts__t_sectors_lookup_miss.sum",
                                       "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__cycles_active.sum",
                                       FFMA};

/* The kernels: launch thread and time, GPU start/duration (0: no timestamps, as in metrics mode),
 * name, and metrics (time, read, write, l2 %, l2 hits, l2 misses, occupancy %, sm cycles, ffma). */
typedef struct kspec {
    uint32_t corr, tid;
    uint64_t launch, start, dur;
    const char *name;
    int measured;
    double m[NM];
} kspec;

enum { K1, K6, K3, K2, K4, K5, NK };
static const kspec KS[NK] = {
    [K1] = {11, T_MAIN, 3000, 3500, 1000, "copy_kernel", 1, {1000, 1e6, 0, 90, 900, 100, 50, 1000, 0}},
    [K6] = {16, T_MAIN, 4000, 5000, 2000, "plain_kernel", 0, {0}},
    [K3] = {13, T_WORK, 10000, 12000, 5000, "copy_kernel", 1, {5000, 5e6, 5e6, 50, 500, 500, 40, 2000, 0}},
    [K2] = {12, T_MAIN, 60000, 0, 0, "copy_kernel", 1, {1e6, 2e8, 0, 100.0 / 90, 100, 8900, 20, 9000, 0}},
    [K4] = {14, T_MAIN, 97000, 98000, 500, "fma_kernel", 1, {500, 0, 0, 0, 0, 0, 80, 100, 1048576}},
    [K5] = {15, T_WORK, 120000, 121000, 500, "fma_kernel", 1, {500, 0, 0, 0, 0, 0, 80, 100, 2048}},
};

static void scope(capbuf *b, uint32_t kind, uint64_t id, uint64_t parent, uint64_t ts, const char *name)
{
    wlcap_scope s = {T0 + ts, id, parent, T_MAIN, kind, name ? cb_string(b, name) : 0, 0};
    cb_record(b, WLCAP_SCOPE, &s, sizeof s);
}

static void marker(capbuf *b, uint32_t kind, uint32_t id, uint32_t tid, uint64_t ts, const char *name)
{
    wlcap_marker m;
    memset(&m, 0, sizeof m);
    m.timestamp = T0 + ts;
    m.id = id;
    m.kind = kind;
    m.tid = tid;
    m.name_str = name ? cb_string(b, name) : 0;
    cb_record(b, WLCAP_MARKER, &m, sizeof m);
}

static void build(capbuf *b, int with_metrics)
{
    cb_init(b, PID, T0);
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = PID;
    p.start_ns = T0;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    p.record_mask = WL_RECORD_ALL;
    cb_record(b, WLCAP_PROCESS, &p, sizeof p);
    wlcap_api_name an = {WLCAP_API_DRIVER, CBID_LAUNCH, cb_string(b, "cuLaunchKernel"), 0};
    cb_record(b, WLCAP_API_NAME, &an, sizeof an);
    if (with_metrics)
        for (uint32_t i = 0; i < NM; i++) {
            wlcap_metric_def d = {i, cb_string(b, MNAMES[i]), 0, 0, 0, 2, WLCAP_METRIC_REPLAY_KERNEL, 0};
            cb_record(b, WLCAP_METRIC_DEF, &d, sizeof d);
        }
    /* scopes on the main thread: outer [1000, 100000) holds inner [2000, 50000) */
    scope(b, WLCAP_SCOPE_BEGIN, 1, 0, 1000, "outer");
    scope(b, WLCAP_SCOPE_BEGIN, 2, 1, 2000, "inner");
    scope(b, WLCAP_SCOPE_END, 2, 0, 50000, NULL);
    scope(b, WLCAP_SCOPE_END, 1, 0, 100000, NULL);
    /* NVTX push/pop on the main thread: step > fwd > layer > layer; epoch: start/end, ended on
     * the worker thread */
    marker(b, WLCAP_MARK_START, 1, T_MAIN, 500, "step");
    marker(b, WLCAP_MARK_START, 5, T_MAIN, 800, "epoch");
    marker(b, WLCAP_MARK_START, 2, T_MAIN, 1500, "fwd");
    marker(b, WLCAP_MARK_START, 3, T_MAIN, 1600, "layer");
    marker(b, WLCAP_MARK_START, 4, T_MAIN, 1700, "layer");
    marker(b, WLCAP_MARK_END, 4, T_MAIN, 20000, NULL);
    marker(b, WLCAP_MARK_END, 3, T_MAIN, 30000, NULL);
    marker(b, WLCAP_MARK_END, 2, T_MAIN, 40000, NULL);
    marker(b, WLCAP_MARK_END, 1, T_MAIN, 90000, NULL);
    marker(b, WLCAP_MARK_END, 5, T_WORK, 95000, NULL);
    for (int i = 0; i < NK; i++) {
        const kspec *k = &KS[i];
        wlcap_api a;
        memset(&a, 0, sizeof a);
        a.start = T0 + k->launch;
        a.end = a.start + 200;
        a.cbid = CBID_LAUNCH;
        a.tid = k->tid;
        a.correlation_id = k->corr;
        a.domain = WLCAP_API_DRIVER;
        cb_record(b, WLCAP_API, &a, sizeof a);
        wlcap_kernel r;
        memset(&r, 0, sizeof r);
        if (k->dur)
            r.start = T0 + k->start, r.end = r.start + k->dur;
        r.correlation_id = k->corr;
        r.stream_id = 7;
        r.grid_x = r.grid_y = r.grid_z = 1;
        r.block_x = 128, r.block_y = r.block_z = 1;
        r.registers_per_thread = 32;
        r.name_str = cb_string(b, k->name);
        r.carveout_requested = 0xff;
        cb_record(b, WLCAP_KERNEL, &r, sizeof r);
        if (!with_metrics || !k->measured)
            continue;
        for (uint32_t first = 0; first < NM; first += WLCAP_METRIC_CHUNK) {
            wlcap_metric_range m;
            memset(&m, 0, sizeof m);
            m.range_index = (uint64_t)i;
            m.correlation_id = k->corr;
            m.first_metric = first;
            m.count = NM - first < WLCAP_METRIC_CHUNK ? NM - first : WLCAP_METRIC_CHUNK;
            memcpy(m.values, k->m + first, m.count * sizeof(double));
            cb_record(b, WLCAP_METRIC_RANGE, &m, sizeof m);
        }
    }
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = T0 + 200000;
    e.reason = WLCAP_END_EXIT;
    cb_record(b, WLCAP_END, &e, sizeof e);
}

static int make_session(const char *dir, const char *path, int with_metrics)
{
    capbuf b;
    build(&b, with_metrics);
    char cap[700], err[512];
    snprintf(cap, sizeof cap, "%s/%d.wlcap", dir, with_metrics);
    int rc = cb_write(&b, cap);
    free(b.data);
    wl_import_stats st;
    wl_session_writer *w = rc ? NULL : wl_session_writer_create(path, err, sizeof err);
    if (!w || wl_session_writer_import(w, cap, &st, err, sizeof err) != 0) {
        if (w)
            wl_session_writer_abort(w);
        fprintf(stderr, "import: %s\n", rc ? "cannot write the capture" : err);
        return -1;
    }
    unlink(cap);
    if (wl_session_writer_finish(w, err, sizeof err) != 0) {
        fprintf(stderr, "import: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- the range view ------------------------------------------------------------------------- */

static long find_named(const wl_range_view *v, int kind, const char *name, int nth)
{
    for (size_t i = 0; i < v->r.n; i++) {
        const wl_user_range *r = &v->r.ranges[i];
        if (r->kind == kind && !strcmp(v->r.names[r->name_idx].name, name) && nth-- == 0)
            return (long)i;
    }
    return -1;
}

static long name_index(const wl_range_view *v, int kind, const char *name)
{
    for (size_t g = 0; g < v->r.n_names; g++)
        if (v->r.names[g].kind == kind && !strcmp(v->r.names[g].name, name))
            return (long)g;
    return -1;
}

/* The kernels of a range as a bit set of KS indices (by correlation id). */
static unsigned members(const wl_range_view *v, long range, sqlite3 *db)
{
    unsigned set = 0;
    for (size_t i = v->members.first[range]; i < v->members.first[range + 1]; i++) {
        int64_t kid = v->launches[v->members.kernel[i]].kernel_id;
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT correlation_id FROM kernel WHERE id = %lld", (long long)kid);
        sqlite3_stmt *st;
        uint32_t corr = 0;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            corr = (uint32_t)sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        for (int k = 0; k < NK; k++)
            if (KS[k].corr == corr)
                set |= 1u << k;
    }
    return set;
}

#define BIT(k) (1u << (k))
static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b) + 1e-12; }
#define NEAR(a, b) near((a), (b))

static void test_view(const char *path)
{
    char err[512];
    wl_session *s = wl_session_open(path, err, sizeof err);
    sqlite3 *db = NULL;
    CHECK(s != NULL && sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    if (!s || !db)
        return;
    wl_range_view v;
    CHECK_EQ_INT(wl_range_view_open(s, 0, &v, err, sizeof err), 0);
    CHECK_EQ_INT(v.r.n, 7); /* 5 NVTX ranges, 2 scopes */
    CHECK_EQ_INT(v.n_launches, NK);
    CHECK_EQ_INT((long)v.metrics.count, 5);
    long step = find_named(&v, WL_RANGE_NVTX, "step", 0), fwd = find_named(&v, WL_RANGE_NVTX, "fwd", 0),
         epoch = find_named(&v, WL_RANGE_NVTX, "epoch", 0), layer0 = find_named(&v, WL_RANGE_NVTX, "layer", 0),
         layer1 = find_named(&v, WL_RANGE_NVTX, "layer", 1), outer = find_named(&v, WL_RANGE_SCOPE, "outer", 0),
         inner = find_named(&v, WL_RANGE_SCOPE, "inner", 0);
    CHECK(step >= 0 && fwd >= 0 && epoch >= 0 && layer0 >= 0 && layer1 >= 0 && outer >= 0 && inner >= 0);
    if (step < 0 || fwd < 0 || epoch < 0 || layer0 < 0 || layer1 < 0 || outer < 0 || inner < 0)
        goto out;
    /* push/pop: the main thread's launches only (K3, launched on the worker inside step's time,
     * is not in step); each nested range holds every kernel inside it */
    CHECK(wl_range_is_thread_bound(&v.r.ranges[step]));
    CHECK_EQ_INT(members(&v, step, db), BIT(K1) | BIT(K6) | BIT(K2));
    CHECK_EQ_INT(members(&v, fwd, db), BIT(K1) | BIT(K6));
    CHECK_EQ_INT(members(&v, layer0, db), BIT(K1) | BIT(K6));
    CHECK_EQ_INT(members(&v, layer1, db), BIT(K1) | BIT(K6));
    /* start/end closed on another thread: every thread's launches in [start, end) */
    CHECK(!wl_range_is_thread_bound(&v.r.ranges[epoch]));
    CHECK_EQ_INT(members(&v, epoch, db), BIT(K1) | BIT(K6) | BIT(K3) | BIT(K2));
    /* scopes: the tagged kernels and those of nested scopes */
    CHECK_EQ_INT(members(&v, inner, db), BIT(K1) | BIT(K6));
    CHECK_EQ_INT(members(&v, outer, db), BIT(K1) | BIT(K6) | BIT(K2) | BIT(K4));
    CHECK(wl_range_view_find(&v, WL_RANGE_SCOPE, PID, 2) == inner);
    CHECK(wl_range_view_find(&v, WL_RANGE_NVTX, PID, v.r.ranges[epoch].id) == epoch);
    CHECK(wl_range_view_find(&v, WL_RANGE_SCOPE, PID + 1, 2) < 0);

    wl_metric_acc *acc = malloc(sizeof *acc);
    wl_range_totals t;
    wl_metric_summary sm;
    /* step: K1 (1 us, 1 MB) and K2 (1 ms, 200 MB, no GPU timestamps) */
    wl_range_view_instance(&v, (size_t)step, &t, acc);
    wl_metric_acc_summary(acc, &sm);
    CHECK_EQ_INT(t.kernels, 3);
    CHECK_EQ_INT(t.measured, 2);
    CHECK_EQ_INT(t.timed_kernels, 2);
    CHECK_EQ_INT(t.gpu_ns, 3000);
    CHECK_EQ_INT(t.total_ns, 89500);
    double bw = (1e6 + 2e8) / (1000 + 1e6) * 1e9, mean_of_ratios = (1e6 / 1000 + 2e8 / 1e6) / 2 * 1e9;
    CHECK(NEAR(sm.dram_bytes_per_s, bw));
    CHECK(fabs(sm.dram_bytes_per_s - mean_of_ratios) > 0.5 * bw);
    CHECK(NEAR(sm.l2_hit_pct, 100.0 * (900 + 100) / (1000 + 9000))); /* 10 %, not (90 + 1.1) / 2 */
    CHECK(NEAR(sm.occupancy_pct, (50.0 * 1000 + 20.0 * 9000) / 10000));
    CHECK(NEAR(sm.gpu_time_ns, 1001000));
    /* epoch adds K3 of the worker thread */
    wl_range_view_instance(&v, (size_t)epoch, &t, acc);
    wl_metric_acc_summary(acc, &sm);
    CHECK_EQ_INT(t.measured, 3);
    CHECK(NEAR(sm.dram_bytes_per_s, (1e6 + 2e8 + 1e7) / (1000 + 1e6 + 5000) * 1e9));
    /* outer: K1, K2 and K4 measured; K4's FMAs are 2 FLOPs each */
    wl_range_view_instance(&v, (size_t)outer, &t, acc);
    wl_metric_acc_summary(acc, &sm);
    CHECK_EQ_INT(t.kernels, 4);
    CHECK_EQ_INT(t.measured, 3);
    CHECK(NEAR(sm.fp32_flop, 2.0 * 1048576));
    /* a name counts a kernel once although its two ranges nest */
    long layer = name_index(&v, WL_RANGE_NVTX, "layer");
    CHECK(layer >= 0);
    if (layer >= 0) {
        wl_range_view_name(&v, (size_t)layer, &t, acc);
        CHECK_EQ_INT(t.ranges, 2);
        CHECK_EQ_INT(t.kernels, 2);
        CHECK_EQ_INT(t.measured, 1);
        CHECK_EQ_INT(acc->kernels, 1);
        CHECK_EQ_INT(t.total_ns, (20000 - 1700) + (30000 - 1600));
        CHECK_EQ_INT(t.max_ns, 30000 - 1600);
        CHECK_EQ_INT(t.min_ns, 20000 - 1700);
    }
    free(acc);
out:
    wl_range_view_close(&v);
    sqlite3_close(db);
    wl_session_close(s);
}

/* ---- the Perfetto export, decoded ---------------------------------------------------------------- */

#define MAX_NAMES 256
#define MAX_ARGS 96
typedef struct targ {
    char name[160];
    int is_double;
    double d;
    uint64_t u;
} targ;

typedef struct tslice {
    char name[128];
    int nargs;
    targ args[MAX_ARGS];
} tslice;

typedef struct decoded {
    char names[MAX_NAMES][128], anns[MAX_NAMES][160]; /* by iid */
    tslice *slices;
    int n, cap;
} decoded;

static void copy_str(char *dst, size_t n, rd s)
{
    size_t len = (size_t)(s.end - s.p);
    snprintf(dst, n, "%.*s", (int)(len < n ? len : n - 1), (const char *)s.p);
}

static void decode_interned(decoded *d, rd in)
{
    uint32_t f; int wt; uint64_t v = 0; rd s;
    while (field(&in, &f, &wt, &v, &s)) {
        uint32_t g; int w; uint64_t x = 0, iid = 0; rd q = {0}, name = {0};
        while (field(&s, &g, &w, &x, &q)) {
            if (g == 1) iid = x;
            if (g == 2) name = q;
        }
        if (iid && iid < MAX_NAMES && name.p) {
            if (f == 2)
                copy_str(d->names[iid], sizeof d->names[iid], name);
            if (f == 3)
                copy_str(d->anns[iid], sizeof d->anns[iid], name);
        }
    }
}

static void decode_event(decoded *d, rd e)
{
    uint32_t f; int wt; uint64_t v = 0; rd s;
    uint64_t type = 0, name_iid = 0;
    tslice sl;
    memset(&sl, 0, sizeof sl);
    while (field(&e, &f, &wt, &v, &s)) {
        if (f == 9) type = v;
        if (f == 10) name_iid = v;
        if (f == 4 && sl.nargs < MAX_ARGS) {
            targ *a = &sl.args[sl.nargs++];
            uint32_t g; int w; uint64_t x = 0; rd q;
            while (field(&s, &g, &w, &x, &q)) {
                if (g == 1 && x < MAX_NAMES) snprintf(a->name, sizeof a->name, "%s", d->anns[x]);
                if (g == 3) a->u = x;
                if (g == 5 && w == 1) a->is_double = 1, memcpy(&a->d, &x, sizeof a->d);
            }
        }
    }
    if (type != 1)
        return;
    if (name_iid < MAX_NAMES)
        snprintf(sl.name, sizeof sl.name, "%s", d->names[name_iid]);
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 64;
        d->slices = realloc(d->slices, (size_t)d->cap * sizeof *d->slices);
    }
    d->slices[d->n++] = sl;
}

static void decode_trace(decoded *d, const uint8_t *buf, size_t n)
{
    rd r = {buf, buf + n, 0};
    uint32_t f; int wt; uint64_t v = 0; rd pkt;
    while (field(&r, &f, &wt, &v, &pkt)) {
        uint32_t g; int w; uint64_t x = 0; rd s, te = {0}, in = {0};
        while (field(&pkt, &g, &w, &x, &s)) {
            if (g == 11) te = s;
            if (g == 12) in = s;
        }
        if (in.p) /* a packet's interned data precedes the use of its iids */
            decode_interned(d, in);
        if (te.p)
            decode_event(d, te);
    }
    CHECK(!r.bad && r.p == r.end);
}

static const tslice *slice_named(const decoded *d, const char *name, int nth)
{
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->slices[i].name, name) && nth-- == 0)
            return &d->slices[i];
    return NULL;
}

static const targ *arg(const tslice *s, const char *name)
{
    for (int i = 0; s && i < s->nargs; i++)
        if (!strcmp(s->args[i].name, name))
            return &s->args[i];
    return NULL;
}

static int metric_args(const tslice *s)
{
    int n = 0;
    for (int i = 0; s && i < s->nargs; i++)
        n += !strncmp(s->args[i].name, "metrics.", 8);
    return n;
}

static double darg(const tslice *s, const char *name)
{
    const targ *a = arg(s, name);
    return a && a->is_double ? a->d : NAN;
}

static char *export_mem(const char *path, int json, size_t *len)
{
    char err[512], *out = NULL;
    *len = 0;
    wl_session *s = wl_session_open(path, err, sizeof err);
    FILE *m = s ? open_memstream(&out, len) : NULL;
    if (m) {
        wl_export_stats st;
        int rc = json ? wl_export_chrome_json(s, m, NULL, &st, err, sizeof err)
                      : wl_export_perfetto(s, m, NULL, &st, err, sizeof err);
        if (rc)
            fprintf(stderr, "export: %s\n", err);
        CHECK_EQ_INT(rc, 0);
        fclose(m);
    }
    wl_session_close(s);
    return out;
}

static void test_perfetto(const char *path)
{
    size_t n;
    uint8_t *buf = (uint8_t *)export_mem(path, 0, &n);
    decoded *d = calloc(1, sizeof *d);
    CHECK(buf && d);
    if (!buf || !d)
        return;
    decode_trace(d, buf, n);
    /* kernel slices: their own values; the derived bandwidth of K1: 1 MB in 1 us = 1e12 B/s */
    const tslice *k1 = slice_named(d, "copy_kernel", 0), *k3 = slice_named(d, "copy_kernel", 1);
    CHECK(k1 && k3);
    CHECK(darg(k1, "metrics.dram__bytes_read.sum") == 1e6);
    CHECK(darg(k1, "metrics." WL_METRIC_GPU_TIME) == 1000);
    CHECK(NEAR(darg(k1, "metrics.lts__t_sector_hit_rate.pct"), 90));
    CHECK(NEAR(darg(k1, "metrics.dram_bytes_per_s"), 1e12));
    CHECK(darg(k3, "metrics.dram__bytes_write.sum") == 5e6);
    /* every metric, DRAM bytes/s and the FP32 FLOPs (FP16/FP64 counters were not collected) */
    CHECK_EQ_INT(metric_args(k1), NM + 2);
    CHECK(arg(k1, "metrics.fp16_flop") == NULL);
    CHECK(NEAR(darg(slice_named(d, "fma_kernel", 0), "metrics.fp32_flop"), 2.0 * 1048576));
    CHECK_EQ_INT(metric_args(slice_named(d, "plain_kernel", 0)), 0); /* no metrics: no args */
    /* the untimed kernel K2 has no slice: its launch call carries its metrics */
    CHECK(slice_named(d, "copy_kernel", 2) == NULL);
    int launches_with_metrics = 0;
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->slices[i].name, "cuLaunchKernel") && metric_args(&d->slices[i])) {
            launches_with_metrics++;
            CHECK(darg(&d->slices[i], "metrics.dram__bytes_read.sum") == 2e8);
            CHECK(arg(&d->slices[i], "metrics.kernel_id") != NULL);
        }
    CHECK_EQ_INT(launches_with_metrics, 1);
    /* NVTX and scope slices: the combined metrics of the measured kernels inside */
    const tslice *step = slice_named(d, "step", 0), *outer = slice_named(d, "outer", 0),
                 *epoch = slice_named(d, "epoch", 0);
    CHECK(step && outer && epoch);
    const targ *nk = arg(step, "metrics.kernels");
    CHECK(nk && nk->u == 2);
    CHECK(NEAR(darg(step, "metrics.dram_bytes_per_s"), (1e6 + 2e8) / (1000 + 1e6) * 1e9));
    CHECK(NEAR(darg(step, "metrics.lts__t_sector_hit_rate.pct"), 10));
    CHECK(NEAR(darg(step, "metrics.dram__bytes_read.sum"), 1e6 + 2e8));
    nk = arg(epoch, "metrics.kernels");
    CHECK(nk && nk->u == 3);
    nk = arg(outer, "metrics.kernels");
    CHECK(nk && nk->u == 3);
    CHECK(NEAR(darg(outer, "metrics.fp32_flop"), 2.0 * 1048576));
    /* a range without measured kernels would carry none; every range here has some */
    CHECK_EQ_INT(metric_args(slice_named(d, "inner", 0)) > 0, 1);
    free(d->slices);
    free(d);
    free(buf);
}

/* ---- without metrics: the same bytes -------------------------------------------------------- */

static void test_identical(const char *dir, const char *with)
{
    char plain[600], dropped[600], emptied[600];
    snprintf(plain, sizeof plain, "%s/plain.wlsession", dir);
    snprintf(dropped, sizeof dropped, "%s/dropped.wlsession", dir);
    snprintf(emptied, sizeof emptied, "%s/emptied.wlsession", dir);
    CHECK_EQ_INT(make_session(dir, plain, 0), 0);
    const char *edits[2][2] = {{dropped, "DROP TABLE kernel_metric; DROP TABLE metric; DROP TABLE metric_config"},
                               {emptied, "DELETE FROM kernel_metric"}};
    for (int i = 0; i < 2; i++) {
        sqlite3 *db;
        char sql[1400];
        CHECK_EQ_INT(sqlite3_open(with, &db), SQLITE_OK);
        snprintf(sql, sizeof sql, "VACUUM INTO '%s'", edits[i][0]);
        CHECK_EQ_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        CHECK_EQ_INT(sqlite3_open(edits[i][0], &db), SQLITE_OK);
        CHECK_EQ_INT(sqlite3_exec(db, edits[i][1], NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
    }
    for (int json = 0; json < 2; json++) {
        size_t n0, n1, n2, n3;
        char *a = export_mem(plain, json, &n0), *b = export_mem(dropped, json, &n1), *c = export_mem(emptied, json, &n2),
             *m = export_mem(with, json, &n3);
        CHECK(a && n0 > 0 && n0 == n1 && !memcmp(a, b, n0));
        CHECK(n0 == n2 && !memcmp(a, c, n0));
        CHECK(n3 > n0); /* and the metric session does carry more */
        free(a), free(b), free(c), free(m);
    }
    unlink(plain);
    unlink(dropped);
    unlink(emptied);
}

/* ---- range_attrib on hand-made arrays ------------------------------------------------------- */

static void test_attrib(void)
{
    wl_user_range r[4];
    memset(r, 0, sizeof r);
    /* 0: NVTX of unknown thread: any thread; 1: a closed push/pop range on tid 5; 2, 3: scopes whose
     * parents loop (corrupt), each must still get a kernel once */
    r[0] = (wl_user_range){.id = 1, .parent_id = -1, .start_ns = 100, .end_ns = 200, .pid = 1, .kind = WL_RANGE_NVTX};
    r[1] = (wl_user_range){.id = 2, .parent_id = -1, .start_ns = 100, .end_ns = 200, .pid = 1, .tid = 5, .end_tid = 5,
                           .kind = WL_RANGE_NVTX};
    r[2] = (wl_user_range){.id = 7, .parent_id = 8, .pid = 1, .tid = 5, .kind = WL_RANGE_SCOPE};
    r[3] = (wl_user_range){.id = 8, .parent_id = 7, .pid = 1, .tid = 5, .kind = WL_RANGE_SCOPE};
    wl_kernel_launch l[5];
    memset(l, 0, sizeof l);
    l[0] = (wl_kernel_launch){.kernel_id = 1, .scope_id = 7, .launch_ns = 150, .pid = 1, .tid = 5};
    l[1] = (wl_kernel_launch){.kernel_id = 2, .scope_id = -1, .launch_ns = 150, .pid = 1, .tid = 6};
    l[2] = (wl_kernel_launch){.kernel_id = 3, .scope_id = -1, .launch_ns = 200, .pid = 1, .tid = 5}; /* at the end */
    l[3] = (wl_kernel_launch){.kernel_id = 4, .scope_id = -1, .launch_ns = 150, .pid = 2, .tid = 5}; /* other pid */
    l[4] = (wl_kernel_launch){.kernel_id = 5, .scope_id = -1, .launch_ns = 0, .pid = 1, .tid = 0};   /* no call */
    wl_range_members m;
    CHECK_EQ_INT(wl_range_attribute(r, 4, l, 5, &m), 0);
    CHECK_EQ_INT(m.first[1] - m.first[0], 2); /* kernels 1 and 2 */
    CHECK_EQ_INT(m.first[2] - m.first[1], 1); /* kernel 1 only */
    CHECK_EQ_INT(m.kernel[m.first[1]], 0);
    CHECK_EQ_INT(m.first[3] - m.first[2], 1);
    CHECK_EQ_INT(m.first[4] - m.first[3], 1);
    wl_range_members_free(&m);
    CHECK_EQ_INT(wl_range_attribute(r, 0, l, 0, &m), 0);
    wl_range_members_free(&m);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--make-session")) {
        char dir[700];
        snprintf(dir, sizeof dir, "%s", argv[2]);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(dir, sizeof dir, ".");
        return make_session(dir, argv[2], 1) ? 1 : 0;
    }
    const char *base = getenv("WARPLENS_BUILD_DIR");
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/test_range_metrics.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/m.wlsession", dir);
    test_attrib();
    CHECK_EQ_INT(make_session(dir, path, 1), 0);
    test_view(path);
    test_perfetto(path);
    test_identical(dir, path);
    unlink(path);
    if (rmdir(dir) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return test_report("test_range_metrics");
}
