/* Warp stall reasons of a session (`warplens run --stalls`), per kernel launch or summed per
 * kernel name: the samples of every reason, added up over the group's launches before shares are
 * taken (store/stall_profile.h). Sessions made before stall sampling existed have no stall
 * tables: they read as "no stall data". */
#ifndef WARPLENS_STORE_SESSION_STALLS_H
#define WARPLENS_STORE_SESSION_STALLS_H

#include <stdint.h>

#include "store/stall_profile.h"
#include "store/session.h"

enum wl_stall_group_by { WL_STALLS_BY_NAME = 0, WL_STALLS_BY_KERNEL = 1 };

typedef struct wl_stall_set {
    int recorded;              /* the run asked for stall sampling (some device has a stall_config row) */
    int nreasons;              /* stall_reason rows */
    char (*reasons)[WL_STALL_NAME_MAX];
    int64_t *reason_ids;       /* ascending */
    int ngroups;
    int64_t *keys;             /* kernel_name id or kernel id, ascending */
    wl_stall_profile *profiles;
    uint64_t samples, kernels; /* over all groups read */
    uint64_t unlinked_samples; /* samples not tied to one kernel (graph launches, kernels not recorded) */
    int period_min, period_max;/* log2 of the sampling period over devices; 0 when unknown */
    char status[200];          /* why sampling was off on some device ("" if not) */
} wl_stall_set;

/* Reads the profiles of every group (key < 0) or of one; 0 on success (also when the session has
 * no stall data), -1 on a database error or out of memory. */
int wl_session_stalls(wl_session *s, enum wl_stall_group_by by, int64_t key, wl_stall_set *out);
const wl_stall_profile *wl_stall_set_find(const wl_stall_set *m, int64_t key);
void wl_stall_set_free(wl_stall_set *m);

#endif
