/* The busy-time fold of src/store/gpu_busy.c against the union computed by brute force: random
 * kernels on several devices of two processes, handed over in start order disturbed by up to a
 * few thousand places (the disorder of completion order), with copies and sets on the same and on
 * other devices; then a kernel far out of order, which must be refused rather than counted wrong. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/gpu_busy.h"
#include "test.h"

/* CHECK of test.h (c evaluated once), with the values that failed printed */
#define CHECK_MSG(c, ...)                                                                              \
    do {                                                                                               \
        int ok_ = (c) ? 1 : 0;                                                                         \
        if (!ok_) {                                                                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                              \
            printf(__VA_ARGS__);                                                                       \
            printf("\n");                                                                              \
        }                                                                                              \
        CHECK(ok_);                                                                                    \
    } while (0)

typedef struct iv {
    int64_t pid, dev;
    uint64_t s, e;
} iv;

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void) { return test_rand(&rnd_state); }

static int by_dev_start(const void *x, const void *y)
{
    const iv *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    return (a->s > b->s) - (a->s < b->s);
}

static uint64_t brute(iv *v, size_t n)
{
    qsort(v, n, sizeof *v, by_dev_start);
    uint64_t busy = 0, cs = 0, ce = 0;
    int64_t pid = -1, dev = -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i].pid != pid || v[i].dev != dev || v[i].s > ce) {
            busy += ce - cs;
            pid = v[i].pid, dev = v[i].dev, cs = v[i].s, ce = v[i].e;
        } else if (v[i].e > ce) {
            ce = v[i].e;
        }
    }
    return busy + (ce - cs);
}

static sqlite3 *copies_db(iv *all, size_t *n, int with_copies)
{
    sqlite3 *db;
    sqlite3_open(":memory:", &db);
    sqlite3_exec(db, "CREATE TABLE memcpy(pid, device_id, start_ns, end_ns); CREATE TABLE memset(pid, device_id,"
                     " start_ns, end_ns)", NULL, NULL, NULL);
    sqlite3_stmt *ins[2];
    sqlite3_prepare_v2(db, "INSERT INTO memcpy VALUES (?, ?, ?, ?)", -1, &ins[0], NULL);
    sqlite3_prepare_v2(db, "INSERT INTO memset VALUES (?, ?, ?, ?)", -1, &ins[1], NULL);
    for (int i = 0; with_copies && i < 3000; i++) {
        /* devices 0-2 of pid 10 and 20, and device 7 of pid 20 that runs no kernel */
        iv c = {10 + 10 * (int64_t)(rnd() % 2), (int64_t)(rnd() % 4), 0, 0};
        c.dev = c.dev == 3 ? 7 : c.dev;
        c.s = rnd() % 50000000;
        c.e = c.s + rnd() % 20000;
        sqlite3_stmt *st = ins[rnd() % 2];
        sqlite3_bind_int64(st, 1, c.pid);
        sqlite3_bind_int64(st, 2, c.dev);
        sqlite3_bind_int64(st, 3, (int64_t)c.s);
        sqlite3_bind_int64(st, 4, (int64_t)c.e);
        sqlite3_step(st);
        sqlite3_reset(st);
        all[(*n)++] = c;
    }
    /* rows the busy time leaves out, as the SQL does: no start, an end before the start */
    sqlite3_exec(db, "INSERT INTO memcpy VALUES (10, 0, NULL, 5); INSERT INTO memset VALUES (10, 0, 900, 100)", NULL,
                 NULL, NULL);
    sqlite3_finalize(ins[0]);
    sqlite3_finalize(ins[1]);
    return db;
}

/* Kernels per (pid, device) in start order, then shuffled within blocks of `disorder` rows (no
 * row moves by more than that); the two processes' rows one after the other, as a session holds
 * them. */
static size_t make_kernels(iv *k, size_t n, size_t disorder)
{
    size_t m = 0;
    for (int64_t pid = 10; pid <= 20; pid += 10) {
        uint64_t t[3] = {0, 0, 0};
        size_t first = m;
        for (size_t i = 0; i < n / 2; i++) {
            int64_t dev = (int64_t)(rnd() % 3);
            t[dev] += rnd() % 9000; /* overlapping kernels now and then: streams of one device */
            k[m++] = (iv){pid, dev, t[dev], t[dev] + 100 + rnd() % 12000};
        }
        test_shuffle_blocks(k + first, m - first, sizeof *k, disorder, &rnd_state);
    }
    return m;
}

static void run_case(size_t n, size_t disorder, int with_copies)
{
    iv *k = malloc(n * sizeof *k), *all = malloc((n + 4000) * sizeof *all);
    size_t na = 0;
    sqlite3 *db = copies_db(all, &na, with_copies);
    size_t nk = make_kernels(k, n, disorder);
    wl_busy *b = wl_busy_open(db);
    CHECK_MSG(b != NULL, "open");
    for (size_t i = 0; b && i < nk; i++) {
        wl_busy_kernel(b, k[i].pid, k[i].dev, k[i].s, k[i].e);
        all[na++] = k[i];
    }
    uint64_t got = 1;
    int rc = wl_busy_close(b, &got);
    uint64_t want = brute(all, na);
    CHECK_MSG(rc == 0 && got == want, "n %zu disorder %zu copies %d: busy %llu (rc %d), brute force %llu", n, disorder,
          with_copies, (unsigned long long)got, rc, (unsigned long long)want);
    sqlite3_close(db);
    free(k);
    free(all);
}

/* The same kernels folded in two parts, split at a random row (as two threads read two halves of
 * the table), each keeping its segments: the union of the two equals the brute force. */
static void run_split(size_t n, size_t disorder, int with_copies, size_t keep_max)
{
    iv *k = malloc((n ? n : 1) * sizeof *k), *all = malloc((n + 4000) * sizeof *all);
    size_t na = 0;
    sqlite3 *db = copies_db(all, &na, with_copies);
    size_t nk = make_kernels(k, n, disorder), cut = nk ? rnd() % (nk + 1) : 0;
    wl_busy *b[2] = {wl_busy_open(db), wl_busy_open(db)};
    CHECK_MSG(b[0] && b[1], "open");
    wl_busy_keep(b[0], keep_max);
    wl_busy_keep(b[1], keep_max);
    for (size_t i = 0; b[0] && b[1] && i < nk; i++) {
        wl_busy_kernel(b[i >= cut], k[i].pid, k[i].dev, k[i].s, k[i].e);
        all[na++] = k[i];
    }
    uint64_t got = 1;
    int rc = wl_busy_close_pair(b[0], b[1], &got);
    uint64_t want = brute(all, na);
    if (keep_max < 1000)
        CHECK_MSG(rc == -1 && got == 0, "split n %zu: %zu segments kept at most: refused (rc %d)", n, keep_max, rc);
    else
        CHECK_MSG(rc == 0 && got == want, "split n %zu disorder %zu copies %d cut %zu: busy %llu (rc %d), brute force %llu",
              n, disorder, with_copies, cut, (unsigned long long)got, rc, (unsigned long long)want);
    sqlite3_close(db);
    free(k);
    free(all);
}

int main(void)
{
    for (int i = 0; i < 4; i++) {
        run_split(0, 0, i & 1, 1u << 20);
        run_split(200000, 0, i & 1, 1u << 20);
        run_split(200000, 64, 1, 1u << 20);
        run_split(200000, 4000, i & 1, 1u << 20);
    }
    run_split(200000, 0, 1, 100); /* past the segments' bound */
    run_case(0, 0, 0);
    run_case(0, 0, 1);
    run_case(1, 0, 1);
    run_case(200000, 0, 0);
    run_case(200000, 0, 1);
    run_case(200000, 64, 1);
    run_case(200000, 4000, 1);

    /* a kernel that starts before one the union has already taken: refused, *ns 0 */
    iv all[8000];
    size_t na = 0;
    sqlite3 *db = copies_db(all, &na, 0);
    wl_busy *b = wl_busy_open(db);
    for (uint64_t i = 0; i < 20000; i++)
        wl_busy_kernel(b, 1, 0, 1000 + i * 10, 1005 + i * 10);
    wl_busy_kernel(b, 1, 0, 5, 10);
    uint64_t got = 7;
    CHECK_MSG(wl_busy_close(b, &got) == -1 && got == 0, "far out of order: refused (got %llu)", (unsigned long long)got);
    sqlite3_close(db);

    return test_report("test_gpu_busy");
}
