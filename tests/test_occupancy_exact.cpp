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
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "analysis/device_tables.h"
#include "analysis/occupancy.h"
#include "occ_reference.h"
#include "test.h"

namespace {

using occref::rng;

struct arch_stats {
    long configs = 0, mismatches = 0, zero_blocks = 0;
    unsigned limiter_seen = 0;
};

/* Runs one configuration through both calculators; returns false on any difference. */
bool compare_one(const wl_occ_device *d, const cudaOccDeviceProp &prop, const wl_occ_kernel &k,
                 arch_stats &st, bool verbose)
{
    cudaOccFuncAttributes fa = occref::to_attrs(k, 1024);
    cudaOccDeviceState ds = occref::to_state(k);

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
    uint64_t seed = occref::env_seed(0x5eed0cc0ull);
    long n_random = occref::env_count(200000);
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
        cudaOccDeviceProp prop = occref::to_prop(d);
        rng g{seed ^ (uint64_t)(d->cc_major * 100 + d->cc_minor)};
        arch_stats st;
        int printed = 0;

        for (int block = 1; block <= 1024; block++)
            for (int regs = 0; regs <= 255; regs++) {
                wl_occ_kernel k;
                wl_occ_kernel_init(&k);
                k.block_size = block;
                k.regs_per_thread = regs;
                occref::random_smem_and_settings(g, d, &k);
                if (!compare_one(d, prop, k, st, printed < 5))
                    printed++;
            }
        for (long n = 0; n < n_random; n++) {
            wl_occ_kernel k;
            wl_occ_kernel_init(&k);
            k.block_size = g.chance(30) ? 32 * (int)g.range(1, 32) : (int)g.range(1, 1024);
            k.regs_per_thread = (int)g.range(0, 255);
            occref::random_smem_and_settings(g, d, &k);
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
