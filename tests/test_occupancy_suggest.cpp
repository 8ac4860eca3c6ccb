/* Block-size suggestion and next occupancy step (src/analysis/occupancy_suggest.h).
 *
 * 1. Exactness on every NVIDIA device table entry: wl_occ_suggest_block_size against the
 *    toolkit's cudaOccMaxPotentialOccupancyBlockSize (constant dynamic shared memory, through
 *    the C++ overload and the C form with a function pointer) and
 *    cudaOccMaxPotentialOccupancyBlockSizeVariableSMem (a functor of the block size), on random
 *    registers, static/dynamic shared memory, default/opt-in limit, the function's max dynamic
 *    size, carveout and cache preference, barriers and block-size limits. Suggested block size
 *    and min grid size must be equal on every configuration.
 * 2. The AMD tables, which have no vendor reference in the toolkit: the suggestion must be the
 *    documented search (the most threads per CU over the limit and every wave multiple below it,
 *    ties to the larger size), checked against an exhaustive evaluation of every candidate.
 * 3. wl_occ_next_step on every device: the returned count gains a block, one more register
 *    (one more byte) does not, nor does any count between it and the launch's; a -1 is checked
 *    by trying every register count and random byte counts below the launch's. Plus
 *    hand-computed H100 cases.
 * WL_OCC_SEED / WL_OCC_N override the seed and the random count per architecture and form. */
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "analysis/device_tables.h"
#include "analysis/occupancy.h"
#include "analysis/occupancy_suggest.h"
#include "occ_reference.h"
#include "test.h"

namespace {

using occref::rng;

/* Dynamic shared memory as a function of the block size, in shapes real kernels use: a tile
 * per thread, per warp, a power-of-two scratch, or a constant. */
struct smem_shape {
    int kind;
    int64_t fixed, per;
    int64_t operator()(int block) const
    {
        switch (kind) {
        case 0: return fixed + per * block;
        case 1: return fixed + per * ((block + 31) / 32);
        case 2: {
            int64_t p = 1;
            while (p < block)
                p *= 2;
            return fixed + per * p;
        }
        default: return fixed;
        }
    }
};

int64_t shape_fn(int block, void *ctx) { return (*(const smem_shape *)ctx)(block); }

/* The C form of the reference takes a plain function pointer: it reads this shape. */
smem_shape g_c_shape;
size_t c_shape_fn(int block) { return (size_t)g_c_shape(block); }

smem_shape random_shape(rng &g, const wl_occ_device *d)
{
    smem_shape s;
    s.kind = (int)g.range(0, 3);
    s.fixed = g.chance(40) ? 0 : g.range(0, 16384);
    switch (s.kind) {
    case 0: s.per = g.range(0, 256); break;                     /* bytes per thread */
    case 1: s.per = g.range(0, d->smem_per_block_optin / 16); break; /* bytes per warp */
    case 2: s.per = g.range(0, 128); break;
    default: s.per = 0; break;
    }
    return s;
}

/* 0 = the device's limit; otherwise what __launch_bounds__ or the register count allow. */
int random_block_limit(rng &g)
{
    int r = (int)g.range(0, 9);
    if (r < 4)
        return 0;
    if (r < 7)
        return 32 * (int)g.range(1, 32);
    return (int)g.range(1, 1024);
}

struct stats {
    long configs = 0, mismatches = 0, none_runs = 0, not_full = 0, not_max = 0, odd = 0, ref_errors = 0;
};

void random_kernel(rng &g, const wl_occ_device *d, wl_occ_kernel *k)
{
    wl_occ_kernel_init(k);
    k->block_size = 1; /* ignored by the suggestion */
    k->regs_per_thread = g.chance(10) ? 0 : (int)g.range(1, 255);
    if (d->sgprs_per_simd > 0 && g.chance(50))
        k->sgprs_per_wave = (int)g.range(1, d->max_sgprs_per_wave);
    occref::random_smem_and_settings(g, d, k);
}

void tally(stats &st, const wl_occ_device *d, const wl_occ_suggestion &s, int limit)
{
    st.configs++;
    if (s.block_size == 0)
        st.none_runs++;
    else if (s.occ.active_warps_per_sm * d->warp_size < d->max_threads_per_sm)
        st.not_full++;
    int lim = limit ? limit : d->max_threads_per_block;
    if (s.block_size != 0 && s.block_size != lim)
        st.not_max++;
    if (s.block_size % d->warp_size)
        st.odd++;
}

enum form { CONSTANT, C_POINTER, FUNCTOR };

/* One configuration against the reference in one of its three forms. */
bool compare_nvidia(const wl_occ_device *d, const cudaOccDeviceProp &prop, const wl_occ_kernel &k, int limit,
                    form f, smem_shape shape, stats &st, bool verbose)
{
    cudaOccFuncAttributes fa = occref::to_attrs(k, limit ? limit : d->max_threads_per_block);
    cudaOccDeviceState ds = occref::to_state(k);
    int ref_grid = -1, ref_block = -1;
    cudaOccError rs;
    wl_occ_suggestion ours;
    wl_occ_status ws;
    if (f == CONSTANT) {
        rs = cudaOccMaxPotentialOccupancyBlockSize(&ref_grid, &ref_block, &prop, &fa, &ds, (size_t)k.dynamic_smem);
        ws = wl_occ_suggest_block_size(d, &k, limit, nullptr, nullptr, &ours);
    } else if (f == C_POINTER) {
        g_c_shape = shape;
        rs = cudaOccMaxPotentialOccupancyBlockSize(&ref_grid, &ref_block, &prop, &fa, &ds, c_shape_fn, 0);
        ws = wl_occ_suggest_block_size(d, &k, limit, shape_fn, &shape, &ours);
    } else {
        rs = cudaOccMaxPotentialOccupancyBlockSizeVariableSMem(&ref_grid, &ref_block, &prop, &fa, &ds, shape);
        ws = wl_occ_suggest_block_size(d, &k, limit, shape_fn, &shape, &ours);
    }
    if (rs != CUDA_OCC_SUCCESS)
        st.ref_errors++;
    tally(st, d, ours, limit);
    int64_t want_dyn = f == CONSTANT ? k.dynamic_smem : shape(ours.block_size);
    bool same = rs == CUDA_OCC_SUCCESS && ws == WL_OCC_OK && ref_block == ours.block_size &&
                ref_grid == ours.min_grid_size &&
                (ours.block_size == 0 || (ours.occ.active_blocks_per_sm * d->sm_count == ref_grid &&
                                          ours.dynamic_smem == want_dyn));
    if (!same) {
        st.mismatches++;
        if (verbose)
            fprintf(stderr,
                    "MISMATCH %s form=%d limit=%d regs=%d static=%lld dyn=%lld shape=%d/%lld/%lld cfg=%d maxdyn=%lld "
                    "carve=%d cache=%d bars=%d\n  ref: err=%d block=%d grid=%d\n  ours: st=%d block=%d grid=%d\n",
                    d->name, (int)f, limit, k.regs_per_thread, (long long)k.static_smem, (long long)k.dynamic_smem,
                    shape.kind, (long long)shape.fixed, (long long)shape.per, (int)k.smem_config,
                    (long long)k.max_dynamic_smem, k.carveout_pct, (int)k.cache_config, k.barriers, (int)rs,
                    ref_block, ref_grid, (int)ws, ours.block_size, ours.min_grid_size);
    }
    return same;
}

/* The documented search, evaluated in full: every candidate size's threads per SM. */
bool check_search(const wl_occ_device *d, const wl_occ_kernel &k, int limit, const smem_shape &shape, stats &st,
                  bool verbose)
{
    wl_occ_suggestion ours;
    wl_occ_status ws = wl_occ_suggest_block_size(d, &k, limit, shape_fn, (void *)&shape, &ours);
    tally(st, d, ours, limit);
    int lim = limit && limit < d->max_threads_per_block ? limit : d->max_threads_per_block;
    int best = 0, best_blocks = 0;
    int64_t best_threads = 0;
    for (int size = lim; size > 0; size = size == lim && size % d->warp_size ? size / d->warp_size * d->warp_size
                                                                             : size - d->warp_size) {
        wl_occ_kernel t = k;
        t.block_size = size;
        t.dynamic_smem = shape(size);
        wl_occ_result r;
        if (!wl_occ_status_has_result(wl_occ_calculate(d, &t, &r))) {
            st.mismatches++;
            return false;
        }
        if ((int64_t)size * r.active_blocks_per_sm > best_threads)
            best = size, best_blocks = r.active_blocks_per_sm, best_threads = (int64_t)size * r.active_blocks_per_sm;
    }
    bool same = ws == WL_OCC_OK && ours.block_size == best && ours.min_grid_size == best_blocks * d->sm_count;
    if (!same) {
        st.mismatches++;
        if (verbose)
            fprintf(stderr, "SEARCH MISMATCH %s limit=%d regs=%d: want %d (%d blocks), got %d (%d)\n", d->name, limit,
                    k.regs_per_thread, best, best_blocks, ours.block_size, ours.occ.active_blocks_per_sm);
    }
    return same;
}

int blocks_at(const wl_occ_device *d, wl_occ_kernel k, int regs, int64_t smem_total)
{
    k.regs_per_thread = regs;
    if (smem_total >= 0) {
        if (smem_total >= k.static_smem) {
            k.dynamic_smem = smem_total - k.static_smem;
        } else {
            k.static_smem = smem_total;
            k.dynamic_smem = 0;
        }
    }
    wl_occ_result r;
    wl_occ_status st = wl_occ_calculate(d, &k, &r);
    return wl_occ_status_has_result(st) ? r.active_blocks_per_sm : -1;
}

struct step_stats {
    long configs = 0, bad = 0, regs_found = 0, smem_found = 0;
};

/* The properties of one next-step answer, recomputed with the calculator. */
void check_step(const wl_occ_device *d, rng &g, const wl_occ_kernel &k, step_stats &st, bool verbose)
{
    wl_occ_step s;
    wl_occ_status ws = wl_occ_next_step(d, &k, &s);
    if (!wl_occ_status_has_result(ws))
        return;
    st.configs++;
    int now = blocks_at(d, k, k.regs_per_thread, -1);
    int64_t total = k.static_smem + k.dynamic_smem;
    bool ok = s.active_blocks_per_sm == now;
    if (s.regs_per_thread >= 0) {
        st.regs_found++;
        ok = ok && s.regs_per_thread < k.regs_per_thread &&
             blocks_at(d, k, s.regs_per_thread, -1) == s.regs_active_blocks_per_sm &&
             s.regs_active_blocks_per_sm > now && blocks_at(d, k, s.regs_per_thread + 1, -1) <= now;
        for (int r = s.regs_per_thread + 1; ok && r < k.regs_per_thread; r++)
            ok = blocks_at(d, k, r, -1) <= now;
    } else {
        ok = ok && s.regs_per_thread == -1 && s.regs_active_blocks_per_sm == 0;
        for (int r = 0; ok && r < k.regs_per_thread && r <= d->max_regs_per_thread; r++)
            ok = blocks_at(d, k, r, -1) <= now;
    }
    int64_t lo = 0;
    if (s.smem_per_block >= 0) {
        st.smem_found++;
        ok = ok && s.smem_per_block < total &&
             blocks_at(d, k, k.regs_per_thread, s.smem_per_block) == s.smem_active_blocks_per_sm &&
             s.smem_active_blocks_per_sm > now && blocks_at(d, k, k.regs_per_thread, s.smem_per_block + 1) <= now;
        lo = s.smem_per_block + 1;
    } else {
        ok = ok && s.smem_active_blocks_per_sm == 0;
    }
    /* Nothing between the answer (or 0) and the launch's own size gains a block. */
    for (int i = 0; ok && i < 64 && lo < total; i++)
        ok = blocks_at(d, k, k.regs_per_thread, g.range(lo, total - 1)) <= now;
    if (!ok) {
        st.bad++;
        if (verbose)
            fprintf(stderr, "STEP WRONG %s block=%d regs=%d smem=%lld+%lld: now %d, regs %d (%d), smem %lld (%d)\n",
                    d->name, k.block_size, k.regs_per_thread, (long long)k.static_smem, (long long)k.dynamic_smem, now,
                    s.regs_per_thread, s.regs_active_blocks_per_sm, (long long)s.smem_per_block,
                    s.smem_active_blocks_per_sm);
    }
}

void hand_cases()
{
    const wl_occ_device *h100 = wl_occ_device_find("h100");
    CHECK(h100 != nullptr);
    if (!h100)
        return;
    wl_occ_kernel k;
    wl_occ_kernel_init(&k);

    /* 256 threads x 128 regs: 4096 regs per warp, 4 warps per sub-partition, 2 blocks. Three
     * blocks need 6 warps per sub-partition, <= 2730 regs per warp: 80 regs (2560). */
    k.block_size = 256;
    k.regs_per_thread = 128;
    wl_occ_step s;
    CHECK_EQ_INT(wl_occ_next_step(h100, &k, &s), WL_OCC_OK);
    CHECK_EQ_INT(s.active_blocks_per_sm, 2);
    CHECK_EQ_INT(s.regs_per_thread, 80);
    CHECK_EQ_INT(s.regs_active_blocks_per_sm, 3);
    CHECK(s.regs_occupancy_pct == 37.5);
    CHECK_EQ_INT(s.smem_per_block, -1); /* no shared memory in use: it cannot be the step */

    /* 48 KiB static: 50176 bytes allocated, 4 blocks in 228 KiB. Five need <= 46694 allocated:
     * 46592, minus the 1 KiB the driver reserves = 45568 bytes. */
    k.regs_per_thread = 32;
    k.static_smem = 49152;
    CHECK_EQ_INT(wl_occ_next_step(h100, &k, &s), WL_OCC_OK);
    CHECK_EQ_INT(s.active_blocks_per_sm, 4);
    CHECK_EQ_INT(s.smem_per_block, 45568);
    CHECK_EQ_INT(s.smem_active_blocks_per_sm, 5);
    CHECK_EQ_INT(s.regs_per_thread, -1);

    /* Warp-limited (1024 threads, 32 regs): nothing to cut. */
    k.block_size = 1024;
    k.static_smem = 0;
    CHECK_EQ_INT(wl_occ_next_step(h100, &k, &s), WL_OCC_OK);
    CHECK_EQ_INT(s.active_blocks_per_sm, 2);
    CHECK_EQ_INT(s.regs_per_thread, -1);
    CHECK_EQ_INT(s.smem_per_block, -1);

    /* Cannot run (1024 x 255 regs): the step is the first count that runs, 64 regs. */
    k.regs_per_thread = 255;
    CHECK_EQ_INT(wl_occ_next_step(h100, &k, &s), WL_OCC_ERR_REGS_PER_BLOCK);
    CHECK_EQ_INT(s.active_blocks_per_sm, 0);
    CHECK_EQ_INT(s.regs_per_thread, 64);
    CHECK_EQ_INT(s.regs_active_blocks_per_sm, 1);

    /* The suggestion: 32 regs, no smem fills the SM at 1024. 128 regs: 16 warps per SM at
     * most (512 threads x 128 = the whole register file), reached by 512 (1 block) and by 256
     * (2 blocks); the tie keeps the larger. */
    wl_occ_suggestion sg;
    k.regs_per_thread = 32;
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, 0, nullptr, nullptr, &sg), WL_OCC_OK);
    CHECK_EQ_INT(sg.block_size, 1024);
    CHECK_EQ_INT(sg.min_grid_size, 2 * 132);
    CHECK_EQ_INT(sg.sizes_tried, 1); /* full at once: the search stops */
    k.regs_per_thread = 128;
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, 0, nullptr, nullptr, &sg), WL_OCC_OK);
    CHECK_EQ_INT(sg.block_size, 512);
    CHECK(sg.occ.occupancy_pct == 25.0);
    CHECK_EQ_INT(sg.min_grid_size, 1 * 132);
    /* A limit that is not a warp multiple is tried as it is: 1000 (2 blocks, 2000 threads)
     * beats 992 (1984), but 512 (4 blocks, 2048) fills the SM and wins. With a limit of 40,
     * 32 blocks per SM bind: 32 x 40 threads beat 32 x 32, and 40 itself wins. */
    k.regs_per_thread = 32;
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, 1000, nullptr, nullptr, &sg), WL_OCC_OK);
    CHECK_EQ_INT(sg.block_size, 512);
    CHECK_EQ_INT(sg.min_grid_size, 4 * 132);
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, 40, nullptr, nullptr, &sg), WL_OCC_OK);
    CHECK_EQ_INT(sg.block_size, 40);
    CHECK_EQ_INT(sg.min_grid_size, 32 * 132);
    CHECK(sg.occ.limiters & WL_OCC_LIMIT_BLOCKS);
    /* Dynamic smem of 2 KiB per 32 threads (64 B/thread): 1024 threads need 64 KiB + 1 KiB
     * reserved, 3 blocks fit 228 KiB: 3072 threads > 2048 cap, so 2 blocks of 1024 = full. */
    k.regs_per_thread = 32;
    k.smem_config = WL_OCC_SMEM_LIMIT_OPTIN;
    k.max_dynamic_smem = 65536;
    wl_occ_smem_linear lin = {0, 64};
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, 0, wl_occ_smem_linear_fn, &lin, &sg), WL_OCC_OK);
    CHECK_EQ_INT(sg.block_size, 1024);
    CHECK_EQ_INT(sg.dynamic_smem, 65536);
    /* Nothing runs: more smem than the opt-in limit at every size. */
    lin.fixed = 300 * 1024;
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, 0, wl_occ_smem_linear_fn, &lin, &sg), WL_OCC_OK);
    CHECK_EQ_INT(sg.block_size, 0);
    CHECK_EQ_INT(sg.min_grid_size, 0);
    CHECK(sg.occ.limiters & WL_OCC_LIMIT_SHARED_MEMORY);
    /* Invalid input. */
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, -1, nullptr, nullptr, &sg), WL_OCC_ERR_NEGATIVE);
    lin = {-100, 0};
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, 0, wl_occ_smem_linear_fn, &lin, &sg), WL_OCC_ERR_NEGATIVE);
    CHECK_EQ_INT(sg.block_size, 0);
    CHECK_EQ_INT(wl_occ_suggest_block_size(nullptr, &k, 0, nullptr, nullptr, &sg), WL_OCC_ERR_NULL);
    k.carveout_pct = 300;
    CHECK_EQ_INT(wl_occ_suggest_block_size(h100, &k, 0, nullptr, nullptr, &sg), WL_OCC_ERR_CARVEOUT);
    CHECK_EQ_INT(wl_occ_next_step(h100, &k, &s), WL_OCC_ERR_CARVEOUT);
    CHECK_EQ_INT(s.regs_per_thread, -1);
}

} // namespace

int main()
{
    uint64_t seed = occref::env_seed(0x5eed50ccull);
    long n = occref::env_count(20000);
    printf("block-size suggestion vs cuda_occupancy.h (CUDA_OCC %d.%d): seed 0x%llx, %ld random configs per arch "
           "and form (constant smem, C function pointer, VariableSMem functor)\n",
           __CUDA_OCC_MAJOR__, __CUDA_OCC_MINOR__, (unsigned long long)seed, n);
    printf("%-8s %-28s %8s %8s %8s %8s %8s %8s | %7s %6s %6s\n", "arch", "device", "configs", "mismatch",
           "no size", "not full", "< limit", "odd", "steps", "regs", "smem");

    hand_cases();
    auto t0 = std::chrono::steady_clock::now();
    long total = 0, total_bad = 0, total_nv = 0, steps = 0, steps_bad = 0;
    for (size_t i = 0; i < wl_occ_device_count(); i++) {
        const wl_occ_device *d = wl_occ_device_at(i);
        rng g{seed ^ (uint64_t)(d->cc_major * 100 + d->cc_minor) ^ ((uint64_t)d->vendor << 32)};
        stats st;
        step_stats ss;
        int printed = 0;
        bool nv = d->vendor == WL_OCC_NVIDIA;
        cudaOccDeviceProp prop = occref::to_prop(d);
        for (long j = 0; j < n; j++) {
            wl_occ_kernel k;
            random_kernel(g, d, &k);
            int limit = random_block_limit(g);
            smem_shape shape = random_shape(g, d);
            bool same;
            if (nv) {
                same = compare_nvidia(d, prop, k, limit, CONSTANT, shape, st, printed < 5) &&
                       compare_nvidia(d, prop, k, limit, C_POINTER, shape, st, printed < 5) &&
                       compare_nvidia(d, prop, k, limit, FUNCTOR, shape, st, printed < 5);
            } else {
                smem_shape constant = {3, k.dynamic_smem, 0};
                same = check_search(d, k, limit, constant, st, printed < 5) &&
                       check_search(d, k, limit, shape, st, printed < 5);
            }
            if (!same)
                printed++;
            /* The next step of a launch at a random size: about a tenth as many, each costs
             * a few hundred calculator runs. */
            if (j % 10 == 0) {
                k.block_size = g.chance(50) ? d->warp_size * (int)g.range(1, d->max_threads_per_block / d->warp_size)
                                            : (int)g.range(1, d->max_threads_per_block);
                check_step(d, g, k, ss, ss.bad < 5);
            }
        }
        printf("%-8s %-28s %8ld %8ld %8ld %8ld %8ld %8ld | %7ld %6ld %6ld\n", d->name, d->product, st.configs,
               st.mismatches, st.none_runs, st.not_full, st.not_max, st.odd, ss.configs, ss.regs_found, ss.smem_found);
        CHECK_EQ_INT(st.mismatches, 0);
        CHECK_EQ_INT(st.ref_errors, 0);
        CHECK_EQ_INT(ss.bad, 0);
        /* The random configurations must reach every kind of answer, or the test proves little. */
        CHECK(st.none_runs > 0 && st.not_full > 0 && st.not_max > 0 && st.odd > 0);
        CHECK(ss.regs_found > 0 && ss.smem_found > 0);
        total += st.configs;
        total_bad += st.mismatches;
        if (nv)
            total_nv += st.configs;
        steps += ss.configs;
        steps_bad += ss.bad;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("total: %ld suggestions (%ld against cuda_occupancy.h), %ld mismatches; %ld next steps, %ld wrong (%.2f s)\n",
           total, total_nv, total_bad, steps, steps_bad, secs);
    CHECK(total_nv >= 9 * 3 * n);
    return test_report("occupancy_suggest");
}
