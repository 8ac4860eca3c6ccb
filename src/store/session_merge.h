/* Merging sessions (`warplens merge`): one session with every process, device and host of the
 * inputs. Each input is checked by the store's open (a warplens session, a schema this build
 * reads, not truncated) and its contract census (no unsound row: run while the inputs are copied,
 * on a thread of its own, and nothing is written if one fails); two inputs holding the same
 * process (pid and host) are refused. Row ids are renumbered past the rows already merged
 * (references follow: API calls, kernels, copies, flows, buffers), names, operations, metrics and
 * stall reasons are shared by value, and a pid two hosts both used is renumbered to pid + k * 2^22
 * (k >= 1; the OS pid is pid mod 2^22). Every time of an input is shifted by its clock offset.
 *
 * Each input is opened for the survey (wl_merge_survey: its structure checked, its processes, and
 * what the caller reads from it, the collectives for the clocks: read unchecked, used only if
 * every input proves sound), then attached once to be copied
 * (wl_merge_write): each table by one INSERT ... SELECT with ids offset by the rows merged before,
 * times shifted, pids and dictionary ids mapped through joins on small temporary tables (only
 * when some change). Indexes led by a time are dropped while rows go in and built once at the
 * end; the others (led by pid or an id: each input's rows land in one place of them) are kept.
 *
 * Memory: SQLite's page cache (64 MiB) and sorter (the end's index builds, two threads, spilling
 * to temporary files), the census of one input (store/session_guard.h), and per input its
 * process list (about 150 bytes a process); not the size of the inputs. The output is written
 * under a temporary name and renamed into place only when complete. */
#ifndef WARPLENS_STORE_SESSION_MERGE_H
#define WARPLENS_STORE_SESSION_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/progress.h"
#include "store/session.h"

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

typedef struct wl_merge wl_merge;

/* Called with each input open (after the checks), in order: what else must read every input
 * before rows are copied (the clock alignment) reads it here. 0, or -1 with err. */
typedef int (*wl_merge_visit)(wl_session *s, int input, void *arg, char *err, size_t err_size);

/* The survey: progress (may be NULL) hears of each input surveyed and, in wl_merge_write, copied
 * (2 x n steps in all). Opens each of paths (kept, not copied) without the row check
 * (WL_OPEN_NO_CENSUS), refuses one whose structure is damaged, lists its processes and hands it to
 * visit (may be NULL); then plans the pids. NULL with one line in err (naming the input at fault;
 * where the failure came after the opens, a damaged input is looked for and named first). */
wl_merge *wl_merge_survey(const char *const *paths, int n, wl_merge_visit visit, void *arg,
                          const wl_progress *progress, char *err, size_t err_size);
/* Writes the merged session to out, input i's times shifted by offset_ns[i]; clocks go to its
 * host_clock table, while a second thread checks every input's rows (two inputs ahead of the copy,
 * so the copy reads what the check brought into the page cache). 0, or -1 with one line in err (a
 * damaged input: "X is damaged: ..."); nothing is left at out then. */
int wl_merge_write(wl_merge *m, const char *out, const int64_t *offset_ns, const wl_merge_clock *clocks,
                   int nclocks, wl_merge_stats *stats, char *err, size_t err_size);
void wl_merge_free(wl_merge *m);

#endif
