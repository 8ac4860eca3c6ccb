/* Hand-checked occupancy cases: the sm_90 example from the CUPTI notes, carveout selection,
 * barriers, waves and clusters, every error status, AMD rules worked out on paper, device
 * lookup, table consistency and the peak-rate formulas. The arithmetic behind each expected
 * value is in the comment next to it. */
#include <math.h>
#include <stddef.h>

#include "analysis/device_tables.h"
#include "analysis/occupancy.h"
#include "test.h"

#define CHECK_NEAR(a, b, eps) CHECK(fabs((double)(a) - (double)(b)) <= (eps))

static const wl_occ_device *dev(const char *name)
{
    const wl_occ_device *d = wl_occ_device_find(name);
    CHECK(d != NULL);
    return d;
}

static wl_occ_kernel kern(int block, int regs, int64_t static_smem, int64_t dyn_smem)
{
    wl_occ_kernel k;
    wl_occ_kernel_init(&k);
    k.block_size = block;
    k.regs_per_thread = regs;
    k.static_smem = static_smem;
    k.dynamic_smem = dyn_smem;
    return k;
}

/* notes/cupti.md section 4: 256 threads, 32 regs, 48 KiB static on sm_90. */
static void test_h100_example(void)
{
    const wl_occ_device *d = dev("sm_90");
    wl_occ_kernel k = kern(256, 32, 49152, 0);
    wl_occ_result r;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 4);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_SHARED_MEMORY);
    CHECK_EQ_INT(r.block_limit_registers, 8);     /* 16384 regs per SMSP / 1024 per warp x 4 / 8 */
    CHECK_EQ_INT(r.block_limit_shared_memory, 4); /* 233472 / 50176 */
    CHECK_EQ_INT(r.block_limit_warps, 8);         /* 64 warps / 8 */
    CHECK_EQ_INT(r.block_limit_blocks, 32);
    CHECK_EQ_INT(r.block_limit_barriers, 64);     /* 32 block slots x 2 barriers / 1 */
    CHECK_EQ_INT(r.allocated_smem_per_block, 50176); /* 49152 + 1024 reserved, 128-aligned */
    CHECK_EQ_INT(r.allocated_registers_per_block, 8192);
    CHECK_EQ_INT(r.active_warps_per_sm, 32);
    CHECK_NEAR(r.occupancy_pct, 50.0, 1e-9);
    CHECK_EQ_INT(r.smem_carveout_per_sm, 233472);
    CHECK_EQ_INT(r.smem_limit_per_block, 49152 + 1024);

    /* One more byte of dynamic memory breaks the 48 KiB default limit... */
    k.dynamic_smem = 1;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_SMEM_PER_BLOCK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 0);
    CHECK_EQ_INT(r.block_limit_shared_memory, 0);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_SHARED_MEMORY);
    CHECK_EQ_INT(r.allocated_smem_per_block, 50304);
    /* ...but fits once the function opts in: 233472 / 50304 = 4. */
    k.smem_config = WL_OCC_SMEM_LIMIT_OPTIN;
    k.max_dynamic_smem = 1;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 4);
    CHECK_EQ_INT(r.smem_limit_per_block, 232448 + 1024);
    /* The launch may not exceed the function's declared maximum. */
    k.max_dynamic_smem = 0;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_SMEM_PER_BLOCK);

    /* The whole opt-in limit in dynamic memory: exactly one block; one byte more: none. */
    k = kern(128, 0, 0, 232448);
    k.smem_config = WL_OCC_SMEM_LIMIT_OPTIN;
    k.max_dynamic_smem = 232448;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 1);
    CHECK_EQ_INT(r.allocated_smem_per_block, 233472);
    k.dynamic_smem = k.max_dynamic_smem = 232449;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_SMEM_PER_BLOCK);
}

static void test_carveout(void)
{
    const wl_occ_device *d = dev("h100");
    wl_occ_kernel k = kern(256, 32, 49152, 0);
    wl_occ_result r;
    /* Carveout 0 %: no preference fits a block, so the smallest carveout that holds one
     * (64 KiB) is used: 65536 / 50176 = 1. */
    k.carveout_pct = 0;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 1);
    CHECK_EQ_INT(r.smem_carveout_per_sm, 65536);
    /* 50 % of 228 KiB = 114 KiB, rounded up to the 132 KiB carveout: 135168 / 50176 = 2. */
    k.carveout_pct = 50;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 2);
    CHECK_EQ_INT(r.smem_carveout_per_sm, 132 * 1024);
    /* The legacy preference maps onto the same percentages when the carveout is -1. */
    k.carveout_pct = WL_OCC_CARVEOUT_DEFAULT;
    k.cache_config = WL_OCC_CACHE_PREFER_L1;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 1);
    k.cache_config = WL_OCC_CACHE_PREFER_EQUAL;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 2);
    /* An explicit carveout wins over the cache preference. */
    k.carveout_pct = 100;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 4);

    /* Volta allocates shared memory in 256-byte units and reserves nothing. */
    k = kern(64, 16, 100, 0);
    CHECK_EQ_INT(wl_occ_calculate(dev("v100"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.allocated_smem_per_block, 256);
    CHECK_EQ_INT(r.block_limit_shared_memory, 384); /* 98304 / 256 */
    CHECK_EQ_INT(r.active_blocks_per_sm, 32);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_WARPS | WL_OCC_LIMIT_BLOCKS); /* 64/2 = 32 = 32: a tie */
    /* No shared memory at all on Turing: the limit does not apply. */
    k = kern(64, 16, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(dev("t4"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_shared_memory, WL_OCC_UNLIMITED);
    CHECK_EQ_INT(r.active_blocks_per_sm, 16);
}

static void test_registers_and_barriers(void)
{
    const wl_occ_device *d = dev("sm_90");
    wl_occ_result r;
    /* 33 regs x 32 lanes = 1056, rounded to 1280 per warp; 16384 / 1280 = 12 warps per SMSP,
     * 48 per SM, / 8 warps = 6 blocks. No shared memory except the reserved 1 KiB. */
    wl_occ_kernel k = kern(256, 33, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_registers, 6);
    CHECK_EQ_INT(r.allocated_registers_per_block, 10240);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_REGISTERS);
    CHECK_NEAR(r.occupancy_pct, 75.0, 1e-9);
    /* A kernel with no registers is not limited by them. */
    k.regs_per_thread = 0;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_registers, WL_OCC_UNLIMITED);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_WARPS);
    /* 200 threads = 7 warps, but the hardware check rounds warps up to the 4 SMSPs: 8 x 8192
     * = 65536 fits exactly with 255 regs/thread... */
    k = kern(200, 255, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_registers, 1);
    /* ...and 257 threads (9 warps, rounded to 12) do not. */
    k.block_size = 257;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_REGS_PER_BLOCK);
    CHECK_EQ_INT(r.block_limit_registers, 0);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_REGISTERS);

    /* 16 barriers per block: 64 / 16 = 4. A 32-thread block is otherwise limited by the 32
     * block slots, and that bit stays set next to the barrier bit (cudaOccResult does too). */
    k = kern(32, 0, 0, 0);
    k.barriers = 16;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_barriers, 4);
    CHECK_EQ_INT(r.active_blocks_per_sm, 4);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_BLOCKS | WL_OCC_LIMIT_BARRIERS);
    k.barriers = 65;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_BARRIERS);
    CHECK_EQ_INT(r.active_blocks_per_sm, 0);
    /* Before Hopper barriers never limit. */
    k.barriers = 16;
    CHECK_EQ_INT(wl_occ_calculate(dev("a100"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_barriers, WL_OCC_UNLIMITED);
    CHECK_EQ_INT(r.active_blocks_per_sm, 32);
    /* sm_120 has one barrier per block slot: 24 / 2 = 12. */
    k.barriers = 2;
    CHECK_EQ_INT(wl_occ_calculate(dev("sm_120"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_barriers, 12);
}

static void test_errors(void)
{
    const wl_occ_device *d = dev("sm_90");
    wl_occ_result r;
    wl_occ_kernel k = kern(0, 32, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_BLOCK_ZERO);
    CHECK_EQ_INT(r.active_blocks_per_sm, 0);
    CHECK(!wl_occ_status_has_result(WL_OCC_ERR_BLOCK_ZERO));
    k = kern(-32, 32, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_NEGATIVE);
    k = kern(32, -1, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_NEGATIVE);
    k = kern(32, 1, -1, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_NEGATIVE);
    k = kern(32, 1, 0, -5);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_NEGATIVE);
    k = kern(32, 1, 0, 0);
    k.barriers = -1;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_NEGATIVE);

    /* Too large a block: the result is still filled in, limited by warps. */
    k = kern(1025, 32, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_BLOCK_TOO_LARGE);
    CHECK(wl_occ_status_has_result(WL_OCC_ERR_BLOCK_TOO_LARGE));
    CHECK_EQ_INT(r.active_blocks_per_sm, 0);
    CHECK_EQ_INT(r.block_limit_warps, 0);
    CHECK(r.limiters & WL_OCC_LIMIT_WARPS);
    /* More registers than a thread may have. */
    k = kern(32, 256, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_REGS_PER_THREAD);
    CHECK_EQ_INT(r.block_limit_registers, 0);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_REGISTERS);
    /* 1024 threads x 255 regs: 32 warps x 8192 regs > 65536 per block. */
    k = kern(1024, 255, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_REGS_PER_BLOCK);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_REGISTERS);

    k = kern(32, 1, 0, 0);
    k.carveout_pct = 101;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_CARVEOUT);
    k.carveout_pct = -2;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_CARVEOUT);
    k.carveout_pct = -1;
    k.cache_config = (wl_occ_cache_config)7;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_CARVEOUT);
    k = kern(32, 1, 0, 0);
    k.cluster_size = 32;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_CLUSTER);
    k.cluster_size = 2;
    CHECK_EQ_INT(wl_occ_calculate(dev("sm_80"), &k, &r), WL_OCC_ERR_CLUSTER);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);

    CHECK_EQ_INT(wl_occ_calculate(NULL, &k, &r), WL_OCC_ERR_NULL);
    CHECK_EQ_INT(wl_occ_calculate(d, NULL, &r), WL_OCC_ERR_NULL);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, NULL), WL_OCC_ERR_NULL);
    wl_occ_device broken = *d;
    broken.warp_size = 0;
    CHECK_EQ_INT(wl_occ_calculate(&broken, &k, &r), WL_OCC_ERR_DEVICE);

    for (int s = WL_OCC_OK; s <= WL_OCC_ERR_BARRIERS; s++) {
        const char *m = wl_occ_status_message((wl_occ_status)s);
        CHECK(m && *m && strcmp(m, "unknown occupancy status") != 0);
    }
    CHECK_EQ_STR(wl_occ_limiter_name(WL_OCC_LIMIT_SHARED_MEMORY), "shared_memory");
    CHECK_EQ_STR(wl_occ_limiter_name(WL_OCC_LIMIT_BARRIERS), "barriers");
}

static void test_waves(void)
{
    const wl_occ_device *d = dev("sm_90");
    wl_occ_kernel k = kern(256, 32, 49152, 0);
    wl_occ_result r;
    wl_occ_wave_info w;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    /* 4 blocks x 132 SMs = 528 per wave; 1000 = 1 full wave + 472 (89.39 %). */
    CHECK_EQ_INT(wl_occ_waves(d, &r, 1000, 1, &w), WL_OCC_OK);
    CHECK_EQ_INT(w.blocks_per_wave, 528);
    CHECK_NEAR(w.waves_per_sm, 1000.0 / 528.0, 1e-12);
    CHECK_EQ_INT(w.full_waves, 1);
    CHECK_NEAR(w.tail_pct, 100.0 * 472 / 528, 1e-9);
    CHECK_EQ_INT(w.active_sms, 132);
    /* An exact multiple has a full last wave. */
    CHECK_EQ_INT(wl_occ_waves(d, &r, 1056, 1, &w), WL_OCC_OK);
    CHECK_EQ_INT(w.full_waves, 2);
    CHECK_NEAR(w.tail_pct, 100.0, 1e-12);
    /* A small grid leaves SMs idle. */
    CHECK_EQ_INT(wl_occ_waves(d, &r, 100, 1, &w), WL_OCC_OK);
    CHECK_EQ_INT(w.active_sms, 100);
    CHECK_EQ_INT(w.full_waves, 0);
    CHECK_NEAR(w.tail_pct, 100.0 * 100 / 528, 1e-9);
    /* Clusters: 1 block/SM (1024 threads x 64 regs) x 132 SMs = 132, whole clusters of 8 = 128. */
    k = kern(1024, 64, 0, 0);
    k.cluster_size = 8;
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.active_blocks_per_sm, 1);
    CHECK_EQ_INT(wl_occ_waves(d, &r, 256, 8, &w), WL_OCC_OK);
    CHECK_EQ_INT(w.blocks_per_wave, 128);
    CHECK_EQ_INT(w.full_waves, 2);
    CHECK_EQ_INT(wl_occ_waves(d, &r, 260, 8, &w), WL_OCC_ERR_GRID);
    CHECK_EQ_INT(wl_occ_waves(d, &r, 0, 1, &w), WL_OCC_ERR_GRID);
    CHECK_EQ_INT(wl_occ_waves(d, &r, -4, 1, &w), WL_OCC_ERR_NEGATIVE);
    CHECK_EQ_INT(wl_occ_waves(d, &r, 256, 32, &w), WL_OCC_ERR_CLUSTER);
    CHECK_EQ_INT(wl_occ_waves(d, NULL, 256, 1, &w), WL_OCC_ERR_NULL);
    /* A launch that cannot run has no waves. */
    k = kern(1024, 255, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_ERR_REGS_PER_BLOCK);
    CHECK_EQ_INT(wl_occ_waves(d, &r, 100, 1, &w), WL_OCC_ERR_NOT_RUNNABLE);
}

static void test_amd(void)
{
    wl_occ_result r;
    /* MI300X, 256 threads = 4 waves, 128 VGPRs: 128 x 64 = 8192 regs per wave; a SIMD holds
     * 512 x 64 = 32768, so 4 waves per SIMD, 16 per CU, 4 work-groups. Warps 32/4 = 8,
     * barrier slots 16, no LDS. Occupancy 16/32 waves. */
    wl_occ_kernel k = kern(256, 128, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(dev("gfx942"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_registers, 4);
    CHECK_EQ_INT(r.block_limit_warps, 8);
    CHECK_EQ_INT(r.block_limit_barriers, 16);
    CHECK_EQ_INT(r.block_limit_shared_memory, WL_OCC_UNLIMITED);
    CHECK_EQ_INT(r.active_blocks_per_sm, 4);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_REGISTERS);
    CHECK_NEAR(r.occupancy_pct, 50.0, 1e-9);
    CHECK_EQ_INT(r.allocated_registers_per_block, 4 * 8192);

    /* MI300X, one-wave work-groups with 16 KiB LDS: 65536 / 16384 = 4; single-wave groups
     * take no barrier slot. 4 waves of 32 = 12.5 %. */
    k = kern(64, 32, 16384, 0);
    CHECK_EQ_INT(wl_occ_calculate(dev("mi300x"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_shared_memory, 4);
    CHECK_EQ_INT(r.block_limit_barriers, WL_OCC_UNLIMITED);
    CHECK_EQ_INT(r.block_limit_registers, 64); /* 32768 / 2048 = 16 per SIMD x 4 */
    CHECK_EQ_INT(r.active_blocks_per_sm, 4);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_SHARED_MEMORY);
    CHECK_NEAR(r.occupancy_pct, 12.5, 1e-9);

    /* MI250X GCD, 128 threads = 2 waves, 40 VGPRs, 104 SGPRs, 5000 B LDS:
     * VGPR 40 x 64 = 2560 -> 32768 / 2560 = 12 waves/SIMD; SGPR roundup(104, 16) = 112 ->
     * 800 / 112 = 7 waves/SIMD; min 7 x 4 = 28 waves -> 14 groups. LDS roundup(5000, 512) =
     * 5120 -> 65536 / 5120 = 12 groups. Warps 32 / 2 = 16, barriers 16. Active 12 (LDS),
     * 24 of 32 waves = 75 %. */
    k = kern(128, 40, 5000, 0);
    k.sgprs_per_wave = 104;
    CHECK_EQ_INT(wl_occ_calculate(dev("gfx90a"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_registers, 14);
    CHECK_EQ_INT(r.block_limit_shared_memory, 12);
    CHECK_EQ_INT(r.allocated_smem_per_block, 5120);
    CHECK_EQ_INT(r.block_limit_warps, 16);
    CHECK_EQ_INT(r.block_limit_barriers, 16);
    CHECK_EQ_INT(r.active_blocks_per_sm, 12);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_SHARED_MEMORY);
    CHECK_NEAR(r.occupancy_pct, 75.0, 1e-9);
    k.sgprs_per_wave = 113; /* over the 112 a wave can hold */
    CHECK_EQ_INT(wl_occ_calculate(dev("gfx90a"), &k, &r), WL_OCC_ERR_REGS_PER_THREAD);

    /* 512 VGPRs leave one wave per SIMD, 4 per CU: a 16-wave work-group cannot launch. */
    k = kern(1024, 512, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(dev("gfx942"), &k, &r), WL_OCC_ERR_REGS_PER_BLOCK);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_REGISTERS);
    k.regs_per_thread = 513;
    CHECK_EQ_INT(wl_occ_calculate(dev("gfx942"), &k, &r), WL_OCC_ERR_REGS_PER_THREAD);
    k = kern(256, 32, 65537, 0); /* LDS over 64 KiB per work-group */
    CHECK_EQ_INT(wl_occ_calculate(dev("gfx942"), &k, &r), WL_OCC_ERR_SMEM_PER_BLOCK);

    /* RX 7900 XTX (WGP mode, wave32), 256 threads = 8 waves, 96 VGPRs, 32 KiB LDS:
     * 96 x 32 = 3072 per wave; 1536 x 32 = 49152 per SIMD -> 16 waves/SIMD, 64 per WGP -> 8
     * groups; warps 64 / 8 = 8; LDS 131072 / 32768 = 4; barriers 32. Active 4, 32/64 = 50 %. */
    k = kern(256, 96, 32768, 0);
    CHECK_EQ_INT(wl_occ_calculate(dev("gfx1100"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_registers, 8);
    CHECK_EQ_INT(r.block_limit_warps, 8);
    CHECK_EQ_INT(r.block_limit_shared_memory, 4);
    CHECK_EQ_INT(r.block_limit_barriers, 32);
    CHECK_EQ_INT(r.active_blocks_per_sm, 4);
    CHECK_NEAR(r.occupancy_pct, 50.0, 1e-9);
    /* 256 VGPRs round to 264 (granule 24): 49152 / (264 x 32) = 5 waves/SIMD, as LLVM's
     * 1536 / 264 = 5; 20 per WGP -> 10 two-wave groups; 20 / 64 waves = 31.25 %. */
    k = kern(64, 256, 0, 0);
    CHECK_EQ_INT(wl_occ_calculate(dev("rx7900xtx"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.block_limit_registers, 10);
    CHECK_EQ_INT(r.active_blocks_per_sm, 10);
    CHECK_EQ_INT(r.limiters, WL_OCC_LIMIT_REGISTERS);
    CHECK_NEAR(r.occupancy_pct, 31.25, 1e-9);
    /* LDS is allocated in 1 KiB blocks on RDNA3. */
    k = kern(64, 16, 1, 0);
    CHECK_EQ_INT(wl_occ_calculate(dev("gfx1100"), &k, &r), WL_OCC_OK);
    CHECK_EQ_INT(r.allocated_smem_per_block, 1024);
}

static void test_lookup_and_tables(void)
{
    const char *sm90[] = {"sm_90", "90", "9.0", "h100", "H100", "compute_90", "SM-90", "sm90a"};
    for (size_t i = 0; i < sizeof sm90 / sizeof sm90[0]; i++) {
        const wl_occ_device *d = wl_occ_device_find(sm90[i]);
        CHECK(d && !strcmp(d->name, "sm_90"));
    }
    CHECK_EQ_STR(wl_occ_device_find("RTX 4090")->name, "sm_89");
    CHECK_EQ_STR(wl_occ_device_find("mi300x")->name, "gfx942");
    CHECK_EQ_STR(wl_occ_device_find("MI250X")->name, "gfx90a");
    CHECK_EQ_STR(wl_occ_device_find("12.0")->name, "sm_120");
    CHECK_EQ_STR(wl_occ_device_find("7.5")->name, "sm_75");
    CHECK(wl_occ_device_find("sm_91") == NULL);
    CHECK(wl_occ_device_find("") == NULL);
    CHECK(wl_occ_device_find(NULL) == NULL);
    CHECK(wl_occ_device_at(wl_occ_device_count()) == NULL);

    static const char *required[] = {"sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90",
                                     "sm_100", "sm_120", "gfx90a", "gfx942", "gfx1100"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        CHECK(wl_occ_device_find(required[i]) != NULL);

    /* Every entry is self-consistent and can run a trivial kernel at full occupancy or close. */
    for (size_t i = 0; i < wl_occ_device_count(); i++) {
        const wl_occ_device *d = wl_occ_device_at(i);
        CHECK(d->source && *d->source);
        CHECK(d->smem_per_block_optin >= d->smem_per_block);
        CHECK(d->smem_per_block_optin + d->smem_reserved_per_block <= d->smem_per_sm);
        if (d->n_carveouts)
            CHECK_EQ_INT((int64_t)d->carveouts_kib[d->n_carveouts - 1] * 1024, d->smem_per_sm);
        CHECK(wl_occ_peak_fp32_tflops(d) > 0);
        CHECK(wl_occ_peak_dram_gbps(d) > 0);
        wl_occ_kernel k = kern(d->max_threads_per_block, 32, 0, 0);
        wl_occ_result r;
        CHECK_EQ_INT(wl_occ_calculate(d, &k, &r), WL_OCC_OK);
        CHECK(r.active_blocks_per_sm >= 1);
    }

    wl_occ_device d;
    CHECK_EQ_INT(wl_occ_device_init_cc(&d, 9, 0), 0);
    CHECK_EQ_STR(d.name, "sm_90");
    CHECK_EQ_INT(wl_occ_device_init_cc(&d, 10, 3), 0);
    CHECK_EQ_STR(d.name, "sm_100");
    CHECK_EQ_INT(d.cc_minor, 3);
    CHECK_EQ_INT(wl_occ_device_init_cc(&d, 6, 1), -1);
}

static void test_peaks(void)
{
    /* H100: 132 x 1.98 GHz x 256 = 66.9 TFLOP/s; 5120 / 8 x 2 x 2.619 GHz = 3352.3 GB/s. */
    const wl_occ_device *h = dev("sm_90");
    CHECK_NEAR(wl_occ_peak_fp32_tflops(h), 132 * 1.98e9 * 256 / 1e12, 1e-9);
    CHECK_NEAR(wl_occ_peak_dram_gbps(h), 3352.32, 1e-6);
    /* A100 80GB: 19.49 TFLOP/s, 2039 GB/s; its tensor peak 108 x 1.41 GHz x 2048 = 311.9. */
    const wl_occ_device *a = dev("a100");
    CHECK_NEAR(wl_occ_peak_fp32_tflops(a), 19.49, 0.01);
    CHECK_NEAR(wl_occ_peak_dram_gbps(a), 2039.04, 0.01);
    CHECK_NEAR(wl_occ_peak_tflops(a, a->fp16_tensor_flop_per_clk_per_sm), 311.87, 0.01);
    /* MI300X: 304 x 2.1 GHz x 256 = 163.4; 8192 / 8 x 5.2 GT/s = 5324.8 GB/s. */
    const wl_occ_device *m = dev("gfx942");
    CHECK_NEAR(wl_occ_peak_fp32_tflops(m), 163.43, 0.01);
    CHECK_NEAR(wl_occ_peak_dram_gbps(m), 5324.8, 1e-6);
    CHECK_NEAR(wl_occ_peak_fp32_tflops(NULL), 0, 0);
}

int main(void)
{
    test_h100_example();
    test_carveout();
    test_registers_and_barriers();
    test_errors();
    test_waves();
    test_amd();
    test_lookup_and_tables();
    test_peaks();
    return test_report("occupancy");
}
