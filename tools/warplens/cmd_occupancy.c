/* `warplens occupancy`: theoretical occupancy of a launch configuration on a built-in device,
 * printed as a terminal panel with bars or as one JSON object (--json); with --suggest also the
 * block size with the highest occupancy and the launch's next occupancy step. Input mistakes
 * exit 2 with one line on stderr; a configuration that cannot launch is a valid answer. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/device_tables.h"
#include "analysis/occupancy.h"
#include "common/log.h"
#include "format.h"
#include "occ_suggest_print.h"
#include "verbs.h"

#define EXIT_USAGE 2
#define BAR_WIDTH 40

typedef struct occ_args {
    const char *gpu;
    int64_t block, regs, sgprs, smem, dyn_smem, grid, cluster, barriers, carveout, max_dyn;
    int64_t smem_per_thread, max_block;
    int have_block, have_grid, have_max_dyn, have_max_block, json, list, suggest;
    const char *smem_config; /* "auto", "default", "optin" */
    const char *cache_config;
} occ_args;

enum {
    O_GPU = 1, O_BLOCK, O_REGS, O_SMEM, O_DYN_SMEM, O_SMEM_CONFIG, O_MAX_DYN, O_CARVEOUT, O_CACHE_CONFIG, O_BARRIERS,
    O_CLUSTER, O_SGPRS, O_GRID, O_SUGGEST, O_MAX_BLOCK, O_SMEM_PER_THREAD, O_JSON, O_LIST
};

static const cli_opt OPTS[] = {
    {O_GPU, 0, "gpu", CLI_ARG_REQUIRED, "ARCH", "device: sm_90, 90, 9.0, h100, a100, gfx942, mi300x, ... (--list-gpus)",
     NULL, NULL},
    {O_BLOCK, 0, "block", CLI_ARG_REQUIRED, "N", "threads per block, 1..max threads per block (1024)", NULL, NULL},
    {O_REGS, 0, "regs", CLI_ARG_REQUIRED, "N", "registers (AMD: VGPRs) per thread (default 0)", NULL, NULL},
    {O_SMEM, 0, "smem", CLI_ARG_REQUIRED, "N", "static shared memory per block, bytes; 48K / 48KiB also work", NULL, NULL},
    {O_DYN_SMEM, 0, "dyn-smem", CLI_ARG_REQUIRED, "N", "dynamic shared memory per block, bytes (default 0)", NULL, NULL},
    {O_SMEM_CONFIG, 0, "smem-config", CLI_ARG_REQUIRED, "C",
     "auto (default), default or optin: the per-block limit in force;\n"
     "auto = opt-in with --max-dyn-smem equal to --dyn-smem", "auto default optin", NULL},
    {O_MAX_DYN, 0, "max-dyn-smem", CLI_ARG_REQUIRED, "N", "the function's max dynamic shared memory attribute (opt-in)",
     NULL, NULL},
    {O_CARVEOUT, 0, "carveout", CLI_ARG_REQUIRED, "PCT", "preferred shared-memory carveout, -1 (default) or 0..100", NULL,
     NULL},
    {O_CACHE_CONFIG, 0, "cache-config", CLI_ARG_REQUIRED, "C", "none, shared, l1 or equal (legacy; used when carveout is -1)",
     "none shared l1 equal", NULL},
    {O_BARRIERS, 0, "barriers", CLI_ARG_REQUIRED, "N", "named barriers per block (default 1)", NULL, NULL},
    {O_CLUSTER, 0, "cluster", CLI_ARG_REQUIRED, "N", "blocks per thread-block cluster (sm_90 and later)", NULL, NULL},
    {O_SGPRS, 0, "sgprs", CLI_ARG_REQUIRED, "N", "AMD gfx9: scalar registers per wave (.sgpr_count)", NULL, NULL},
    {O_GRID, 0, "grid", CLI_ARG_REQUIRED, "N", "blocks in the grid: adds waves, tail and active SMs", NULL, NULL},
    {O_SUGGEST, 0, "suggest", CLI_ARG_NONE, NULL,
     "also the block size with the highest occupancy (as\n"
     "cudaOccupancyMaxPotentialBlockSize) and the launch's next step:\n"
     "the most registers/thread and shared memory/block that give\n"
     "one more block per SM; without --block, the launch is the suggestion", NULL, NULL},
    {O_MAX_BLOCK, 0, "max-block-size", CLI_ARG_REQUIRED, "N",
     "largest block size the suggestion may take: the kernel's\n"
     "__launch_bounds__ / max threads per block (default: the device's)", NULL, NULL},
    {O_SMEM_PER_THREAD, 0, "smem-per-thread", CLI_ARG_REQUIRED, "N",
     "dynamic shared memory grows with the block: --dyn-smem +\n"
     "N x block size bytes (as ...VariableSMem's function of the block)", NULL, NULL},
    {O_JSON, 0, "json", CLI_ARG_NONE, NULL, "print one JSON object instead of the panel", NULL, NULL},
    {O_LIST, 0, "list-gpus", CLI_ARG_NONE, NULL, "list the built-in devices", NULL, NULL},
    {0},
};
const cli_cmd CLI_OCCUPANCY = {
    "occupancy", "--gpu ARCH --block N [options]\n--gpu ARCH --suggest [--block N] [options]\n--list-gpus [--json]",
    "\n"
    "Theoretical occupancy of one kernel launch: how many blocks fit on an SM (CU), which\n"
    "resource limits them, and how a grid splits into waves. NVIDIA results equal\n"
    "cudaOccMaxActiveBlocksPerMultiprocessor; AMD follows LLVM's occupancy rules.\n"
    "\n",
    OPTS,
    "\n"
    "Exit status: 0 with a result (also when the launch cannot run: 0 blocks per SM),\n"
    "2 for invalid options or values. See docs/occupancy.md.\n",
    NULL, 0, CLI_POS_NONE, NULL};

/* Parses a non-negative integer with an optional K/KiB suffix (x1024). Returns 0 on success,
 * -1 for text that is not a number, -2 for a negative number, -3 when out of range. */
static int parse_count(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    const char *p = s;
    while (*p == ' ')
        p++;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (errno == ERANGE)
        return -3;
    if (!strcmp(end, "K") || !strcmp(end, "k") || !strcmp(end, "KiB") || !strcmp(end, "KB")) {
        if (v > INT32_MAX / 1024)
            return -3;
        v *= 1024;
    } else if (*end) {
        return -1;
    }
    if (neg && v != 0)
        return -2;
    if (v > INT32_MAX)
        return -3;
    *out = v;
    return 0;
}

static int bad_value(const char *opt, const char *val, int why)
{
    const char *what = why == -2 ? "must not be negative" : why == -3 ? "is too large" : "is not a number";
    wl_log("occupancy: %s '%s' %s", opt, val, what);
    return EXIT_USAGE;
}

static void known_gpus(char *buf, size_t cap)
{
    buf[0] = 0;
    for (size_t i = 0; i < wl_occ_device_count(); i++) {
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", wl_occ_device_at(i)->name);
    }
}

/* Parses argv into a; returns -1 to continue, otherwise the exit status. */
static int parse_args(int argc, char **argv, occ_args *a)
{
    *a = (occ_args){.barriers = 1, .cluster = 1, .carveout = -1, .smem_config = "auto",
                    .cache_config = "none"};
    cli_parser p;
    cli_init(&p, &CLI_OCCUPANCY, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        const char *val = p.arg;
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return EXIT_USAGE;
        case CLI_POSITIONAL:
            return cli_error(&CLI_OCCUPANCY, "unexpected argument '%s' (the launch is given by options: see --help)",
                             val);
        case O_JSON: a->json = 1; continue;
        case O_LIST: a->list = 1; continue;
        case O_SUGGEST: a->suggest = 1; continue;
        case O_GPU: a->gpu = val; continue;
        case O_SMEM_CONFIG:
            if (strcmp(val, "auto") && strcmp(val, "default") && strcmp(val, "optin")) {
                wl_log("occupancy: --smem-config must be auto, default or optin, not '%s'", val);
                return EXIT_USAGE;
            }
            a->smem_config = val;
            continue;
        case O_CACHE_CONFIG:
            if (strcmp(val, "none") && strcmp(val, "shared") && strcmp(val, "l1") && strcmp(val, "equal")) {
                wl_log("occupancy: --cache-config must be none, shared, l1 or equal, not '%s'", val);
                return EXIT_USAGE;
            }
            a->cache_config = val;
            continue;
        }
        int64_t v = 0;
        int rc;
        if (id == O_CARVEOUT && !strcmp(val, "-1")) {
            v = -1;
            rc = 0;
        } else {
            rc = parse_count(val, &v);
        }
        if (rc == -2 && id == O_CARVEOUT) {
            wl_log("occupancy: --carveout must be -1 or 0..100, not '%s'", val);
            return EXIT_USAGE;
        }
        if (rc)
            return bad_value(p.opt_text, val, rc);
        switch (id) {
        case O_BLOCK: a->block = v, a->have_block = 1; break;
        case O_REGS: a->regs = v; break;
        case O_SGPRS: a->sgprs = v; break;
        case O_SMEM: a->smem = v; break;
        case O_DYN_SMEM: a->dyn_smem = v; break;
        case O_GRID: a->grid = v, a->have_grid = 1; break;
        case O_CLUSTER: a->cluster = v; break;
        case O_BARRIERS: a->barriers = v; break;
        case O_CARVEOUT: a->carveout = v; break;
        case O_MAX_DYN: a->max_dyn = v, a->have_max_dyn = 1; break;
        case O_SMEM_PER_THREAD: a->smem_per_thread = v; break;
        case O_MAX_BLOCK: a->max_block = v, a->have_max_block = 1; break;
        }
    }
    return -1;
}

static void list_gpus(int json)
{
    if (json) {
        printf("[");
        for (size_t i = 0; i < wl_occ_device_count(); i++) {
            const wl_occ_device *d = wl_occ_device_at(i);
            printf("%s{\"name\":\"%s\",\"product\":\"%s\",\"vendor\":\"%s\",\"sm_count\":%d,"
                   "\"warp_size\":%d,\"max_threads_per_sm\":%d,\"max_blocks_per_sm\":%d,"
                   "\"regs_per_sm\":%d,\"smem_per_sm\":%lld,\"smem_per_block_optin\":%lld,"
                   "\"peak_fp32_tflops\":%.1f,\"peak_dram_gbps\":%.0f,\"aliases\":\"%s\"}",
                   i ? "," : "", d->name, d->product, d->vendor == WL_OCC_AMD ? "amd" : "nvidia",
                   d->sm_count, d->warp_size, d->max_threads_per_sm, d->max_blocks_per_sm,
                   d->regs_per_sm, (long long)d->smem_per_sm, (long long)d->smem_per_block_optin,
                   wl_occ_peak_fp32_tflops(d), wl_occ_peak_dram_gbps(d), wl_occ_device_aliases(d));
        }
        printf("]\n");
        return;
    }
    printf("%-8s %-30s %5s %4s %7s %6s %8s %8s %8s\n", "name", "product", "SMs", "warp",
           "thr/SM", "blk/SM", "smem/SM", "FP32 TF", "DRAM GB/s");
    for (size_t i = 0; i < wl_occ_device_count(); i++) {
        const wl_occ_device *d = wl_occ_device_at(i);
        const char *also = wl_occ_device_aliases(d);
        also += strcspn(also, " ");
        printf("%-8s %-30s %5d %4d %7d %6d %7lldK %8.1f %9.0f\n", d->name, d->product, d->sm_count,
               d->warp_size, d->max_threads_per_sm, d->max_blocks_per_sm,
               (long long)(d->smem_per_sm / 1024), wl_occ_peak_fp32_tflops(d), wl_occ_peak_dram_gbps(d));
        printf("%-8s also:%s\n", "", also);
    }
    printf("(AMD: an SM column means a CU on CDNA and a WGP on RDNA; see docs/occupancy.md)\n");
}

static void json_limit(const char *key, int v, int last)
{
    if (v == WL_OCC_UNLIMITED)
        printf("\"%s\":null%s", key, last ? "" : ",");
    else
        printf("\"%s\":%d%s", key, v, last ? "" : ",");
}

static void print_json(const wl_occ_device *d, const wl_occ_kernel *k, wl_occ_status st,
                       const wl_occ_result *r, const wl_occ_wave_info *w, int64_t grid,
                       const occ_advice *adv)
{
    printf("{\"gpu\":\"%s\",\"product\":\"%s\",\"vendor\":\"%s\",\"sm_count\":%d,", d->name,
           d->product, d->vendor == WL_OCC_AMD ? "amd" : "nvidia", d->sm_count);
    printf("\"block_size\":%d,\"registers_per_thread\":%d,\"static_shared_memory\":%lld,"
           "\"dynamic_shared_memory\":%lld,\"smem_config\":\"%s\",\"max_dynamic_shared_memory\":%lld,"
           "\"carveout_pct\":%d,\"barriers\":%d,\"cluster_size\":%d,",
           k->block_size, k->regs_per_thread, (long long)k->static_smem, (long long)k->dynamic_smem,
           k->smem_config == WL_OCC_SMEM_LIMIT_OPTIN ? "optin" : "default",
           (long long)k->max_dynamic_smem, k->carveout_pct, k->barriers, k->cluster_size);
    printf("\"launchable\":%s,", r->active_blocks_per_sm > 0 ? "true" : "false");
    if (st != WL_OCC_OK)
        printf("\"reason\":\"%s\",", wl_occ_status_message(st));
    printf("\"active_blocks_per_sm\":%d,\"active_warps_per_sm\":%d,\"max_warps_per_sm\":%d,"
           "\"occupancy_pct\":%.2f,\"limiters\":[",
           r->active_blocks_per_sm, r->active_warps_per_sm, r->max_warps_per_sm, r->occupancy_pct);
    int first = 1;
    for (unsigned bit = WL_OCC_LIMIT_WARPS; bit <= WL_OCC_LIMIT_BARRIERS; bit <<= 1)
        if (r->limiters & bit) {
            printf("%s\"%s\"", first ? "" : ",", wl_occ_limiter_name(bit));
            first = 0;
        }
    printf("],\"limiting_factors_mask\":%u,", r->limiters);
    json_limit("block_limit_registers", r->block_limit_registers, 0);
    json_limit("block_limit_shared_memory", r->block_limit_shared_memory, 0);
    json_limit("block_limit_warps", r->block_limit_warps, 0);
    json_limit("block_limit_blocks", r->block_limit_blocks, 0);
    json_limit("block_limit_barriers", r->block_limit_barriers, 0);
    printf("\"warps_per_block\":%d,\"allocated_registers_per_block\":%d,"
           "\"allocated_shared_memory_per_block\":%lld,\"shared_memory_limit_per_block\":%lld,"
           "\"shared_memory_carveout_per_sm\":%lld",
           r->warps_per_block, r->allocated_registers_per_block,
           (long long)r->allocated_smem_per_block, (long long)r->smem_limit_per_block,
           (long long)r->smem_carveout_per_sm);
    if (grid > 0) {
        printf(",\"grid_blocks\":%lld", (long long)grid);
        if (w)
            printf(",\"blocks_per_wave\":%lld,\"waves_per_sm\":%.4f,\"full_waves\":%lld,"
                   "\"tail_pct\":%.2f,\"active_sms\":%d",
                   (long long)w->blocks_per_wave, w->waves_per_sm, (long long)w->full_waves,
                   w->tail_pct, w->active_sms);
        else
            printf(",\"blocks_per_wave\":0,\"waves_per_sm\":null,\"full_waves\":0,"
                   "\"tail_pct\":null,\"active_sms\":0");
    }
    if (adv)
        occ_advice_json(stdout, adv);
    printf("}\n");
}

/* "[#####.....]" with `filled` of BAR_WIDTH cells. */
static void bar(double frac)
{
    if (frac < 0)
        frac = 0;
    if (frac > 1)
        frac = 1;
    int n = (int)(frac * BAR_WIDTH + 0.5);
    putchar('[');
    for (int i = 0; i < BAR_WIDTH; i++)
        putchar(i < n ? '#' : '.');
    putchar(']');
}

static void limit_row(const char *label, int limit, unsigned bit, const wl_occ_result *r,
                      int max_blocks, const char *note)
{
    printf("  %-14s ", label);
    if (limit == WL_OCC_UNLIMITED) {
        printf("%-*s %4s%s%s\n", BAR_WIDTH + 2, "(not limiting: resource unused)", "-", *note ? "  " : "", note);
        return;
    }
    bar((double)limit / max_blocks);
    char tail[200];
    int n = snprintf(tail, sizeof tail, " %4d %s %s", limit, (r->limiters & bit) ? "<" : " ", note);
    while (n > 0 && tail[n - 1] == ' ')
        tail[--n] = 0; /* no trailing blanks */
    printf("%s\n", tail);
}

static void print_panel(const wl_occ_device *d, const wl_occ_kernel *k, wl_occ_status st,
                        const wl_occ_result *r, const wl_occ_wave_info *w, int64_t grid,
                        const occ_advice *adv)
{
    const char *unit = d->vendor != WL_OCC_AMD ? "SM" : d->cu_count != d->sm_count ? "WGP" : "CU";
    const char *warp = d->vendor == WL_OCC_AMD ? "waves" : "warps";
    char s1[48], s2[48], s3[48];
    printf("warplens occupancy: %s (%s), %d %ss, %s %d\n", d->name, d->product, d->sm_count,
           unit, d->vendor == WL_OCC_AMD ? "wave" : "warp", d->warp_size);
    fmt_bytes_exact(k->static_smem, s1, sizeof s1);
    fmt_bytes_exact(k->dynamic_smem, s2, sizeof s2);
    if (d->vendor == WL_OCC_AMD) {
        /* AMD has no carveout, opt-in or named-barrier settings: show what applies. */
        printf("kernel: %d threads/work-group (%d %s), %d VGPRs, %d SGPRs, LDS %s static + %s dynamic\n\n",
               k->block_size, r->warps_per_block, warp, k->regs_per_thread, k->sgprs_per_wave, s1, s2);
    } else {
        printf("kernel: %d threads/block (%d %s), %d regs/thread, smem %s static + %s dynamic\n",
               k->block_size, r->warps_per_block, warp, k->regs_per_thread, s1, s2);
        printf("        smem limit %s, carveout %d, %d barrier(s), cluster %d\n\n",
               k->smem_config == WL_OCC_SMEM_LIMIT_OPTIN ? "opt-in" : "default", k->carveout_pct,
               k->barriers, k->cluster_size);
    }

    printf("  %-14s ", "occupancy");
    bar(r->occupancy_pct / 100.0);
    printf(" %5.1f %%  %d / %d %s per %s\n", r->occupancy_pct, r->active_warps_per_sm,
           r->max_warps_per_sm, warp, unit);
    printf("  %-14s %d per %s", "active blocks", r->active_blocks_per_sm, unit);
    if (r->limiters) {
        printf(", limited by");
        for (unsigned bit = WL_OCC_LIMIT_WARPS; bit <= WL_OCC_LIMIT_BARRIERS; bit <<= 1)
            if (r->limiters & bit)
                printf(" %s", wl_occ_limiter_name(bit));
    }
    printf("\n");
    if (st != WL_OCC_OK)
        printf("  cannot launch: %s\n", wl_occ_status_message(st));

    printf("\nblock limits per %s (bar: out of %d blocks; '<' marks the limiter)\n", unit,
           d->max_blocks_per_sm);
    char note[160];
    snprintf(note, sizeof note, "%d regs/block", r->allocated_registers_per_block);
    limit_row("registers", r->block_limit_registers, WL_OCC_LIMIT_REGISTERS, r, d->max_blocks_per_sm, note);
    fmt_bytes_exact(r->allocated_smem_per_block, s1, sizeof s1);
    fmt_bytes_exact(r->smem_carveout_per_sm, s3, sizeof s3);
    snprintf(note, sizeof note, "%s/block of %s/%s", s1, s3, unit);
    limit_row("shared memory", r->block_limit_shared_memory, WL_OCC_LIMIT_SHARED_MEMORY, r,
              d->max_blocks_per_sm, note);
    limit_row("warps", r->block_limit_warps, WL_OCC_LIMIT_WARPS, r, d->max_blocks_per_sm, "");
    limit_row("blocks", r->block_limit_blocks, WL_OCC_LIMIT_BLOCKS, r, d->max_blocks_per_sm, "");
    limit_row("barriers", r->block_limit_barriers, WL_OCC_LIMIT_BARRIERS, r, d->max_blocks_per_sm, "");

    if (grid > 0) {
        printf("\ngrid of %lld blocks", (long long)grid);
        if (!w) {
            printf(": no waves (nothing fits on an %s)\n", unit);
        } else {
            printf(": %.2f waves of %lld blocks, %lld full, %d %ss active\n", w->waves_per_sm,
                   (long long)w->blocks_per_wave, (long long)w->full_waves, w->active_sms, unit);
            printf("  %-14s ", "last wave");
            bar(w->tail_pct / 100.0);
            printf(" %5.1f %% full\n", w->tail_pct);
        }
    }
    if (adv) {
        printf("\n");
        occ_advice_print(stdout, d, adv, "");
    }
    printf("\npeaks: FP32 %.1f TFLOP/s, DRAM %.0f GB/s\n", wl_occ_peak_fp32_tflops(d),
           wl_occ_peak_dram_gbps(d));
}

int cmd_occupancy(int argc, char **argv)
{
    occ_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.list) {
        list_gpus(a.json);
        return 0;
    }
    char known[512];
    known_gpus(known, sizeof known);
    if (!a.gpu) {
        wl_log("occupancy: --gpu is required (known: %s)", known);
        return EXIT_USAGE;
    }
    const wl_occ_device *d = wl_occ_device_find(a.gpu);
    if (!d) {
        wl_log("occupancy: unknown GPU '%s' (known: %s)", a.gpu, known);
        return EXIT_USAGE;
    }
    if (!a.have_block && !a.suggest) {
        wl_log("occupancy: --block is required (or --suggest to have one suggested)");
        return EXIT_USAGE;
    }
    if (a.have_block && (a.block < 1 || a.block > d->max_threads_per_block)) {
        wl_log("occupancy: --block %lld is out of range: %s takes 1..%d threads per block",
               (long long)a.block, d->name, d->max_threads_per_block);
        return EXIT_USAGE;
    }
    if (a.regs > d->max_regs_per_thread) {
        wl_log("occupancy: --regs %lld is out of range: %s allows at most %d registers per thread",
               (long long)a.regs, d->name, d->max_regs_per_thread);
        return EXIT_USAGE;
    }
    if (a.carveout < -1 || a.carveout > 100) {
        wl_log("occupancy: --carveout %lld must be -1 or 0..100", (long long)a.carveout);
        return EXIT_USAGE;
    }
    if (a.have_max_block && a.max_block < 1) {
        wl_log("occupancy: --max-block-size must be at least 1");
        return EXIT_USAGE;
    }
    if (a.have_grid && a.grid < 1) {
        wl_log("occupancy: --grid must be at least 1 block");
        return EXIT_USAGE;
    }

    wl_occ_kernel k;
    wl_occ_kernel_init(&k);
    k.block_size = (int)a.block;
    k.regs_per_thread = (int)a.regs;
    k.sgprs_per_wave = (int)a.sgprs;
    k.static_smem = a.smem;
    k.dynamic_smem = a.dyn_smem;
    k.barriers = (int)a.barriers;
    k.cluster_size = a.cluster < 1 ? 1 : (int)a.cluster;
    k.carveout_pct = (int)a.carveout;
    k.cache_config = !strcmp(a.cache_config, "shared") ? WL_OCC_CACHE_PREFER_SHARED
                     : !strcmp(a.cache_config, "l1")   ? WL_OCC_CACHE_PREFER_L1
                     : !strcmp(a.cache_config, "equal") ? WL_OCC_CACHE_PREFER_EQUAL
                                                        : WL_OCC_CACHE_PREFER_NONE;
    /* "auto" behaves like a program that raised cudaFuncAttributeMaxDynamicSharedMemorySize to
     * exactly what it launches with; it never yields fewer blocks than "default". */
    k.smem_config = strcmp(a.smem_config, "default") ? WL_OCC_SMEM_LIMIT_OPTIN : WL_OCC_SMEM_LIMIT_DEFAULT;
    /* Dynamic shared memory of a block of n threads: --dyn-smem + --smem-per-thread x n. */
    wl_occ_smem_linear smem = {a.dyn_smem, a.smem_per_thread};
    int limit = a.have_max_block && a.max_block < d->max_threads_per_block ? (int)a.max_block : d->max_threads_per_block;
    int largest = a.have_block && a.block > limit ? (int)a.block : limit;
    k.dynamic_smem = wl_occ_smem_linear_fn(k.block_size, &smem);
    /* With "auto" and a growing size, the declared maximum is what the largest block needs. */
    k.max_dynamic_smem = a.have_max_dyn ? a.max_dyn : wl_occ_smem_linear_fn(a.smem_per_thread ? largest : k.block_size, &smem);

    occ_advice adv;
    if (a.suggest) {
        wl_occ_status as = occ_advise(d, &k, k.block_size, limit, &smem, &adv);
        if (as != WL_OCC_OK) {
            wl_log("occupancy: %s", wl_occ_status_message(as));
            return EXIT_USAGE;
        }
        k = adv.launch; /* without --block: the suggested size */
    }

    wl_occ_result r;
    wl_occ_status st = wl_occ_calculate(d, &k, &r);
    if (!wl_occ_status_has_result(st)) {
        wl_log("occupancy: %s", wl_occ_status_message(st));
        return EXIT_USAGE;
    }
    wl_occ_wave_info w;
    const wl_occ_wave_info *wp = NULL;
    if (a.have_grid) {
        wl_occ_status ws = wl_occ_waves(d, &r, a.grid, k.cluster_size, &w);
        if (ws == WL_OCC_OK)
            wp = &w;
        else if (ws != WL_OCC_ERR_NOT_RUNNABLE) {
            wl_log("occupancy: --grid %lld: %s", (long long)a.grid, wl_occ_status_message(ws));
            return EXIT_USAGE;
        }
    }
    if (a.json)
        print_json(d, &k, st, &r, wp, a.have_grid ? a.grid : 0, a.suggest ? &adv : NULL);
    else
        print_panel(d, &k, st, &r, wp, a.have_grid ? a.grid : 0, a.suggest ? &adv : NULL);
    return 0;
}
