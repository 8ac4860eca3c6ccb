/* Identity of each kernel: the framework operation that launched it, its input shapes and the
 * user's tier, decided once, when a session is built (or upgraded), and stored so every view and
 * exporter reads the same answer (the backend, a function of the kernel's name alone, is decided
 * on read by analysis/kernel_backend.h).
 *
 * Operation (docs/schema.md, "op"): each NVTX range and warplens scope gets an op row: source
 * 'torch' with the operator's name and shapes when its text is a PyTorch operator range
 * (store/torch_range.h: `warplens run --torch-ops`), else source 'nvtx' or 'scope' with its name.
 * A kernel's operation is that of the innermost PyTorch operator range open on the thread of its
 * launch call when the call started, else of the innermost NVTX range or scope open there (a
 * range open on a thread: push/pop ranges, closed on the thread that opened them, or never
 * closed; a range starting at the call's start contains it, one ending there does not). Autograd's
 * backward thread has its own ranges, so backward kernels get the backward operators. A kernel
 * without a launch call takes the operation of its scope, if any.
 *
 * Tier: warplens_set_tier() sets the calling thread's tier from then on (NULL clears it back);
 * WARPLENS_TIER sets the process's default (recorded as thread 0). A kernel's tier is that of its
 * launching thread at its launch call's start, else the process default, else none.
 *
 * Application thread ids: warplens_scope_thread_id() attaches one to a scope; scopes without one
 * inherit their parent's. */
#ifndef WARPLENS_STORE_SESSION_IDENTITY_H
#define WARPLENS_STORE_SESSION_IDENTITY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

/* Writing side (the session writer and `warplens import --upgrade`): adds what a session made
 * before identity existed lacks (tables op and tier_change, the columns op_id, tier and
 * app_thread_id, their indexes), then derives the identities. Both return 0, or -1 with err set. */
int wl_identity_ensure_schema(sqlite3 *db, char *err, size_t err_size);
int wl_identity_derive(sqlite3 *db, char *err, size_t err_size);
/* Opens an existing session for writing, adds and derives identity in one transaction. */
int wl_session_upgrade(const char *path, char *err, size_t err_size);

/* Reading side. 1 when the session carries identity (built or upgraded by this version). */
int wl_session_has_identity(wl_session *s);

/* `warplens kernels --by op`: torch.profiler's key_averages view of a session. One row per
 * (operation, shape): its ranges (calls, their summed and mean host duration) and the kernels
 * whose operation it is (count, summed GPU time). */
typedef struct wl_op_summary {
    int64_t op_id;
    char source[8];         /* torch, nvtx, scope */
    char name[512], shape[1024];
    uint64_t calls, cpu_ns;  /* ranges with this identity, their summed duration */
    uint64_t kernels, gpu_ns; /* kernels launched directly inside (innermost), their GPU time */
} wl_op_summary;
/* Rows ordered by GPU time, then CPU time; *out is malloc'd; returns the count, -1 on error (or
 * without identity). */
int wl_session_op_summaries(wl_session *s, wl_op_summary **out);

#endif
