/* Explicit timers: the interval table, verbosity, categories, begin/end, non-blocking collect
 * (include/warplens/timer.h, docs/timer.md).
 *
 * One mutex guards the table and the event pools. A GPU begin takes an event from the pool and a
 * slot under the mutex, records the event outside it, then publishes it; an end claims its interval
 * under the mutex, records outside it, publishes. So the hot path is two short critical sections
 * plus one event record, and nothing is created or destroyed after the pools have warmed up.
 * Interval ids are (generation << 32 | index + 1) so ids from before a reset are refused. */
#include "timer/timer_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

wl_ttable wl_timer_table_ = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cats = {"codegen", "compile", "runtime"},
    .n_cats = 3,
};
_Atomic int wl_timer_verbosity_ = -1; /* -1: not yet read from $WARPLENS_TIMER */

static _Atomic int g_n_cats = 3;
static uint32_t g_generation = 1;
static uint64_t g_cap_requested;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Atomic int g_logged_errors;

void wl_timer_lock(void) { pthread_mutex_lock(&wl_timer_table_.mu); }
void wl_timer_unlock(void) { pthread_mutex_unlock(&wl_timer_table_.mu); }

static int verbosity_from_env(void)
{
    const char *e = getenv("WARPLENS_TIMER");
    if (!e || !*e)
        return WL_TIMER_DEFAULT;
    static const char *const names[] = {"none", "default", "verbose", "debug"};
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(e, names[i]) || (e[0] == '0' + i && !e[1]))
            return i;
    wl_log("WARPLENS_TIMER=%s is not none|default|verbose|debug; using default", e);
    return WL_TIMER_DEFAULT;
}

static inline int verbosity(void)
{
    int v = atomic_load_explicit(&wl_timer_verbosity_, memory_order_relaxed);
    if (__builtin_expect(v >= 0, 1))
        return v;
    int want = verbosity_from_env(), expected = -1;
    atomic_compare_exchange_strong(&wl_timer_verbosity_, &expected, want);
    return atomic_load(&wl_timer_verbosity_);
}

void wl_timer_set_verbosity(int level)
{
    if (level < WL_TIMER_NONE)
        level = WL_TIMER_NONE;
    if (level > WL_TIMER_DEBUG)
        level = WL_TIMER_DEBUG;
    atomic_store(&wl_timer_verbosity_, level);
}

int wl_timer_get_verbosity(void) { return verbosity(); }

static void report_error(int code, const char *fmt, ...) WL_PRINTF(2, 3);
static void report_error(int code, const char *fmt, ...)
{
    (void)code;
    int n = atomic_fetch_add(&g_logged_errors, 1);
    if (n >= 10) {
        if (n == 10)
            wl_log("timer: further errors are only counted (wl_timer_get_stats)");
        return;
    }
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wl_log("timer: %s", msg);
}

static uint64_t thread_id(void)
{
    static _Thread_local uint64_t tid;
    if (!tid)
        tid = (uint64_t)syscall(SYS_gettid);
    return tid;
}

static void at_exit(void) { wl_timer_write_session_file(); }

static void init_once(void)
{
    wl_timer_table_.backend = wl_tb_init();
    atexit(at_exit);
}

/* Ensures the backend is loaded and the table allocated; returns 0, or -1 (allocation failed). */
static int ensure_table_locked(void)
{
    wl_ttable *T = &wl_timer_table_;
    if (T->iv)
        return 0;
    if (!T->cap) {
        uint64_t cap = g_cap_requested;
        const char *e = getenv("WARPLENS_TIMER_CAPACITY");
        if (!cap && e && *e)
            cap = strtoull(e, NULL, 10);
        T->cap = cap ? cap : 16384;
    }
    T->iv = calloc(T->cap, sizeof *T->iv);
    return T->iv ? 0 : -1;
}

const char *wl_timer_cat_name_locked(int cat)
{
    return cat >= 0 && cat < wl_timer_table_.n_cats ? wl_timer_table_.cats[cat] : NULL;
}

int wl_timer_category_register(const char *name)
{
    if (!name || !*name)
        return WL_TIMER_ERR_ARG;
    wl_ttable *T = &wl_timer_table_;
    wl_timer_lock();
    int id = WL_TIMER_ERR_CATEGORY;
    for (int i = 0; i < T->n_cats; i++)
        if (!strncmp(T->cats[i], name, WL_TIMER_CAT_NAME_MAX - 1)) {
            id = i;
            break;
        }
    if (id < 0 && T->n_cats < WL_TIMER_MAX_CATEGORIES) {
        id = T->n_cats;
        snprintf(T->cats[id], WL_TIMER_CAT_NAME_MAX, "%s", name);
        T->n_cats++;
        atomic_store(&g_n_cats, T->n_cats);
    }
    wl_timer_unlock();
    return id;
}

const char *wl_timer_category_name(int category)
{
    wl_timer_lock();
    const char *n = wl_timer_cat_name_locked(category);
    wl_timer_unlock();
    return n;
}

static void format_name(char *dst, const char *fmt, va_list ap)
{
    if (!strchr(fmt, '%')) {
        snprintf(dst, WL_TIMER_NAME_MAX, "%s", fmt);
        return;
    }
    vsnprintf(dst, WL_TIMER_NAME_MAX, fmt, ap);
}

static void release_events_locked(wl_tinterval *t)
{
    if (t->ev_begin.ev)
        wl_tb_release(t->ev_begin);
    if (t->ev_end.ev)
        wl_tb_release(t->ev_end);
    t->ev_begin.ev = t->ev_end.ev = NULL;
}

/* Nearest integer, without libm (libwarplens.so links nothing but libc and libdl). */
static int64_t round_i64(double x) { return (int64_t)(x < 0 ? x - 0.5 : x + 0.5); }

static int64_t begin(int kind, int cat, void *stream, const char *fmt, va_list ap)
{
    if (verbosity() == WL_TIMER_NONE)
        return 0;
    if (!fmt)
        return WL_TIMER_ERR_ARG;
    if (cat < 0 || cat >= atomic_load_explicit(&g_n_cats, memory_order_relaxed)) {
        wl_timer_lock();
        wl_timer_table_.errors++;
        wl_timer_unlock();
        report_error(WL_TIMER_ERR_CATEGORY, "begin: unknown category %d", cat);
        return WL_TIMER_ERR_CATEGORY;
    }
    char name[WL_TIMER_NAME_MAX];
    format_name(name, fmt, ap);
    pthread_once(&g_once, init_once);
    wl_ttable *T = &wl_timer_table_;
    wl_timer_lock();
    if (ensure_table_locked() != 0 || T->n >= T->cap) {
        T->overflow++;
        wl_timer_unlock();
        return WL_TIMER_ERR_FULL;
    }
    uint64_t idx = T->n++;
    int64_t id = ((int64_t)g_generation << 32) | (int64_t)(idx + 1);
    wl_tinterval *t = &T->iv[idx];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, sizeof name);
    t->category = cat;
    t->kind = kind;
    t->status = WL_TIMER_OPEN;
    t->stream = stream;
    t->tid = thread_id();
    T->n_open++;
    int event = 0, need_anchor = 0;
    if (kind != WL_TIMER_KIND_HOST) {
        int r = T->backend == WL_TB_HOST ? 1 : wl_tb_acquire(stream, &t->ev_begin, &need_anchor);
        if (r < 0) {
            T->errors++;
            report_error(WL_TIMER_ERR_BACKEND, "begin '%s': no event available; timed on the host", name);
        }
        event = r == 0;
        t->host_timed = !event;
        t->closing = event; /* busy until the begin event is recorded */
    }
    wl_tev ev = t->ev_begin;
    t->host_begin_ns = wl_realtime_ns();
    wl_timer_unlock();
    if (event) {
        int rc = wl_tb_record(ev, stream, need_anchor);
        wl_timer_lock();
        t->closing = 0;
        if (rc != 0) {
            T->errors++;
            wl_tb_release(t->ev_begin);
            t->ev_begin.ev = NULL;
            t->host_timed = 1;
        }
        wl_timer_unlock();
    }
    return id;
}

/* Finds the open interval to end (table locked): by id, or the most recent open one by name. */
static wl_tinterval *find_open_locked(int64_t id, int kind, int cat, const char *name)
{
    wl_ttable *T = &wl_timer_table_;
    if (id > 0) {
        uint64_t idx = (uint64_t)(id & 0xffffffff) - 1;
        if ((uint32_t)(id >> 32) != g_generation || idx >= T->n)
            return NULL;
        wl_tinterval *t = &T->iv[idx];
        return t->status == WL_TIMER_OPEN && !t->closing ? t : NULL;
    }
    uint64_t seen = 0;
    for (uint64_t i = T->n; i-- > 0 && seen < T->n_open;) {
        wl_tinterval *t = &T->iv[i];
        if (t->status != WL_TIMER_OPEN)
            continue;
        seen++;
        if (!t->closing && t->kind == kind && t->category == cat && !strcmp(t->name, name))
            return t;
    }
    return NULL;
}

static int end(int64_t id, int kind, int cat, void *stream, int use_stream, const char *fmt, va_list ap)
{
    if (verbosity() == WL_TIMER_NONE)
        return 0;
    uint64_t now = wl_realtime_ns();
    char name[WL_TIMER_NAME_MAX] = "";
    if (id <= 0) {
        if (!fmt)
            return WL_TIMER_ERR_ARG;
        format_name(name, fmt, ap);
    }
    wl_ttable *T = &wl_timer_table_;
    wl_timer_lock();
    wl_tinterval *t = T->iv ? find_open_locked(id, kind, cat, name) : NULL;
    if (!t) {
        T->errors++;
        wl_timer_unlock();
        if (id > 0)
            report_error(WL_TIMER_ERR_NOT_OPEN, "end of interval id %lld that is not open", (long long)id);
        else
            report_error(WL_TIMER_ERR_NOT_OPEN, "end of '%s' (%s, category %s) without a matching begin",
                         name, kind == WL_TIMER_KIND_HOST ? "host" : kind == WL_TIMER_KIND_SPAN ? "span" : "gpu",
                         cat >= 0 && cat < WL_TIMER_MAX_CATEGORIES && T->cats[cat][0] ? T->cats[cat] : "?");
        return WL_TIMER_ERR_NOT_OPEN;
    }
    T->n_open--;
    t->host_end_ns = now;
    if (t->kind == WL_TIMER_KIND_HOST || t->host_timed) {
        t->duration_ns = now > t->host_begin_ns ? now - t->host_begin_ns : 0;
        t->status = WL_TIMER_DONE;
        T->resolved_since_write++;
        wl_timer_unlock();
        return 0;
    }
    if (!use_stream)
        stream = t->stream;
    int need_anchor = 0;
    if (wl_tb_acquire(stream, &t->ev_end, &need_anchor) != 0) {
        T->errors++;
        release_events_locked(t);
        t->status = WL_TIMER_FAILED;
        wl_timer_unlock();
        report_error(WL_TIMER_ERR_BACKEND, "end of '%s': no event for this stream's context", t->name);
        return WL_TIMER_ERR_BACKEND;
    }
    t->status = WL_TIMER_PENDING;
    t->closing = 1;
    wl_tev ev = t->ev_end;
    wl_timer_unlock();
    int rc = wl_tb_record(ev, stream, need_anchor);
    wl_timer_lock();
    t->closing = 0;
    if (rc != 0) {
        T->errors++;
        release_events_locked(t);
        t->status = WL_TIMER_FAILED;
    }
    wl_timer_unlock();
    return rc ? WL_TIMER_ERR_BACKEND : 0;
}

#define BEGIN_WRAPPER(fn, kind)                                                                    \
    int64_t fn(int category, void *stream, const char *fmt, ...)                                   \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        int64_t r = begin(kind, category, stream, fmt, ap);                                        \
        va_end(ap);                                                                                \
        return r;                                                                                  \
    }
#define END_WRAPPER(fn, kind)                                                                      \
    int fn(int category, void *stream, const char *fmt, ...)                                       \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        int r = end(0, kind, category, stream, 1, fmt, ap);                                        \
        va_end(ap);                                                                                \
        return r;                                                                                  \
    }
BEGIN_WRAPPER(wl_timer_gpu_begin, WL_TIMER_KIND_GPU)
BEGIN_WRAPPER(wl_timer_span_begin, WL_TIMER_KIND_SPAN)
END_WRAPPER(wl_timer_gpu_end, WL_TIMER_KIND_GPU)
END_WRAPPER(wl_timer_span_end, WL_TIMER_KIND_SPAN)

int64_t wl_timer_host_begin(int category, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int64_t r = begin(WL_TIMER_KIND_HOST, category, NULL, fmt, ap);
    va_end(ap);
    return r;
}

int wl_timer_host_end(int category, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = end(0, WL_TIMER_KIND_HOST, category, NULL, 1, fmt, ap);
    va_end(ap);
    return r;
}

static int end_by_id(int64_t id, ...)
{
    va_list ap;
    va_start(ap, id);
    int r = end(id, 0, 0, NULL, 0, NULL, ap);
    va_end(ap);
    return r;
}

int wl_timer_end_id(int64_t id)
{
    if (id <= 0) {
        if (id == 0 || verbosity() == WL_TIMER_NONE)
            return 0; /* begin recorded nothing (verbosity none) */
        return WL_TIMER_ERR_ARG;
    }
    return end_by_id(id);
}

/* Resolves every ended interval whose events completed; returns how many are still pending. */
static int collect_locked(void)
{
    wl_ttable *T = &wl_timer_table_;
    int pending = 0;
    for (uint64_t i = T->first_unresolved; i < T->n; i++) {
        wl_tinterval *t = &T->iv[i];
        if (t->status != WL_TIMER_PENDING)
            continue;
        if (t->closing) {
            pending++;
            continue;
        }
        int qb = wl_tb_query(t->ev_begin), qe = wl_tb_query(t->ev_end);
        float ms = 0;
        if (qb < 0 || qe < 0 || (qb == 1 && qe == 1 && wl_tb_elapsed_ms(t->ev_begin, t->ev_end, &ms) != 0)) {
            T->errors++;
            t->status = WL_TIMER_FAILED;
            release_events_locked(t);
            report_error(WL_TIMER_ERR_BACKEND, "collect: the events of '%s' report an error", t->name);
            continue;
        }
        if (qb != 1 || qe != 1) {
            pending++;
            continue;
        }
        t->duration_ns = ms > 0 ? (uint64_t)round_i64((double)ms * 1e6) : 0;
        float rel = 0;
        if (wl_tb_since_anchor_ms(t->ev_begin, &rel) == 0) {
            t->rel_begin_ms = rel;
            t->has_rel = 1;
            int c = t->ev_begin.ctx;
            int64_t rel_ns = round_i64((double)rel * 1e6);
            if (c >= 0 && c < WL_TB_MAX_CTX && (int64_t)t->host_begin_ns > rel_ns) {
                uint64_t a = (uint64_t)((int64_t)t->host_begin_ns - rel_ns);
                if (a > T->anchor_abs_ns[c])
                    T->anchor_abs_ns[c] = a; /* the event ran no earlier than its record call */
            }
        }
        t->status = WL_TIMER_DONE;
        T->resolved_since_write++;
        release_events_locked(t);
    }
    while (T->first_unresolved < T->n && T->iv[T->first_unresolved].status >= WL_TIMER_DONE)
        T->first_unresolved++;
    return pending;
}

uint64_t wl_timer_start_ns_locked(const wl_tinterval *t)
{
    int c = t->ev_begin.ctx;
    if (t->host_timed || t->kind == WL_TIMER_KIND_HOST || !t->has_rel || c < 0 || c >= WL_TB_MAX_CTX ||
        !wl_timer_table_.anchor_abs_ns[c])
        return t->host_begin_ns;
    return wl_timer_table_.anchor_abs_ns[c] + (uint64_t)round_i64(t->rel_begin_ms * 1e6);
}

int wl_timer_collect(void)
{
    if (!wl_timer_table_.iv && verbosity() == WL_TIMER_NONE)
        return 0;
    wl_timer_lock();
    int pending = collect_locked();
    wl_ttable *T = &wl_timer_table_;
    uint64_t now = wl_realtime_ns();
    if (T->resolved_since_write && now - T->last_file_write_ns > 1000000000ull)
        wl_timer_write_side_file_locked();
    wl_timer_unlock();
    return pending;
}

int wl_timer_write_session_file(void)
{
    wl_timer_lock();
    int r = 0;
    if (wl_timer_table_.iv) {
        collect_locked();
        r = wl_timer_write_side_file_locked();
    }
    wl_timer_unlock();
    return r < 0 ? -1 : 0;
}

void wl_timer_print(FILE *out, int category)
{
    int v = verbosity();
    if (v == WL_TIMER_NONE || !out)
        return;
    wl_timer_lock();
    if (wl_timer_table_.iv)
        collect_locked();
    wl_timer_print_locked(out, category, v);
    wl_timer_unlock();
}

void wl_timer_reset(void)
{
    wl_ttable *T = &wl_timer_table_;
    wl_timer_lock();
    for (uint64_t i = 0; i < T->n; i++)
        release_events_locked(&T->iv[i]);
    if (T->iv)
        wl_tb_reset_anchors();
    T->n = T->n_open = T->first_unresolved = 0;
    T->overflow = T->errors = T->resolved_since_write = 0;
    memset(T->anchor_abs_ns, 0, sizeof T->anchor_abs_ns);
    g_generation++;
    wl_timer_unlock();
}

int wl_timer_set_capacity(uint64_t max_intervals)
{
    if (!max_intervals || max_intervals > (1ull << 31))
        return WL_TIMER_ERR_ARG;
    wl_ttable *T = &wl_timer_table_;
    wl_timer_lock();
    int r = 0;
    if (T->n) {
        r = WL_TIMER_ERR_BUSY;
    } else {
        free(T->iv);
        T->iv = NULL;
        T->cap = max_intervals;
        g_cap_requested = max_intervals;
    }
    wl_timer_unlock();
    return r;
}

uint64_t wl_timer_count(void)
{
    wl_timer_lock();
    uint64_t n = wl_timer_table_.n;
    wl_timer_unlock();
    return n;
}

int wl_timer_get(uint64_t index, wl_timer_interval *out)
{
    if (!out)
        return WL_TIMER_ERR_ARG;
    wl_timer_lock();
    int r = WL_TIMER_ERR_ARG;
    if (index < wl_timer_table_.n) {
        const wl_tinterval *t = &wl_timer_table_.iv[index];
        memset(out, 0, sizeof *out);
        memcpy(out->name, t->name, sizeof out->name);
        out->category = t->category;
        out->kind = t->kind;
        out->status = t->status;
        out->host_timed = t->host_timed;
        out->stream = t->stream;
        out->start_ns = wl_timer_start_ns_locked(t);
        out->duration_ns = t->duration_ns;
        out->tid = t->tid;
        r = 0;
    }
    wl_timer_unlock();
    return r;
}

void wl_timer_get_stats(wl_timer_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    wl_ttable *T = &wl_timer_table_;
    wl_timer_lock();
    for (uint64_t i = 0; i < T->n; i++) {
        int s = T->iv[i].status;
        out->open += s == WL_TIMER_OPEN;
        out->pending += s == WL_TIMER_PENDING;
        out->done += s == WL_TIMER_DONE;
        out->failed += s == WL_TIMER_FAILED;
    }
    out->intervals = T->n;
    out->overflow = T->overflow;
    out->errors = T->errors;
    out->capacity = T->cap ? T->cap : (g_cap_requested ? g_cap_requested : 16384);
    out->backend = T->backend;
    if (T->backend > WL_TB_HOST) {
        out->events_created = wl_tb_events_created();
        out->events_pooled = wl_tb_events_pooled();
    }
    wl_timer_unlock();
    out->verbosity = verbosity();
}

const char *wl_timer_strerror(int code)
{
    switch (code) {
    case WL_TIMER_OK: return "ok";
    case WL_TIMER_ERR_NOT_OPEN: return "end without a matching open begin";
    case WL_TIMER_ERR_FULL: return "interval table full (counted as overflow)";
    case WL_TIMER_ERR_CATEGORY: return "unknown category, or category table full";
    case WL_TIMER_ERR_BACKEND: return "CUDA/HIP event call failed";
    case WL_TIMER_ERR_ARG: return "bad argument";
    case WL_TIMER_ERR_BUSY: return "capacity can only change while the table is empty";
    default: return "unknown error";
    }
}
