/* NVML device samples through the store and the analysis, without a GPU: capture files built in
 * memory (two processes sharing one physical GPU by PCI bus id), imported, then every attribution
 * case checked: no kernel in the window (idle), one (exact), several (shared upper bound), a kernel
 * of another process on the same GPU, a value NVML could not read (NULL), the kernel panel's query,
 * the stats summary, the reader's checks on a short record, and a session without the table. */
#include <stdlib.h>
#include <unistd.h>

#include "analysis/device_samples.h"
#include "capfile/capfile_reader.h"
#include "capture_builder.h"
#include "store/session_writer.h"
#include "session_test_util.h"
#include "test.h"

#define T0 1700000000000000000ull

static void kernel(capbuf *b, uint32_t dev, uint32_t name, uint32_t corr, uint64_t start, uint64_t end)
{
    wlcap_kernel k;
    memset(&k, 0, sizeof k);
    k.device_id = dev, k.start = start, k.end = end, k.correlation_id = corr, k.stream_id = 7, k.name_str = name;
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = 128, k.block_y = k.block_z = 1;
    k.carveout_requested = 0xff;
    cb_record(b, WLCAP_KERNEL, &k, sizeof k);
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

static void sample(capbuf *b, uint32_t dev, uint64_t ws, uint64_t ts, uint32_t util, uint32_t power_mw, uint32_t valid)
{
    wlcap_device_sample s;
    memset(&s, 0, sizeof s);
    s.timestamp = ts, s.window_start = ws, s.device_id = dev, s.valid = valid;
    s.gpu_util_pct = util, s.mem_util_pct = util / 2, s.sm_clock_mhz = 1980, s.mem_clock_mhz = 2619;
    s.power_mw = power_mw, s.temperature_c = 50, s.memory_used_bytes = 1ull << 30, s.energy_mj = ts / 1000000;
    cb_record(b, WLCAP_DEVICE_SAMPLE, &s, sizeof s);
}

static void end(capbuf *b)
{
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = T0 + 10000;
    e.reason = WLCAP_END_EXIT;
    cb_record(b, WLCAP_END, &e, sizeof e);
}

#define ALL 0x7fu

typedef struct got {
    wl_sample_attribution a[16];
    int n;
} got;

static int collect(const wl_sample_attribution *a, void *arg)
{
    got *g = arg;
    if (g->n < 16)
        g->a[g->n++] = *a;
    return 0;
}

int main(void)
{
    char dir[] = "/tmp/wl_samples_test_XXXXXX", c1[256], c2[256], sess[256], err[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(c1, sizeof c1, "%s/1.wlcap", dir);
    snprintf(c2, sizeof c2, "%s/2.wlcap", dir);
    snprintf(sess, sizeof sess, "%s/s.wlsession", dir);

    /* process 100: device 0 at bus 18; kernels k1 alone, k2 and k3 overlapping */
    capbuf b;
    cb_init(&b, 100, T0);
    device(&b, 0, "00000000:18:00.0");
    uint32_t n1 = cb_string(&b, "_Z2k1v"), n2 = cb_string(&b, "_Z2k2v"), n3 = cb_string(&b, "_Z2k3v");
    kernel(&b, 0, n1, 1, T0 + 1000, T0 + 2000);
    kernel(&b, 0, n2, 2, T0 + 3000, T0 + 5000);
    kernel(&b, 0, n3, 3, T0 + 4000, T0 + 4500);
    sample(&b, 0, T0 + 0, T0 + 900, 0, 70000, ALL);            /* idle here; k4 of process 200 below */
    sample(&b, 0, T0 + 900, T0 + 2500, 95, 400000, ALL);       /* k1 alone: exact */
    sample(&b, 0, T0 + 2500, T0 + 6000, 80, 0, ALL & ~WLCAP_SAMPLE_POWER); /* k2 + k3: shared; power unread */
    sample(&b, 0, T0 + 6000, T0 + 8000, 0, 69000, ALL);        /* nothing: idle */
    end(&b);
    CHECK_EQ_INT(cb_write(&b, c1), 0);
    free(b.data);

    /* process 200 sees the same GPU as its device 3 (other CUDA_VISIBLE_DEVICES): its kernel counts */
    cb_init(&b, 200, T0);
    device(&b, 3, "00000000:18:00.0");
    uint32_t n4 = cb_string(&b, "_Z2k4v");
    kernel(&b, 3, n4, 1, T0 + 100, T0 + 300);
    end(&b);
    CHECK_EQ_INT(cb_write(&b, c2), 0);
    free(b.data);

    wl_session_writer *w = wl_session_writer_create(sess, err, sizeof err);
    CHECK(w != NULL);
    if (!w)
        return test_report("test_device_samples");
    wl_import_stats st;
    CHECK_EQ_INT(wl_session_writer_import(w, c1, &st, err, sizeof err), 0);
    CHECK_EQ_INT(wl_session_writer_import(w, c2, &st, err, sizeof err), 0);
    CHECK_EQ_INT(wl_session_writer_finish(w, err, sizeof err), 0);

    wl_session *s = wl_session_open(sess, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return test_report("test_device_samples");
    CHECK_EQ_INT(wl_session_has_device_samples(s), 1);
    got g = {0};
    CHECK_EQ_INT(wl_device_samples_attribute(s, collect, &g), 4);
    CHECK_EQ_INT(g.n, 4);
    /* window 1: process 200's k4 ran on the same physical GPU -> exact, 200 of 900 ns busy */
    CHECK_EQ_INT(g.a[0].kind, WL_SAMPLE_EXACT);
    CHECK_EQ_STR(g.a[0].kernel_name, "k4");
    CHECK_EQ_INT(g.a[0].busy_ns, 200);
    /* window 2: k1 alone */
    CHECK_EQ_INT(g.a[1].kind, WL_SAMPLE_EXACT);
    CHECK_EQ_INT(g.a[1].kernels, 1);
    CHECK_EQ_STR(g.a[1].kernel_name, "k1");
    CHECK_EQ_INT(g.a[1].busy_ns, 1000);
    CHECK_EQ_INT(g.a[1].sample.gpu_util_pct, 95);
    CHECK_EQ_INT(g.a[1].sample.power_mw, 400000);
    /* window 3: k2 and k3 overlap -> shared; busy is their union; k2 overlaps longest */
    CHECK_EQ_INT(g.a[2].kind, WL_SAMPLE_SHARED);
    CHECK_EQ_INT(g.a[2].kernels, 2);
    CHECK_EQ_STR(g.a[2].kernel_name, "k2");
    CHECK_EQ_INT(g.a[2].busy_ns, 2000);
    CHECK_EQ_INT(g.a[2].sample.power_mw, -1); /* unread -> NULL -> -1 */
    CHECK_EQ_STR(wl_sample_attr_name(g.a[2].kind), "shared (upper bound)");
    /* window 4: nothing ran */
    CHECK_EQ_INT(g.a[3].kind, WL_SAMPLE_IDLE);
    CHECK_EQ_INT(g.a[3].kernels, 0);
    CHECK_EQ_INT(g.a[3].kernel_id, -1);

    /* the kernel panel's view: the samples overlapping k2 (id 2: the second kernel imported) */
    got k = {0};
    CHECK_EQ_INT(wl_kernel_device_samples(s, 2, collect, &k), 1);
    CHECK_EQ_INT(k.a[0].kind, WL_SAMPLE_SHARED);
    CHECK_EQ_INT(k.a[0].sample.ts_ns, T0 + 6000);

    wl_device_sample_summary *sum;
    CHECK_EQ_INT(wl_device_sample_summaries(s, &sum), 1);
    CHECK_EQ_INT(sum[0].samples, 4);
    CHECK_EQ_INT(sum[0].exact, 2);
    CHECK_EQ_INT(sum[0].shared, 1);
    CHECK_EQ_INT(sum[0].idle, 1);
    CHECK_EQ_INT(sum[0].gpu_util_max, 95);
    CHECK_EQ_INT((long long)(sum[0].power_max_w * 1000), 400000);
    CHECK_EQ_INT((long long)(sum[0].gpu_util_mean * 4), 175); /* (0 + 95 + 80 + 0) / 4 */
    free(sum);
    wl_session_close(s);

    /* a session from before the table: no samples, no error */
    char data[512];
    s = test_open_data_session("demo-h100.wlsession", data, sizeof data);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_INT(wl_session_has_device_samples(s), 0);
        got none = {0};
        CHECK_EQ_INT(wl_device_samples_attribute(s, collect, &none), 0);
        CHECK_EQ_INT(wl_device_sample_summaries(s, &sum), 0);
        free(sum);
        wl_session_close(s);
    }

    /* the reader: a sample record shorter than its struct fails with its offset; a number reserved
     * for other records (18) is skipped as unknown */
    cb_init(&b, 1, T0);
    unsigned char junk[8] = {0};
    cb_record(&b, 18, junk, sizeof junk);
    size_t at = b.len;
    cb_record(&b, WLCAP_DEVICE_SAMPLE, junk, sizeof junk);
    wlcap_reader r;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(wlcap_reader_open_memory(&r, b.data, b.len), 0);
    uint16_t type;
    const uint8_t *p;
    uint32_t size;
    CHECK_EQ_INT(wlcap_reader_next(&r, &type, &p, &size), -1);
    CHECK_EQ_INT(r.unknown_records, 1);
    char want[64];
    snprintf(want, sizeof want, "device_sample record at offset %zu", at);
    CHECK(strstr(r.error, want) != NULL);
    free(b.data);

    if (!getenv("KEEP_TEST_FILES"))
        unlink(c1), unlink(c2), unlink(sess);
    rmdir(dir);
    return test_report("test_device_samples");
}
