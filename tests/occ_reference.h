/* What the occupancy tests that compare warplens with the toolkit's cuda_occupancy.h share: the
 * header itself (with its warnings silenced), a seeded generator that reproduces on every
 * platform, the translation of a wl_occ_device / wl_occ_kernel into the header's device
 * properties, function attributes and device state, and random shared-memory settings that
 * cluster at the edges. C++ only (the header needs it); included by tests/test_occupancy_*.cpp. */
#ifndef WARPLENS_TESTS_OCC_REFERENCE_H
#define WARPLENS_TESTS_OCC_REFERENCE_H

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include <cuda_occupancy.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <cstdint>
#include <cstdlib>

#include "analysis/occupancy.h"

namespace occref {

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

/* WL_OCC_SEED / WL_OCC_N (or the defaults) so a failing run can be repeated and enlarged. */
inline uint64_t env_seed(uint64_t dflt)
{
    const char *s = getenv("WL_OCC_SEED");
    return s ? strtoull(s, nullptr, 0) : dflt;
}
inline long env_count(long dflt)
{
    const char *s = getenv("WL_OCC_N");
    return s ? strtol(s, nullptr, 10) : dflt;
}

inline cudaOccDeviceProp to_prop(const wl_occ_device *d)
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

/* The function attributes of a kernel; max_threads is the function's block-size limit
 * (__launch_bounds__), which only the block-size search reads. */
inline cudaOccFuncAttributes to_attrs(const wl_occ_kernel &k, int max_threads)
{
    cudaOccFuncAttributes fa;
    fa.maxThreadsPerBlock = max_threads;
    fa.numRegs = k.regs_per_thread;
    fa.sharedSizeBytes = (size_t)k.static_smem;
    fa.partitionedGCConfig = PARTITIONED_GC_OFF;
    fa.shmemLimitConfig = k.smem_config == WL_OCC_SMEM_LIMIT_OPTIN ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
    fa.maxDynamicSharedSizeBytes = (size_t)k.max_dynamic_smem;
    fa.numBlockBarriers = k.barriers;
    fa.virtualResourceCount = 0;
    return fa;
}

inline cudaOccDeviceState to_state(const wl_occ_kernel &k)
{
    cudaOccDeviceState ds;
    ds.cacheConfig = (cudaOccCacheConfig)k.cache_config;
    ds.carveoutConfig = k.carveout_pct;
    return ds;
}

/* Random shared memory, limit config, carveout and barriers for one kernel. Sizes cluster near
 * the interesting edges (0, the default limit, the opt-in limit) as well as spreading evenly. */
inline void random_smem_and_settings(rng &g, const wl_occ_device *d, wl_occ_kernel *k)
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

} // namespace occref

#endif
