/* How long work tells its caller how far it has got, without printing: the loops of the lower
 * floors (import, merge, exports) call a progress sink now and then with (done, total) in units of
 * their own (records, bytes); the CLI turns that into its progress line (tools/warplens/progress.h).
 * A sink with no function costs one test per call. Calls should be rare (every few thousand
 * records): the sink may read the clock. */
#ifndef WARPLENS_COMMON_PROGRESS_H
#define WARPLENS_COMMON_PROGRESS_H

#include <stdint.h>

typedef struct wl_progress {
    void (*update)(void *ctx, uint64_t done, uint64_t total); /* NULL: nobody is listening */
    void *ctx;
} wl_progress;

static inline void wl_progress_note(const wl_progress *p, uint64_t done, uint64_t total)
{
    if (p && p->update)
        p->update(p->ctx, done, total);
}

#endif
