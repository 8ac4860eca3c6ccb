/* Explicit timers: the summary printer (by category, at each verbosity) and the session side file
 * `$WARPLENS_CAPTURE_DIR/<pid>.wltimers` written for `warplens run` (format in docs/timer.md). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/log.h"
#include "timer/timer_internal.h"

static const char *const KIND[] = {"gpu", "span", "host"};
static const char *const STATUS[] = {"open", "pending", "done", "failed"};

static const char *backend_desc(int b)
{
    switch (b) {
    case WL_TB_CUDA: return "CUDA events";
    case WL_TB_HIP: return "HIP events";
    case WL_TB_HOST: return "host timestamps: no CUDA driver or device";
    default: return "nothing recorded";
    }
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static void print_interval(FILE *out, const wl_tinterval *t, int verbosity, uint64_t t0)
{
    fprintf(out, "    %-4s %s: ", KIND[t->kind], t->name);
    if (t->status == WL_TIMER_DONE)
        fprintf(out, "%.3f ms", ms(t->duration_ns));
    else if (t->status == WL_TIMER_PENDING)
        fprintf(out, "pending (events not complete: synchronise, then collect)");
    else if (t->status == WL_TIMER_OPEN)
        fprintf(out, "open (no end yet)");
    else
        fprintf(out, "failed (event error)");
    if (t->host_timed)
        fprintf(out, " [host-timed]");
    if (verbosity >= WL_TIMER_DEBUG) {
        uint64_t s = wl_timer_start_ns_locked(t);
        fprintf(out, " | stream %p tid %" PRIu64 " start +%.3f ms", t->stream, t->tid,
                s >= t0 ? ms(s - t0) : -ms(t0 - s));
        fprintf(out, " begin-call +%.3f ms", ms(t->host_begin_ns - t0));
        if (t->host_end_ns)
            fprintf(out, " end-call +%.3f ms", ms(t->host_end_ns - t0));
        fprintf(out, " %s", t->kind == WL_TIMER_KIND_HOST ? "wall clock" : t->host_timed ? "host clock" : "events");
    }
    fputc('\n', out);
}

void wl_timer_print_locked(FILE *out, int category, int verbosity)
{
    wl_ttable *T = &wl_timer_table_;
    if (category >= T->n_cats || category < -1) {
        fprintf(out, "warplens timers: no category %d\n", category);
        return;
    }
    fprintf(out, "warplens timers (%s):\n", backend_desc(T->backend));
    uint64_t t0 = T->n ? T->iv[0].host_begin_ns : 0;
    uint64_t open = 0, pending = 0, failed = 0;
    for (int c = 0; c < T->n_cats; c++) {
        if (category >= 0 && c != category)
            continue;
        uint64_t gpu_ns = 0, host_ns = 0, n_gpu = 0, n_host = 0, n_any = 0;
        int gpu_host_timed = 0;
        for (uint64_t i = 0; i < T->n; i++) {
            const wl_tinterval *t = &T->iv[i];
            if (t->category != c)
                continue;
            n_any++;
            open += t->status == WL_TIMER_OPEN;
            pending += t->status == WL_TIMER_PENDING;
            failed += t->status == WL_TIMER_FAILED;
            if (t->status != WL_TIMER_DONE || t->kind == WL_TIMER_KIND_SPAN)
                continue;
            if (t->kind == WL_TIMER_KIND_HOST) {
                host_ns += t->duration_ns;
                n_host++;
            } else {
                gpu_ns += t->duration_ns;
                n_gpu++;
                gpu_host_timed |= t->host_timed;
            }
        }
        if (!n_any)
            continue;
        fprintf(out, "  %s: gpu %.3f ms (%" PRIu64 " interval%s%s), host %.3f ms (%" PRIu64 " interval%s)\n",
                T->cats[c], ms(gpu_ns), n_gpu, n_gpu == 1 ? "" : "s", gpu_host_timed ? ", host-timed" : "",
                ms(host_ns), n_host, n_host == 1 ? "" : "s");
        for (uint64_t i = 0; i < T->n; i++) {
            const wl_tinterval *t = &T->iv[i];
            if (t->category != c)
                continue;
            if (verbosity >= WL_TIMER_VERBOSE || t->kind == WL_TIMER_KIND_SPAN)
                print_interval(out, t, verbosity, t0);
        }
    }
    if (pending)
        fprintf(out, "  %" PRIu64 " interval%s pending: events not complete (synchronise the GPU, then "
                     "wl_timer_collect)\n", pending, pending == 1 ? "" : "s");
    if (open)
        fprintf(out, "  %" PRIu64 " interval%s still open (begun, never ended)\n", open, open == 1 ? "" : "s");
    if (failed)
        fprintf(out, "  %" PRIu64 " interval%s failed (event errors)\n", failed, failed == 1 ? "" : "s");
    if (T->overflow)
        fprintf(out, "  %" PRIu64 " interval%s dropped: table full (capacity %" PRIu64 ")\n", T->overflow,
                T->overflow == 1 ? "" : "s", T->cap);
    if (T->errors)
        fprintf(out, "  %" PRIu64 " call%s returned an error\n", T->errors, T->errors == 1 ? "" : "s");
}

/* Writes s with tabs, newlines and other control characters replaced by spaces. */
static void put_clean(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

int wl_timer_write_side_file_locked(void)
{
    const char *dir = getenv("WARPLENS_CAPTURE_DIR");
    if (!dir || !*dir)
        return 1;
    wl_ttable *T = &wl_timer_table_;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%d.wltimers", dir, (int)getpid()) >= (int)sizeof path)
        return -1;
    wl_atomic_file f;
    if (wl_atomic_file_open(&f, path) != 0) {
        static atomic_flag warned = ATOMIC_FLAG_INIT;
        wl_log_once(&warned, "timer: cannot write %s; timers are not in the session", path);
        return -1;
    }
    fprintf(f.fp, "# warplens timers: tab-separated, see docs/timer.md\nwltimers\t1\npid\t%d\nbackend\t%s\n",
            (int)getpid(), T->backend == WL_TB_CUDA ? "cuda" : T->backend == WL_TB_HIP ? "hip" : "host");
    for (int c = 0; c < T->n_cats; c++) {
        fprintf(f.fp, "category\t%d\t", c);
        put_clean(f.fp, T->cats[c]);
        fputc('\n', f.fp);
    }
    for (uint64_t i = 0; i < T->n; i++) {
        const wl_tinterval *t = &T->iv[i];
        fprintf(f.fp, "interval\t%" PRIu64 "\t%s\t%d\t%s\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t0x%" PRIxPTR "\t",
                i, KIND[t->kind], t->category, STATUS[t->status], t->host_timed, wl_timer_start_ns_locked(t),
                t->status == WL_TIMER_DONE ? t->duration_ns : 0, t->tid, (uintptr_t)t->stream);
        put_clean(f.fp, t->name);
        fputc('\n', f.fp);
    }
    fprintf(f.fp, "overflow\t%" PRIu64 "\nerrors\t%" PRIu64 "\nend\t%" PRIu64 "\n", T->overflow, T->errors, T->n);
    if (wl_atomic_file_commit(&f) != 0)
        return -1;
    T->last_file_write_ns = wl_realtime_ns();
    T->resolved_since_write = 0;
    return 0;
}
