/* Decoder throughput: builds a synthetic in-kernel buffer (default 64 Mi words: 132 blocks x 4
 * groups, nested begin/end pairs and instants, a finalize per lane) and reports records decoded
 * per second on one core, median of 5 runs. Target: >= 400 M records/s (reused output).
 * usage: bench_decode [words] [runs] [--write FILE]  (--write: only write the synthetic buffer, as
 *        raw little-endian words, for bench/bench_decode_python.py) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/inkernel_decode.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: on a shared machine the wall clock also counts the time the scheduler
 * gave other processes; the CPU time is what one core spent on the decode. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t rec(uint32_t ts, uint32_t bg, uint32_t ev, uint32_t type)
{
    return (uint64_t)ts << 32 | bg << 12 | ev << 2 | type;
}

int main(int argc, char **argv)
{
    uint64_t n_words = argc > 1 ? strtoull(argv[1], NULL, 0) : (UINT64_C(64) << 20);
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 101)
        runs = 5;
    const uint32_t nb = 132, ng = 4, lanes = nb * ng;
    const uint64_t per_lane = (n_words - 1) / lanes;
    if (per_lane < 8) {
        fprintf(stderr, "bench_decode: need at least %u words\n", 1 + 8 * lanes);
        return 2;
    }
    uint64_t *w = calloc(n_words, sizeof *w);
    if (!w) {
        fprintf(stderr, "bench_decode: out of memory\n");
        return 2;
    }
    w[0] = (uint64_t)ng << 32 | nb;
    uint32_t seed = 12345;
    /* per lane: repeat [begin 1, begin 2, end 2, instant 3, end 1], then finalize (last slot) */
    static const uint32_t pattern[5][2] = {{1, 0}, {2, 0}, {2, 1}, {3, 2}, {1, 1}};
    for (uint32_t bg = 0; bg < lanes; bg++) {
        uint32_t ts = 0xF0000000u + bg * 97; /* some lanes wrap during the run */
        uint64_t k = 0;
        for (; k + 1 < per_lane; k++) {
            const uint32_t *p = pattern[k % 5];
            if ((k % 5) == 0 && k + 5 >= per_lane)
                break; /* keep begin/end pairs complete */
            seed = seed * 1664525u + 1013904223u;
            ts += 32 + (seed >> 24);
            w[1 + bg + k * lanes] = rec(ts, bg, p[0], p[1]);
        }
        w[1 + bg + k * lanes] = rec(ts + 64, bg, 0, 3);
    }
    if (argc > 4 && strcmp(argv[3], "--write") == 0) {
        FILE *fp = fopen(argv[4], "wb");
        int ok = fp && fwrite(w, 8, n_words, fp) == n_words;
        if (fp && fclose(fp) != 0)
            ok = 0;
        free(w);
        if (!ok)
            fprintf(stderr, "bench_decode: cannot write %s\n", argv[4]);
        return ok ? 0 : 1;
    }
    wl_ik_options opt = {.stride = lanes, .max_records = (uint32_t)per_lane};
    wl_ik_result r;
    wl_ik_error err;
    memset(&r, 0, sizeof r);
    uint64_t records = 0, slices = 0;
    /* cold: fresh output arrays every run (what one `warplens decode` pays, page faults included);
     * warm: the arrays of the previous run are reused (wl_ik_decode_reuse) */
    for (int warm = 0; warm < 2; warm++) {
        double t[101], c[101];
        for (int i = 0; i < runs; i++) {
            if (!warm)
                wl_ik_result_free(&r);
            double t0 = now_s(), c0 = cpu_s();
            if (wl_ik_decode_reuse(w, n_words, &opt, &r, &err)) {
                fprintf(stderr, "bench_decode: %s\n", err.msg);
                return 1;
            }
            t[i] = now_s() - t0;
            c[i] = cpu_s() - c0;
            records = r.counts.records;
            slices = r.counts.slices;
            if (r.counts.unmatched_begins || r.counts.unmatched_ends ||
                r.counts.lanes_finalized != lanes) {
                fprintf(stderr, "bench_decode: synthetic buffer decoded wrongly\n");
                return 1;
            }
        }
        qsort(t, (size_t)runs, sizeof t[0], cmp_double);
        qsort(c, (size_t)runs, sizeof c[0], cmp_double);
        double med = t[runs / 2];
        if (!warm)
            printf("bench_decode: %llu words (%.0f MiB), %u lanes, %llu records, %llu slices\n",
                   (unsigned long long)n_words, (double)n_words * 8 / (1 << 20), lanes,
                   (unsigned long long)records, (unsigned long long)slices);
        printf("bench_decode: %s output: runs %d, median %.3f s (min %.3f, max %.3f): "
               "%.1f M records/s median, %.1f best; CPU time median %.3f s: %.1f M records/s\n",
               warm ? "reused" : "fresh ", runs, med, t[0], t[runs - 1],
               (double)records / med / 1e6, (double)records / t[0] / 1e6, c[runs / 2],
               (double)records / c[runs / 2] / 1e6);
    }
    wl_ik_result_free(&r);
    free(w);
    return 0;
}
