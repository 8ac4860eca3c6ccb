/* The inputs of a merge checked row by row (their census, store/session_guard.h) while the merge
 * copies them (internal to the store: session_merge.c). The survey reads the inputs without it;
 * this checks each in order on a thread of its own, at most two inputs ahead of the copy, and the
 * merge writes nothing when one fails. */
#ifndef WARPLENS_STORE_MERGE_CENSUS_H
#define WARPLENS_STORE_MERGE_CENSUS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef struct wl_merge_census {
    const char *const *paths;
    int n;
    pthread_t thread;
    int started;
    atomic_int failed;
    pthread_mutex_t lock;
    pthread_cond_t moved;
    int copying, stop; /* under lock: the input being copied; the copy is over */
    char why[1024];
} wl_merge_census;

/* An input opened as every reader opens it (wl_session_open_flags' flags), its rows checked: 0
 * when sound, else -1 with why ("X is damaged: ...; not merged", or why it does not open). */
int wl_merge_check_input(const char *path, int flags, char *why, size_t n);
/* Starts checking paths[0..n) (kept by the caller) on a thread; where no thread can start, checks
 * them all now, as the survey used to. */
void wl_merge_census_start(wl_merge_census *c, const char *const *paths, int n);
/* The copy is at input i (stop: it is over, or failed): the check may go on, or end. */
void wl_merge_census_at(wl_merge_census *c, int i, int stop);
/* Some input was found damaged (any thread may ask while the check runs). */
static inline int wl_merge_census_failed(wl_merge_census *c) { return atomic_load(&c->failed); }
/* Waits for the check (again: at once): 0 when every input it checked was sound, else -1 with why
 * in err. */
int wl_merge_census_wait(wl_merge_census *c, char *err, size_t n);
/* After the last wait. */
void wl_merge_census_free(wl_merge_census *c);

#endif
