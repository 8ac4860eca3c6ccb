/* CPU tests of the explicit timers (src/timer, include/warplens/timer.h). The timer sources are
 * compiled into this test (#include) so it can drive the CUDA backend through a fake driver table
 * (events that complete when the test says so) and read internal counters; tests link warplens_core
 * only, and libwarplens.so itself is exercised end to end by tests/cli/test_timer_cli.sh.
 * Covered: verbosity none creates nothing, categories, printf names and truncation, pending events
 * reported by collect and the summary, pool reuse (no event created after warm-up), end without
 * begin, stale ids, host-timed fallback (no driver, no context), overflow, summary text at each
 * verbosity and per category, the session side file, and concurrent use from several threads. */
#include "../src/timer/timer_core.c"
#include "../src/timer/timer_backend_cuda.c"
#include "../src/timer/timer_output.c"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

/* ---- fake driver: an event completes when recorded unless g_hold; time advances 1 ms a record -- */
enum { FAKE_MAX_EV = 4096 };
typedef struct fake_ev {
    int recorded, complete, broken;
    double t_ms;
} fake_ev;
static fake_ev g_ev[FAKE_MAX_EV];
static int g_n_ev, g_hold, g_no_ctx;
static double g_clock_ms;
static int g_ctx_token;
static pthread_mutex_t g_fake_mu = PTHREAD_MUTEX_INITIALIZER;

static int f_init(unsigned flags) { return (int)flags; }
static int f_ctx_get(void **ctx)
{
    *ctx = g_no_ctx ? NULL : &g_ctx_token;
    return 0;
}
static int f_stream_ctx(void *s, void **ctx)
{
    (void)s;
    *ctx = NULL;
    return 201;
}
static int f_push(void *ctx) { return ctx == &g_ctx_token ? 0 : 201; }
static int f_pop(void **ctx)
{
    *ctx = &g_ctx_token;
    return 0;
}
static int f_create(void **ev, unsigned flags)
{
    (void)flags;
    pthread_mutex_lock(&g_fake_mu);
    int ok = g_n_ev < FAKE_MAX_EV;
    if (ok)
        *ev = &g_ev[g_n_ev++];
    pthread_mutex_unlock(&g_fake_mu);
    return ok ? 0 : 2;
}
static int f_record(void *ev, void *stream)
{
    (void)stream;
    fake_ev *e = ev;
    pthread_mutex_lock(&g_fake_mu);
    g_clock_ms += 1.0;
    e->recorded = 1;
    e->complete = !g_hold;
    e->t_ms = g_clock_ms;
    pthread_mutex_unlock(&g_fake_mu);
    return 0;
}
static int f_query(void *ev)
{
    fake_ev *e = ev;
    pthread_mutex_lock(&g_fake_mu);
    int r = e->broken ? 700 : e->complete ? 0 : 600;
    pthread_mutex_unlock(&g_fake_mu);
    return r;
}
static int f_elapsed(float *ms, void *a, void *b)
{
    fake_ev *x = a, *y = b;
    if (!x->complete || !y->complete)
        return 600;
    *ms = (float)(y->t_ms - x->t_ms);
    return 0;
}
static int f_destroy(void *ev)
{
    (void)ev;
    return 0;
}
static void complete_all(void)
{
    pthread_mutex_lock(&g_fake_mu);
    for (int i = 0; i < g_n_ev; i++)
        if (g_ev[i].recorded)
            g_ev[i].complete = 1;
    pthread_mutex_unlock(&g_fake_mu);
}

/* Prints the summary into a string (static buffer). */
static const char *summary(int category)
{
    static char buf[1 << 16];
    FILE *f = tmpfile();
    wl_timer_print(f, category);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Runs fn with stderr captured; returns what it printed (static buffer). */
static const char *stderr_of(void (*fn)(void))
{
    static char buf[4096];
    fflush(stderr);
    FILE *f = tmpfile();
    int saved = dup(2);
    dup2(fileno(f), 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int g_rc;
static void end_without_begin(void) { g_rc = wl_timer_gpu_end(WL_TIMER_RUNTIME, NULL, "never_begun_%d", 7); }

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 200; i++) {
        wl_timer_gpu_begin(WL_TIMER_RUNTIME, NULL, "t%ld_op%d", id, i);
        wl_timer_host_begin(WL_TIMER_COMPILE, "t%ld_host%d", id, i);
        wl_timer_host_end(WL_TIMER_COMPILE, "t%ld_host%d", id, i);
        wl_timer_gpu_end(WL_TIMER_RUNTIME, NULL, "t%ld_op%d", id, i);
        if (i % 50 == 0)
            wl_timer_collect();
    }
    return NULL;
}

int main(void)
{
    wl_timer_stats st;
    /* verbosity none: every call returns 0, nothing is loaded, allocated or created */
    wl_timer_set_verbosity(WL_TIMER_NONE);
    CHECK_EQ_INT(wl_timer_gpu_begin(WL_TIMER_RUNTIME, NULL, "k%d", 1), 0);
    CHECK_EQ_INT(wl_timer_gpu_end(WL_TIMER_RUNTIME, NULL, "k%d", 1), 0);
    CHECK_EQ_INT(wl_timer_span_begin(WL_TIMER_RUNTIME, NULL, "s"), 0);
    CHECK_EQ_INT(wl_timer_host_begin(WL_TIMER_RUNTIME, "h"), 0);
    CHECK_EQ_INT(wl_timer_host_end(WL_TIMER_RUNTIME, "nothing-open"), 0);
    CHECK_EQ_INT(wl_timer_end_id(0), 0);
    CHECK_EQ_INT(wl_timer_collect(), 0);
    CHECK_EQ_STR(summary(-1), "");
    wl_timer_get_stats(&st);
    CHECK_EQ_INT(st.intervals, 0);
    CHECK_EQ_INT(st.events_created, 0);
    CHECK_EQ_INT(st.backend, WL_TB_NONE);
    CHECK(wl_timer_table_.iv == NULL);

    /* the CUDA backend on the fake driver */
    wl_cu_fns fns = {f_init, f_ctx_get, f_stream_ctx, f_push, f_pop, f_create, f_record, f_query, f_elapsed, f_destroy};
    wl_tb_cuda_use(&fns);
    wl_timer_set_verbosity(WL_TIMER_DEFAULT);

    /* categories */
    int solver = wl_timer_category_register("solver");
    CHECK_EQ_INT(solver, 3);
    CHECK_EQ_INT(wl_timer_category_register("solver"), 3);
    CHECK_EQ_STR(wl_timer_category_name(WL_TIMER_CODEGEN), "codegen");
    CHECK_EQ_STR(wl_timer_category_name(solver), "solver");
    CHECK(wl_timer_category_name(99) == NULL);
    CHECK_EQ_INT(wl_timer_category_register(""), WL_TIMER_ERR_ARG);
    CHECK_EQ_INT(wl_timer_gpu_begin(17, NULL, "x"), WL_TIMER_ERR_CATEGORY);

    /* a chunked pipeline, events held back: collect reports them pending, never blocks */
    void *stream = (void *)0x1234;
    g_hold = 1;
    int64_t span = wl_timer_span_begin(WL_TIMER_RUNTIME, stream, "gpu_workload");
    CHECK(span > 0);
    for (int c = 0; c < 4; c++) {
        static const char *const ops[] = {"h2d_transfer_chunk_%d", "kernel_chunk_%d", "d2h_transfer_chunk_%d"};
        for (int o = 0; o < 3; o++) {
            CHECK(wl_timer_gpu_begin(WL_TIMER_RUNTIME, stream, ops[o], c) > 0);
            CHECK_EQ_INT(wl_timer_gpu_end(WL_TIMER_RUNTIME, stream, ops[o], c), 0);
        }
    }
    CHECK_EQ_INT(wl_timer_span_end(WL_TIMER_RUNTIME, stream, "gpu_workload"), 0);
    int64_t solve = wl_timer_host_begin(solver, "solve");
    usleep(3000);
    CHECK_EQ_INT(wl_timer_end_id(solve), 0);
    CHECK_EQ_INT(wl_timer_end_id(solve), WL_TIMER_ERR_NOT_OPEN); /* already ended */
    CHECK_EQ_INT(wl_timer_collect(), 13);
    wl_timer_get_stats(&st);
    CHECK_EQ_INT(st.backend, WL_TB_CUDA);
    CHECK_EQ_INT(st.pending, 13);
    CHECK_EQ_INT(st.done, 1);
    CHECK(strstr(summary(-1), "13 intervals pending: events not complete") != NULL);
    wl_timer_set_verbosity(WL_TIMER_VERBOSE);
    CHECK(strstr(summary(-1), "kernel_chunk_2: pending") != NULL);
    complete_all();
    g_hold = 0;
    CHECK_EQ_INT(wl_timer_collect(), 0);
    wl_timer_get_stats(&st);
    CHECK_EQ_INT(st.done, 14);
    CHECK_EQ_INT(st.events_created, 32);            /* one batch: 1 anchor + 26 interval events */
    CHECK_EQ_INT(st.events_pooled, 31);             /* all back but the anchor */
    wl_timer_interval iv;
    CHECK_EQ_INT(wl_timer_get(0, &iv), 0);
    CHECK_EQ_STR(iv.name, "gpu_workload");
    CHECK_EQ_INT(iv.kind, WL_TIMER_KIND_SPAN);
    CHECK_EQ_INT(iv.duration_ns, 25000000);        /* 25 records after its begin, 1 ms each */
    CHECK(iv.stream == stream && iv.host_timed == 0 && iv.status == WL_TIMER_DONE);
    uint64_t sum = 0;
    for (uint64_t i = 1; i <= 12; i++) {
        CHECK_EQ_INT(wl_timer_get(i, &iv), 0);
        sum += iv.duration_ns;
    }
    CHECK_EQ_INT(sum, 12000000);
    CHECK_EQ_INT(wl_timer_get(4, &iv), 0);
    CHECK_EQ_STR(iv.name, "h2d_transfer_chunk_1");
    CHECK_EQ_INT(wl_timer_get(13, &iv), 0);
    CHECK(iv.kind == WL_TIMER_KIND_HOST && iv.duration_ns >= 3000000 && iv.category == solver);
    CHECK_EQ_INT(wl_timer_get(14, &iv), WL_TIMER_ERR_ARG);

    /* summary text at each verbosity, and one category */
    wl_timer_set_verbosity(WL_TIMER_DEFAULT);
    const char *s = summary(-1);
    CHECK(strstr(s, "warplens timers (CUDA events):") != NULL);
    CHECK(strstr(s, "  runtime: gpu 12.000 ms (12 intervals), host 0.000 ms (0 intervals)") != NULL);
    CHECK(strstr(s, "    span gpu_workload: 25.000 ms") != NULL);
    CHECK(strstr(s, "  solver: gpu 0.000 ms (0 intervals), host ") != NULL);
    CHECK(strstr(s, "kernel_chunk_0") == NULL);
    CHECK(strstr(s, "codegen") == NULL); /* empty categories are left out */
    wl_timer_set_verbosity(WL_TIMER_VERBOSE);
    s = summary(-1);
    CHECK(strstr(s, "    gpu  kernel_chunk_0: 1.000 ms\n") != NULL);
    CHECK(strstr(s, "    host solve: ") != NULL);
    CHECK(strstr(s, "stream") == NULL);
    wl_timer_set_verbosity(WL_TIMER_DEBUG);
    s = summary(-1);
    CHECK(strstr(s, "kernel_chunk_3: 1.000 ms | stream 0x1234 tid ") != NULL);
    CHECK(strstr(s, " events\n") != NULL && strstr(s, " wall clock\n") != NULL);
    wl_timer_set_verbosity(WL_TIMER_DEFAULT);
    s = summary(solver);
    CHECK(strstr(s, "solver:") != NULL && strstr(s, "runtime") == NULL);
    CHECK(strstr(summary(42), "no category 42") != NULL);

    /* a second round reuses the pooled events: nothing is created on the hot path */
    wl_timer_reset();
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 10; c++) {
            wl_timer_gpu_begin(WL_TIMER_RUNTIME, stream, "k%d", c);
            wl_timer_gpu_end(WL_TIMER_RUNTIME, stream, "k%d", c);
        }
        CHECK_EQ_INT(wl_timer_collect(), 0);
    }
    wl_timer_get_stats(&st);
    CHECK_EQ_INT(st.events_created, 32);
    CHECK_EQ_INT(st.done, 30);

    /* errors: end without begin (code + message), stale id, failing event */
    s = stderr_of(end_without_begin);
    CHECK_EQ_INT(g_rc, WL_TIMER_ERR_NOT_OPEN);
    CHECK(strstr(s, "end of 'never_begun_7' (gpu, category runtime) without a matching begin") != NULL);
    CHECK_EQ_INT(wl_timer_host_end(WL_TIMER_RUNTIME, "k1"), WL_TIMER_ERR_NOT_OPEN); /* k1 was gpu */
    int64_t old = wl_timer_host_begin(WL_TIMER_RUNTIME, "old");
    wl_timer_reset();
    CHECK_EQ_INT(wl_timer_end_id(old), WL_TIMER_ERR_NOT_OPEN);
    CHECK_EQ_INT(wl_timer_end_id(-3), WL_TIMER_ERR_ARG);
    CHECK(strstr(wl_timer_strerror(WL_TIMER_ERR_NOT_OPEN), "without") != NULL);
    wl_timer_gpu_begin(WL_TIMER_RUNTIME, stream, "broken");
    wl_timer_gpu_end(WL_TIMER_RUNTIME, stream, "broken");
    fake_ev *broken = wl_timer_table_.iv[0].ev_end.ev;
    broken->broken = 1;
    CHECK_EQ_INT(wl_timer_collect(), 0);
    wl_timer_get_stats(&st);
    CHECK_EQ_INT(st.failed, 1);
    broken->broken = 0;
    CHECK(strstr(summary(-1), "1 interval failed") != NULL);

    /* an interval begun and never ended is reported open; names are truncated to 95 bytes */
    wl_timer_reset();
    char longname[200];
    memset(longname, 'n', sizeof longname - 1);
    longname[199] = 0;
    wl_timer_host_begin(WL_TIMER_RUNTIME, "%s", longname);
    CHECK_EQ_INT(wl_timer_get(0, &iv), 0);
    CHECK_EQ_INT(strlen(iv.name), WL_TIMER_NAME_MAX - 1);
    CHECK(strstr(summary(-1), "1 interval still open") != NULL);

    /* no context current (and none from the stream): host-timed, marked */
    wl_timer_reset();
    g_no_ctx = 1;
    wl_timer_gpu_begin(WL_TIMER_RUNTIME, stream, "noctx");
    CHECK_EQ_INT(wl_timer_gpu_end(WL_TIMER_RUNTIME, stream, "noctx"), 0);
    g_no_ctx = 0;
    CHECK_EQ_INT(wl_timer_get(0, &iv), 0);
    CHECK(iv.host_timed == 1 && iv.status == WL_TIMER_DONE);

    /* the no-GPU backend: GPU intervals timed on the host and marked so */
    wl_timer_reset();
    wl_timer_table_.backend = WL_TB_HOST;
    wl_timer_span_begin(WL_TIMER_RUNTIME, NULL, "gpu_workload");
    wl_timer_gpu_begin(WL_TIMER_RUNTIME, NULL, "kernel_chunk_%d", 0);
    usleep(2000);
    wl_timer_gpu_end(WL_TIMER_RUNTIME, NULL, "kernel_chunk_%d", 0);
    wl_timer_span_end(WL_TIMER_RUNTIME, NULL, "gpu_workload");
    CHECK_EQ_INT(wl_timer_collect(), 0);
    CHECK_EQ_INT(wl_timer_get(1, &iv), 0);
    CHECK(iv.host_timed == 1 && iv.duration_ns >= 2000000 && iv.status == WL_TIMER_DONE);
    s = summary(-1);
    CHECK(strstr(s, "warplens timers (host timestamps: no CUDA driver or device):") != NULL);
    CHECK(strstr(s, "(1 interval, host-timed)") != NULL);
    CHECK(strstr(s, "span gpu_workload: ") != NULL && strstr(s, "[host-timed]") != NULL);

    /* overflow: bounded table, counted and reported; capacity only changes while empty */
    CHECK_EQ_INT(wl_timer_set_capacity(4), WL_TIMER_ERR_BUSY);
    wl_timer_reset();
    CHECK_EQ_INT(wl_timer_set_capacity(0), WL_TIMER_ERR_ARG);
    CHECK_EQ_INT(wl_timer_set_capacity(4), 0);
    for (int i = 0; i < 6; i++) {
        int64_t id = wl_timer_host_begin(WL_TIMER_RUNTIME, "o%d", i);
        CHECK(i < 4 ? id > 0 : id == WL_TIMER_ERR_FULL);
        wl_timer_host_end(WL_TIMER_RUNTIME, "o%d", i);
    }
    wl_timer_get_stats(&st);
    CHECK_EQ_INT(st.overflow, 2);
    CHECK_EQ_INT(st.intervals, 4);
    CHECK_EQ_INT(st.capacity, 4);
    CHECK(strstr(summary(-1), "2 intervals dropped: table full (capacity 4)") != NULL);

    /* the session side file, as written under `warplens run` */
    char dir[] = "/tmp/wl_timer_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    setenv("WARPLENS_CAPTURE_DIR", dir, 1);
    wl_timer_reset();
    wl_timer_category_register("tab\there");
    wl_timer_host_begin(solver, "solve\tivp");
    wl_timer_host_end(solver, "solve\tivp");
    wl_timer_host_begin(solver, "left_open");
    CHECK_EQ_INT(wl_timer_write_session_file(), 0);
    char path[256], line[512];
    snprintf(path, sizeof path, "%s/%d.wltimers", dir, (int)getpid());
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    int n_iv = 0, saw_end = 0, saw_cat = 0, saw_open = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "interval\t0\thost\t3\tdone\t0\t", 25) && strstr(line, "\tsolve ivp\n"))
            n_iv++;
        saw_open += !strncmp(line, "interval\t1\thost\t3\topen\t", 23);
        saw_cat += !strcmp(line, "category\t4\ttab here\n");
        saw_end += !strcmp(line, "end\t2\n");
    }
    if (f)
        fclose(f);
    CHECK(n_iv == 1 && saw_open == 1 && saw_cat == 1 && saw_end == 1);
    unlink(path);
    rmdir(dir);
    unsetenv("WARPLENS_CAPTURE_DIR");

    /* several threads at once (fake driver, then host backend) */
    for (int b = 0; b < 2; b++) {
        wl_timer_reset();
        wl_timer_set_capacity(8192);
        wl_timer_table_.backend = b ? WL_TB_HOST : WL_TB_CUDA;
        pthread_t th[4];
        for (long i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, worker, (void *)i);
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        CHECK_EQ_INT(wl_timer_collect(), 0);
        wl_timer_get_stats(&st);
        CHECK_EQ_INT(st.intervals, 1600);
        CHECK_EQ_INT(st.done, 1600);
        CHECK_EQ_INT(st.errors, 0);
    }
    wl_timer_reset();
    return test_report("timer");
}
