/* The walk over GPU work in start order (store/session_work.h): read in the kernel table's own
 * order through the reorder window, it must hand over exactly the rows, in exactly the order, that
 * the start-ordered index gives, copies and sets merged in, on a synthetic session larger than
 * the window; stopping early stops it; a table far from start order (its kernels renumbered in
 * reverse) makes it ask for a restart, after which the same handle reads by the index and gives
 * that order again. The calls that wait for the GPU, read beside the walk, come as read in place. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/session.h"
#include "store/session_work.h"
#include "session_test_util.h"
#include "test.h"

typedef struct seen {
    int kind;
    int64_t id;
    uint64_t start, end, api_end;
    int64_t stream, graph, grid0, regs;
} seen;

typedef struct rec {
    seen *v;
    size_t n, cap, stop_after;
} rec;

static int add(const wl_work_row *w, void *arg)
{
    rec *r = arg;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4096;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
    }
    seen *e = &r->v[r->n++];
    memset(e, 0, sizeof *e); /* (compared with memcmp: no stray padding bytes) */
    e->kind = (int)w->kind;
    e->id = w->id;
    e->start = w->start_ns, e->end = w->end_ns, e->api_end = (uint64_t)w->api_end_ns;
    e->stream = w->stream_id, e->graph = w->graph_id, e->grid0 = w->cfg.grid[0], e->regs = w->cfg.registers_per_thread;
    return r->stop_after && r->n == r->stop_after;
}

/* Walks path both ways; restart_expected: the table-order walk must ask to start over. */
static void compare(const char *path, int restart_expected)
{
    char err[512];
    wl_session *s = wl_session_open(path, err, sizeof err), *t = wl_session_open(path, err, sizeof err);
    CHECK(s != NULL && t != NULL);
    if (!s || !t)
        return;
    rec by_index = {0}, by_table = {0};
    long ni = wl_session_each_work(s, 0, add, &by_index);
    long nt = wl_session_each_work(t, 1, add, &by_table);
    CHECK_EQ_INT(nt == WL_WORK_RESTART, restart_expected);
    if (nt == WL_WORK_RESTART) {
        CHECK(by_table.n > 0); /* rows were handed over before the order broke */
        by_table.n = 0;
        nt = wl_session_each_work(t, 1, add, &by_table); /* the handle now reads by the index */
    }
    CHECK(ni > 8192 * 2);
    CHECK_EQ_INT(nt, ni);
    CHECK_EQ_INT(by_table.n, by_index.n);
    size_t differ = 0;
    for (size_t i = 0; i < by_index.n && i < by_table.n; i++)
        differ += memcmp(&by_index.v[i], &by_table.v[i], sizeof(seen)) != 0;
    CHECK_EQ_INT(differ, 0);
    uint64_t backwards = 0;
    for (size_t i = 1; i < by_table.n; i++)
        backwards += by_table.v[i].start < by_table.v[i - 1].start;
    CHECK_EQ_INT(backwards, 0);
    if (!restart_expected) { /* fn's stop ends the table-order walk where it asked */
        rec part = {.stop_after = 12345};
        wl_session *u = wl_session_open(path, err, sizeof err);
        CHECK_EQ_INT(wl_session_each_work(u, 1, add, &part), 12345);
        CHECK(part.n == 12345 && !memcmp(part.v, by_index.v, part.n * sizeof(seen)));
        wl_session_close(u);
        free(part.v);
    }
    free(by_index.v);
    free(by_table.v);
    wl_session_close(s);
    wl_session_close(t);
}

typedef struct calls {
    wl_blocking_call v[4096];
    size_t n, stop_after;
} calls;

static int add_call(const wl_blocking_call *b, void *arg)
{
    calls *c = arg;
    if (c->n < sizeof c->v / sizeof c->v[0])
        c->v[c->n++] = *b;
    return c->stop_after && c->n == c->stop_after;
}

/* The blocking calls read on a thread of their own while the handle walks the work, and read in
 * place (one read thread): the calls, their order and an early stop as the plain read gives them. */
static void blocking_calls(const char *path)
{
    char err[512];
    sqlite3 *db; /* a third of the copies made synchronous: calls that wait for the GPU */
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "UPDATE api_call SET name = 'cudaMemcpy' WHERE category = 'memcpy' AND id % 3 = 0", NULL,
                       NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    wl_session *s = wl_session_open(path, err, sizeof err), *t = wl_session_open(path, err, sizeof err);
    CHECK(s != NULL && t != NULL);
    if (!s || !t)
        return;
    static calls plain, beside, in_place, stopped;
    long n = wl_session_each_blocking_call(s, add_call, &plain);
    CHECK(n > 10 && (size_t)n == plain.n && plain.n < sizeof plain.v / sizeof plain.v[0]);
    wl_blocking_read *r = wl_session_blocking_calls_begin(t, add_call, &beside);
    rec work = {0};
    CHECK(wl_session_each_work(t, 1, add, &work) > 8192 * 2); /* the handle's own reads meanwhile */
    CHECK_EQ_INT(wl_session_blocking_calls_end(r), n);
    CHECK(beside.n == plain.n && !memcmp(beside.v, plain.v, plain.n * sizeof *plain.v));
    wl_session_set_read_threads(t, 1);
    CHECK_EQ_INT(wl_session_blocking_calls_end(wl_session_blocking_calls_begin(t, add_call, &in_place)), n);
    CHECK(in_place.n == plain.n && !memcmp(in_place.v, plain.v, plain.n * sizeof *plain.v));
    wl_session_set_read_threads(t, 2);
    stopped.stop_after = 3;
    CHECK_EQ_INT(wl_session_blocking_calls_end(wl_session_blocking_calls_begin(t, add_call, &stopped)), 3);
    CHECK(stopped.n == 3 && !memcmp(stopped.v, plain.v, 3 * sizeof *plain.v));
    CHECK_EQ_INT(wl_session_blocking_calls_end(NULL), -1);
    free(work.v);
    wl_session_close(s);
    wl_session_close(t);
}

int main(void)
{
    char dir[] = "/tmp/wl_work_order_XXXXXX", path[256], err[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/s.wlsession", dir);
    CHECK_EQ_INT(test_synth_walk_session(path, 40000, err, sizeof err), 0); /* five windows' worth */
    compare(path, 0);
    blocking_calls(path);

    /* the same kernels, the table's order reversed: ids renumbered from the last to the first */
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, TEST_REVERSE_KERNELS_SQL, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    compare(path, 1);

    unlink(path);
    rmdir(dir);
    return test_report("test_work_order");
}
