/* Block-size suggestion and the next occupancy step (see occupancy_suggest.h). Both are searches
 * over wl_occ_calculate, so every rule of the calculator (carveouts, opt-in, barriers, AMD
 * waves and SGPRs) applies unchanged; the search itself is the part that must match
 * cuda_occupancy.h (tests/test_occupancy_suggest.cpp holds it to that). */
#include "analysis/occupancy_suggest.h"

#include <stddef.h>

int64_t wl_occ_smem_linear_fn(int block_size, void *ctx)
{
    const wl_occ_smem_linear *l = ctx;
    if (!l)
        return 0;
    return l->fixed + l->per_thread * (int64_t)block_size;
}

wl_occ_status wl_occ_suggest_block_size(const wl_occ_device *dev, const wl_occ_kernel *k,
                                        int block_size_limit, wl_occ_smem_fn smem_fn,
                                        void *smem_ctx, wl_occ_suggestion *out)
{
    if (!out)
        return WL_OCC_ERR_NULL;
    *out = (wl_occ_suggestion){0};
    if (!dev || !k)
        return WL_OCC_ERR_NULL;
    if (block_size_limit < 0)
        return WL_OCC_ERR_NEGATIVE;
    if (dev->warp_size <= 0 || dev->max_threads_per_block <= 0)
        return WL_OCC_ERR_DEVICE;

    int limit = dev->max_threads_per_block;
    if (block_size_limit > 0 && block_size_limit < limit)
        limit = block_size_limit;
    int step = dev->warp_size;
    int64_t full = dev->max_threads_per_sm; /* threads per SM: nothing can beat this */

    wl_occ_suggestion best = {0};
    int64_t best_threads = 0;
    wl_occ_kernel t = *k;
    /* The limit itself first (it need not be a whole number of warps), then every multiple of
     * the warp size below it, largest first. A size replaces the best only when it holds
     * strictly more threads, so ties go to the larger block, as in cuda_occupancy.h. */
    for (int size = limit; size > 0; size = (size - 1) / step * step) {
        t.block_size = size;
        if (smem_fn) {
            t.dynamic_smem = smem_fn(size, smem_ctx);
            if (t.dynamic_smem < 0) {
                *out = (wl_occ_suggestion){0};
                return WL_OCC_ERR_NEGATIVE;
            }
        }
        wl_occ_result r;
        wl_occ_status st = wl_occ_calculate(dev, &t, &r);
        if (!wl_occ_status_has_result(st)) {
            *out = (wl_occ_suggestion){0};
            return st;
        }
        best.sizes_tried++;
        int64_t threads = (int64_t)size * r.active_blocks_per_sm;
        if (threads > best_threads) {
            best_threads = threads;
            best.block_size = size;
            best.dynamic_smem = t.dynamic_smem;
            best.occ = r;
        } else if (best.block_size == 0) {
            best.dynamic_smem = t.dynamic_smem; /* nothing runs yet: keep the latest reason */
            best.occ = r;
        }
        if (best_threads == full)
            break;
    }
    best.min_grid_size = best.occ.active_blocks_per_sm * dev->sm_count;
    if (best.block_size == 0)
        best.min_grid_size = 0;
    *out = best;
    return WL_OCC_OK;
}

/* 1 when launch t has more active blocks per SM than `now`; *blocks and *pct then say how many. */
static int gains_block(const wl_occ_device *dev, const wl_occ_kernel *t, int now, int *blocks, double *pct)
{
    wl_occ_result r;
    if (!wl_occ_status_has_result(wl_occ_calculate(dev, t, &r)) || r.active_blocks_per_sm <= now)
        return 0;
    *blocks = r.active_blocks_per_sm;
    *pct = r.occupancy_pct;
    return 1;
}

static void regs_step(const wl_occ_device *dev, const wl_occ_kernel *k, int now, wl_occ_step *out)
{
    wl_occ_kernel t = *k;
    t.regs_per_thread = k->regs_per_thread - 1;
    if (t.regs_per_thread > dev->max_regs_per_thread)
        t.regs_per_thread = dev->max_regs_per_thread;
    /* Downwards, so the first count that gains a block is the largest; every count is tried
     * because the allocation granule differs between devices. */
    for (; t.regs_per_thread >= 0; t.regs_per_thread--)
        if (gains_block(dev, &t, now, &out->regs_active_blocks_per_sm, &out->regs_occupancy_pct)) {
            out->regs_per_thread = t.regs_per_thread;
            return;
        }
}

static void smem_step(const wl_occ_device *dev, const wl_occ_kernel *k, int now, wl_occ_step *out)
{
    int64_t gran = dev->smem_alloc_granularity, reserved = dev->smem_reserved_per_block;
    /* The most bytes worth trying: below the launch's own, and for an opt-in launch no more
     * than static + the declared maximum dynamic size (the one limit counted in bytes, not
     * in allocation granules). */
    int64_t most = k->static_smem + k->dynamic_smem - 1;
    if (k->smem_config == WL_OCC_SMEM_LIMIT_OPTIN && k->static_smem + k->max_dynamic_smem < most)
        most = k->static_smem + k->max_dynamic_smem;
    if (most < 0)
        return;
    /* Shared memory is allocated in granules together with the reserved bytes, so within one
     * allocation size X only its largest total, X - reserved, can be the answer. Downwards from
     * the size that holds `most`, no higher than the largest allocation a per-block limit
     * admits (so a launch far over the limit stays cheap). */
    int64_t cap = dev->smem_per_block_optin > dev->smem_per_block ? dev->smem_per_block_optin : dev->smem_per_block;
    cap = (cap + reserved) / gran * gran;
    int64_t x = (most + reserved + gran - 1) / gran * gran;
    if (x > cap)
        x = cap;
    for (; x >= 0; x -= gran) {
        int64_t bytes = x - reserved < most ? x - reserved : most;
        if (bytes < 0)
            bytes = 0;
        /* Cut from the dynamic part first, so the launch keeps within its declared maximum. */
        wl_occ_kernel t = *k;
        t.static_smem = bytes < k->static_smem ? bytes : k->static_smem;
        t.dynamic_smem = bytes - t.static_smem;
        if (gains_block(dev, &t, now, &out->smem_active_blocks_per_sm, &out->smem_occupancy_pct)) {
            out->smem_per_block = bytes;
            return;
        }
        if (bytes == 0)
            return;
    }
}

wl_occ_status wl_occ_next_step(const wl_occ_device *dev, const wl_occ_kernel *k, wl_occ_step *out)
{
    if (!out)
        return WL_OCC_ERR_NULL;
    *out = (wl_occ_step){.regs_per_thread = -1, .smem_per_block = -1};
    if (!dev || !k)
        return WL_OCC_ERR_NULL;
    wl_occ_result r;
    wl_occ_status st = wl_occ_calculate(dev, k, &r);
    if (!wl_occ_status_has_result(st))
        return st;
    out->active_blocks_per_sm = r.active_blocks_per_sm;
    out->occupancy_pct = r.occupancy_pct;
    /* Lowering one resource only raises its own block limit, so it can gain a block only when
     * that limit is among the binding ones; otherwise the answer is -1 without a search. */
    if (r.limiters & WL_OCC_LIMIT_REGISTERS)
        regs_step(dev, k, r.active_blocks_per_sm, out);
    if (r.limiters & WL_OCC_LIMIT_SHARED_MEMORY)
        smem_step(dev, k, r.active_blocks_per_sm, out);
    return st;
}
