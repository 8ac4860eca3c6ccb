/* Exactness test: warplens' occupancy calculator against NVIDIA's reference, the toolkit's
 * cuda_occupancy.h (cudaOccMaxActiveBlocksPerMultiprocessor), for every NVIDIA device in the
 * built-in tables. C++ only because that header is included; the calculator itself is C.
 *
 * Per architecture: an exhaustive sweep of block size 1..1024 x registers 0..255 (with random
 * shared memory and settings at each point) plus N random configurations over everything
 * (static/dynamic shared memory up to the opt-in limit, default/opt-in limit config, the
 * function's max dynamic size, carveout percentage, legacy cache config, barrier count). Every
 * result field must agree: active blocks, each block limit, the limiting-factor mask and the
 * allocated registers/shared memory. The seed is fixed and printed; WL_OCC_SEED / WL_OCC_N
 * override it and the random count. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include <cuda_occupancy.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "analysis/device_tables.h"
#include "analysis/occupancy.h"
#include "test.h"

namespace {

/* splitmix64: small, fast and the same on every platform, so a printed seed reproduces. */
struct rng {
    uint64_t s;
    uint64_t next()
    {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /* Uniform in [lo, hi]. */
    int64_t range(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1)); }
    bool chance(int pct) { return (int)(next() % 100) < pct; }
};

struct arch_stats {
    long configs = 0, mismatches = 0, zero_blocks = 0;
    unsigned limiter_seen = 0;
};

cudaOccDeviceProp to_prop(const wl_occ_device *d)
{
    cudaOccDeviceProp p;
    p.computeMajor = d->cc_major;
    p.computeMinor = d->cc_minor;
    p.maxThreadsPerBlock = d->max_threads_per_block;
    p.maxThreadsPerMultiprocessor = d->max_threads_per_sm;
    p.regsPerBlock = d->regs_per_block;
    p.regsPerMultiprocessor = d->regs_per_sm;
    p.warpSize = d->warp_size;
    p.sharedMemPerBlock = (size_t)d->smem_per_block;
    p.sharedMemPerMultiprocessor = (size_t)d->smem_per_sm;
    p.numSms = d->sm_count;
    p.sharedMemPerBlockOptin = (size_t)d->smem_per_block_optin;
    p.reservedSharedMemPerBlock = (size_t)d->smem_reserved_per_block;
    return p;
}

/* Random shared memory, limit config, carveout and barriers for one kernel. Sizes cluster near
 * the interesting edges (0, the default limit, the opt-in limit) as well as spreading evenly. */
void random_smem_and_settings(rng &g, const wl_occ_device *d, wl_occ_kernel *k)
{
    int64_t optin = d->smem_per_block_optin;
    switch (g.range(0, 5)) {
    case 0: k->static_smem = 0; break;
    case 1: k->static_smem = g.range(0, 4096); break;
    case 2: k->static_smem = d->smem_per_block - g.range(0, 2048); break;
    default: k->static_smem = g.range(0, d->smem_per_block); break;
    }
    switch (g.range(0, 5)) {
    case 0: k->dynamic_smem = 0; break;
    case 1: k->dynamic_smem = g.range(0, 8192); break;
    case 2: k->dynamic_smem = optin - k->static_smem - g.range(-2048, 2048); break;
    default: k->dynamic_smem = g.range(0, optin); break;
    }
    k->smem_config = g.chance(50) ? WL_OCC_SMEM_LIMIT_OPTIN : WL_OCC_SMEM_LIMIT_DEFAULT;
    /* Keep most default-limit launches under the 48 KiB limit so runnable ones dominate. */
    if (k->smem_config == WL_OCC_SMEM_LIMIT_DEFAULT && g.chance(70))
        k->dynamic_smem = g.range(0, d->smem_per_block - k->static_smem);
    if (k->dynamic_smem < 0)
        k->dynamic_smem = 0;
    /* cudaFuncAttributeMaxDynamicSharedMemorySize: mostly what the launch needs (as a program
     * that sets it would), sometimes more, sometimes anything (too small = cannot launch). */
    int64_t r = g.range(0, 9);
    k->max_dynamic_smem = r < 6 ? k->dynamic_smem : r < 8 ? g.range(k->dynamic_smem, k->dynamic_smem + optin) : g.range(0, optin);
    k->carveout_pct = g.chance(40) ? -1 : (g.chance(20) ? (int)g.range(0, 2) * 50 : (int)g.range(0, 100));
    k->cache_config = (wl_occ_cache_config)g.range(0, 3);
    k->barriers = g.chance(50) ? 1 : (int)g.range(0, 16);
}

/* Runs one configuration through both calculators; returns false on any difference. */
bool compare_one(const wl_occ_device *d, const cudaOccDeviceProp &prop, const wl_occ_kernel &k,
                 arch_stats &st, bool verbose)
{
    cudaOccFuncAttributes fa;
    fa.maxThreadsPerBlock = 1024;
    fa.numRegs = k.regs_per_thread;
    fa.sharedSizeBytes = (size_t)k.static_smem;
    fa.partitionedGCConfig = PARTITIONED_GC_OFF;
    fa.shmemLimitConfig = k.smem_config == WL_OCC_SMEM_LIMIT_OPTIN ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
    fa.maxDynamicSharedSizeBytes = (size_t)k.max_dynamic_smem;
    fa.numBlockBarriers = k.barriers;
    fa.virtualResourceCount = 0;
    cudaOccDeviceState ds;
    ds.cacheConfig = (cudaOccCacheConfig)k.cache_config;
    ds.carveoutConfig = k.carveout_pct;

    cudaOccResult ref;
    memset(&ref, 0, sizeof ref);
    cudaOccError rs = cudaOccMaxActiveBlocksPerMultiprocessor(&ref, &prop, &fa, &ds, k.block_size, (size_t)k.dynamic_smem);
    wl_occ_result ours;
    wl_occ_status ws = wl_occ_calculate(d, &k, &ours);

    st.configs++;
    bool same = rs == CUDA_OCC_SUCCESS && wl_occ_status_has_result(ws) &&
                ref.activeBlocksPerMultiprocessor == ours.active_blocks_per_sm &&
                ref.limitingFactors == ours.limiters && ref.blockLimitRegs == ours.block_limit_registers &&
                ref.blockLimitSharedMem == ours.block_limit_shared_memory &&
                ref.blockLimitWarps == ours.block_limit_warps &&
                ref.blockLimitBlocks == ours.block_limit_blocks &&
                ref.blockLimitBarriers == ours.block_limit_barriers &&
                ref.allocatedRegistersPerBlock == ours.allocated_registers_per_block &&
                (int64_t)ref.allocatedSharedMemPerBlock == ours.allocated_smem_per_block &&
                ((ws == WL_OCC_OK) == (ours.active_blocks_per_sm > 0));
    if (ours.active_blocks_per_sm == 0)
        st.zero_blocks++;
    st.limiter_seen |= ours.limiters;
    if (!same) {
        st.mismatches++;
        if (verbose)
            fprintf(stderr,
                    "MISMATCH %s block=%d regs=%d static=%lld dyn=%lld cfg=%d maxdyn=%lld carve=%d cache=%d bars=%d\n"
                    "  ref: err=%d active=%d lim=0x%x regs=%d smem=%d warps=%d blocks=%d bars=%d areg=%d asmem=%zu\n"
                    "  ours: st=%d active=%d lim=0x%x regs=%d smem=%d warps=%d blocks=%d bars=%d areg=%d asmem=%lld\n",
                    d->name, k.block_size, k.regs_per_thread, (long long)k.static_smem, (long long)k.dynamic_smem,
                    (int)k.smem_config, (long long)k.max_dynamic_smem, k.carveout_pct, (int)k.cache_config, k.barriers,
                    (int)rs, ref.activeBlocksPerMultiprocessor, ref.limitingFactors, ref.blockLimitRegs,
                    ref.blockLimitSharedMem, ref.blockLimitWarps, ref.blockLimitBlocks, ref.blockLimitBarriers,
                    ref.allocatedRegistersPerBlock, ref.allocatedSharedMemPerBlock, (int)ws, ours.active_blocks_per_sm,
                    ours.limiters, ours.block_limit_registers, ours.block_limit_shared_memory, ours.block_limit_warps,
                    ours.block_limit_blocks, ours.block_limit_barriers, ours.allocated_registers_per_block,
                    (long long)ours.allocated_smem_per_block);
    }
    return same;
}

} // namespace

int main()
{
    uint64_t seed = 0x5eed0cc0ull;
    long n_random = 200000;
    if (const char *s = getenv("WL_OCC_SEED"))
        seed = strtoull(s, nullptr, 0);
    if (const char *s = getenv("WL_OCC_N"))
        n_random = strtol(s, nullptr, 10);
    printf("occupancy exactness vs cuda_occupancy.h (CUDA_OCC %d.%d): seed 0x%llx, %ld random configs per arch "
           "+ exhaustive block 1..1024 x regs 0..255\n",
           __CUDA_OCC_MAJOR__, __CUDA_OCC_MINOR__, (unsigned long long)seed, n_random);
    printf("%-8s %-22s %10s %10s %10s  %s\n", "arch", "device", "configs", "mismatch", "0 blocks", "limiters seen");

    auto t0 = std::chrono::steady_clock::now();
    long total = 0, total_bad = 0, archs = 0;
    for (size_t i = 0; i < wl_occ_device_count(); i++) {
        const wl_occ_device *d = wl_occ_device_at(i);
        if (d->vendor != WL_OCC_NVIDIA)
            continue;
        archs++;
        cudaOccDeviceProp prop = to_prop(d);
        rng g{seed ^ (uint64_t)(d->cc_major * 100 + d->cc_minor)};
        arch_stats st;
        int printed = 0;

        for (int block = 1; block <= 1024; block++)
            for (int regs = 0; regs <= 255; regs++) {
                wl_occ_kernel k;
                wl_occ_kernel_init(&k);
                k.block_size = block;
                k.regs_per_thread = regs;
                random_smem_and_settings(g, d, &k);
                if (!compare_one(d, prop, k, st, printed < 5))
                    printed++;
            }
        for (long n = 0; n < n_random; n++) {
            wl_occ_kernel k;
            wl_occ_kernel_init(&k);
            k.block_size = g.chance(30) ? 32 * (int)g.range(1, 32) : (int)g.range(1, 1024);
            k.regs_per_thread = (int)g.range(0, 255);
            random_smem_and_settings(g, d, &k);
            if (!compare_one(d, prop, k, st, printed < 5))
                printed++;
        }

        char seen[96] = "";
        for (unsigned bit = 1; bit <= WL_OCC_LIMIT_BARRIERS; bit <<= 1)
            if (st.limiter_seen & bit) {
                strncat(seen, wl_occ_limiter_name(bit), sizeof seen - strlen(seen) - 2);
                strncat(seen, " ", sizeof seen - strlen(seen) - 1);
            }
        printf("%-8s %-22s %10ld %10ld %10ld  %s\n", d->name, d->product, st.configs, st.mismatches, st.zero_blocks, seen);
        CHECK_EQ_INT(st.mismatches, 0);
        /* Each architecture must have exercised every limiter that exists on it. */
        unsigned expect = WL_OCC_LIMIT_WARPS | WL_OCC_LIMIT_REGISTERS | WL_OCC_LIMIT_SHARED_MEMORY | WL_OCC_LIMIT_BLOCKS;
        if (d->max_barriers_per_sm > 0)
            expect |= WL_OCC_LIMIT_BARRIERS;
        CHECK_EQ_INT(st.limiter_seen & expect, expect);
        total += st.configs;
        total_bad += st.mismatches;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("%-8s %-22s %10ld %10ld   (%.2f s)\n", "total", "", total, total_bad, secs);
    CHECK(archs >= 9);
    return test_report("occupancy_exact");
}
