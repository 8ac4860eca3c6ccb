/* Launch advice from the occupancy calculator: the block size with the highest occupancy for a
 * kernel's registers and shared memory (what cudaOccMaxPotentialOccupancyBlockSize and its
 * VariableSMem form answer), and for a given launch the register and shared-memory counts that
 * reach the next occupancy step ("cut registers from 128 to 96 to go from 2 to 3 blocks/SM").
 * Both only ask wl_occ_calculate (occupancy.h) and so serve every device table entry and every
 * recorded device; docs/occupancy.md, "Block-size suggestion" and "Next occupancy step". */
#ifndef WARPLENS_ANALYSIS_OCCUPANCY_SUGGEST_H
#define WARPLENS_ANALYSIS_OCCUPANCY_SUGGEST_H

#include <stdint.h>

#include "analysis/occupancy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dynamic shared memory (bytes) a block of `block_size` threads needs: the
 * blockSizeToDynamicSMemSize of cuda_occupancy.h. A negative answer stops the search with
 * WL_OCC_ERR_NEGATIVE. */
typedef int64_t (*wl_occ_smem_fn)(int block_size, void *ctx);

/* The common shape of that function, fixed + per_thread x block size; pass a
 * wl_occ_smem_linear * as the context of wl_occ_smem_linear_fn. */
typedef struct wl_occ_smem_linear {
    int64_t fixed;      /* bytes per block */
    int64_t per_thread; /* bytes per thread of the block */
} wl_occ_smem_linear;

int64_t wl_occ_smem_linear_fn(int block_size, void *ctx);

typedef struct wl_occ_suggestion {
    int block_size;       /* the suggestion; 0 = no block size can run */
    int min_grid_size;    /* active blocks per SM x SMs: the smallest grid that fills every SM */
    int64_t dynamic_smem; /* dynamic shared memory at block_size (as the function gave it) */
    wl_occ_result occ;    /* the calculator at block_size; with block_size 0, at the last
                             (smallest) size tried, whose limiter says why nothing runs */
    int sizes_tried;      /* block sizes evaluated before the search stopped */
} wl_occ_suggestion;

/* The block size with the highest occupancy in threads (block size x active blocks per SM).
 * Tried from the largest allowed size down in steps of the warp (wave) size: first
 * min(device max threads per block, block_size_limit), then the multiples of the warp size
 * below it; a tie keeps the larger size, and the search stops once a size fills the SM.
 * block_size_limit: the function's max threads per block (__launch_bounds__), 0 = the
 * device's. k->block_size is ignored; dynamic shared memory is smem_fn(size, smem_ctx) when
 * smem_fn is set, else k->dynamic_smem. On NVIDIA tables this is
 * cudaOccMaxPotentialOccupancyBlockSize (VariableSMem with smem_fn), result for result.
 * Returns WL_OCC_OK (also when nothing runs: out->block_size 0) or the first invalid-input
 * status the calculator gave (out zeroed). */
wl_occ_status wl_occ_suggest_block_size(const wl_occ_device *dev, const wl_occ_kernel *k,
                                        int block_size_limit, wl_occ_smem_fn smem_fn,
                                        void *smem_ctx, wl_occ_suggestion *out);

/* The next occupancy step of one launch, one resource at a time, the others held. */
typedef struct wl_occ_step {
    int active_blocks_per_sm;      /* the launch as given */
    double occupancy_pct;
    int regs_per_thread;           /* the largest count below the launch's that gives more
                                      active blocks per SM; -1 = none does (another limit binds) */
    int regs_active_blocks_per_sm; /* at regs_per_thread (0 with -1) */
    double regs_occupancy_pct;
    int64_t smem_per_block;        /* the same for static + dynamic shared memory, bytes (cut
                                      from the dynamic part first); -1 = none does */
    int smem_active_blocks_per_sm;
    double smem_occupancy_pct;
} wl_occ_step;

/* Fills *out for the launch k. Returns the calculator's status for k: WL_OCC_OK, a "cannot
 * run" status (the step then leads to the first runnable count), or invalid input (out is
 * zeroed with -1 counts). */
wl_occ_status wl_occ_next_step(const wl_occ_device *dev, const wl_occ_kernel *k, wl_occ_step *out);

#ifdef __cplusplus
}
#endif

#endif
