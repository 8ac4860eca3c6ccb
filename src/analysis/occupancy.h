/* Theoretical occupancy calculator: how many blocks (work-groups) of a kernel fit on one SM (CU),
 * which resource limits them, and how a grid turns into waves. Plain C, no CUDA at run time.
 *
 * NVIDIA rules follow the toolkit's reference calculator (cuda_occupancy.h), re-expressed over
 * the per-device numbers in wl_occ_device, so the results match cudaOccMaxActiveBlocksPer-
 * Multiprocessor bit for bit (tests/test_occupancy_exact.cpp). AMD rules follow LLVM's AMDGPU
 * occupancy model (see docs/occupancy.md). Device tables live in device_tables.h. */
#ifndef WARPLENS_ANALYSIS_OCCUPANCY_H
#define WARPLENS_ANALYSIS_OCCUPANCY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A block limit that does not apply (no registers, no shared memory, no barriers). */
#define WL_OCC_UNLIMITED 2147483647

#define WL_OCC_MAX_CARVEOUTS 16

typedef enum wl_occ_vendor { WL_OCC_NVIDIA = 0, WL_OCC_AMD = 1 } wl_occ_vendor;

/* How register allocation is rounded: per warp (every NVIDIA GPU since Fermi, AMD per wave). */
typedef enum wl_occ_reg_granularity { WL_OCC_REG_GRAN_WARP = 0, WL_OCC_REG_GRAN_BLOCK = 1 } wl_occ_reg_granularity;

/* Device limits. For AMD an "SM" is the unit a work-group lives on (a CU on CDNA, a WGP on RDNA
 * in its default WGP mode), a "warp" is a wavefront and a "register" is one 32-bit lane slot. */
typedef struct wl_occ_device {
    char name[24];    /* "sm_90", "gfx942" */
    char product[48]; /* "H100 SXM5 80GB" */
    wl_occ_vendor vendor;
    int cc_major, cc_minor; /* compute capability; AMD: gfx major and minor*10+stepping */
    int sm_count;           /* SMs; AMD: CUs (CDNA) or WGPs (RDNA, WGP mode) */
    int cu_count;           /* AMD marketing CU count (equal to sm_count on CDNA); NVIDIA: 0 */
    int warp_size;
    int max_threads_per_block;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int sub_partitions;       /* SM sub-partitions (SMSPs) / SIMDs per CU or WGP */
    int regs_per_sm;          /* 32-bit registers in the whole SM register file */
    int regs_per_block;       /* per-block register limit; 0 = none beyond the SM (AMD) */
    int max_regs_per_thread;  /* NVIDIA 255; AMD addressable VGPRs per lane */
    int reg_alloc_unit;       /* registers allocated at a time per warp (NVIDIA 256) */
    wl_occ_reg_granularity reg_alloc_granularity;
    int sgprs_per_simd;       /* AMD gfx9: scalar registers per SIMD (800); 0 = not a limit */
    int sgpr_alloc_unit;      /* AMD gfx9: SGPRs allocated in blocks of 16 */
    int max_sgprs_per_wave;   /* AMD gfx9: 102 addressable (+ VCC/FLAT_SCRATCH/XNACK = 112) */
    int64_t smem_per_sm;      /* bytes; the largest carveout */
    int64_t smem_per_block;   /* default per-block limit (48 KiB on NVIDIA) */
    int64_t smem_per_block_optin;
    int64_t smem_reserved_per_block; /* driver-reserved bytes per block (1 KiB on cc >= 8) */
    int smem_alloc_granularity;      /* bytes */
    int carveouts_kib[WL_OCC_MAX_CARVEOUTS]; /* shared-memory sizes the SM can be configured to */
    int n_carveouts;                         /* 0 = fixed size (smem_per_sm) */
    int max_barriers_per_sm; /* 0 = barriers do not limit occupancy (NVIDIA before cc 9) */
    int max_cluster_size;    /* blocks per cluster; 0 = no clusters (before cc 9) */
    /* Peak figures for roofline use (see wl_occ_peak_*). */
    int core_clock_khz;      /* boost clock, as cudaDevAttrClockRate */
    int mem_clock_khz;       /* as cudaDevAttrMemoryClockRate: per-pin data rate / 2 */
    int mem_bus_width_bits;
    double fp32_flop_per_clk_per_sm; /* an FMA counts 2 */
    double fp16_tensor_flop_per_clk_per_sm; /* dense, FP32 accumulate; 0 = none */
    double bf16_tensor_flop_per_clk_per_sm;
    double fp64_flop_per_clk_per_sm;
    const char *source; /* where the numbers come from */
} wl_occ_device;

/* Per-function shared-memory limit, as CUpti_FuncShmemLimitConfig / cudaOccFuncShmemConfig. */
typedef enum wl_occ_smem_config { WL_OCC_SMEM_LIMIT_DEFAULT = 0, WL_OCC_SMEM_LIMIT_OPTIN = 1 } wl_occ_smem_config;

/* The legacy cache preference (cudaFuncCachePrefer*); only read when carveout_pct is -1. */
typedef enum wl_occ_cache_config {
    WL_OCC_CACHE_PREFER_NONE = 0,
    WL_OCC_CACHE_PREFER_SHARED = 1,
    WL_OCC_CACHE_PREFER_L1 = 2,
    WL_OCC_CACHE_PREFER_EQUAL = 3,
} wl_occ_cache_config;

#define WL_OCC_CARVEOUT_DEFAULT (-1)

/* What one launch asks for. Start from wl_occ_kernel_init() so the defaults are right. */
typedef struct wl_occ_kernel {
    int block_size;          /* threads per block */
    int regs_per_thread;     /* NVIDIA registers / AMD VGPRs (arch + acc on CDNA) per lane */
    int sgprs_per_wave;      /* AMD only (metadata .sgpr_count); 0 = ignore */
    int64_t static_smem;     /* bytes */
    int64_t dynamic_smem;    /* bytes */
    wl_occ_smem_config smem_config;
    int64_t max_dynamic_smem; /* cudaFuncAttributeMaxDynamicSharedMemorySize, read with OPTIN */
    int carveout_pct;         /* cudaFuncAttributePreferredSharedMemoryCarveout: -1 or 0..100 */
    wl_occ_cache_config cache_config;
    int barriers;             /* named barriers per block (CUDA's default is 1) */
    int cluster_size;         /* blocks per thread-block cluster; 1 = none */
} wl_occ_kernel;

typedef enum wl_occ_status {
    WL_OCC_OK = 0,
    /* Invalid input: the result is zeroed. */
    WL_OCC_ERR_NULL,
    WL_OCC_ERR_DEVICE,          /* a device limit is missing or not positive */
    WL_OCC_ERR_BLOCK_ZERO,
    WL_OCC_ERR_NEGATIVE,        /* a kernel field is negative */
    WL_OCC_ERR_CARVEOUT,        /* carveout outside -1..100 or cache config unknown */
    WL_OCC_ERR_CLUSTER,         /* cluster size not supported by the device */
    WL_OCC_ERR_GRID,            /* wl_occ_waves: grid < 1 or not a multiple of the cluster */
    WL_OCC_ERR_NOT_RUNNABLE,    /* wl_occ_waves: the result has 0 active blocks per SM */
    /* The launch cannot run: the result is filled in, with 0 active blocks and the limiter. */
    WL_OCC_ERR_BLOCK_TOO_LARGE, /* block_size > max threads per block (limiter: warps) */
    WL_OCC_ERR_REGS_PER_THREAD, /* regs_per_thread > max (limiter: registers) */
    WL_OCC_ERR_REGS_PER_BLOCK,  /* the block's registers exceed the per-block/SM file */
    WL_OCC_ERR_SMEM_PER_BLOCK,  /* shared memory over the per-block limit (limiter: smem) */
    WL_OCC_ERR_BARRIERS,        /* more barriers than an SM has (limiter: barriers) */
} wl_occ_status;

/* Limiting-factor bits: the same values and tie semantics as cudaOccResult.limitingFactors. */
enum {
    WL_OCC_LIMIT_WARPS = 0x01,
    WL_OCC_LIMIT_REGISTERS = 0x02,
    WL_OCC_LIMIT_SHARED_MEMORY = 0x04,
    WL_OCC_LIMIT_BLOCKS = 0x08,
    WL_OCC_LIMIT_BARRIERS = 0x10,
};

typedef struct wl_occ_result {
    int active_blocks_per_sm;
    int active_warps_per_sm;
    int max_warps_per_sm;
    double occupancy_pct;        /* active warps / max warps * 100 */
    unsigned limiters;           /* WL_OCC_LIMIT_* bits */
    int block_limit_registers;   /* WL_OCC_UNLIMITED where a resource is not used */
    int block_limit_shared_memory;
    int block_limit_warps;
    int block_limit_blocks;
    int block_limit_barriers;
    int warps_per_block;
    int allocated_registers_per_block;
    int64_t allocated_smem_per_block;  /* incl. the reserved bytes, rounded to the granularity */
    int64_t smem_limit_per_block;      /* per-block limit that applied, incl. reserved */
    int64_t smem_carveout_per_sm;      /* shared memory the SM is configured with */
} wl_occ_result;

typedef struct wl_occ_wave_info {
    int64_t blocks_per_wave; /* active blocks per SM x SMs (rounded down to whole clusters) */
    double waves_per_sm;     /* grid / blocks_per_wave */
    int64_t full_waves;
    double tail_pct;         /* how full the last wave is (100 when the grid divides evenly) */
    int active_sms;          /* SMs that receive at least one block */
} wl_occ_wave_info;

/* Fills a kernel description with the neutral defaults (carveout -1, cluster 1, barriers 1). */
void wl_occ_kernel_init(wl_occ_kernel *k);

/* Computes occupancy. On WL_OCC_OK or the "cannot run" statuses the result is filled in. */
wl_occ_status wl_occ_calculate(const wl_occ_device *dev, const wl_occ_kernel *k, wl_occ_result *out);

/* Waves of a grid of `grid_blocks` blocks with the occupancy in `r`; cluster_size <= 1 = none. */
wl_occ_status wl_occ_waves(const wl_occ_device *dev, const wl_occ_result *r, int64_t grid_blocks,
                           int cluster_size, wl_occ_wave_info *out);

/* A one-line English description of a status ("block size 0 is invalid" style, no newline). */
const char *wl_occ_status_message(wl_occ_status s);

/* 1 when the status describes a launch that cannot run but whose result is filled in. */
int wl_occ_status_has_result(wl_occ_status s);

/* Name of one limiter bit ("registers", "shared_memory", "warps", "blocks", "barriers"). */
const char *wl_occ_limiter_name(unsigned bit);

#ifdef __cplusplus
}
#endif

#endif
