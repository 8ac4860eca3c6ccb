/* Warp stall profiles from PC-sampling counts (`warplens run --stalls`): which share of a kernel's
 * (or a kernel name's) warp samples had each stall reason. CUPTI names reasons
 * "smsp__pcsamp_warps_issue_stalled_<reason>" and adds "<reason>_not_issued" variants that count
 * the subset of those samples in which no instruction was issued; those are shown with their
 * reason, not as reasons of their own, and names that are totals rather than reasons
 * ("..._sample_count", "..._dropped_...") are left out, so the shares add up to 100 %. Pure C. */
#ifndef WARPLENS_STORE_STALL_PROFILE_H
#define WARPLENS_STORE_STALL_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#define WL_STALL_NAME_MAX 128 /* CUPTI_STALL_REASON_STRING_SIZE */

enum wl_stall_kind { WL_STALL_REASON = 0, WL_STALL_NOT_ISSUED = 1, WL_STALL_TOTAL = 2 };

/* What a CUPTI stall-reason name counts. */
enum wl_stall_kind wl_stall_kind(const char *cupti_name);
/* The reason without CUPTI's prefix: "long_scoreboard" for
 * "smsp__pcsamp_warps_issue_stalled_long_scoreboard"; the name itself when it has no known prefix. */
const char *wl_stall_short_name(const char *cupti_name);

typedef struct wl_stall_share {
    const char *name;     /* CUPTI's name (points into the caller's names) */
    uint64_t samples;     /* samples with this reason */
    uint64_t not_issued;  /* of which the warp issued nothing (CUPTI's _not_issued count; 0 if none) */
    double pct;           /* of the profile's samples */
} wl_stall_share;

typedef struct wl_stall_profile {
    uint64_t samples;     /* all samples with a reason (the 100 %) */
    uint64_t kernels;     /* kernel launches the samples came from (set by the caller) */
    int n;                /* reasons with samples, most samples first (ties: by name) */
    wl_stall_share *shares;
} wl_stall_profile;

/* Builds a profile from counts per CUPTI name (a name may appear more than once: added up).
 * 0, or -1 out of memory. The shares point at names[]: keep them while the profile is used. */
int wl_stall_profile_build(const char *const *names, const uint64_t *samples, int n, wl_stall_profile *out);
void wl_stall_profile_free(wl_stall_profile *p);

#endif
