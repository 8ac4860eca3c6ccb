/* After `warplens run`'s program has ended: the capture files its processes left in the capture
 * folder become the session, or, when the output template asks for a rank (%r, %l) that
 * `warplens run` itself was not given (it started the launcher: `warplens run -- torchrun ...`),
 * one session per name the template gives each recorded process's rank. */
#ifndef WARPLENS_TOOLS_RUN_SESSIONS_H
#define WARPLENS_TOOLS_RUN_SESSIONS_H

#include "run_output.h"
#include "session_build.h"

typedef struct run_sessions_opts {
    const char *capdir;
    const char *output;        /* the session, when not split */
    const char *tmpl;          /* split per rank by this template; NULL: one session at output */
    const run_output_ids *ids; /* this process's ids, for the template's other escapes */
    const char *program;       /* for messages */
    const session_meta_kv *meta;
    int quiet, keep_capture, killed;
} run_sessions_opts;

/* Builds the session(s), removes the capture folder (unless keep_capture or a build failed) and
 * prints the summary. 0 when a session was written, 1 when no process recorded anything, -1
 * when a build failed (said why). */
int run_sessions_build(const run_sessions_opts *o);

#endif
