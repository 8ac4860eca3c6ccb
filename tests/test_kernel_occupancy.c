/* Occupancy applied to recorded kernels: the session path (device row + kernel row) must give the
 * calculator's own answer, the cache must return the same results while running the calculator
 * once per configuration, and real rows from tests/data must read as expected. */
#include <stdlib.h>

#include "analysis/device_tables.h"
#include "analysis/kernel_occupancy.h"
#include "analysis/kernel_table.h"
#include "test.h"

/* The H100 as recorded in tests/data. */
static wl_device_row h100_row(void)
{
    wl_device_row d = {.pid = 7, .device_id = 0, .name = "NVIDIA H100 80GB HBM3", .cc_major = 9, .cc_minor = 0,
                       .sm_count = 132, .warp_size = 32, .max_threads_per_block = 1024, .max_threads_per_sm = 2048,
                       .max_blocks_per_sm = 32, .regs_per_sm = 65536, .regs_per_block = 65536,
                       .smem_per_sm = 233472, .smem_per_block = 49152, .smem_per_block_optin = 232448,
                       .reserved_smem_per_block = 1024, .core_clock_khz = 1980000, .mem_clock_khz = 2619000,
                       .mem_bus_width_bits = 5120};
    return d;
}

static wl_kernel_row kernel(int grid, int block, int regs, int64_t smem, int64_t dyn, int optin)
{
    wl_kernel_row k;
    memset(&k, 0, sizeof k);
    k.pid = 7;
    k.grid[0] = grid, k.grid[1] = k.grid[2] = 1;
    k.block[0] = block, k.block[1] = k.block[2] = 1;
    k.registers_per_thread = regs;
    k.static_smem = smem;
    k.dynamic_smem = dyn;
    k.smem_limit_config = optin;
    k.carveout_requested = -1;
    return k;
}

static void same_as_calculator(const wl_device_row *row, const wl_kernel_row *k)
{
    wl_occ_device d;
    CHECK_EQ_INT(wl_occ_device_from_row(row, &d), 0);
    wl_occ_kernel ok;
    wl_occ_kernel_init(&ok);
    ok.block_size = k->block[0] * k->block[1] * k->block[2];
    ok.regs_per_thread = k->registers_per_thread;
    ok.static_smem = k->static_smem;
    ok.dynamic_smem = k->dynamic_smem;
    ok.max_dynamic_smem = k->dynamic_smem;
    ok.smem_config = k->smem_limit_config ? WL_OCC_SMEM_LIMIT_OPTIN : WL_OCC_SMEM_LIMIT_DEFAULT;
    wl_occ_result want;
    wl_occ_status st = wl_occ_calculate(&d, &ok, &want);
    wl_kernel_occ got;
    CHECK_EQ_INT(wl_kernel_occupancy(row, k, &got), st);
    CHECK(got.has_result);
    CHECK(memcmp(&got.occ, &want, sizeof want) == 0);
    wl_occ_wave_info w;
    int64_t grid = (int64_t)k->grid[0] * k->grid[1] * k->grid[2];
    if (want.active_blocks_per_sm > 0 && wl_occ_waves(&d, &want, grid, 1, &w) == WL_OCC_OK) {
        CHECK(got.has_waves);
        CHECK(memcmp(&got.waves, &w, sizeof w) == 0);
    }
}

static void test_direct(void)
{
    wl_device_row row = h100_row();
    /* the CUPTI notes' example: 256 threads, 32 regs, 48 KiB static -> 4 blocks, smem-limited */
    wl_kernel_row k = kernel(1000, 256, 32, 49152, 0, 0);
    wl_kernel_occ o;
    CHECK_EQ_INT(wl_kernel_occupancy(&row, &k, &o), WL_OCC_OK);
    CHECK_EQ_INT(o.occ.active_blocks_per_sm, 4);
    CHECK_EQ_INT(o.occ.limiters, WL_OCC_LIMIT_SHARED_MEMORY);
    CHECK(o.occ.occupancy_pct == 50.0);
    CHECK_EQ_INT(o.waves.blocks_per_wave, 528);
    CHECK_EQ_INT(o.waves.full_waves, 1);
    CHECK_EQ_INT(o.waves.active_sms, 132);
    CHECK(o.sm_share == 1.0 && o.warp_fill == 0.5);
    same_as_calculator(&row, &k);

    /* rows from tests/data/torch-h100: the cuBLAS gemm (224 regs, 18816 B dynamic) */
    k = kernel(128, 128, 224, 0, 18816, 0);
    CHECK_EQ_INT(wl_kernel_occupancy(&row, &k, &o), WL_OCC_OK);
    CHECK_EQ_INT(o.occ.active_blocks_per_sm, 2);
    CHECK_EQ_INT(o.occ.limiters, WL_OCC_LIMIT_REGISTERS);
    CHECK_EQ_INT(o.occ.block_limit_shared_memory, 11);
    CHECK(o.occ.occupancy_pct == 12.5);
    /* 128 blocks of a 264-block wave: share 128/264 of the GPU, 12.5 % of warp slots on those */
    CHECK(o.sm_share > 0.4848 && o.sm_share < 0.4849);
    same_as_calculator(&row, &k);

    /* nvjet with a 2-block cluster and opt-in 213188 B dynamic shared memory */
    k = kernel(2, 384, 168, 0, 213188, 1);
    k.grid[1] = 64;
    k.cluster[0] = 2, k.cluster[1] = k.cluster[2] = 1;
    CHECK_EQ_INT(wl_kernel_occupancy(&row, &k, &o), WL_OCC_OK);
    CHECK_EQ_INT(o.occ.active_blocks_per_sm, 1);
    CHECK_EQ_INT(o.occ.limiters, WL_OCC_LIMIT_REGISTERS | WL_OCC_LIMIT_SHARED_MEMORY);
    CHECK_EQ_INT(o.waves.blocks_per_wave, 132);

    /* recorded as DEFAULT with more than 48 KiB: it ran, so opt-in is applied and noted */
    k = kernel(132, 128, 32, 0, 100000, 0);
    CHECK_EQ_INT(wl_kernel_occupancy(&row, &k, &o), WL_OCC_OK);
    CHECK(o.smem_optin_assumed);
    CHECK_EQ_INT(o.occ.active_blocks_per_sm, 2);

    /* every block size 32..1024 step 32 x a few register counts */
    for (int b = 32; b <= 1024; b += 32)
        for (int r = 16; r <= 255; r += 37) {
            k = kernel(500, b, r, 1024 * (b % 7), 512 * (r % 5), 0);
            same_as_calculator(&row, &k);
        }

    /* an architecture warplens does not know */
    row.cc_major = 3;
    CHECK_EQ_INT(wl_kernel_occupancy(&row, &k, &o), WL_OCC_ERR_DEVICE);
    CHECK(!o.has_result);
}

static void test_cache(void)
{
    wl_device_row row = h100_row();
    wl_occ_cache *c = wl_occ_cache_new(NULL);
    CHECK(c != NULL);
    CHECK_EQ_INT(wl_occ_cache_add_device(c, &row), 0);
    uint64_t hits, misses;
    /* 3000 launches over 30 configurations (10 block sizes x 3 smem sizes), grids varying */
    for (int i = 0; i < 3000; i++) {
        wl_kernel_row k = kernel(1 + i, 64 * (1 + i % 10), 40, 4096 * (i % 3), 0, 0);
        wl_kernel_occ a, b;
        wl_occ_cache_kernel(c, &k, &a);
        wl_kernel_occupancy(&row, &k, &b);
        CHECK(memcmp(&a.occ, &b.occ, sizeof a.occ) == 0);
        CHECK(a.has_waves == b.has_waves && memcmp(&a.waves, &b.waves, sizeof a.waves) == 0);
        CHECK(a.sm_share == b.sm_share && a.warp_fill == b.warp_fill);
    }
    wl_occ_cache_stats(c, &hits, &misses);
    CHECK_EQ_INT(misses, 30);
    CHECK_EQ_INT(hits, 2970);
    /* another process's device with the same limits is a different key */
    wl_kernel_row k = kernel(10, 64, 40, 0, 0, 0);
    k.pid = 8;
    wl_kernel_occ o;
    CHECK_EQ_INT(wl_occ_cache_kernel(c, &k, &o), WL_OCC_ERR_DEVICE);
    row.pid = 8;
    wl_occ_cache_add_device(c, &row);
    CHECK_EQ_INT(wl_occ_cache_kernel(c, &k, &o), WL_OCC_OK);
    wl_occ_cache_free(c);
}

static void test_session(void)
{
    const char *dir = getenv("WARPLENS_TEST_DATA");
    if (!dir)
        return;
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/torch-h100.wlsession", dir);
    wl_session *s = wl_session_open(path, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return;
    wl_occ_cache *c = wl_occ_cache_new(s);
    wl_kernel_cursor *cur = wl_kernel_cursor_open(s, NULL, err, sizeof err);
    wl_kernel_row r;
    int n = 0;
    while (wl_kernel_cursor_next(cur, &r) == 1) {
        wl_device_row dev;
        CHECK_EQ_INT(wl_session_device(s, r.pid, r.device_id, &dev), 0);
        wl_kernel_occ a, b;
        wl_occ_cache_kernel(c, &r, &a);
        wl_kernel_occupancy(&dev, &r, &b);
        CHECK(a.has_result && memcmp(&a.occ, &b.occ, sizeof a.occ) == 0);
        n++;
    }
    wl_kernel_cursor_close(cur);
    CHECK_EQ_INT(n, 126);
    uint64_t hits, misses;
    wl_occ_cache_stats(c, &hits, &misses);
    CHECK(misses == 9 && hits + misses == 126);

    wl_kernel_table_row *rows;
    int nr = wl_kernel_table(s, c, &rows);
    CHECK_EQ_INT(nr, 11);
    CHECK(nr > 0 && strstr(rows[0].name, "tilesize128x64x8") && rows[0].occ.occ.occupancy_pct == 12.5);
    wl_kernel_table_free(rows, nr);

    int64_t ids[4];
    CHECK_EQ_INT(wl_session_find_kernel_names(s, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", ids, 4), 1);
    CHECK_EQ_INT(wl_session_find_kernel_names(s, "vectorized_elementwise", ids, 4), 4);
    CHECK_EQ_INT(wl_session_find_kernel_names(s, "no such kernel", ids, 4), 0);
    CHECK_EQ_INT(wl_session_kernel_call_index(s, 84), 1);
    CHECK_EQ_INT(wl_session_kernel_call_index(s, 999999), 0);
    wl_occ_cache_free(c);
    wl_session_close(s);
}

int main(void)
{
    test_direct();
    test_cache();
    test_session();
    return test_report("test_kernel_occupancy");
}
