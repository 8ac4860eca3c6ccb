/* `warplens run -o` name templates: %p pid, %h host, %r global rank, %l local rank, %q{VAR} an
 * environment variable, %% a percent sign. A template is checked before the program starts (its
 * syntax, and under a launcher that every rank gets a name of its own); names are expanded for
 * the process that records, or, when `warplens run` starts the launcher itself (torchrun), for
 * each rank the capture files say was recorded (run_sessions.h). */
#ifndef WARPLENS_TOOLS_RUN_OUTPUT_H
#define WARPLENS_TOOLS_RUN_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "common/rank_env.h"

/* The escapes a template uses. */
enum {
    RUN_OUT_PID = 1,
    RUN_OUT_HOST = 2,
    RUN_OUT_RANK = 4,      /* %r, or %q{} of a global rank variable */
    RUN_OUT_LOCAL = 8,     /* %l, or %q{} of a local rank variable */
    RUN_OUT_VAR = 16,      /* %q{VAR} */
};

typedef struct run_output_ids {
    long pid;
    const char *host;
    int32_t rank, local_rank; /* -1: none (expanded as "norank") */
} run_output_ids;

/* Checks the syntax: the RUN_OUT_* escapes used, or -1 with the reason in err ("unknown escape
 * %x at byte 4 ...", "%q{ is not closed", ...). */
int run_output_scan(const char *tmpl, char *err, size_t err_size);
/* Expands tmpl into out (n bytes). Values are made safe as parts of one file name: '/' and
 * control characters become '_', a value "." or ".." becomes "_". get: the environment for %q
 * (NULL: the process's). 0, or -1 with err (an unset or empty %q variable, a name too long). */
int run_output_expand(const char *tmpl, const run_output_ids *ids, wl_getenv_fn get, void *arg, char *out,
                      size_t n, char *err, size_t err_size);
/* Under a launcher (a rank variable set, and a world size that is not 1), whether every rank's
 * name is its own: the template must use %r or %p, or %l with %h. 0, or -1 with the one-line
 * reason in err. */
int run_output_check_unique(const char *tmpl, unsigned escapes, wl_getenv_fn get, void *arg, char *err,
                            size_t err_size);

#endif
