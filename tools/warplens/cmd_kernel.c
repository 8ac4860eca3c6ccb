/* `warplens kernel <session> <name|id> [--call N] [--suggest]`: one kernel in detail: launch
 * configuration, resources, theoretical occupancy with every block limit (with --suggest also the
 * block size with the highest occupancy and the next step), the timing chain from the launch call
 * to the end of execution, overlap with other streams, and for a name with many calls the
 * distribution of durations and a representative call; hardware metrics and warp stall reasons
 * when the session has them. Fits 100 columns. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/device_tables.h"
#include "analysis/kernel_occupancy.h"
#include "analysis/kernel_backend.h"
#include "format.h"
#include "kernel_format.h"
#include "metrics_print.h"
#include "occ_suggest_print.h"
#include "store/session_kernels.h"
#include "analysis/throughput.h"
#include "samples_print.h"
#include "stalls_print.h"
#include "cli_session.h"
#include "store/session_identity.h"
#include "verbs.h"

#define BAR 30

enum { O_CALL = 1, O_SUGGEST, O_MAX_BLOCK };

static const cli_opt OPTS[] = {
    {O_CALL, 0, "call", CLI_ARG_REQUIRED, "N",
     "show the N-th call of the name (by start time) instead of a representative\n"
     "one (the most frequent configuration, duration closest to the median)", NULL, NULL},
    {O_SUGGEST, 0, "suggest", CLI_ARG_NONE, NULL,
     "also the block size with the highest occupancy for the kernel's recorded\n"
     "registers and shared memory on its device (cudaOccupancyMaxPotential-\n"
     "BlockSize; the dynamic shared memory held as recorded), and the registers\n"
     "and shared memory that give this launch one more block per SM", NULL, NULL},
    {O_MAX_BLOCK, 0, "max-block-size", CLI_ARG_REQUIRED, "N", "the kernel's own limit (__launch_bounds__) for the suggestion",
     NULL, NULL},
    {0},
};
const cli_cmd CLI_KERNEL = {
    "kernel", "<session> <name|id> [--call N] [--suggest [--max-block-size N]]",
    "  <id>                  a kernel id (the id column of `warplens kernels --calls`)\n"
    "  <name>                a demangled, short or mangled name, or a part of the demangled name that\n"
    "                        only one kernel name contains\n",
    OPTS, NULL, NULL, 0, CLI_POS_SESSION, NULL};

/* Reads kernel `id` into *row (strings copied into names[]). 0 when found. */
typedef struct picked {
    wl_kernel_row row;
    char *name, *short_name, *mangled, *api, *thread, *scope, *launch_type, *op, *shape, *op_source, *tier;
} picked;

static void pick_free(picked *p)
{
    free(p->name), free(p->short_name), free(p->mangled), free(p->api), free(p->thread), free(p->scope);
    free(p->launch_type), free(p->op), free(p->shape), free(p->op_source), free(p->tier);
}

static int read_kernel(wl_session *s, int64_t id, picked *out)
{
    char err[256];
    wl_kernel_filter f = {-1, id, WL_KERNEL_BY_ID};
    wl_kernel_cursor *c = wl_kernel_cursor_open(s, &f, err, sizeof err);
    if (!c)
        return -1;
    int rc = wl_kernel_cursor_next(c, &out->row) == 1 ? 0 : -1;
    if (rc == 0) {
        out->name = strdup(out->row.name);
        out->short_name = strdup(out->row.short_name);
        out->api = strdup(out->row.api_name);
        out->thread = strdup(out->row.thread_name);
        out->scope = strdup(out->row.scope_name);
        out->launch_type = strdup(out->row.launch_type);
        out->mangled = strdup(out->row.mangled);
        out->op = strdup(out->row.operation);
        out->shape = strdup(out->row.shape);
        out->op_source = strdup(out->row.op_source);
        out->tier = strdup(out->row.tier);
        out->row.name = out->name, out->row.short_name = out->short_name, out->row.api_name = out->api;
        out->row.thread_name = out->thread, out->row.scope_name = out->scope, out->row.launch_type = out->launch_type;
        out->row.mangled = out->mangled, out->row.operation = out->op, out->row.shape = out->shape;
        out->row.op_source = out->op_source, out->row.tier = out->tier;
    }
    wl_kernel_cursor_close(c);
    return rc;
}

/* Operation, shapes, backend, tier and application thread (store/session_identity.h). */
static void print_identity(wl_session *s, const wl_kernel_row *k)
{
    const char *src = !strcmp(k->op_source, "torch") ? "PyTorch operator"
                      : !strcmp(k->op_source, "nvtx") ? "NVTX range" : !strcmp(k->op_source, "scope") ? "scope" : "";
    if (k->operation[0])
        printf("identity operation %s (%s)%s%s\n", k->operation, src, k->shape[0] ? ", input shapes " : "", k->shape);
    else
        printf("identity operation -%s\n", wl_session_has_identity(s) ? " (no operator, NVTX range or scope open at the"
                                                                       " launch)"
                                                                     : " (session made before identity: warplens"
                                                                       " import --upgrade)");
    printf("         backend %s, tier %s", wl_kernel_backend(k->short_name, k->name, k->mangled), k->tier[0] ? k->tier : "-");
    if (k->app_thread)
        printf(", application thread %lld", (long long)k->app_thread);
    printf("\n");
}

static void first_config(const wl_kernel_config *c, void *arg)
{
    wl_kernel_config *want = arg;
    if (want->calls == 0 && c->name_id == want->name_id)
        *want = *c;
}

static int same_config(const wl_kernel_row *r, const wl_kernel_config *c)
{
    return !memcmp(r->grid, c->grid, sizeof r->grid) && !memcmp(r->block, c->block, sizeof r->block) &&
           r->registers_per_thread == c->registers_per_thread && r->static_smem == c->static_smem &&
           r->dynamic_smem == c->dynamic_smem && r->pid == c->pid && r->device_id == c->device_id;
}

/* The call of the most frequent configuration whose duration is closest to the median. */
static int64_t representative(wl_session *s, int64_t name_id, uint64_t p50)
{
    wl_kernel_config top = {.name_id = name_id};
    wl_session_each_kernel_config(s, first_config, &top);
    wl_kernel_filter f = {name_id, -1, WL_KERNEL_BY_ID};
    char err[256];
    wl_kernel_cursor *c = wl_kernel_cursor_open(s, &f, err, sizeof err);
    if (!c)
        return -1;
    int64_t best = -1;
    uint64_t best_d = UINT64_MAX;
    wl_kernel_row r;
    while (wl_kernel_cursor_next(c, &r) == 1) {
        uint64_t d = r.duration_ns < 0 ? UINT64_MAX - 1 : (uint64_t)llabs(r.duration_ns - (int64_t)p50);
        if ((top.calls == 0 || same_config(&r, &top)) && (best < 0 || d < best_d))
            best = r.id, best_d = d;
    }
    wl_kernel_cursor_close(c);
    return best;
}

static const wl_kernel_summary *find_summary(const wl_kernel_summary *k, int n, int64_t name_id)
{
    for (int i = 0; i < n; i++)
        if (k[i].name_id == name_id)
            return &k[i];
    return NULL;
}

/* Prints a long name over as many lines as it needs, each at most 100 columns. */
static void print_wrapped(const char *label, const char *s)
{
    size_t len = strlen(s), w = 100 - 9;
    for (size_t off = 0; off < len || off == 0; off += w) {
        printf("%-9s%.*s\n", off ? "" : label, (int)w, s + off);
        if (len == 0)
            break;
    }
}

static void limit_row(const char *what, int limit, unsigned bit, const wl_occ_result *r, int max_blocks,
                      const char *note)
{
    printf("    %-14s ", what);
    if (limit == WL_OCC_UNLIMITED) {
        kf_bar(stdout, 1.0, BAR);
        printf("    - not used\n");
        return;
    }
    kf_bar(stdout, max_blocks ? (double)limit / max_blocks : 0, BAR);
    printf(" %4d%s%s\n", limit, r->limiters & bit ? " < " : note[0] ? "   " : "", note);
}

static void print_occupancy(const wl_occ_device *dev, const wl_kernel_occ *o, int64_t blocks, int suggest,
                            int max_block)
{
    printf("occupancy (theoretical: what the resources allow; achieved needs hardware counters)\n");
    if (!dev) {
        printf("  unknown: the device's architecture is not in warplens' tables\n");
        return;
    }
    if (!o->has_result) {
        printf("  not computed: %s\n", wl_occ_status_message(o->status));
        return;
    }
    const wl_occ_result *r = &o->occ;
    char lim[96], a[32], b[32];
    printf("  %-16s ", "occupancy");
    kf_bar(stdout, r->occupancy_pct / 100.0, BAR);
    printf(" %5.1f %%  %d / %d warps per SM\n", r->occupancy_pct, r->active_warps_per_sm, r->max_warps_per_sm);
    printf("  %-16s %d per SM, limited by %s\n", "active blocks", r->active_blocks_per_sm,
           wl_occ_limiters_text(r->limiters, 0, lim, sizeof lim));
    if (o->status != WL_OCC_OK)
        printf("  cannot launch as recorded: %s\n", wl_occ_status_message(o->status));
    if (o->smem_optin_assumed)
        printf("  (recorded with the default shared-memory limit; the opt-in limit was applied because the\n"
               "   kernel ran with more than the default allows)\n");
    printf("  block limits per SM (bar: out of %d blocks; '<' marks the limiter)\n", dev->max_blocks_per_sm);
    char note[96];
    snprintf(note, sizeof note, "%d regs/block", r->allocated_registers_per_block);
    limit_row("registers", r->block_limit_registers, WL_OCC_LIMIT_REGISTERS, r, dev->max_blocks_per_sm, note);
    snprintf(note, sizeof note, "%s/block of %s/SM", fmt_bytes((double)r->allocated_smem_per_block, a, sizeof a),
             fmt_bytes((double)r->smem_carveout_per_sm, b, sizeof b));
    limit_row("shared memory", r->block_limit_shared_memory, WL_OCC_LIMIT_SHARED_MEMORY, r, dev->max_blocks_per_sm,
              note);
    snprintf(note, sizeof note, "%d warps/block", r->warps_per_block);
    limit_row("warps", r->block_limit_warps, WL_OCC_LIMIT_WARPS, r, dev->max_blocks_per_sm, note);
    limit_row("blocks", r->block_limit_blocks, WL_OCC_LIMIT_BLOCKS, r, dev->max_blocks_per_sm, "");
    limit_row("barriers", r->block_limit_barriers, WL_OCC_LIMIT_BARRIERS, r, dev->max_blocks_per_sm,
              "1 barrier/block assumed");
    if (o->has_waves) {
        const wl_occ_wave_info *w = &o->waves;
        printf("  grid of %lld blocks: %.2f waves of %lld blocks, %lld full, last wave %.1f %% full,\n"
               "  %d of %d SMs active, %.1f %% of the GPU's warp slots while it runs alone\n",
               (long long)blocks, w->waves_per_sm, (long long)w->blocks_per_wave, (long long)w->full_waves,
               w->tail_pct, w->active_sms, dev->sm_count, o->warp_fill * 100);
    }
    if (suggest) {
        occ_advice adv;
        wl_occ_status st = occ_advise(dev, &o->kernel, o->kernel.block_size, max_block, NULL, &adv);
        if (st == WL_OCC_OK)
            occ_advice_print(stdout, dev, &adv, "  ");
        else
            printf("  suggestion     not computed: %s\n", wl_occ_status_message(st));
    }
}

static void print_panel(wl_session *s, const picked *p, const wl_kernel_summary *sum, int64_t call_no,
                        const char *why, int suggest, int max_block)
{
    const wl_kernel_row *k = &p->row;
    char a[32], b[32], c[32], d[32], g[48], bl[48];
    print_wrapped("kernel", k->name);
    printf("call     id %lld, call %lld of %" PRIu64 "%s\n", (long long)k->id, (long long)call_no,
           sum ? sum->calls : 1, why);
    wl_device_row dev;
    int have_dev = wl_session_device(s, k->pid, k->device_id, &dev) == 0;
    if (have_dev)
        printf("device   %u: %s (sm_%d%d, %d SMs), process %u\n", dev.device_id, dev.name, dev.cc_major,
               dev.cc_minor, dev.sm_count, k->pid);
    else
        printf("device   %u of process %u (not described in the session)\n", k->device_id, k->pid);
    char th[160];
    if (k->tid >= 0)
        snprintf(th, sizeof th, "%lld%s%s%s", (long long)k->tid, k->thread_name[0] ? " (" : "", k->thread_name,
                 k->thread_name[0] ? ")" : "");
    else
        snprintf(th, sizeof th, "- (no API record)");
    printf("host     thread %s, stream %u, scope %s, API %s\n", th, k->stream_id,
           k->scope_name[0] ? k->scope_name : "-", k->api_name[0] ? k->api_name : "- (not recorded)");
    print_identity(s, k);

    printf("\nlaunch   grid %s x block %s = %" PRIu64 " threads, %" PRIu64 " warps (%" PRIu64 " blocks)\n",
           kf_dim3(k->grid, 0, g, sizeof g), kf_dim3(k->block, 0, bl, sizeof bl), k->threads, k->warps, k->blocks);
    printf("         type %s%s", k->launch_type, k->is_device_launched ? ", device-launched" : "");
    if (k->graph_id >= 0)
        printf(", graph %lld node %lld", (long long)k->graph_id, (long long)k->graph_node_id);
    if (k->cluster[0] > 0)
        printf(", cluster %dx%dx%d (max active clusters %d)", k->cluster[0], k->cluster[1], k->cluster[2],
               k->max_active_clusters);
    else
        printf(", no cluster");
    printf("\nresources\n  %-16s %d per thread%s\n", "registers", k->registers_per_thread,
           k->registers_per_thread == 16 ? " (CUPTI reports at least 16 on sm_90)" : "");
    printf("  %-16s %s static + %s dynamic per block (%s limit)\n", "shared memory",
           fmt_bytes((double)k->static_smem, a, sizeof a), fmt_bytes((double)k->dynamic_smem, b, sizeof b),
           k->smem_limit_config == 1 ? "opt-in" : "default");
    printf("  %-16s %s per SM, as executed\n", "smem carveout", fmt_bytes((double)k->smem_executed, c, sizeof c));
    printf("  %-16s %s per thread, %s in all\n", "local memory", fmt_bytes((double)k->local_mem_per_thread, a, sizeof a),
           fmt_bytes((double)k->local_mem_total, b, sizeof b));

    printf("\n");
    wl_occ_device odev;
    int known = have_dev && wl_occ_device_from_row(&dev, &odev) == 0;
    wl_kernel_occ o;
    memset(&o, 0, sizeof o);
    if (known)
        wl_kernel_occupancy(&dev, k, &o);
    print_occupancy(known ? &odev : NULL, &o, (int64_t)k->blocks, suggest, max_block);

    printf("\ntiming\n");
    if (k->has_timestamps) {
        printf("  launch call %s -> queued to submitted %s -> submitted to start %s\n  -> execution %s\n",
               k->api_duration_ns >= 0 ? fmt_ns((double)k->api_duration_ns, a, sizeof a) : "-",
               k->queue_delay_ns >= 0 ? fmt_ns((double)k->queue_delay_ns, b, sizeof b) : "-",
               k->submit_delay_ns >= 0 ? fmt_ns((double)k->submit_delay_ns, c, sizeof c) : "-",
               fmt_ns((double)k->duration_ns, d, sizeof d));
        int64_t ov = wl_session_kernel_overlaps(s, k->id);
        printf("  overlapped by %lld kernel%s on other streams of the device\n", (long long)ov, ov == 1 ? "" : "s");
    } else {
        printf("  no timestamps recorded for this launch\n");
    }
    if (sum && sum->calls > 1) {
        printf("  all %" PRIu64 " calls: min %s, p50 %s, p99 %s, max %s, mean %s\n  %d launch configuration%s\n",
               sum->calls, fmt_ns((double)sum->min_ns, a, sizeof a), fmt_ns((double)sum->p50_ns, b, sizeof b),
               fmt_ns((double)sum->p99_ns, c, sizeof c), fmt_ns((double)sum->max_ns, d, sizeof d),
               fmt_ns(sum->mean_ns, g, sizeof g), sum->configs, sum->configs == 1 ? "" : "s");
    }
    double flops = 0, bytes = 0;
    char precision[16] = "fp32";
    if (wl_session_kernel_annotation(s, k->id, &flops, &bytes, precision, sizeof precision) == 0 && known &&
        k->has_timestamps) {
        wl_tp_peaks peaks;
        wl_throughput t;
        wl_tp_device_peaks(&odev, !strcmp(precision, "fp64")          ? WL_TP_FP64
                                  : !strcmp(precision, "fp16_tensor") ? WL_TP_FP16_TENSOR
                                  : !strcmp(precision, "bf16_tensor") ? WL_TP_BF16_TENSOR
                                                                      : WL_TP_FP32,
                           &peaks);
        wl_tp_compute(&peaks, flops, bytes, (uint64_t)k->duration_ns, &t);
        printf("\nthroughput  %.3f TFLOP/s (%.1f%% of %s peak), %.1f GB/s (%.1f%% of DRAM peak), %s\n", t.tflops,
               t.pct_peak_compute, precision, t.gbps, t.pct_peak_dram, wl_tp_bound_name(t.bound));
    } else {
        printf("\nthroughput  not known: the session has no FLOP/byte annotation for this kernel\n");
    }
    if (known)
        printf("            device peaks: FP32 %.1f TFLOP/s, DRAM %.0f GB/s\n", wl_occ_peak_fp32_tflops(&odev),
               wl_occ_peak_dram_gbps(&odev));
    if (k->has_timestamps)
        print_kernel_samples(s, k->id);
}

int cmd_kernel(int argc, char **argv)
{
    const char *path = NULL, *target = NULL;
    long long call = 0, max_block = 0;
    int suggest = 0;
    const char *pos[2] = {NULL, NULL};
    cli_parser cp;
    cli_init(&cp, &CLI_KERNEL, argc, argv);
    for (int id; (id = cli_next(&cp)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_SUGGEST: suggest = 1; break;
        case O_CALL:
            if (kf_parse_count(cp.arg, &call) != 0)
                return cli_error(&CLI_KERNEL, "--call needs a positive number, got '%s'", cp.arg);
            break;
        case O_MAX_BLOCK:
            if (kf_parse_count(cp.arg, &max_block) != 0 || max_block > 1 << 20)
                return cli_error(&CLI_KERNEL, "--max-block-size needs a positive number of threads, got '%s'", cp.arg);
            break;
        case CLI_POSITIONAL:
            if (cli_positional(&cp, pos, 2, "a session and one kernel"))
                return 2;
            break;
        }
    }
    path = pos[0];
    target = pos[1];
    if (!path || !target)
        return cli_error(&CLI_KERNEL, "%s (usage: warplens kernel <session> <name|id>)",
                         !path ? "no session given" : "no kernel given");
    if (max_block && !suggest) {
        fprintf(stderr, "warplens kernel: --max-block-size goes with --suggest\n");
        return 2;
    }
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    int rc = 2;
    long long id = -1;
    int64_t name_id = -1;
    picked p = {0};
    wl_kernel_summary *sums = NULL;
    int nsum = wl_session_kernel_summaries(s, &sums);
    const char *why = "";
    if (kf_parse_count(target, &id) == 0) {
        if (call) {
            fprintf(stderr, "warplens kernel: --call goes with a kernel name, not an id\n");
            goto out;
        }
        if (read_kernel(s, id, &p) != 0) {
            rc = cli_no_row(s, "kernel", id, "warplens kernel: no kernel with id %lld in %s\n", id, path) ? 1 : 2;
            goto out;
        }
        name_id = p.row.name_id;
    } else {
        int64_t ids[8];
        int n = wl_session_find_kernel_names(s, target, ids, 8);
        if (n <= 0) {
            cli_read_error(s, "warplens kernel: no kernel named '%s' in %s (see `warplens kernels`)\n", target, path);
            goto out;
        }
        if (n > 1) {
            fprintf(stderr, "warplens kernel: '%s' matches %d kernel names; give more of the name or an id:\n",
                    target, n);
            for (int i = 0; i < n && i < 8; i++) {
                char *nm = NULL, nb[90];
                wl_session_kernel_name(s, ids[i], &nm, NULL, NULL);
                fprintf(stderr, "  id %lld: %s\n", (long long)wl_session_kernel_nth_call(s, ids[i], 1),
                        kf_shorten(nm ? kf_display_name(nm) : "?", 80, nb, sizeof nb));
                free(nm);
            }
            goto out;
        }
        name_id = ids[0];
        const wl_kernel_summary *sum = nsum > 0 ? find_summary(sums, nsum, name_id) : NULL;
        if (call) {
            id = wl_session_kernel_nth_call(s, name_id, call);
            if (id < 0) {
                cli_read_error(s, "warplens kernel: --call %lld: the kernel has %" PRIu64 " calls\n", call,
                        sum ? sum->calls : 0);
                goto out;
            }
        } else {
            id = representative(s, name_id, sum ? sum->p50_ns : 0);
            why = sum && sum->calls > 1 ? " (representative: most frequent configuration, closest to the median)" : "";
        }
        if (id < 0 || read_kernel(s, id, &p) != 0) {
            cli_read_error(s, "warplens kernel: cannot read the calls of '%s'\n", target);
            rc = 1;
            goto out;
        }
    }
    print_panel(s, &p, nsum > 0 ? find_summary(sums, nsum, name_id) : NULL, wl_session_kernel_call_index(s, id), why,
                suggest, (int)max_block);
    print_metric_panel(s, p.row.id, name_id);
    print_stall_panel(s, p.row.id, name_id);
    rc = 0;
out:
    pick_free(&p);
    free(sums);
    return cli_session_close(s, rc);
}
