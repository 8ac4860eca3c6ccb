/* In-kernel buffers on the session timeline without a GPU: a capture with one kernel plus a .wlik
 * side file (as warplens_inkernel_collect writes it) -> session rows placed inside the kernel with
 * the recorded calibration -> lanes under the kernel's stream in the Perfetto and Chrome JSON
 * exports; hostile side files rejected with offsets; failures stored, not fatal. */
#include <stdlib.h>
#include <unistd.h>

#include "analysis/inkernel_decode.h"
#include "analysis/inkernel_session.h"
#include "capfile/inkernel_file.h"
#include "capture_builder.h"
#include "export/session_export.h"
#include "store/inkernel_store.h"
#include "store/session_writer.h"
#include "session_test_util.h"
#include "test.h"

#define REC(ts, bg, ev, type)                                                                      \
    (((uint64_t)(uint32_t)(ts) << 32) | ((uint64_t)(bg) << 12) | ((uint64_t)(ev) << 2) | (type))
#define HDR(ng, nb) (((uint64_t)(ng) << 32) | (uint64_t)(nb))

#define PID 4242u
#define CORR 77u
#define T0 1700000000000000000ull
#define KSTART (T0 + 5000000ull)  /* kernel [start, start + 100 us] */
#define KDUR 100000ull
/* %globaltimer = realtime - OFFSET: the GPU clock runs ~0.56 ms behind, like on the H100 */
#define OFFSET 558018ll
#define G(t) ((uint64_t)((int64_t)(KSTART + (t)) - OFFSET)) /* globaltimer of kernel time t */

static char g_dir[512];

static const char *in_dir(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
    return buf;
}

/* kernels: 0, 1 (a plain launch), or > 1: the kernel nodes 11, 12, ... of one graph launch,
 * 200 us apart, all with correlation id CORR */
static void write_capture(const char *path, int kernels)
{
    capbuf b = {0};
    cb_init(&b, PID, T0);
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = PID;
    p.start_ns = T0;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    p.cmdline_str = cb_string(&b, "./warp_specialised");
    p.record_mask = WL_RECORD_ALL;
    cb_record(&b, WLCAP_PROCESS, &p, sizeof p);
    wlcap_device d;
    memset(&d, 0, sizeof d);
    d.name_str = cb_string(&b, "NVIDIA H100 80GB HBM3");
    d.cc_major = 9, d.sm_count = 132, d.warp_size = 32, d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048, d.max_blocks_per_sm = 32, d.regs_per_sm = 65536, d.regs_per_block = 65536;
    d.smem_per_sm = 233472, d.smem_per_block = 49152, d.smem_per_block_optin = 232448;
    cb_record(&b, WLCAP_DEVICE, &d, sizeof d);
    for (int i = 0; i < kernels; i++) {
        wlcap_kernel k;
        memset(&k, 0, sizeof k);
        const uint64_t at = KSTART + (uint64_t)i * 2 * KDUR;
        k.queued = at - 5000, k.submitted = at - 600, k.start = at, k.end = at + KDUR;
        k.correlation_id = CORR;
        k.graph_node_id = kernels > 1 ? 11u + (uint64_t)i : 0;
        k.graph_id = kernels > 1 ? 3 : 0;
        k.stream_id = 7;
        k.grid_x = 2, k.grid_y = k.grid_z = 1, k.block_x = 256, k.block_y = k.block_z = 1;
        k.registers_per_thread = 32;
        k.name_str = cb_string(&b, "_Z11warp_kernelPf");
        k.carveout_requested = 0xff;
        cb_record(&b, WLCAP_KERNEL, &k, sizeof k);
    }
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = KSTART + 10 * KDUR;
    e.reason = WLCAP_END_EXIT;
    cb_record(&b, WLCAP_END, &e, sizeof e);
    CHECK(cb_write(&b, path) == 0);
    free(b.data);
}

/* 2 blocks x 2 groups (producer, consumer); slot stride 4; each lane: load [10, 40] us around a
 * nested wait [15, 20] us, then an instant at 50 us, then finalize. */
static size_t build_words_at(uint64_t *w, size_t cap, uint64_t at)
{
    const size_t lanes = 4, per_lane = 6;
    memset(w, 0, cap * sizeof *w);
    w[0] = HDR(2, 2);
    for (uint32_t lane = 0; lane < lanes; lane++) {
        uint64_t shift = at + lane * 1000; /* ns: each lane a little later */
        uint64_t recs[6] = {REC(G(10000 + shift), lane, 0, WL_IK_BEGIN),  REC(G(15000 + shift), lane, 1, WL_IK_BEGIN),
                            REC(G(20000 + shift), lane, 1, WL_IK_END),    REC(G(40000 + shift), lane, 0, WL_IK_END),
                            REC(G(50000 + shift), lane, 2, WL_IK_INSTANT), REC(G(60000 + shift), lane, 0, WL_IK_FINALIZE)};
        for (size_t i = 0; i < per_lane; i++)
            w[1 + i * lanes + lane] = recs[i];
    }
    return 1 + lanes * per_lane;
}

static size_t build_words(uint64_t *w, size_t cap) { return build_words_at(w, cap, 0); }

static int write_wlik(const char *path, const uint64_t *w, size_t n, int calibrated, uint32_t corr)
{
    wlik_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, WLIK_MAGIC, WLIK_MAGIC_LEN);
    h.version = WLIK_VERSION;
    h.header_size = sizeof h;
    h.pid = PID;
    h.correlation_id = corr;
    h.n_words = n;
    h.stride = 4;
    h.calibration = calibrated ? WLIK_CALIB_OK : WLIK_CALIB_NONE;
    h.realtime_minus_globaltimer_ns = OFFSET;
    h.calibration_uncertainty_ns = 900;
    h.counters_valid = 1;
    const char *ev = "load,wait,tick", *gr = "producer,consumer";
    h.events_len = (uint32_t)strlen(ev);
    h.groups_len = (uint32_t)strlen(gr);
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    int rc = wlik_write_header(fp, &h, ev, gr);
    if (rc == 0 && fwrite(w, 8, n, fp) != n)
        rc = -1;
    return fclose(fp) || rc ? -1 : 0;
}

static int build_session(const char *session, const char *cap, const char *const *iks, int n, wl_iks_buffer *rows,
                         char *err, size_t err_size)
{
    wl_session_writer *w = wl_session_writer_create(session, err, err_size);
    if (!w)
        return -1;
    wl_import_stats st;
    if (wl_session_writer_import(w, cap, &st, err, err_size) != 0) {
        wl_session_writer_abort(w);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (wl_inkernel_import_file(w, iks[i], &rows[i], err, err_size) != 0) {
            wl_session_writer_abort(w);
            return -1;
        }
    return wl_session_writer_finish(w, err, err_size);
}

typedef struct ev_check {
    uint64_t lo, hi;
    int n, slices, instants, outside;
    uint64_t first;
} ev_check;

static int on_ev(const wl_iks_event *e, void *arg)
{
    ev_check *c = arg;
    c->n++;
    c->slices += e->kind == WL_IKS_SLICE;
    c->instants += e->kind == WL_IKS_INSTANT;
    uint64_t end = e->start_ns + (e->kind == WL_IKS_SLICE ? e->dur_ns : 0);
    if (e->start_ns < c->first)
        c->first = e->start_ns;
    if (e->start_ns < c->lo || end > c->hi)
        c->outside++;
    return 0;
}

static void test_placed_and_exported(void)
{
    char cap[600], ik[600], ik2[600], sess[600], err[512];
    write_capture(in_dir("p.wlcap", cap, sizeof cap), 1);
    uint64_t w[64];
    size_t n = build_words(w, 64);
    CHECK(write_wlik(in_dir("4242.77.wlik", ik, sizeof ik), w, n, 1, CORR) == 0);
    /* a buffer whose launch is not in the capture: stored with an error, no events */
    CHECK(write_wlik(in_dir("4242.99.wlik", ik2, sizeof ik2), w, n, 1, 99) == 0);
    const char *iks[2] = {ik, ik2};
    wl_iks_buffer rows[2];
    int rc = build_session(in_dir("s.wlsession", sess, sizeof sess), cap, iks, 2, rows, err, sizeof err);
    CHECK_EQ_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK_EQ_STR(rows[0].placement, "calibrated");
    CHECK_EQ_STR(rows[0].error, "");
    CHECK_EQ_INT(rows[0].slices, 8);
    CHECK_EQ_INT(rows[0].instants, 4);
    CHECK_EQ_INT(rows[0].num_blocks, 2);
    CHECK_EQ_INT(rows[0].num_groups, 2);
    CHECK(rows[0].kernel_id > 0);
    CHECK(rows[1].error[0] != 0);
    CHECK_EQ_STR(rows[1].placement, "none");

    wl_session *s = wl_session_open(sess, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_iks_buffer *bufs = NULL;
    size_t nb = 0;
    CHECK_EQ_INT(wl_session_inkernel_buffers(s, &bufs, &nb), 0);
    CHECK_EQ_INT(nb, 2);
    const wl_iks_buffer *b = NULL;
    for (size_t i = 0; i < nb; i++)
        if (bufs[i].correlation_id == CORR)
            b = &bufs[i];
    CHECK(b != NULL);
    if (b) {
        CHECK_EQ_INT(b->stream_id, 7);
        CHECK_EQ_INT(b->kernel_start_ns, KSTART);
        CHECK_EQ_INT(b->kernel_end_ns, KSTART + KDUR);
        CHECK_EQ_INT(b->calibration_offset_ns, OFFSET);
        ev_check c = {KSTART, KSTART + KDUR, 0, 0, 0, 0, UINT64_MAX};
        CHECK_EQ_INT(wl_session_inkernel_each_event(s, b->id, on_ev, &c), 12);
        CHECK_EQ_INT(c.slices, 8);
        CHECK_EQ_INT(c.instants, 4);
        CHECK_EQ_INT(c.outside, 0);
        /* the calibration maps %globaltimer back to the kernel's clock exactly: the first region
         * starts 10 us into the kernel, as written */
        CHECK_EQ_INT(c.first, KSTART + 10000);
        CHECK_EQ_INT(b->uncertainty_ns, 900);
    }
    free(bufs);

    /* both exports carry the 12 in-kernel slices on 4 lanes, nothing dropped */
    wl_export_stats pst, jst;
    char pf[600], js[600];
    FILE *fp = fopen(in_dir("s.pftrace", pf, sizeof pf), "wb");
    CHECK(fp && wl_export_perfetto(s, fp, NULL, &pst, err, sizeof err) == 0);
    if (fp)
        fclose(fp);
    fp = fopen(in_dir("s.json", js, sizeof js), "wb");
    CHECK(fp && wl_export_chrome_json(s, fp, NULL, &jst, err, sizeof err) == 0);
    if (fp)
        fclose(fp);
    CHECK_EQ_INT(pst.tl.slices, jst.tl.slices);
    CHECK_EQ_INT(pst.tl.slices, 1 + 12); /* the kernel and the in-kernel slices */
    CHECK_EQ_INT(pst.tl.slices_dropped, 0);
    /* lanes named after the kernel, block and group, with the event names */
    char cmd[2200];
    snprintf(cmd, sizeof cmd,
             "grep -q 'warp_kernel #77 · block 1 · consumer' '%s' && grep -q '\"name\":\"wait\"' '%s' && "
             "grep -q 'block 0 · producer' '%s'",
             js, js, pf);
    CHECK_EQ_INT(system(cmd), 0);
    /* with a cap of 3 lanes the 4th lane's 3 events are counted as dropped */
    wl_tl_options o = {.inkernel_max_lanes = 3};
    fp = fopen(pf, "wb");
    CHECK(fp && wl_export_perfetto(s, fp, &o, &pst, err, sizeof err) == 0);
    if (fp)
        fclose(fp);
    CHECK_EQ_INT(pst.tl.slices, 1 + 9);
    CHECK_EQ_INT(pst.tl.slices_dropped, 3);
    wl_session_close(s);
}

static void test_window_placement_without_calibration(void)
{
    char cap[600], ik[600], sess[600], err[512];
    write_capture(in_dir("w.wlcap", cap, sizeof cap), 1);
    uint64_t w[64];
    size_t n = build_words(w, 64);
    CHECK(write_wlik(in_dir("w.wlik", ik, sizeof ik), w, n, 0, CORR) == 0);
    const char *iks[1] = {ik};
    wl_iks_buffer row;
    CHECK_EQ_INT(build_session(in_dir("w.wlsession", sess, sizeof sess), cap, iks, 1, &row, err, sizeof err), 0);
    CHECK_EQ_STR(row.placement, "window");
    /* events span [10, 63] us of a 100 us kernel: the window leaves 47 us of freedom, half is the
     * uncertainty */
    CHECK(row.uncertainty_ns > 20000 && row.uncertainty_ns < 30000);
}

/* A graph launch (3 kernels under one correlation id) with the buffer registered for node 12, the
 * calibration from CUPTI's records taken 10 s after the kernel, with a drift of 100 ns/s: the
 * lanes go under the second kernel, placed with the offset interpolated back to it. */
static void test_graph_node_and_drift(void)
{
    char cap[600], ik[600], sess[600], err[512];
    write_capture(in_dir("g.wlcap", cap, sizeof cap), 3);
    uint64_t w[64];
    size_t n = build_words_at(w, 64, 2 * KDUR);
    CHECK(write_wlik(in_dir("g.wlik", ik, sizeof ik), w, n, 1, CORR) == 0);
    /* patch the header: CUPTI calibration, drift, graph node */
    FILE *fp = fopen(ik, "r+b");
    wlik_header h;
    CHECK(fp && fread(&h, sizeof h, 1, fp) == 1);
    h.calibration = WLIK_CALIB_CUPTI;
    h.calibration_samples = 48;
    h.calibration_at_ns = KSTART + 2 * KDUR + 10000000000ull;
    h.drift_ppb = 100;
    h.realtime_minus_globaltimer_ns = OFFSET + 1000; /* +100 ns/s x 10 s */
    h.calibration_uncertainty_ns = 150;
    h.graph_launch = WLIK_GRAPH_LAUNCH;
    h.graph_node_id = 12;
    CHECK(fp && fseek(fp, 0, SEEK_SET) == 0 && fwrite(&h, sizeof h, 1, fp) == 1);
    if (fp)
        fclose(fp);
    const char *iks[1] = {ik};
    wl_iks_buffer row;
    CHECK_EQ_INT(build_session(in_dir("g.wlsession", sess, sizeof sess), cap, iks, 1, &row, err, sizeof err), 0);
    CHECK_EQ_STR(row.error, "");
    CHECK_EQ_STR(row.placement, "calibrated");
    CHECK_EQ_INT(row.clamp_ns, 0);
    CHECK_EQ_INT(row.calibration_offset_ns, OFFSET);
    CHECK_EQ_INT(row.uncertainty_ns, 150);
    wl_session *s = wl_session_open(sess, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_iks_buffer *b = NULL;
    size_t nb = 0;
    CHECK(wl_session_inkernel_buffers(s, &b, &nb) == 0 && nb == 1);
    if (nb == 1) {
        CHECK_EQ_INT(b[0].kernel_start_ns, KSTART + 2 * KDUR); /* node 12, not the launch's first kernel */
        ev_check c = {b[0].kernel_start_ns, b[0].kernel_end_ns, 0, 0, 0, 0, UINT64_MAX};
        wl_session_inkernel_each_event(s, b[0].id, on_ev, &c);
        CHECK_EQ_INT(c.slices, 8);
        CHECK_EQ_INT(c.outside, 0);
        CHECK_EQ_INT(c.first, KSTART + 2 * KDUR + 10000); /* exactly where the lane wrote it */
    }
    free(b);
    wl_session_close(s);
    /* the node is not in that launch: stored with an error that names it, no events */
    h.graph_node_id = 99;
    fp = fopen(ik, "r+b");
    CHECK(fp && fwrite(&h, sizeof h, 1, fp) == 1);
    if (fp)
        fclose(fp);
    unlink(sess);
    CHECK_EQ_INT(build_session(sess, cap, iks, 1, &row, err, sizeof err), 0);
    CHECK(strstr(row.error, "graph node 99") != NULL);
    CHECK_EQ_STR(row.placement, "none");
}

static void test_hostile_side_files(void)
{
    uint64_t w[64];
    size_t n = build_words(w, 64);
    char path[600], err[512];
    CHECK(write_wlik(in_dir("h.wlik", path, sizeof path), w, n, 1, CORR) == 0);
    FILE *fp = fopen(path, "rb");
    unsigned char img[2048];
    size_t size = fp ? fread(img, 1, sizeof img, fp) : 0;
    if (fp)
        fclose(fp);
    wlik_file f;
    CHECK_EQ_INT(wlik_parse(img, size, &f, err, sizeof err), 0);
    CHECK_EQ_INT(f.n_words, n);
    CHECK_EQ_STR(f.events, "load,wait,tick");
    wlik_file_free(&f);
    /* truncated: in the header, in the names, in the words */
    CHECK_EQ_INT(wlik_parse(img, 100, &f, err, sizeof err), -1);
    CHECK(strstr(err, "offset 100") != NULL);
    CHECK_EQ_INT(wlik_parse(img, 140, &f, err, sizeof err), -1);
    CHECK_EQ_INT(wlik_parse(img, size - 4, &f, err, sizeof err), -1);
    CHECK(strstr(err, "truncated") != NULL);
    unsigned char bad[2048];
    memcpy(bad, img, size);
    bad[0] = 'X';
    CHECK_EQ_INT(wlik_parse(bad, size, &f, err, sizeof err), -1);
    CHECK(strstr(err, "offset 0") != NULL);
    memcpy(bad, img, size);
    uint32_t huge = 0x7fffffff;
    memcpy(bad + offsetof(wlik_header, events_len), &huge, 4);
    CHECK_EQ_INT(wlik_parse(bad, size, &f, err, sizeof err), -1);
    CHECK(strstr(err, "offset 92") != NULL);
    memcpy(bad, img, size);
    uint64_t words = 1ull << 40;
    memcpy(bad + offsetof(wlik_header, n_words), &words, 8);
    CHECK_EQ_INT(wlik_parse(bad, size, &f, err, sizeof err), -1);
    /* every single-byte mutation of the header is either parsed or rejected, never crashes */
    int ok = 0, rejected = 0;
    for (size_t i = 0; i < sizeof(wlik_header); i++)
        for (int v = 0; v < 4; v++) {
            memcpy(bad, img, size);
            bad[i] = (unsigned char)(v == 0 ? 0 : v == 1 ? 0xff : bad[i] ^ (1u << (i % 8)));
            if (wlik_parse(bad, size, &f, err, sizeof err) == 0) {
                ok++;
                wlik_file_free(&f);
            } else {
                rejected++;
            }
        }
    CHECK(ok + rejected == 4 * (int)sizeof(wlik_header));
    CHECK(rejected > 0);

    /* an undecodable buffer (bad header word) is stored with the decoder's error, not fatal */
    char cap[600], ik[600], sess[600];
    write_capture(in_dir("u.wlcap", cap, sizeof cap), 1);
    w[0] = HDR(0, 2); /* zero groups */
    CHECK(write_wlik(in_dir("u.wlik", ik, sizeof ik), w, n, 1, CORR) == 0);
    const char *iks[1] = {ik};
    wl_iks_buffer row;
    CHECK_EQ_INT(build_session(in_dir("u.wlsession", sess, sizeof sess), cap, iks, 1, &row, err, sizeof err), 0);
    CHECK(strstr(row.error, "undecodable") != NULL && strstr(row.error, "word 0") != NULL);
}

static void test_old_session_has_no_buffers(void)
{
    char path[600];
    wl_session *s = test_open_data_session("demo-h100.wlsession", path, sizeof path);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_iks_buffer *b = NULL;
    size_t n = 7;
    CHECK_EQ_INT(wl_session_inkernel_buffers(s, &b, &n), 0);
    CHECK_EQ_INT(n, 0);
    free(b);
    wl_session_close(s);
}

int main(void)
{
    const char *base = getenv("WARPLENS_BUILD_DIR");
    snprintf(g_dir, sizeof g_dir, "%s/test_inkernel_session.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_placed_and_exported();
    test_window_placement_without_calibration();
    test_graph_node_and_drift();
    test_hostile_side_files();
    test_old_session_has_no_buffers();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (!test_failed_)
        (void)!system(cmd);
    return test_report("inkernel_session");
}
