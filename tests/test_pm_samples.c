/* PM samples (`warplens run --pm-sampling`) through the capture format, the store, the analysis and
 * the exporters, without a GPU. A capture built in memory: 10 windows of 100 us on GPU 0 with 9
 * metrics (two chunks per window), kernel A alone in windows 1-3, kernels B and C overlapping in
 * window 6 (B also alone in 5 and 7), kernel D of another process on the same physical GPU (PCI
 * bus id) in window 8, windows 0, 4 and 9 idle. Checked: the reader's view of the records, the
 * imported tables, the per-metric statistics, the attribution of every window (exact, shared with
 * the longest kernel, idle, busy time), each kernel's combined values (counters summed over its
 * windows, levels time-weighted, exact vs shared upper bound), the range filter, the counter
 * tracks of both exports (rates for counters, levels as they are), exports of a session without
 * PM samples unchanged byte for byte, and hostile PM records rejected with their offset. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/pm_samples.h"
#include "capfile/capfile_reader.h"
#include "capfile/pm_metric_spec.h"
#include "capture_builder.h"
#include "export/session_export.h"
#include "store/session_writer.h"
#include "session_test_util.h"
#include "test.h"
#include "test_files.h"

#define T0 1700000000000000000ull
#define WIN 100000ull
#define NM 9

static const char *const NAMES[NM] = {
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed", "pcie__read_bytes.sum", "pcie__write_bytes.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", "sm__inst_executed_realtime.sum"};
static const char *const UNITS[NM] = {"percent", "byte", "byte", "percent", "byte", "byte", "percent", "percent",
                                      "instruction"};
static const uint32_t TYPES[NM] = {0, 0, 0, 2, 0, 0, 0, 0, 0};

static void process(capbuf *b, uint32_t pid)
{
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.start_ns = T0 - 1000;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    cb_record(b, WLCAP_PROCESS, &p, sizeof p);
}

static void device(capbuf *b, uint32_t id, const char *pci)
{
    wlcap_device d;
    memset(&d, 0, sizeof d);
    d.device_id = id;
    d.pci_str = cb_string(b, pci);
    d.name_str = cb_string(b, "NVIDIA H100 80GB HBM3");
    cb_record(b, WLCAP_DEVICE, &d, sizeof d);
}

static void kernel(capbuf *b, uint32_t dev, const char *mangled, uint32_t corr, uint64_t start, uint64_t end)
{
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.device_id = dev, k.start = start, k.end = end, k.correlation_id = corr, k.stream_id = 7 + corr;
    k.name_str = cb_string(b, mangled);
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = 128, k.block_y = k.block_z = 1;
    k.carveout_requested = 0xff;
    cb_record(b, WLCAP_KERNEL, &k, sizeof k);
}

static void end(capbuf *b)
{
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = T0 + 20 * WIN;
    e.reason = WLCAP_END_EXIT;
    cb_record(b, WLCAP_END, &e, sizeof e);
}

static void status(capbuf *b, uint32_t dev, uint32_t kind, const char *text)
{
    wlcap_pm_metric_def d = {0, WLCAP_PM_STATUS, dev, cb_string(b, text), 0, kind, 0};
    cb_record(b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
}

/* SM active of window i: 50 at the edges of kernel A, 100 inside busy windows, 0 when idle */
static double sm_active(int i) { return i == 1 || i == 3 ? 50 : i == 0 || i == 4 || i == 9 ? 0 : 100; }

static void pm_capture(capbuf *b)
{
    status(b, 0, WLCAP_PM_ON, "PM sampling on GPU 0 (GH100): unknown metric 'foo__bar.sum'");
    for (uint32_t m = 0; m < NM; m++) {
        wlcap_pm_metric_def d = {WIN, m, 0, cb_string(b, NAMES[m]), cb_string(b, UNITS[m]), TYPES[m], 0};
        cb_record(b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
    }
    status(b, 0, WLCAP_PM_ON, "PM sampling on GPU 0 (GH100): 9 metrics every 100 us");
    for (int i = 0; i < 10; i++) {
        double v[NM];
        v[0] = sm_active(i);
        v[1] = 1000.0 * (i + 1); /* DRAM read bytes */
        v[2] = i == 9 ? NAN : 10.0 * (i + 1);
        for (int m = 3; m < NM; m++)
            v[m] = m + 0.5;
        for (uint32_t first = 0; first < NM; first += WLCAP_PM_CHUNK) {
            wlcap_pm_sample s;
            memset(&s, 0, sizeof s);
            s.start = T0 + (uint64_t)i * WIN;
            s.end = s.start + WIN;
            s.sample_index = (uint64_t)i;
            s.device_id = 0;
            s.first_metric = first;
            s.count = NM - first < WLCAP_PM_CHUNK ? NM - first : WLCAP_PM_CHUNK;
            memcpy(s.values, v + first, s.count * sizeof(double));
            cb_record(b, WLCAP_PM_SAMPLE, &s, sizeof s);
        }
    }
    wlcap_dropped lost = {3, WLCAP_DROP_PMSAMPLING, 0, 1, 0};
    cb_record(b, WLCAP_DROPPED, &lost, sizeof lost);
    status(b, 0, WLCAP_PM_ON, "PM sampling on GPU 0: 10 windows");
}

/* Process 100 (GPU 0 at bus 18) with kernels A, B, C; with_pm adds the PM records. */
static void capture_100(capbuf *b, int with_pm)
{
    cb_init(b, 100, T0 - 1000);
    process(b, 100);
    device(b, 0, "00000000:18:00.0");
    kernel(b, 0, "_Z7kernelAv", 1, T0 + 150000, T0 + 350000);
    kernel(b, 0, "_Z7kernelBv", 2, T0 + 500000, T0 + 750000);
    kernel(b, 0, "_Z7kernelCv", 3, T0 + 600000, T0 + 700000);
    if (with_pm)
        pm_capture(b);
    end(b);
}

/* Process 200 sees the same GPU as its device 3; its kernel D runs in window 8. */
static void capture_200(capbuf *b)
{
    cb_init(b, 200, T0 - 1000);
    process(b, 200);
    device(b, 3, "00000000:18:00.0");
    kernel(b, 3, "_Z7kernelDv", 1, T0 + 850000, T0 + 900000);
    end(b);
}

static int build(const char *dir, const char *name, int with_pm, char *sess, size_t n)
{
    char c1[300], c2[300], err[512];
    snprintf(c1, sizeof c1, "%s/%s-100.wlcap", dir, name);
    snprintf(c2, sizeof c2, "%s/%s-200.wlcap", dir, name);
    snprintf(sess, n, "%s/%s.wlsession", dir, name);
    capbuf b;
    capture_100(&b, with_pm);
    int rc = cb_write(&b, c1);
    free(b.data);
    capture_200(&b);
    rc |= cb_write(&b, c2);
    free(b.data);
    wl_session_writer *w = wl_session_writer_create(sess, err, sizeof err);
    if (!w || rc)
        return -1;
    wl_import_stats st;
    if (wl_session_writer_import(w, c1, &st, err, sizeof err) || wl_session_writer_import(w, c2, &st, err, sizeof err)) {
        fprintf(stderr, "import: %s\n", err);
        wl_session_writer_abort(w);
        return -1;
    }
    unlink(c1), unlink(c2);
    return wl_session_writer_finish(w, err, sizeof err);
}

static void test_reader(void)
{
    capbuf b;
    capture_100(&b, 1);
    wlcap_reader r;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(wlcap_reader_open_memory(&r, b.data, b.len), 0);
    uint16_t type;
    const uint8_t *p;
    uint32_t size;
    int defs = 0, statuses = 0, chunks = 0, drops = 0;
    while (wlcap_reader_next(&r, &type, &p, &size) == 1) {
        if (type == WLCAP_PM_METRIC_DEF) {
            CHECK_EQ_INT(size, sizeof(wlcap_pm_metric_def));
            wlcap_pm_metric_def d;
            memcpy(&d, p, sizeof d);
            d.metric_index == WLCAP_PM_STATUS ? statuses++ : defs++;
        } else if (type == WLCAP_PM_SAMPLE) {
            CHECK_EQ_INT(size, sizeof(wlcap_pm_sample));
            chunks++;
        } else if (type == WLCAP_DROPPED) {
            drops++;
        }
    }
    CHECK_EQ_INT(defs, NM);
    CHECK_EQ_INT(statuses, 3);
    CHECK_EQ_INT(chunks, 20); /* 9 metrics: two records per window */
    CHECK_EQ_INT(drops, 1);
    CHECK_EQ_INT(r.unknown_records, 0);
    CHECK_EQ_STR(wlcap_type_name(WLCAP_PM_SAMPLE), "pm_sample");
    CHECK_EQ_STR(wlcap_type_name(WLCAP_PM_METRIC_DEF), "pm_metric_def");
    free(b.data);
}

static void test_tables(const char *sess)
{
    sqlite3 *db;
    CHECK_EQ_INT(sqlite3_open_v2(sess, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM pm_metric WHERE pid = 100 AND device_id = 0"), NM);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM pm_metric WHERE metric_type = 'throughput' AND unit = 'percent'"), 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM pm_sample"), 10 * NM);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM pm_sample WHERE value IS NULL"), 1); /* the NaN */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(DISTINCT sample_index) FROM pm_sample"), 10);
    CHECK_EQ_INT(test_sql_int(db, "SELECT sum(value) FROM pm_sample WHERE metric_index = 8"), 85); /* 8.5 per window */
    CHECK_EQ_INT(test_sql_int(db, "SELECT interval_ns FROM pm_config WHERE pid = 100 AND device_id = 0"), WIN);
    CHECK_EQ_INT(test_sql_int(db, "SELECT status = 'on' FROM pm_config"), 1);
    /* every status line is kept, in order */
    CHECK_EQ_INT(test_sql_int(db, "SELECT length(detail) - length(replace(detail, char(10), '')) FROM pm_config"), 2);
    CHECK_EQ_INT(test_sql_int(db, "SELECT instr(detail, 'unknown metric') BETWEEN 1 AND instr(detail, '10 windows') FROM pm_config"),
                 1);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count FROM lost WHERE source = 'pm_samples' AND detail LIKE 'GPU 0: PM samples missing%'"),
                 3);
    /* the table is its own time index: a range query on one device searches the key, no sort */
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'pm_sample' AND sql LIKE '%WITHOUT ROWID%'"), 1);
    sqlite3_close(db);
}

typedef struct got {
    wl_pm_attribution w[16];
    wl_pm_sample_row rows[16];
    char names[16][64];
    int nw;
    wl_pm_kernel_values k[8];
    int nk;
} got;

static int on_window(const wl_pm_attribution *a, void *arg)
{
    got *g = arg;
    if (g->nw < 16) {
        g->rows[g->nw] = *a->sample;
        snprintf(g->names[g->nw], 64, "%s", a->kernel_name);
        g->w[g->nw] = *a;
        g->w[g->nw].sample = &g->rows[g->nw];
        g->w[g->nw].kernel_name = g->names[g->nw];
        g->nw++;
    }
    return 0;
}

static int on_kernel(const wl_pm_kernel_values *k, void *arg)
{
    got *g = arg;
    if (g->nk < 8)
        g->k[g->nk++] = *k;
    return 0;
}

static const wl_pm_kernel_values *find(const got *g, const char *name)
{
    for (int i = 0; i < g->nk; i++)
        if (!strcmp(g->k[i].name, name))
            return &g->k[i];
    return NULL;
}

static void test_attribution(const char *sess)
{
    char err[512];
    wl_session *s = wl_session_open(sess, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    CHECK_EQ_INT(wl_session_has_pm_samples(s), 1);
    /* windows longer than a limit (a late trigger): none beyond 1.5 intervals; all ten beyond half */
    wl_pm_long_windows lw;
    CHECK_EQ_INT(wl_session_pm_long_windows(s, 100, 0, WIN * 3 / 2, &lw), 0);
    CHECK_EQ_INT(lw.count, 0);
    CHECK_EQ_INT(wl_session_pm_long_windows(s, 100, 0, WIN / 2, &lw), 0);
    CHECK_EQ_INT(lw.count, 10);
    CHECK_EQ_INT(lw.longest_ns, WIN);
    CHECK(lw.longest_start_ns >= T0 && lw.longest_start_ns < T0 + 10 * WIN);
    wl_pm_metric_row *m;
    int n = wl_session_pm_metrics(s, &m);
    CHECK_EQ_INT(n, NM);
    CHECK_EQ_INT(m[0].additive, 0); /* a percentage */
    CHECK_EQ_INT(m[1].additive, 1); /* bytes */
    CHECK_EQ_INT(m[3].additive, 0); /* a throughput */
    CHECK_EQ_INT(m[8].additive, 1); /* instructions */
    CHECK_EQ_INT(m[1].interval_ns, WIN);

    wl_pm_metric_stats st;
    CHECK_EQ_INT(wl_session_pm_metric_stats(s, 100, 0, 1, &st), 0);
    CHECK_EQ_INT(st.windows, 10);
    CHECK_EQ_INT((long long)st.min, 1000);
    CHECK_EQ_INT((long long)st.median, 5000); /* the lower middle of 1000..10000 */
    CHECK_EQ_INT((long long)st.max, 10000);
    CHECK_EQ_INT((long long)st.sum, 55000);
    CHECK_EQ_INT(wl_session_pm_metric_stats(s, 100, 0, 2, &st), 0);
    CHECK_EQ_INT(st.windows, 9); /* the NaN is no value */
    CHECK_EQ_INT((long long)wl_session_pm_lost(s), 3);

    got *g = calloc(1, sizeof *g);
    wl_pm_walk w = {on_window, on_kernel, g, 0, 0};
    CHECK_EQ_INT(wl_pm_attribute(s, m, n, &w), 10);
    CHECK_EQ_INT(g->nw, 10);
    static const wl_sample_attr_kind want[10] = {WL_SAMPLE_IDLE,  WL_SAMPLE_EXACT,  WL_SAMPLE_EXACT, WL_SAMPLE_EXACT,
                                                 WL_SAMPLE_IDLE,  WL_SAMPLE_EXACT,  WL_SAMPLE_SHARED,
                                                 WL_SAMPLE_EXACT, WL_SAMPLE_EXACT,  WL_SAMPLE_IDLE};
    for (int i = 0; i < 10 && i < g->nw; i++) {
        CHECK_EQ_INT(g->w[i].kind, want[i]);
        CHECK_EQ_INT(g->w[i].sample->sample_index, i);
    }
    /* window 1: A covers its second half alone */
    CHECK_EQ_STR(g->w[1].kernel_name, "kernelA");
    CHECK_EQ_INT(g->w[1].busy_ns, 50000);
    CHECK_EQ_INT(g->w[1].kernels, 1);
    CHECK_EQ_INT((long long)g->w[1].sample->values[1], 2000);
    /* window 6: B and C overlap (B first on a tie); busy is their union */
    CHECK_EQ_INT(g->w[6].kernels, 2);
    CHECK_EQ_STR(g->w[6].kernel_name, "kernelB");
    CHECK_EQ_INT(g->w[6].busy_ns, WIN);
    /* window 8: D of process 200 on the same physical GPU */
    CHECK_EQ_STR(g->w[8].kernel_name, "kernelD");
    CHECK_EQ_INT(g->w[8].busy_ns, 50000);
    CHECK_EQ_INT(g->w[0].kernel_id, -1);
    CHECK_EQ_INT(g->w[9].sample->valid & 4, 0); /* the NaN */

    CHECK_EQ_INT(g->nk, 4);
    const wl_pm_kernel_values *a = find(g, "kernelA"), *b = find(g, "kernelB"), *c = find(g, "kernelC");
    const wl_pm_kernel_values *d = find(g, "kernelD");
    CHECK(a && b && c && d);
    if (a && b && c && d) {
        /* A: windows 1-3, all exact; bytes summed over whole windows; SM active time-weighted
         * (50 x 50 us + 100 x 100 us + 50 x 50 us) / 200 us = 75 */
        CHECK_EQ_INT(a->windows, 3);
        CHECK_EQ_INT(a->exact_windows, 3);
        CHECK_EQ_INT(a->kind, WL_SAMPLE_EXACT);
        CHECK_EQ_INT((long long)a->values[1], 2000 + 3000 + 4000);
        CHECK(fabs(a->values[0] - 75.0) < 1e-9);
        CHECK(fabs(a->values[3] - 3.5) < 1e-9);
        CHECK(fabs(a->values[8] - 3 * 8.5) < 1e-9);
        CHECK_EQ_INT(a->sample_pid, 100);
        /* B: windows 5-7, window 6 shared -> an upper bound */
        CHECK_EQ_INT(b->windows, 3);
        CHECK_EQ_INT(b->exact_windows, 2);
        CHECK_EQ_INT(b->shared_windows, 1);
        CHECK_EQ_INT(b->kind, WL_SAMPLE_SHARED);
        CHECK_EQ_INT((long long)b->values[1], 6000 + 7000 + 8000);
        /* C: only window 6, shared; it is given the whole window */
        CHECK_EQ_INT(c->windows, 1);
        CHECK_EQ_INT(c->kind, WL_SAMPLE_SHARED);
        CHECK_EQ_INT((long long)c->values[1], 7000);
        CHECK_EQ_INT((long long)c->values[2], 70);
        /* D: the other process's kernel, exact, measured by process 100's samples */
        CHECK_EQ_INT(d->pid, 200);
        CHECK_EQ_INT(d->device_id, 3);
        CHECK_EQ_INT(d->kind, WL_SAMPLE_EXACT);
        CHECK_EQ_INT((long long)d->values[1], 9000);
        CHECK_EQ_INT(d->valid & 4, 4);
    }

    /* only the windows overlapping B's interval */
    memset(g, 0, sizeof *g);
    wl_pm_walk r = {on_window, on_kernel, g, T0 + 500000, T0 + 750000};
    CHECK_EQ_INT(wl_pm_attribute(s, m, n, &r), 3);
    CHECK_EQ_INT(g->nw, 3);
    CHECK_EQ_INT(g->w[0].sample->sample_index, 5);
    CHECK(find(g, "kernelB") != NULL && find(g, "kernelB")->windows == 3);
    free(g);
    free(m);
    wl_session_close(s);
}

/* Exports to dir/<name>.{pftrace,json}; 0 or -1. */
static int export_both(const char *sess, const char *dir, const char *name, wl_export_stats *sp, wl_export_stats *sj)
{
    char err[512], pf[300], js[300];
    snprintf(pf, sizeof pf, "%s/%s.pftrace", dir, name);
    snprintf(js, sizeof js, "%s/%s.json", dir, name);
    wl_session *s = wl_session_open(sess, err, sizeof err);
    if (!s)
        return -1;
    FILE *f = fopen(pf, "wb");
    int rc = f ? wl_export_perfetto(s, f, NULL, sp, err, sizeof err) : -1;
    if (f)
        fclose(f);
    f = fopen(js, "wb");
    rc |= f ? wl_export_chrome_json(s, f, NULL, sj, err, sizeof err) : -1;
    if (f)
        fclose(f);
    wl_session_close(s);
    return rc;
}

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

static void test_exports(const char *dir, const char *sess)
{
    wl_export_stats sp, sj;
    CHECK_EQ_INT(export_both(sess, dir, "pm", &sp, &sj), 0);
    char path[300];
    size_t n;
    snprintf(path, sizeof path, "%s/pm.json", dir);
    uint8_t *js = slurp(path, &n);
    CHECK(js != NULL);
    if (js) {
        /* one counter value per window and metric (the NaN is not drawn) */
        CHECK_EQ_INT(count_str(js, n, "\"ph\":\"C\",\"name\":\"PM SM active\""), 10);
        CHECK_EQ_INT(count_str(js, n, "\"ph\":\"C\",\"name\":\"PM DRAM read\""), 10);
        CHECK_EQ_INT(count_str(js, n, "\"ph\":\"C\",\"name\":\"PM DRAM write\""), 9);
        CHECK_EQ_INT(count_str(js, n, "\"ph\":\"C\",\"name\":\"PM instructions\""), 10);
        /* counters as rates: window 1 read 2000 B in 100 us = 0.02 GB/s; levels as they are */
        CHECK_EQ_INT(count_str(js, n, "\"args\":{\"GB/s\":0.02}"), 1);
        CHECK_EQ_INT(count_str(js, n, "\"args\":{\"instruction/s\":85000}"), 10);
        CHECK_EQ_INT(count_str(js, n, "\"args\":{\"percent\":100}"), 5);
        /* under GPU 0's synthetic process */
        CHECK_EQ_INT(count_str(js, n, "\"name\":\"PM SM active\",\"pid\":268435456,"), 10);
        free(js);
    }
    snprintf(path, sizeof path, "%s/pm.pftrace", dir);
    uint8_t *pf = slurp(path, &n);
    CHECK(pf != NULL);
    if (pf) {
        CHECK_EQ_INT(count_str(pf, n, "PM SM active"), 1); /* one track descriptor */
        CHECK_EQ_INT(count_str(pf, n, "PM DRAM read"), 1);
        CHECK(count_str(pf, n, "GB/s") >= 1);
        free(pf);
    }
    CHECK_EQ_INT(sp.tl.counter_events, sj.tl.counter_events);

    /* a session without PM samples exports the same bytes as before the PM tables existed */
    char plain[300], old[300];
    CHECK_EQ_INT(build(dir, "plain", 0, plain, sizeof plain), 0);
    snprintf(old, sizeof old, "%s/old.wlsession", dir);
    sqlite3 *db;
    CHECK_EQ_INT(sqlite3_open(plain, &db), SQLITE_OK);
    char sql[400];
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", old);
    CHECK_EQ_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    CHECK_EQ_INT(sqlite3_open(old, &db), SQLITE_OK);
    CHECK_EQ_INT(sqlite3_exec(db, "DROP TABLE pm_sample; DROP TABLE pm_metric; DROP TABLE pm_config;", NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(db);
    CHECK_EQ_INT(export_both(plain, dir, "plain", &sp, &sj), 0);
    CHECK_EQ_INT(export_both(old, dir, "old", &sp, &sj), 0);
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/plain.pftrace", dir);
    snprintf(b, sizeof b, "%s/old.pftrace", dir);
    CHECK(same_file(a, b));
    snprintf(a, sizeof a, "%s/plain.json", dir);
    snprintf(b, sizeof b, "%s/old.json", dir);
    CHECK(same_file(a, b));
    wl_session *s = wl_session_open(old, NULL, 0);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_INT(wl_session_has_pm_samples(s), 0);
        wl_pm_metric_row *m;
        CHECK_EQ_INT(wl_session_pm_metrics(s, &m), 0);
        free(m);
        wl_session_close(s);
    }
}

/* Imports a capture of one process made of `body`; returns 0 when it imports. */
static int import_body(const char *dir, const capbuf *body, char *err, size_t n)
{
    char cap[300], sess[300];
    snprintf(cap, sizeof cap, "%s/hostile.wlcap", dir);
    snprintf(sess, sizeof sess, "%s/hostile.wlsession", dir);
    if (cb_write(body, cap))
        return -2;
    wl_session_writer *w = wl_session_writer_create(sess, err, n);
    if (!w)
        return -2;
    wl_import_stats st;
    if (wl_session_writer_import(w, cap, &st, err, n)) {
        wl_session_writer_abort(w);
        return -1;
    }
    return wl_session_writer_finish(w, err, n);
}

static void expect_error(const char *dir, capbuf *b, size_t at, const char *needle)
{
    char err[512] = "", want[80];
    CHECK_EQ_INT(import_body(dir, b, err, sizeof err), -1);
    snprintf(want, sizeof want, "offset %zu", at);
    if (!strstr(err, needle) || !strstr(err, want))
        fprintf(stderr, "  error \"%s\" lacks \"%s\" or \"%s\"\n", err, needle, want);
    CHECK(strstr(err, needle) != NULL && strstr(err, want) != NULL);
    free(b->data);
}

static void test_hostile(const char *dir)
{
    capbuf b;
    wlcap_pm_sample s;
    memset(&s, 0, sizeof s);
    s.start = T0, s.end = T0 + WIN, s.count = 1;
    /* a sample before any definition */
    cb_init(&b, 1, T0);
    size_t at = b.len;
    cb_record(&b, WLCAP_PM_SAMPLE, &s, sizeof s);
    expect_error(dir, &b, at, "before its pm_metric_def");

    /* a definition, then a sample using an index it did not name, or too many values */
    cb_init(&b, 1, T0);
    wlcap_pm_metric_def d = {WIN, 0, 0, cb_string(&b, "dram__bytes_read.sum"), 0, 0, 0};
    cb_record(&b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
    s.count = 2;
    at = b.len;
    cb_record(&b, WLCAP_PM_SAMPLE, &s, sizeof s);
    expect_error(dir, &b, at, "metric index 1 of GPU 0");

    cb_init(&b, 1, T0);
    d.name_str = cb_string(&b, "dram__bytes_read.sum");
    cb_record(&b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
    s.count = WLCAP_PM_CHUNK + 1;
    at = b.len;
    cb_record(&b, WLCAP_PM_SAMPLE, &s, sizeof s);
    expect_error(dir, &b, at, "out of range");

    cb_init(&b, 1, T0);
    s.count = 1, s.first_metric = 70;
    at = b.len;
    cb_record(&b, WLCAP_PM_SAMPLE, &s, sizeof s);
    expect_error(dir, &b, at, "out of range");

    /* a definition with an index past the limit, with an undefined string, without a name */
    cb_init(&b, 1, T0);
    d.metric_index = 64;
    d.name_str = cb_string(&b, "x__y.sum");
    at = b.len;
    cb_record(&b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
    expect_error(dir, &b, at, "metric index 64");

    cb_init(&b, 1, T0);
    d.metric_index = 0;
    d.name_str = 99;
    at = b.len;
    cb_record(&b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
    expect_error(dir, &b, at, "undefined string");

    cb_init(&b, 1, T0);
    d.name_str = 0;
    at = b.len;
    cb_record(&b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
    expect_error(dir, &b, at, "or its name is not valid");

    /* timestamps past INT64_MAX */
    cb_init(&b, 1, T0);
    d.name_str = cb_string(&b, "dram__bytes_read.sum");
    cb_record(&b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
    s.first_metric = 0, s.start = UINT64_MAX;
    at = b.len;
    cb_record(&b, WLCAP_PM_SAMPLE, &s, sizeof s);
    expect_error(dir, &b, at, "timestamps out of range");

    /* more devices than a capture may have */
    cb_init(&b, 1, T0);
    uint32_t name = cb_string(&b, "dram__bytes_read.sum");
    for (uint32_t dev = 0; dev <= 64; dev++) {
        wlcap_pm_metric_def e = {WIN, 0, dev, name, 0, 0, 0};
        at = b.len;
        cb_record(&b, WLCAP_PM_METRIC_DEF, &e, sizeof e);
    }
    expect_error(dir, &b, at, "more than 64 devices");

    /* a short record is the reader's error; a reversed window is stored as an empty one */
    cb_init(&b, 1, T0);
    at = b.len;
    cb_record(&b, WLCAP_PM_SAMPLE, &s, 40);
    expect_error(dir, &b, at, "pm_sample record at offset");

    cb_init(&b, 1, T0);
    d.name_str = cb_string(&b, "dram__bytes_read.sum");
    cb_record(&b, WLCAP_PM_METRIC_DEF, &d, sizeof d);
    s.start = T0 + 10, s.end = T0;
    cb_record(&b, WLCAP_PM_SAMPLE, &s, sizeof s);
    char err[512];
    CHECK_EQ_INT(import_body(dir, &b, err, sizeof err), 0);
    free(b.data);
    char sess[300];
    snprintf(sess, sizeof sess, "%s/hostile.wlsession", dir);
    sqlite3 *db;
    CHECK_EQ_INT(sqlite3_open_v2(sess, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CHECK_EQ_INT(test_sql_int(db, "SELECT count(*) FROM pm_sample WHERE end_ns = start_ns"), 1);
    sqlite3_close(db);
}

static void test_spec(void)
{
    char names[WL_PM_METRICS_MAX][WL_METRIC_NAME_MAX], err[400];
    int preset[WL_PM_METRICS_MAX];
    int n = wl_pm_metrics_expand("default", names, preset, WL_PM_METRICS_MAX, err, sizeof err);
    CHECK_EQ_INT(n, 8);
    CHECK_EQ_STR(names[0], "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
    CHECK_EQ_INT(preset[0], 1);
    /* a name given by the user is not a preset's, even when a preset has it too */
    n = wl_pm_metrics_expand("dram__bytes_read.sum,memory", names, preset, WL_PM_METRICS_MAX, err, sizeof err);
    CHECK_EQ_INT(n, 7);
    CHECK_EQ_INT(preset[0], 0);
    CHECK_EQ_INT(preset[1], 1);
    n = wl_pm_metrics_expand("memory,dram__bytes_read.sum", names, preset, WL_PM_METRICS_MAX, err, sizeof err);
    CHECK_EQ_INT(preset[0], 0);
    CHECK_EQ_INT(wl_pm_metrics_expand("memroy", names, NULL, WL_PM_METRICS_MAX, err, sizeof err), -1);
    CHECK(strstr(err, "did you mean memory?") != NULL);
    CHECK_EQ_INT(wl_pm_metrics_expand("", names, NULL, WL_PM_METRICS_MAX, err, sizeof err), -1);
    CHECK_EQ_INT(wl_pm_metrics_expand("a__b;", names, NULL, WL_PM_METRICS_MAX, err, sizeof err), -1);
    CHECK_EQ_INT(wl_pm_metrics_expand("default,compute", names, NULL, 3, err, sizeof err), -1);
    CHECK(strstr(err, "too many") != NULL);
    CHECK_EQ_INT(wl_pm_metric_additive("dram__bytes_read.sum", 0), 1);
    CHECK_EQ_INT(wl_pm_metric_additive("gr__cycles_active.avg", 0), 1);
    CHECK_EQ_INT(wl_pm_metric_additive("sm__cycles_active.avg.pct_of_peak_sustained_elapsed", 0), 0);
    CHECK_EQ_INT(wl_pm_metric_additive("dram__throughput.avg", -1), 0);
    CHECK_EQ_INT(wl_pm_metric_additive("dram__bytes.sum.per_second", 0), 0);
    CHECK_EQ_INT(wl_pm_metric_additive("dram__bytes_read.sum", 1), 0);
    CHECK_EQ_STR(wl_pm_metric_label("pcie__write_bytes.sum"), "PCIe write");
    CHECK_EQ_STR(wl_pm_metric_label("x__y.sum"), "x__y.sum");
}

int main(void)
{
    char dir[] = "/tmp/wl_pm_test_XXXXXX", sess[300];
    CHECK(mkdtemp(dir) != NULL);
    test_spec();
    test_reader();
    CHECK_EQ_INT(build(dir, "pm", 1, sess, sizeof sess), 0);
    test_tables(sess);
    test_attribution(sess);
    test_exports(dir, sess);
    test_hostile(dir);
    if (!getenv("KEEP_TEST_FILES") && !test_failed_) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        (void)!system(cmd);
    }
    return test_report("test_pm_samples");
}
