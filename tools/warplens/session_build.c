/* Session building for the CLI (see session_build.h): imports each capture, reports captures that
 * ended early, and writes the session atomically. */
#include "session_build.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/inkernel_session.h"
#include "store/session_writer.h"
#include "progress.h"

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

int session_build(const char *out, const char *const *captures, int n, const char *const *side, int n_side,
                  const session_meta_kv *meta, session_build_result *r, int quiet)
{
    memset(r, 0, sizeof *r);
    char err[512];
    wl_session_writer *w = wl_session_writer_create(out, err, sizeof err);
    if (!w) {
        fprintf(stderr, "warplens: cannot create session %s: %s\n", out, err);
        return -1;
    }
    for (const session_meta_kv *m = meta; m && m->key; m++) {
        if (wl_session_writer_meta(w, m->key, m->value) != 0) {
            fprintf(stderr, "warplens: cannot write session metadata\n");
            wl_session_writer_abort(w);
            return -1;
        }
    }
    /* one progress line over all captures: bytes read of their sizes */
    cli_progress pl;
    cli_progress_init(&pl, "importing", "bytes", quiet);
    for (int i = 0; i < n; i++) {
        struct stat sb;
        pl.total += stat(captures[i], &sb) == 0 ? (uint64_t)sb.st_size : 0;
    }
    wl_progress sink = cli_progress_sink(&pl);
    wl_session_writer_set_progress(w, &sink);
    for (int i = 0; i < n; i++) {
        wl_import_stats st;
        struct stat sb;
        int rc = wl_session_writer_import(w, captures[i], &st, err, sizeof err);
        pl.base += stat(captures[i], &sb) == 0 ? (uint64_t)sb.st_size : 0;
        if (rc != 0) {
            cli_progress_end(&pl);
            fprintf(stderr, "warplens: %s\n", err);
            wl_session_writer_abort(w);
            return -1;
        }
        r->captures++;
        r->kernels += st.kernels;
        r->memcpys += st.memcpys;
        r->memsets += st.memsets;
        r->api_calls += st.api_calls;
        r->lost += st.lost;
        if (!st.complete) {
            r->incomplete++;
            if (!quiet)
                fprintf(stderr, "warplens: %s is incomplete: %s\n", captures[i], st.incomplete_reason);
        }
        if (st.unknown_records && !quiet)
            fprintf(stderr, "warplens: %s: skipped %llu records of a newer capture format\n", captures[i],
                    (unsigned long long)st.unknown_records);
    }
    cli_progress_end(&pl);
    for (int i = 0; i < n_side; i++) {
        if (has_suffix(side[i], ".wlik")) {
            /* in-kernel buffers are the program's own extra: a bad one costs itself, not the session */
            wl_iks_buffer row;
            if (wl_inkernel_import_file(w, side[i], &row, err, sizeof err) != 0) {
                if (!quiet)
                    fprintf(stderr, "warplens: in-kernel buffer not imported: %s\n", err);
                continue;
            }
            r->inkernel_buffers++;
            if (row.error[0]) {
                if (!quiet)
                    fprintf(stderr, "warplens: in-kernel buffer of launch %u (process %u): %s\n", row.correlation_id,
                            row.pid, row.error);
            } else {
                r->inkernel_placed++;
            }
            continue;
        }
        uint64_t got = 0;
        if (wl_session_writer_import_timers(w, side[i], &got, err, sizeof err) != 0) {
            /* timers are the program's own extra: a bad file costs them, not the session */
            if (!quiet)
                fprintf(stderr, "warplens: timers not imported: %s\n", err);
            continue;
        }
        r->timer_intervals += got;
    }
    if (wl_session_writer_finish(w, err, sizeof err) != 0) {
        fprintf(stderr, "warplens: cannot write session %s: %s\n", out, err);
        return -1;
    }
    return 0;
}
