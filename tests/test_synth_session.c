/* The synthetic session generator (store/session_synth.h) as a test and as a tool for the CLI
 * tests: run without arguments it builds a session and checks what the reader sees against what
 * the generator says it wrote; `test_synth_session --make-session FILE [--kernels N]` writes one
 * for the shell tests (this binary links no CUDA library, unlike the benchmarks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/session.h"
#include "store/session_cursors.h"
#include "store/session_synth.h"
#include "test.h"

static int make(const char *path, uint64_t kernels)
{
    wl_synth_options o;
    wl_synth_defaults(&o);
    o.kernels = kernels;
    o.threads = 4;
    o.streams = 4;
    wl_synth_counts c;
    char err[512];
    if (wl_synth_session(path, &o, &c, err, sizeof err)) {
        fprintf(stderr, "test_synth_session: %s\n", err);
        return 1;
    }
    printf("%s: %llu kernels, %llu API calls, %llu memcpy, %llu memset, %llu NVTX, %llu scopes, %llu flows\n", path,
           (unsigned long long)c.kernels, (unsigned long long)c.api_calls, (unsigned long long)c.memcpys,
           (unsigned long long)c.memsets, (unsigned long long)c.nvtx_ranges, (unsigned long long)c.scopes,
           (unsigned long long)c.flows);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "--make-session")) {
        uint64_t n = 1000;
        if (argc == 5 && !strcmp(argv[3], "--kernels"))
            n = strtoull(argv[4], NULL, 10);
        return make(argv[2], n);
    }
    char dir[] = "/tmp/wl_synth_test_XXXXXX", path[256], err[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/s.wlsession", dir);
    wl_synth_options o;
    wl_synth_defaults(&o);
    o.kernels = 500;
    wl_synth_counts c;
    CHECK_EQ_INT(wl_synth_session(path, &o, &c, err, sizeof err), 0);
    wl_session *s = wl_session_open(path, err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        wl_session_overview ov;
        wl_session_get_overview(s, &ov);
        CHECK_EQ_INT(ov.kernels, c.kernels);
        CHECK_EQ_INT(ov.api_calls, c.api_calls);
        CHECK_EQ_INT(ov.memcpys, c.memcpys);
        CHECK_EQ_INT(ov.memsets, c.memsets);
        CHECK_EQ_INT(ov.nvtx_ranges, c.nvtx_ranges);
        CHECK_EQ_INT(ov.scopes, c.scopes);
        CHECK(ov.complete);
        CHECK_EQ_INT(ov.devices, 1);
        /* the cursors see every row, host rows in (pid, tid, start) order, GPU rows by start */
        wl_session_span sp;
        wl_session_get_span(s, &sp);
        wl_host_cursor *h = wl_host_cursor_open(s, sp.end_ns, err, sizeof err);
        wl_host_item *hi = malloc(sizeof *hi);
        uint64_t n = 0, flows = 0, bad = 0, pt = 0, pp = 0, ps = 0;
        while (h && wl_host_cursor_next(h, hi) > 0) {
            if (n && (hi->pid < pp || (hi->pid == pp && (hi->tid < pt || (hi->tid == pt && hi->start_ns < ps)))))
                bad++;
            pp = hi->pid, pt = hi->tid, ps = hi->start_ns;
            flows += hi->n_flows;
            n++;
        }
        wl_host_cursor_close(h);
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(n, c.api_calls + c.nvtx_ranges + c.scopes);
        CHECK_EQ_INT(flows, c.flows);
        wl_gpu_cursor *g = wl_gpu_cursor_open(s, err, sizeof err);
        wl_gpu_item *gi = malloc(sizeof *gi);
        uint64_t m = 0, gflows = 0, last = 0;
        bad = 0;
        while (g && wl_gpu_cursor_next(g, gi) > 0) {
            bad += gi->start_ns < last;
            last = gi->start_ns;
            gflows += gi->flow != 0;
            m++;
        }
        wl_gpu_cursor_close(g);
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(m, c.kernels + c.memcpys + c.memsets);
        CHECK_EQ_INT(gflows, c.flows);
        CHECK(wl_session_nth_kernel_start(s, 0) <= wl_session_nth_kernel_start(s, 10));
        CHECK(wl_session_nth_kernel_start(s, 1000000) == UINT64_MAX);
        free(hi);
        free(gi);
        wl_session_close(s);
    }
    unlink(path);
    rmdir(dir);
    return test_report("test_synth_session");
}
