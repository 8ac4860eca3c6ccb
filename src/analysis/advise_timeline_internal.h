/* Shared between the timeline pass (advise_timeline.c) and the rules that turn its sums into
 * findings (advise_timeline_rules.c). */
#ifndef WARPLENS_ANALYSIS_ADVISE_TIMELINE_INTERNAL_H
#define WARPLENS_ANALYSIS_ADVISE_TIMELINE_INTERNAL_H

#include "analysis/advise_timeline.h"
#include "store/session_work.h"

#define MAX_DEVICES 64
#define MAX_STREAMS 1024
#define MAX_GAPS (1u << 23)        /* launch/sync gaps kept for the estimate (4 bytes each) */
#define MAX_QUEUED (1u << 16)      /* queued gaps kept for their median */
#define SMALL_COPY 65536u
#define DEFAULT_GAP_NS 1000.0      /* inter-kernel gap assumed when the session shows none queued */
#define DEFAULT_PINNED_BPS 50e9    /* PCIe 5 x16 pinned copies, when the session has none */
#define LOOKBACK 256               /* blocking calls looked at before a submission */

enum { GAP_LAUNCH = 0, GAP_SYNC = 1, GAP_QUEUED = 2, GAP_KINDS = 3 };

typedef struct dev_state {
    uint32_t pid, device;
    int seen;
    uint64_t busy_end, busy_ns, first, last;
    int64_t busy_stream; /* stream of the work that ends last */
    uint64_t overlap_ns; /* time two streams' work overlapped */
} dev_state;

typedef struct stream_state {
    uint32_t pid, device;
    int64_t stream;
    uint64_t kernels, kernel_ns;
    double share_ns; /* sum of SM share x duration: how much of the GPU its kernels held */
    wl_kernel_config last; /* the launch of its last kernel and that launch's SM share */
    double last_share;
    int has_last;
} stream_state;

typedef struct gaps {
    uint32_t *v;
    size_t n, cap;
    uint64_t total_ns, count, dropped;
} gaps;

typedef struct copy_sum {
    uint64_t n, bytes, ns;
} copy_sum;

typedef struct name_count {
    int64_t name_id;
    uint64_t n;
} name_count;

typedef struct tl {
    wl_session *s;
    wl_occ_cache *occ;
    const wl_advise_spans *filter, *steps;
    const wl_blocking_call *calls; /* the caller's (wl_advise_calls) */
    size_t ncalls;
    uint64_t calls_dropped;
    dev_state dev[MAX_DEVICES];
    int ndev;
    stream_state *streams;
    int nstreams;
    gaps g[GAP_KINDS];
    uint64_t *step_launch, *step_sync; /* per step */
    uint64_t first, last, items;
    /* launches */
    uint64_t kernels, kernel_ns, short_kernels, slower_launch; /* kernel shorter than its call */
    uint64_t launch_call_ns, launch_calls;
    name_count after_launch_gap[8]; /* kernel names that followed the most launch gaps */
    int64_t first_after_gap[5];
    int nfirst_after_gap;
    /* sync gaps: which calls */
    name_count sync_calls[6];        /* name_id here = index into sync_names */
    char sync_names[6][64];
    int64_t sync_call_ids[5];
    int nsync_ids;
    uint64_t sync_wait_ns, sync_matched;
    int64_t last_sync_counted;
    /* copies [dir][pageable] */
    copy_sum copy[4][2], pinned_big[4];
    copy_sum small;
    uint64_t small_api_ns, small_api_n;
    uint32_t *small_api; /* per small copy call duration, for the median */
    size_t nsmall_api, small_api_cap;
    int64_t pageable_ids[5], small_ids[5];
    int npageable_ids, nsmall_ids;
} tl;

/* The rules (advise_timeline_rules.c); floor_ns: the device's own gap between queued work. */
double wl_tl_floor_ns(tl *t);
void wl_tl_rules(tl *t, wl_advise_result *r, uint64_t span_ns);

#endif
