/* The occupancy rules: per-resource block limits, the limiting-factor mask, the shared-memory
 * carveout the driver would pick, and grid waves. Everything device-specific comes from the
 * wl_occ_device numbers, so one code path serves every table entry (and recorded devices).
 * The NVIDIA behaviour mirrors cuda_occupancy.h, including its quirks, because the exactness
 * test holds us to it; docs/occupancy.md explains each rule. */
#include "analysis/occupancy.h"

#include <stddef.h>

static int64_t div_up(int64_t x, int64_t y) { return (x + y - 1) / y; }
static int64_t round_up(int64_t x, int64_t y) { return div_up(x, y) * y; }
static int min_int(int a, int b) { return a < b ? a : b; }

void wl_occ_kernel_init(wl_occ_kernel *k)
{
    if (!k)
        return;
    *k = (wl_occ_kernel){0};
    k->smem_config = WL_OCC_SMEM_LIMIT_DEFAULT;
    k->carveout_pct = WL_OCC_CARVEOUT_DEFAULT;
    k->cache_config = WL_OCC_CACHE_PREFER_NONE;
    k->barriers = 1; /* every CUDA kernel owns barrier 0 (__syncthreads) */
    k->cluster_size = 1;
}

static int device_ok(const wl_occ_device *d)
{
    return d->sm_count > 0 && d->warp_size > 0 && d->max_threads_per_block > 0 &&
           d->max_threads_per_sm >= d->warp_size && d->max_blocks_per_sm > 0 &&
           d->sub_partitions > 0 && d->regs_per_sm > 0 && d->regs_per_block >= 0 &&
           d->max_regs_per_thread > 0 && d->reg_alloc_unit > 0 && d->smem_per_sm > 0 &&
           d->smem_per_block > 0 && d->smem_per_block_optin >= 0 &&
           d->smem_reserved_per_block >= 0 && d->smem_alloc_granularity > 0 &&
           d->n_carveouts >= 0 && d->n_carveouts <= WL_OCC_MAX_CARVEOUTS &&
           d->max_barriers_per_sm >= 0 && d->max_cluster_size >= 0 &&
           (d->sgprs_per_simd == 0 || (d->sgpr_alloc_unit > 0 && d->max_sgprs_per_wave > 0));
}

static wl_occ_status kernel_check(const wl_occ_device *d, const wl_occ_kernel *k)
{
    if (k->block_size < 0 || k->regs_per_thread < 0 || k->sgprs_per_wave < 0 ||
        k->static_smem < 0 || k->dynamic_smem < 0 || k->max_dynamic_smem < 0 || k->barriers < 0 ||
        k->cluster_size < 0)
        return WL_OCC_ERR_NEGATIVE;
    if (k->block_size == 0)
        return WL_OCC_ERR_BLOCK_ZERO;
    if (k->carveout_pct < -1 || k->carveout_pct > 100 || (unsigned)k->cache_config > 3u)
        return WL_OCC_ERR_CARVEOUT;
    if (k->cluster_size > 1 && (d->max_cluster_size == 0 || k->cluster_size > d->max_cluster_size))
        return WL_OCC_ERR_CLUSTER;
    return WL_OCC_OK;
}

/* The smallest configurable shared-memory size that holds `bytes`; -1 when none does. With no
 * carveout list the SM has one fixed size. Turing's list starts at 32 KiB, so 0 rounds up. */
static int64_t carveout_round_up(const wl_occ_device *d, int64_t bytes)
{
    if (d->n_carveouts == 0)
        return bytes <= d->smem_per_sm ? d->smem_per_sm : -1;
    for (int i = 0; i < d->n_carveouts; i++)
        if (bytes <= (int64_t)d->carveouts_kib[i] * 1024)
            return (int64_t)d->carveouts_kib[i] * 1024;
    return -1;
}

/* The shared memory per SM the kernel asks for: the carveout percentage when set, else the
 * legacy cache preference mapped onto a percentage, else the maximum. */
static int64_t preferred_carveout(const wl_occ_device *d, const wl_occ_kernel *k)
{
    if (d->n_carveouts == 0)
        return d->smem_per_sm;
    int pct = k->carveout_pct;
    if (pct == WL_OCC_CARVEOUT_DEFAULT) {
        switch (k->cache_config) {
        case WL_OCC_CACHE_PREFER_L1: pct = 0; break;
        case WL_OCC_CACHE_PREFER_SHARED: pct = 100; break;
        case WL_OCC_CACHE_PREFER_EQUAL: pct = 50; break;
        default: break;
        }
    }
    int64_t bytes = pct == WL_OCC_CARVEOUT_DEFAULT ? d->smem_per_sm : pct * d->smem_per_sm / 100;
    return carveout_round_up(d, bytes);
}

/* Warps each SM sub-partition can hold given the per-warp register allocation, or -1 when
 * registers do not limit (a kernel that uses none). AMD gfx9 also spends SGPRs per wave. */
static int warps_per_partition_by_regs(const wl_occ_device *d, const wl_occ_kernel *k,
                                       int64_t regs_per_warp)
{
    int64_t n = -1;
    if (regs_per_warp > 0)
        n = (d->regs_per_sm / d->sub_partitions) / regs_per_warp;
    if (d->sgprs_per_simd > 0 && k->sgprs_per_wave > 0) {
        int64_t s = d->sgprs_per_simd / round_up(k->sgprs_per_wave, d->sgpr_alloc_unit);
        n = n < 0 ? s : (s < n ? s : n);
    }
    return (int)n;
}

/* Block limit from registers. NVIDIA checks the per-block limit twice: once as software would
 * (warps x per-warp allocation) and once as the hardware does, with the warp count rounded up
 * to the number of sub-partitions because it assumes every partition is allocated at once. */
static int limit_registers(const wl_occ_device *d, const wl_occ_kernel *k, int warps,
                           wl_occ_result *r, int *too_many_per_thread)
{
    int64_t per_warp = round_up((int64_t)k->regs_per_thread * d->warp_size, d->reg_alloc_unit);
    int64_t per_block = per_warp * warps;
    int64_t assumed = per_warp * round_up(warps, d->sub_partitions);
    r->allocated_registers_per_block = per_block > WL_OCC_UNLIMITED ? WL_OCC_UNLIMITED : (int)per_block;

    *too_many_per_thread = k->regs_per_thread > d->max_regs_per_thread ||
                           (d->sgprs_per_simd > 0 && k->sgprs_per_wave > d->max_sgprs_per_wave);
    if (*too_many_per_thread)
        return 0;
    if (d->regs_per_block > 0 && (assumed > d->regs_per_block || per_block > d->regs_per_block))
        return 0;
    int per_part = warps_per_partition_by_regs(d, k, per_warp);
    if (per_part < 0)
        return WL_OCC_UNLIMITED;
    return per_part * d->sub_partitions / warps;
}

static int limit_warps(const wl_occ_device *d, const wl_occ_kernel *k, int warps)
{
    if (k->block_size > d->max_threads_per_block)
        return 0;
    return d->max_threads_per_sm / d->warp_size / warps;
}

/* Block limit from shared memory; also fills the allocation, the per-block limit and the
 * carveout. Returns -1 when the device's carveout list cannot hold the request. */
static int limit_smem(const wl_occ_device *d, const wl_occ_kernel *k, wl_occ_result *r)
{
    int64_t static_part = k->static_smem + d->smem_reserved_per_block;
    int64_t allocated = round_up(static_part + k->dynamic_smem, d->smem_alloc_granularity);
    int optin = k->smem_config == WL_OCC_SMEM_LIMIT_OPTIN;

    /* The opt-in limit applies only once the function's declared maximum needs it. */
    int64_t limit = d->smem_per_block;
    if (optin && static_part + k->max_dynamic_smem > d->smem_per_block)
        limit = d->smem_per_block_optin;
    limit += d->smem_reserved_per_block;

    r->allocated_smem_per_block = allocated;
    r->smem_limit_per_block = limit;

    int64_t preferred = preferred_carveout(d, k);
    if (preferred < 0)
        return -1;
    r->smem_carveout_per_sm = preferred;
    if ((optin && k->dynamic_smem > k->max_dynamic_smem) || allocated > limit)
        return 0;

    /* A preference too small for even one block is overridden by the smallest carveout that
     * fits one, which then also bounds occupancy. */
    int64_t per_sm = preferred;
    if (preferred < allocated) {
        per_sm = carveout_round_up(d, allocated);
        if (per_sm < 0)
            return -1;
    }
    r->smem_carveout_per_sm = per_sm;
    if (allocated == 0)
        return WL_OCC_UNLIMITED;
    int64_t n = per_sm / allocated;
    return n > WL_OCC_UNLIMITED ? WL_OCC_UNLIMITED : (int)n;
}

/* Barriers a block holds: CUDA counts the kernel's named barriers; an AMD work-group of one
 * wave needs none, any larger one holds one of the CU's barrier slots. */
static int barriers_used(const wl_occ_device *d, const wl_occ_kernel *k, int warps)
{
    if (d->vendor == WL_OCC_AMD)
        return warps > 1 ? 1 : 0;
    return k->barriers;
}

wl_occ_status wl_occ_calculate(const wl_occ_device *dev, const wl_occ_kernel *k, wl_occ_result *out)
{
    if (!out)
        return WL_OCC_ERR_NULL;
    *out = (wl_occ_result){0};
    if (!dev || !k)
        return WL_OCC_ERR_NULL;
    if (!device_ok(dev))
        return WL_OCC_ERR_DEVICE;
    wl_occ_status st = kernel_check(dev, k);
    if (st != WL_OCC_OK)
        return st;

    wl_occ_result r = {0};
    int warps = (int)div_up(k->block_size, dev->warp_size);
    int per_thread_over = 0;
    r.warps_per_block = warps;
    r.max_warps_per_sm = dev->max_threads_per_sm / dev->warp_size;
    r.block_limit_registers = limit_registers(dev, k, warps, &r, &per_thread_over);
    r.block_limit_warps = limit_warps(dev, k, warps);
    r.block_limit_blocks = dev->max_blocks_per_sm;
    r.block_limit_shared_memory = limit_smem(dev, k, &r);
    if (r.block_limit_shared_memory < 0)
        return WL_OCC_ERR_DEVICE;

    int active = min_int(r.block_limit_registers,
                         min_int(r.block_limit_shared_memory,
                                 min_int(r.block_limit_warps, r.block_limit_blocks)));
    if (active == r.block_limit_warps)
        r.limiters |= WL_OCC_LIMIT_WARPS;
    if (active == r.block_limit_registers)
        r.limiters |= WL_OCC_LIMIT_REGISTERS;
    if (active == r.block_limit_shared_memory)
        r.limiters |= WL_OCC_LIMIT_SHARED_MEMORY;
    if (active == r.block_limit_blocks)
        r.limiters |= WL_OCC_LIMIT_BLOCKS;

    /* Barriers are folded in afterwards and only add their own bit: the bits set above stay
     * even when barriers lower the count further (cudaOccResult behaves the same way). */
    int used = barriers_used(dev, k, warps);
    r.block_limit_barriers = WL_OCC_UNLIMITED;
    if (dev->max_barriers_per_sm > 0 && used > 0) {
        r.block_limit_barriers = dev->max_barriers_per_sm / used;
        active = min_int(active, r.block_limit_barriers);
        if (active == r.block_limit_barriers)
            r.limiters |= WL_OCC_LIMIT_BARRIERS;
    }

    r.active_blocks_per_sm = active;
    r.active_warps_per_sm = active * warps;
    r.occupancy_pct = r.max_warps_per_sm ? 100.0 * r.active_warps_per_sm / r.max_warps_per_sm : 0;
    *out = r;

    if (active > 0)
        return WL_OCC_OK;
    if (r.block_limit_warps == 0)
        return WL_OCC_ERR_BLOCK_TOO_LARGE;
    if (per_thread_over)
        return WL_OCC_ERR_REGS_PER_THREAD;
    if (r.block_limit_registers == 0)
        return WL_OCC_ERR_REGS_PER_BLOCK;
    if (r.block_limit_shared_memory == 0)
        return WL_OCC_ERR_SMEM_PER_BLOCK;
    return WL_OCC_ERR_BARRIERS;
}

wl_occ_status wl_occ_waves(const wl_occ_device *dev, const wl_occ_result *r, int64_t grid_blocks,
                           int cluster_size, wl_occ_wave_info *out)
{
    if (!out)
        return WL_OCC_ERR_NULL;
    *out = (wl_occ_wave_info){0};
    if (!dev || !r)
        return WL_OCC_ERR_NULL;
    if (dev->sm_count <= 0)
        return WL_OCC_ERR_DEVICE;
    if (cluster_size < 0 || grid_blocks < 0)
        return WL_OCC_ERR_NEGATIVE;
    if (cluster_size < 1)
        cluster_size = 1;
    if (cluster_size > 1 && (dev->max_cluster_size == 0 || cluster_size > dev->max_cluster_size))
        return WL_OCC_ERR_CLUSTER;
    if (grid_blocks < 1 || grid_blocks % cluster_size != 0)
        return WL_OCC_ERR_GRID;
    if (r->active_blocks_per_sm <= 0)
        return WL_OCC_ERR_NOT_RUNNABLE;

    /* A cluster runs only when all its blocks are resident at once, so a wave holds whole
     * clusters; this ignores GPC boundaries and is therefore an upper bound. */
    int64_t per_wave = (int64_t)r->active_blocks_per_sm * dev->sm_count;
    per_wave = per_wave / cluster_size * cluster_size;
    if (per_wave <= 0)
        return WL_OCC_ERR_NOT_RUNNABLE;

    out->blocks_per_wave = per_wave;
    out->waves_per_sm = (double)grid_blocks / (double)per_wave;
    out->full_waves = grid_blocks / per_wave;
    int64_t rest = grid_blocks % per_wave;
    out->tail_pct = rest == 0 ? 100.0 : 100.0 * (double)rest / (double)per_wave;
    /* The block scheduler spreads blocks breadth-first, one per SM before doubling up. */
    out->active_sms = grid_blocks < dev->sm_count ? (int)grid_blocks : dev->sm_count;
    return WL_OCC_OK;
}

const char *wl_occ_status_message(wl_occ_status s)
{
    switch (s) {
    case WL_OCC_OK: return "ok";
    case WL_OCC_ERR_NULL: return "missing argument (NULL device, kernel or result)";
    case WL_OCC_ERR_DEVICE: return "device description is incomplete or inconsistent";
    case WL_OCC_ERR_BLOCK_ZERO: return "block size must be at least 1 thread";
    case WL_OCC_ERR_NEGATIVE: return "a kernel resource is negative";
    case WL_OCC_ERR_CARVEOUT: return "shared-memory carveout must be -1 or 0..100 (and the cache config 0..3)";
    case WL_OCC_ERR_CLUSTER: return "cluster size is larger than the device supports (or clusters are not supported)";
    case WL_OCC_ERR_GRID: return "grid must have at least 1 block and be a multiple of the cluster size";
    case WL_OCC_ERR_NOT_RUNNABLE: return "the launch cannot run (0 active blocks per SM), so it has no waves";
    case WL_OCC_ERR_BLOCK_TOO_LARGE: return "block size exceeds the device's maximum threads per block";
    case WL_OCC_ERR_REGS_PER_THREAD: return "registers per thread exceed the device's maximum";
    case WL_OCC_ERR_REGS_PER_BLOCK: return "the block needs more registers than the device allows per block";
    case WL_OCC_ERR_SMEM_PER_BLOCK: return "shared memory per block exceeds the device's per-block limit";
    case WL_OCC_ERR_BARRIERS: return "the block uses more barriers than an SM provides";
    }
    return "unknown occupancy status";
}

int wl_occ_status_has_result(wl_occ_status s)
{
    return s == WL_OCC_OK || s == WL_OCC_ERR_BLOCK_TOO_LARGE || s == WL_OCC_ERR_REGS_PER_THREAD ||
           s == WL_OCC_ERR_REGS_PER_BLOCK || s == WL_OCC_ERR_SMEM_PER_BLOCK || s == WL_OCC_ERR_BARRIERS;
}

const char *wl_occ_limiter_name(unsigned bit)
{
    switch (bit) {
    case WL_OCC_LIMIT_WARPS: return "warps";
    case WL_OCC_LIMIT_REGISTERS: return "registers";
    case WL_OCC_LIMIT_SHARED_MEMORY: return "shared_memory";
    case WL_OCC_LIMIT_BLOCKS: return "blocks";
    case WL_OCC_LIMIT_BARRIERS: return "barriers";
    }
    return "unknown";
}
