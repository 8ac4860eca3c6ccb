/* Merging sessions (`warplens merge`): one session with every process, device and host of the
 * inputs. Each input is checked by the store's open (a warplens session, a schema this build
 * reads, not truncated) and its contract census (no unsound row); two inputs holding the same
 * process (pid and host) are refused. Row ids are renumbered past the rows already merged
 * (references follow: API calls, kernels, copies, flows, buffers), names, operations, metrics and
 * stall reasons are shared by value, and a pid two hosts both used is renumbered to pid + k * 2^22
 * (k >= 1; the OS pid is pid mod 2^22). Every time of an input is shifted by its clock offset.
 *
 * Memory: one input is attached at a time and copied by SQLite's INSERT ... SELECT, so the bound
 * is SQLite's page cache (64 MiB) and sorter (the indexes are built once at the end, spilling to
 * temporary files), plus the inputs' process lists; not the number or size of inputs. The output
 * is written under a temporary name and renamed into place only when complete. */
#ifndef WARPLENS_STORE_SESSION_MERGE_H
#define WARPLENS_STORE_SESSION_MERGE_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_merge_input {
    const char *path;
    int64_t offset_ns; /* added to every time of this input */
} wl_merge_input;

/* One host's clock as merge applied it (written to the host_clock table). */
typedef struct wl_merge_clock {
    char host[128];
    int64_t offset_ns, residual_ns;
    int64_t collectives; /* matched collectives the estimate rests on; -1: given, not estimated */
    char source[16];     /* reference, estimated, given, none */
} wl_merge_clock;

typedef struct wl_merge_stats {
    int inputs, processes, renumbered_pids, hosts;
    uint64_t kernels;
} wl_merge_stats;

/* 0, or -1 with one line in err (naming the input at fault); nothing is left at out then. */
int wl_sessions_merge(const char *out, const wl_merge_input *in, int n, const wl_merge_clock *clocks, int nclocks,
                      wl_merge_stats *stats, char *err, size_t err_size);

#endif
