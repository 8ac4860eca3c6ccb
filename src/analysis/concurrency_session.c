/* The concurrency sweep over a session (see wl_session_concurrency in concurrency.h): kernels
 * streamed in start order from the store, each with its theoretical occupancy from the cache. */
#include <stdio.h>

#include "analysis/concurrency.h"
#include "store/session_kernels.h"

int64_t wl_session_concurrency(wl_session *s, wl_occ_cache *cache, const wl_conc_callbacks *cb, char *err,
                               size_t err_size)
{
    wl_occ_cache *own = NULL;
    if (!cache) {
        own = cache = wl_occ_cache_new(s);
        if (!cache) {
            snprintf(err, err_size, "out of memory");
            return -1;
        }
    }
    wl_kernel_filter f = {-1, -1, WL_KERNEL_BY_START};
    wl_kernel_cursor *c = wl_kernel_cursor_open(s, &f, err, err_size);
    wl_conc_sweep *sw = c ? wl_conc_sweep_new(cb) : NULL;
    int64_t n = -1;
    if (sw) {
        wl_kernel_row r;
        int rc;
        n = 0;
        while ((rc = wl_kernel_cursor_next(c, &r)) == 1) {
            if (r.end_ns < r.start_ns)
                continue; /* a broken record: nothing to place on the timeline */
            wl_kernel_occ occ;
            wl_occ_cache_kernel(cache, &r, &occ);
            wl_conc_kernel k = {.id = r.id, .name_id = r.name_id, .pid = r.pid, .device_id = r.device_id,
                                .stream_id = r.stream_id, .start_ns = r.start_ns, .end_ns = r.end_ns,
                                .warp_fill = occ.warp_fill, .sm_share = occ.sm_share};
            if (wl_conc_sweep_add(sw, &k) != 0) {
                snprintf(err, err_size, "concurrency sweep failed at kernel %lld", (long long)r.id);
                n = -1;
                break;
            }
            n++;
        }
        if (rc < 0 && n >= 0) {
            snprintf(err, err_size, "cannot read kernels");
            n = -1;
        }
        if (n >= 0)
            wl_conc_sweep_finish(sw);
    } else if (c) {
        snprintf(err, err_size, "out of memory");
    }
    wl_conc_sweep_free(sw);
    wl_kernel_cursor_close(c);
    wl_occ_cache_free(own);
    return n;
}
