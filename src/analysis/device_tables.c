/* The built-in device tables. Occupancy limits come from the CUDA C Programming Guide's
 * "Technical Specifications per Compute Capability" table and the toolkit's cuda_occupancy.h
 * (CUDA 13.0: allocation granularities, carveout sizes, blocks and barriers per SM); AMD limits
 * from LLVM's AMDGPU backend (AMDGPUUsage, AMDGPUBaseInfo) and AMD's ISA guides. Peak rates are
 * the vendors' datasheet figures divided back into per-SM (per-CU) per-clock rates. */
#include "analysis/device_tables.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    const char *aliases; /* space separated, compared after normalisation */
    wl_occ_device d;
} entry;

/* Carveout lists (KiB) shared by several architectures; from cuda_occupancy.h. */
#define CARVE_VOLTA .carveouts_kib = {0, 8, 16, 32, 64, 96}, .n_carveouts = 6
#define CARVE_TURING .carveouts_kib = {32, 64}, .n_carveouts = 2
#define CARVE_GA100 .carveouts_kib = {0, 8, 16, 32, 64, 100, 132, 164}, .n_carveouts = 8
#define CARVE_100K .carveouts_kib = {0, 8, 16, 32, 64, 100}, .n_carveouts = 6
#define CARVE_228K .carveouts_kib = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}, .n_carveouts = 10

/* Fields every NVIDIA GPU since Volta shares: 32-thread warps, 1024 threads per block, 64K
 * registers per SM and per block, 255 registers per thread, registers allocated 256 per warp,
 * 4 SM sub-partitions, 48 KiB default shared memory per block. */
#define NV_COMMON                                                                                  \
    .vendor = WL_OCC_NVIDIA, .warp_size = 32, .max_threads_per_block = 1024,                      \
    .sub_partitions = 4, .regs_per_sm = 65536, .regs_per_block = 65536,                            \
    .max_regs_per_thread = 255, .reg_alloc_unit = 256,                                             \
    .reg_alloc_granularity = WL_OCC_REG_GRAN_WARP, .smem_per_block = 48 * 1024

static const entry TABLE[] = {
    /* V100 SXM2: CUDA guide cc 7.0 column; 96 KiB smem/SM, 256-byte smem granularity (header);
     * 80 SMs, 1530 MHz boost, HBM2 877 MHz x 4096 bits (NVIDIA V100 datasheet: 900 GB/s,
     * 15.7 FP32 / 7.8 FP64 / 125 tensor TFLOPS). No BF16 tensor cores. */
    {"sm_70 70 7.0 compute_70 v100 volta",
     {.name = "sm_70", .product = "Tesla V100 SXM2", NV_COMMON, .cc_major = 7, .cc_minor = 0,
      .sm_count = 80, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
      .smem_per_sm = 96 * 1024, .smem_per_block_optin = 96 * 1024, .smem_reserved_per_block = 0,
      .smem_alloc_granularity = 256, CARVE_VOLTA, .max_barriers_per_sm = 0,
      .max_cluster_size = 0, .core_clock_khz = 1530000, .mem_clock_khz = 877000,
      .mem_bus_width_bits = 4096, .fp32_flop_per_clk_per_sm = 128,
      .fp16_tensor_flop_per_clk_per_sm = 1024, .bf16_tensor_flop_per_clk_per_sm = 0,
      .fp64_flop_per_clk_per_sm = 64,
      .source = "CUDA C Programming Guide cc 7.0; cuda_occupancy.h; NVIDIA V100 datasheet"}},
    /* T4: cc 7.5 (1024 threads and 16 blocks per SM, 64 KiB smem with 32/64 KiB carveouts);
     * 40 SMs, 1590 MHz, GDDR6 5001 MHz x 256 bits (T4 datasheet: 320 GB/s, 8.1 FP32 and
     * 65 FP16 tensor TFLOPS); FP64 at 1/32 rate. */
    {"sm_75 75 7.5 compute_75 t4 turing",
     {.name = "sm_75", .product = "Tesla T4", NV_COMMON, .cc_major = 7, .cc_minor = 5,
      .sm_count = 40, .max_threads_per_sm = 1024, .max_blocks_per_sm = 16,
      .smem_per_sm = 64 * 1024, .smem_per_block_optin = 64 * 1024, .smem_reserved_per_block = 0,
      .smem_alloc_granularity = 256, CARVE_TURING, .max_barriers_per_sm = 0,
      .max_cluster_size = 0, .core_clock_khz = 1590000, .mem_clock_khz = 5001000,
      .mem_bus_width_bits = 256, .fp32_flop_per_clk_per_sm = 128,
      .fp16_tensor_flop_per_clk_per_sm = 1024, .bf16_tensor_flop_per_clk_per_sm = 0,
      .fp64_flop_per_clk_per_sm = 4,
      .source = "CUDA C Programming Guide cc 7.5; cuda_occupancy.h; NVIDIA T4 datasheet"}},
    /* A100 SXM4 80GB: cc 8.0 (164 KiB smem/SM, 163 KiB opt-in, 1 KiB reserved per block,
     * 128-byte granularity); 108 SMs, 1410 MHz, HBM2e 1593 MHz x 5120 bits (datasheet:
     * 2039 GB/s, 19.5 FP32, 9.7 FP64, 312 FP16/BF16 dense tensor TFLOPS). */
    {"sm_80 80 8.0 compute_80 a100 ampere ga100",
     {.name = "sm_80", .product = "A100 SXM4 80GB", NV_COMMON, .cc_major = 8, .cc_minor = 0,
      .sm_count = 108, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
      .smem_per_sm = 164 * 1024, .smem_per_block_optin = 163 * 1024,
      .smem_reserved_per_block = 1024, .smem_alloc_granularity = 128,
      CARVE_GA100, .max_barriers_per_sm = 0, .max_cluster_size = 0,
      .core_clock_khz = 1410000, .mem_clock_khz = 1593000, .mem_bus_width_bits = 5120,
      .fp32_flop_per_clk_per_sm = 128, .fp16_tensor_flop_per_clk_per_sm = 2048,
      .bf16_tensor_flop_per_clk_per_sm = 2048, .fp64_flop_per_clk_per_sm = 64,
      .source = "CUDA C Programming Guide cc 8.0; cuda_occupancy.h; NVIDIA A100 datasheet"}},
    /* RTX 3090 (GA102; the A40 shares the limits): cc 8.6 (1536 threads and 16 blocks per SM,
     * 100 KiB smem, 99 KiB opt-in); 82 SMs, 1695 MHz, GDDR6X 9751 MHz x 384 bits (936 GB/s);
     * 35.6 FP32 TFLOPS, 71 FP16 tensor TFLOPS with FP32 accumulate (Ampere GA102 whitepaper). */
    {"sm_86 86 8.6 compute_86 rtx3090 3090 a40 ga102",
     {.name = "sm_86", .product = "GeForce RTX 3090", NV_COMMON, .cc_major = 8, .cc_minor = 6,
      .sm_count = 82, .max_threads_per_sm = 1536, .max_blocks_per_sm = 16,
      .smem_per_sm = 100 * 1024, .smem_per_block_optin = 99 * 1024,
      .smem_reserved_per_block = 1024, .smem_alloc_granularity = 128,
      CARVE_100K, .max_barriers_per_sm = 0, .max_cluster_size = 0,
      .core_clock_khz = 1695000, .mem_clock_khz = 9751000, .mem_bus_width_bits = 384,
      .fp32_flop_per_clk_per_sm = 256, .fp16_tensor_flop_per_clk_per_sm = 512,
      .bf16_tensor_flop_per_clk_per_sm = 512, .fp64_flop_per_clk_per_sm = 4,
      .source = "CUDA C Programming Guide cc 8.6; cuda_occupancy.h; NVIDIA Ampere GA102 whitepaper"}},
    /* Jetson AGX Orin 64GB: cc 8.7 (GA100-like 164 KiB smem, GA10x-like 1536 threads and 16
     * blocks per SM); 16 SMs, 1300 MHz, LPDDR5 3200 MHz x 256 bits (204.8 GB/s), 5.3 FP32
     * TFLOPS; tensor rate from the GPU's 170 sparse INT8 TOPS (Jetson AGX Orin datasheet). */
    {"sm_87 87 8.7 compute_87 orin agxorin jetson",
     {.name = "sm_87", .product = "Jetson AGX Orin 64GB", NV_COMMON, .cc_major = 8,
      .cc_minor = 7, .sm_count = 16, .max_threads_per_sm = 1536, .max_blocks_per_sm = 16,
      .smem_per_sm = 164 * 1024, .smem_per_block_optin = 163 * 1024,
      .smem_reserved_per_block = 1024, .smem_alloc_granularity = 128,
      CARVE_GA100, .max_barriers_per_sm = 0, .max_cluster_size = 0,
      .core_clock_khz = 1300000, .mem_clock_khz = 3200000, .mem_bus_width_bits = 256,
      .fp32_flop_per_clk_per_sm = 256, .fp16_tensor_flop_per_clk_per_sm = 2048,
      .bf16_tensor_flop_per_clk_per_sm = 2048, .fp64_flop_per_clk_per_sm = 4,
      .source = "CUDA C Programming Guide cc 8.7; cuda_occupancy.h; Jetson AGX Orin datasheet"}},
    /* RTX 4090 (AD102; L40 shares the limits): cc 8.9 (1536 threads and 24 blocks per SM,
     * 100 KiB smem); 128 SMs, 2520 MHz, GDDR6X 10501 MHz x 384 bits (1008 GB/s); 82.6 FP32,
     * 165.2 FP16 tensor TFLOPS with FP32 accumulate (Ada AD102 whitepaper). */
    {"sm_89 89 8.9 compute_89 rtx4090 4090 l40 l40s ada ad102",
     {.name = "sm_89", .product = "GeForce RTX 4090", NV_COMMON, .cc_major = 8, .cc_minor = 9,
      .sm_count = 128, .max_threads_per_sm = 1536, .max_blocks_per_sm = 24,
      .smem_per_sm = 100 * 1024, .smem_per_block_optin = 99 * 1024,
      .smem_reserved_per_block = 1024, .smem_alloc_granularity = 128,
      CARVE_100K, .max_barriers_per_sm = 0, .max_cluster_size = 0,
      .core_clock_khz = 2520000, .mem_clock_khz = 10501000, .mem_bus_width_bits = 384,
      .fp32_flop_per_clk_per_sm = 256, .fp16_tensor_flop_per_clk_per_sm = 512,
      .bf16_tensor_flop_per_clk_per_sm = 512, .fp64_flop_per_clk_per_sm = 4,
      .source = "CUDA C Programming Guide cc 8.9; cuda_occupancy.h; NVIDIA Ada AD102 whitepaper"}},
    /* H100 SXM5 80GB: cc 9.0 (228 KiB smem/SM, 227 KiB opt-in, 2 barriers per block slot,
     * clusters up to 16 non-portable); 132 SMs, 1980 MHz, HBM3 2619 MHz x 5120 bits
     * (3.35 TB/s); 67 FP32, 34 FP64, 989 FP16/BF16 dense tensor TFLOPS (the datasheet's tensor
     * figure assumes a lower clock than 1980 MHz). The lent H100 matches (notes/cupti.md 4). */
    {"sm_90 90 9.0 compute_90 sm_90a h100 h100sxm hopper gh100",
     {.name = "sm_90", .product = "H100 SXM5 80GB", NV_COMMON, .cc_major = 9, .cc_minor = 0,
      .sm_count = 132, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
      .smem_per_sm = 228 * 1024, .smem_per_block_optin = 227 * 1024,
      .smem_reserved_per_block = 1024, .smem_alloc_granularity = 128,
      CARVE_228K, .max_barriers_per_sm = 64, .max_cluster_size = 16,
      .core_clock_khz = 1980000, .mem_clock_khz = 2619000, .mem_bus_width_bits = 5120,
      .fp32_flop_per_clk_per_sm = 256, .fp16_tensor_flop_per_clk_per_sm = 4096,
      .bf16_tensor_flop_per_clk_per_sm = 4096, .fp64_flop_per_clk_per_sm = 128,
      .source = "CUDA C Programming Guide cc 9.0; cuda_occupancy.h; NVIDIA H100 datasheet"}},
    /* B200: cc 10.0 (same per-SM limits as cc 9.0 in cuda_occupancy.h); 148 SMs, about
     * 1965 MHz boost, HBM3e 8 TB/s over 8192 bits; FP16/BF16 dense tensor 2.25 PFLOPS (HGX
     * B200 datasheet). Approximate: NVIDIA publishes no per-SM whitepaper figures yet. */
    {"sm_100 100 10.0 compute_100 sm_100a b200 blackwell gb100",
     {.name = "sm_100", .product = "B200", NV_COMMON, .cc_major = 10, .cc_minor = 0,
      .sm_count = 148, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
      .smem_per_sm = 228 * 1024, .smem_per_block_optin = 227 * 1024,
      .smem_reserved_per_block = 1024, .smem_alloc_granularity = 128,
      CARVE_228K, .max_barriers_per_sm = 64, .max_cluster_size = 16,
      .core_clock_khz = 1965000, .mem_clock_khz = 3906000, .mem_bus_width_bits = 8192,
      .fp32_flop_per_clk_per_sm = 256, .fp16_tensor_flop_per_clk_per_sm = 8192,
      .bf16_tensor_flop_per_clk_per_sm = 8192, .fp64_flop_per_clk_per_sm = 128,
      .source = "CUDA C Programming Guide cc 10.0; cuda_occupancy.h; NVIDIA HGX B200 datasheet"}},
    /* RTX 5090: cc 12.0 (1536 threads and 24 blocks per SM, 100 KiB smem, 1 barrier per block
     * slot); 170 SMs, 2407 MHz, GDDR7 14001 MHz x 512 bits (1792 GB/s); 104.8 FP32, 209.5
     * FP16 tensor TFLOPS with FP32 accumulate (Blackwell GB202 whitepaper). */
    {"sm_120 120 12.0 compute_120 sm_120a rtx5090 5090 gb202",
     {.name = "sm_120", .product = "GeForce RTX 5090", NV_COMMON, .cc_major = 12,
      .cc_minor = 0, .sm_count = 170, .max_threads_per_sm = 1536, .max_blocks_per_sm = 24,
      .smem_per_sm = 100 * 1024, .smem_per_block_optin = 99 * 1024,
      .smem_reserved_per_block = 1024, .smem_alloc_granularity = 128,
      CARVE_100K, .max_barriers_per_sm = 24, .max_cluster_size = 8,
      .core_clock_khz = 2407000, .mem_clock_khz = 14001000, .mem_bus_width_bits = 512,
      .fp32_flop_per_clk_per_sm = 256, .fp16_tensor_flop_per_clk_per_sm = 512,
      .bf16_tensor_flop_per_clk_per_sm = 512, .fp64_flop_per_clk_per_sm = 4,
      .source = "CUDA C Programming Guide cc 12.0; cuda_occupancy.h; NVIDIA GB202 whitepaper"}},

    /* AMD CDNA2, one MI250X GCD: 110 CUs of 4 SIMD16, wave64, 8 waves per SIMD, 512 VGPRs per
     * lane (arch + AGPR, unified) allocated in 8s, 800 SGPRs per SIMD in 16s, 64 KiB LDS per CU
     * and per work-group in 512-byte blocks, 16 barrier slots per CU (LLVM AMDGPUBaseInfo,
     * AMDGPUUsage; AMD Instinct MI200 ISA guide). 1700 MHz, HBM2e 3.2 Gbps x 4096 bits per GCD;
     * 47.9 FP32 (95.7 packed), 47.9 FP64, 383 FP16/BF16 matrix TFLOPS for two GCDs (datasheet). */
    {"gfx90a mi250x mi250 cdna2 aldebaran",
     {.name = "gfx90a", .product = "Instinct MI250X (one GCD)", .vendor = WL_OCC_AMD,
      .cc_major = 9, .cc_minor = 0x0a, .sm_count = 110, .cu_count = 110, .warp_size = 64,
      .max_threads_per_block = 1024, .max_threads_per_sm = 8 * 4 * 64, .max_blocks_per_sm = 32,
      .sub_partitions = 4, .regs_per_sm = 512 * 64 * 4, .regs_per_block = 0,
      .max_regs_per_thread = 512, .reg_alloc_unit = 8 * 64,
      .reg_alloc_granularity = WL_OCC_REG_GRAN_WARP, .sgprs_per_simd = 800, .sgpr_alloc_unit = 16,
      .max_sgprs_per_wave = 112, .smem_per_sm = 65536, .smem_per_block = 65536,
      .smem_per_block_optin = 65536, .smem_reserved_per_block = 0,
      .smem_alloc_granularity = 512, .n_carveouts = 0, .max_barriers_per_sm = 16,
      .max_cluster_size = 0, .core_clock_khz = 1700000, .mem_clock_khz = 1600000,
      .mem_bus_width_bits = 4096, .fp32_flop_per_clk_per_sm = 128,
      .fp16_tensor_flop_per_clk_per_sm = 1024, .bf16_tensor_flop_per_clk_per_sm = 1024,
      .fp64_flop_per_clk_per_sm = 128,
      .source = "LLVM AMDGPUUsage/AMDGPUBaseInfo; AMD MI200 ISA guide; AMD MI250X datasheet"}},
    /* AMD CDNA3 MI300X: same CU rules as gfx90a (LLVM gives gfx940+ the gfx90a register file);
     * 304 CUs, 2100 MHz, HBM3 5.2 Gbps x 8192 bits (5.3 TB/s); 163.4 FP32 vector, 81.7 FP64
     * vector, 1307 FP16/BF16 dense matrix TFLOPS (MI300X datasheet; AMD CDNA3 ISA guide). */
    {"gfx942 gfx940 gfx941 mi300x mi300 cdna3",
     {.name = "gfx942", .product = "Instinct MI300X", .vendor = WL_OCC_AMD, .cc_major = 9,
      .cc_minor = 0x42, .sm_count = 304, .cu_count = 304, .warp_size = 64,
      .max_threads_per_block = 1024, .max_threads_per_sm = 8 * 4 * 64, .max_blocks_per_sm = 32,
      .sub_partitions = 4, .regs_per_sm = 512 * 64 * 4, .regs_per_block = 0,
      .max_regs_per_thread = 512, .reg_alloc_unit = 8 * 64,
      .reg_alloc_granularity = WL_OCC_REG_GRAN_WARP, .sgprs_per_simd = 800, .sgpr_alloc_unit = 16,
      .max_sgprs_per_wave = 112, .smem_per_sm = 65536, .smem_per_block = 65536,
      .smem_per_block_optin = 65536, .smem_reserved_per_block = 0,
      .smem_alloc_granularity = 512, .n_carveouts = 0, .max_barriers_per_sm = 16,
      .max_cluster_size = 0, .core_clock_khz = 2100000, .mem_clock_khz = 2600000,
      .mem_bus_width_bits = 8192, .fp32_flop_per_clk_per_sm = 256,
      .fp16_tensor_flop_per_clk_per_sm = 2048, .bf16_tensor_flop_per_clk_per_sm = 2048,
      .fp64_flop_per_clk_per_sm = 128,
      .source = "LLVM AMDGPUUsage/AMDGPUBaseInfo; AMD CDNA3 ISA guide; AMD MI300X datasheet"}},
    /* AMD RDNA3 RX 7900 XTX in the default WGP mode (a work-group lives on a WGP = 2 CUs =
     * 4 SIMD32): 48 WGPs (96 CUs), wave32, 16 waves per SIMD, 1536 VGPRs per lane allocated in
     * 24s, SGPRs never limit, 128 KiB LDS per WGP and 64 KiB per work-group allocated in 1 KiB
     * blocks, 32 barrier slots per WGP (LLVM AMDGPUBaseInfo; AMD RDNA3 ISA guide). 2500 MHz,
     * GDDR6 20 Gbps x 384 bits (960 GB/s); 61.4 FP32 (dual issue), 122.8 FP16 TFLOPS. */
    {"gfx1100 rx7900xtx 7900xtx navi31 rdna3",
     {.name = "gfx1100", .product = "Radeon RX 7900 XTX (WGP mode)", .vendor = WL_OCC_AMD,
      .cc_major = 11, .cc_minor = 0x00, .sm_count = 48, .cu_count = 96, .warp_size = 32,
      .max_threads_per_block = 1024, .max_threads_per_sm = 16 * 4 * 32, .max_blocks_per_sm = 64,
      .sub_partitions = 4, .regs_per_sm = 1536 * 32 * 4, .regs_per_block = 0,
      .max_regs_per_thread = 256, .reg_alloc_unit = 24 * 32,
      .reg_alloc_granularity = WL_OCC_REG_GRAN_WARP, .sgprs_per_simd = 0, .smem_per_sm = 131072,
      .smem_per_block = 65536, .smem_per_block_optin = 65536, .smem_reserved_per_block = 0,
      .smem_alloc_granularity = 1024, .n_carveouts = 0, .max_barriers_per_sm = 32,
      .max_cluster_size = 0, .core_clock_khz = 2500000, .mem_clock_khz = 10000000,
      .mem_bus_width_bits = 384, .fp32_flop_per_clk_per_sm = 512,
      .fp16_tensor_flop_per_clk_per_sm = 1024, .bf16_tensor_flop_per_clk_per_sm = 1024,
      .fp64_flop_per_clk_per_sm = 8,
      .source = "LLVM AMDGPUUsage/AMDGPUBaseInfo; AMD RDNA3 ISA guide; AMD RX 7900 XTX specifications"}},
};

#define N_TABLE (sizeof TABLE / sizeof TABLE[0])

size_t wl_occ_device_count(void) { return N_TABLE; }

const wl_occ_device *wl_occ_device_at(size_t i) { return i < N_TABLE ? &TABLE[i].d : NULL; }

const char *wl_occ_device_aliases(const wl_occ_device *d)
{
    for (size_t i = 0; i < N_TABLE; i++)
        if (d == &TABLE[i].d)
            return TABLE[i].aliases;
    return "";
}

/* Lower-case copy without spaces, '-' and '_' so "RTX 4090", "rtx-4090" and "sm_90" compare
 * as "rtx4090" and "sm90". Truncates quietly; the names are short. */
static void normalise(const char *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && in[i] && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == ' ' || c == '-' || c == '_')
            continue;
        out[o++] = (char)tolower(c);
    }
    out[o] = 0;
}

const wl_occ_device *wl_occ_device_find(const char *name)
{
    if (!name || !*name)
        return NULL;
    char want[64];
    normalise(name, strlen(name), want, sizeof want);
    if (!*want)
        return NULL;
    for (size_t i = 0; i < N_TABLE; i++) {
        const char *p = TABLE[i].aliases;
        while (*p) {
            size_t len = strcspn(p, " ");
            char have[64];
            normalise(p, len, have, sizeof have);
            if (!strcmp(have, want))
                return &TABLE[i].d;
            p += len;
            while (*p == ' ')
                p++;
        }
    }
    return NULL;
}

int wl_occ_device_init_cc(wl_occ_device *out, int cc_major, int cc_minor)
{
    const wl_occ_device *best = NULL;
    for (size_t i = 0; i < N_TABLE; i++) {
        const wl_occ_device *d = &TABLE[i].d;
        if (d->vendor != WL_OCC_NVIDIA || d->cc_major != cc_major)
            continue;
        if (!best || abs(d->cc_minor - cc_minor) < abs(best->cc_minor - cc_minor))
            best = d;
    }
    if (!best || !out)
        return -1;
    *out = *best;
    out->cc_minor = cc_minor;
    return 0;
}

double wl_occ_peak_tflops(const wl_occ_device *d, double flop_per_clk_per_sm)
{
    if (!d || d->sm_count <= 0 || d->core_clock_khz <= 0 || flop_per_clk_per_sm <= 0)
        return 0;
    return (double)d->sm_count * d->core_clock_khz * 1e3 * flop_per_clk_per_sm / 1e12;
}

double wl_occ_peak_fp32_tflops(const wl_occ_device *d)
{
    return d ? wl_occ_peak_tflops(d, d->fp32_flop_per_clk_per_sm) : 0;
}

double wl_occ_peak_dram_gbps(const wl_occ_device *d)
{
    if (!d || d->mem_clock_khz <= 0 || d->mem_bus_width_bits <= 0)
        return 0;
    double transfers_per_s = 2.0 * d->mem_clock_khz * 1e3; /* double data rate */
    return d->mem_bus_width_bits / 8.0 * transfers_per_s / 1e9;
}
