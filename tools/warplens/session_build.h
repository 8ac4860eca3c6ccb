/* Capture files -> session database, with the CLI's reporting (used by `run` and `import`). */
#ifndef WARPLENS_TOOLS_SESSION_BUILD_H
#define WARPLENS_TOOLS_SESSION_BUILD_H

#include <stdint.h>

typedef struct session_meta_kv {
    const char *key, *value;
} session_meta_kv;

typedef struct session_build_result {
    uint64_t kernels, memcpys, memsets, api_calls, lost, timer_intervals;
    uint64_t inkernel_buffers, inkernel_placed;
    int captures, incomplete;
} session_build_result;

/* side: side files of the captures, by suffix: timer API files (.wltimers) and in-kernel
 * buffers (.wlik, decoded under their kernels after every capture is in); may be 0 of them. meta: extra meta rows, terminated by {NULL, NULL}; may be NULL. Returns 0 when the session was
 * written (possibly marked incomplete), -1 after printing why it could not be. */
int session_build(const char *out, const char *const *captures, int n, const char *const *side, int n_side,
                  const session_meta_kv *meta, session_build_result *r, int quiet);

#endif
