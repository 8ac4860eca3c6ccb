/* GPU busy time without sorting the kernel table (internal to the store): the union of the
 * intervals of kernels, copies and sets, per device, summed over devices. Kernels come in the
 * table's own order, which is start order up to the disorder of completion order (concurrent
 * kernels finish out of start order); a reorder window per device puts them back in start order
 * and the copies and sets (few, read sorted by SQL up front) are merged in. When a kernel arrives
 * too far out of order for the window, the result is refused and the caller reads the kernels in
 * start order instead (session_scan.c).
 * The kernels may also be folded in two parts (two ranges of the table, read by two threads),
 * each keeping its union as segments, and the two unions united at the end.
 * Memory: 2 * REORDER entries (16 bytes) per device with kernels, 24 bytes per copy or set, and
 * with wl_busy_keep up to max_segments * 16 bytes. */
#ifndef WARPLENS_STORE_GPU_BUSY_H
#define WARPLENS_STORE_GPU_BUSY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wl_busy wl_busy;

/* Reads the copies and sets of db (NULL on a read error or out of memory). */
wl_busy *wl_busy_open(sqlite3 *db);
/* One timed kernel. */
void wl_busy_kernel(wl_busy *b, int64_t pid, int64_t device, uint64_t start, uint64_t end);
/* The summed busy time into *ns, 0; -1 when the kernels were too far out of start order (or
 * memory ran out): then *ns is 0. Frees b. */
int wl_busy_close(wl_busy *b, uint64_t *ns);
/* Keep the union's segments (up to max_segments over all devices; beyond, the result is refused),
 * for wl_busy_close_pair. Before the first kernel. */
void wl_busy_keep(wl_busy *b, size_t max_segments);
/* Two folds over two parts of the same kernels (both kept, both opened on the same copies and
 * sets): the busy time of their union into *ns, 0, or -1 as wl_busy_close. Frees both (NULL
 * allowed: -1). */
int wl_busy_close_pair(wl_busy *a, wl_busy *b, uint64_t *ns);

#endif
