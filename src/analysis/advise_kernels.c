/* Kernel rules of `warplens advise` (advise_kernels.h): per kernel name, from its most frequent
 * launch configuration (wl_kernel_table): low theoretical occupancy with the launch that lifts it
 * (the calculator's block-size suggestion and next occupancy step), a last wave mostly empty
 * (estimated by the dispatch model of tail_model.h), a grid smaller than one wave, and, with hardware metrics, where it sits under the roofline. */
#include "analysis/advise_kernels.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/device_tables.h"
#include "analysis/kernel_table.h"
#include "analysis/occupancy_suggest.h"
#include "analysis/tail_model.h"
#include "store/session_metrics.h"

#define MAX_PER_RULE 5

static void kernel_evidence(wl_finding *f, const wl_kernel_table_row *k)
{
    wl_finding_evidence(f, "kernel", 0, "%s", k->short_name ? k->short_name : "");
    wl_finding_evidence(f, "name_id", 1, "%" PRId64, k->sum.name_id);
    wl_finding_evidence(f, "calls", 1, "%" PRIu64, (uint64_t)k->sum.calls);
    wl_finding_evidence(f, "gpu_ns", 1, "%" PRIu64, (uint64_t)k->sum.total_ns);
    wl_finding_evidence(f, "time_pct_of_kernels", 1, "%.1f", k->time_pct);
    wl_finding_evidence(f, "launch", 0, "grid (%d, %d, %d) block (%d, %d, %d), %d registers, %" PRId64 " B shared",
                        k->top.grid[0], k->top.grid[1], k->top.grid[2], k->top.block[0], k->top.block[1],
                        k->top.block[2], k->top.registers_per_thread, k->top.static_smem + k->top.dynamic_smem);
}

static void set_span(wl_finding *f, const wl_advise_result *r, uint64_t span_ns)
{
    f->start_ns = r->start_ns;
    f->end_ns = r->end_ns;
    f->span_ns = span_ns;
    f->gain_pct = span_ns ? 100.0 * f->gain_ns / (double)span_ns : 0;
}

static void rule_occupancy(const wl_kernel_table_row *k, wl_occ_cache *cache, wl_advise_result *r,
                           uint64_t span_ns, int *fired)
{
    const wl_kernel_occ *o = &k->occ;
    if (*fired >= MAX_PER_RULE || !o->has_result || o->occ.occupancy_pct > 50.0 || k->time_pct < 10.0)
        return;
    const wl_occ_device *dev = wl_occ_cache_device(cache, k->top.pid, k->top.device_id);
    if (!dev)
        return;
    wl_occ_suggestion sug;
    wl_occ_step step;
    if (wl_occ_suggest_block_size(dev, &o->kernel, 0, NULL, NULL, &sug) != WL_OCC_OK || sug.block_size <= 0)
        return;
    int have_step = wl_occ_next_step(dev, &o->kernel, &step) == WL_OCC_OK;
    double best = sug.occ.occupancy_pct;
    if (best <= o->occ.occupancy_pct + 1e-9)
        return; /* the block size already gives the most this kernel's resources allow */
    /* upper bound: a latency-bound kernel's time falls in proportion to the warps it keeps resident */
    double gain = (double)k->sum.total_ns * (1.0 - o->occ.occupancy_pct / best);
    if (gain < 0.03 * (double)span_ns)
        return;
    wl_finding *f = wl_advise_add(r, "occupancy", gain >= 0.2 * (double)span_ns ? WL_SEV_HIGH : WL_SEV_MEDIUM);
    if (!f)
        return;
    (*fired)++;
    char lim[64];
    wl_occ_limiters_text(o->occ.limiters, 0, lim, sizeof lim);
    f->gain_ns = gain;
    set_span(f, r, span_ns);
    snprintf(f->title, sizeof f->title, "%s: theoretical occupancy %.1f%% (limited by %s) on %.1f%% of GPU time",
             k->short_name, o->occ.occupancy_pct, lim, k->time_pct);
    snprintf(f->measured, sizeof f->measured,
             "%d active blocks of %d threads per SM = %d of %d warps; limits: registers %d, shared memory %d, warps %d,"
             " blocks %d",
             o->occ.active_blocks_per_sm, k->top.block[0] * k->top.block[1] * k->top.block[2],
             o->occ.active_warps_per_sm, o->occ.max_warps_per_sm, o->occ.block_limit_registers,
             o->occ.block_limit_shared_memory, o->occ.block_limit_warps, o->occ.block_limit_blocks);
    snprintf(f->threshold, sizeof f->threshold, "occupancy <= 50%%, >= 10%% of kernel GPU time, a launch that raises it");
    snprintf(f->estimate, sizeof f->estimate,
             "GPU time x (1 - %.1f%% / %.1f%%): an upper bound that holds when the kernel is latency-bound and"
             " its time falls with the warps it keeps resident; a bandwidth-bound kernel gains less",
             o->occ.occupancy_pct, best);
    kernel_evidence(f, k);
    wl_finding_evidence(f, "limiter", 0, "%s", lim);
    wl_finding_evidence(f, "suggested_block_size", 1, "%d", sug.block_size);
    wl_finding_evidence(f, "suggested_occupancy_pct", 1, "%.1f", sug.occ.occupancy_pct);
    char extra[200] = "";
    if (have_step && step.regs_per_thread > 0)
        snprintf(extra, sizeof extra, "; or cut registers to %d per thread (__launch_bounds__ or -maxrregcount) for %d"
                 " blocks/SM (%.1f%%)", step.regs_per_thread, step.regs_active_blocks_per_sm, step.regs_occupancy_pct);
    else if (have_step && step.smem_per_block >= 0)
        snprintf(extra, sizeof extra, "; or cut shared memory to %" PRId64 " bytes per block for %d blocks/SM (%.1f%%)",
                 step.smem_per_block, step.smem_active_blocks_per_sm, step.smem_occupancy_pct);
    snprintf(f->fix, sizeof f->fix,
             "Launch with %d threads per block (cudaOccupancyMaxPotentialBlockSize's answer for this kernel:"
             " %d blocks/SM, %.1f%% occupancy, a grid of at least %d blocks)%s; `warplens kernel SESSION %s"
             " --suggest` shows the steps.",
             sug.block_size, sug.occ.active_blocks_per_sm, sug.occ.occupancy_pct, sug.min_grid_size, extra,
             k->short_name);
}

static void rule_waves(const wl_kernel_table_row *k, wl_advise_result *r, uint64_t span_ns, int *tail_fired,
                       int *under_fired)
{
    const wl_kernel_occ *o = &k->occ;
    if (!o->has_waves || k->time_pct < 5.0)
        return;
    double waves = o->waves.waves_per_sm;
    int64_t bpw = o->waves.blocks_per_wave;
    int64_t grid = (int64_t)k->top.grid[0] * k->top.grid[1] * k->top.grid[2];
    wl_tail_shape shape = {grid, bpw, o->waves.active_sms, o->occ.occupancy_pct};
    wl_tail_estimate te;
    double launch_ns = k->sum.calls ? (double)k->sum.total_ns / (double)k->sum.calls : 0;
    if (waves >= 1.0 && waves < 8.0 && *tail_fired < MAX_PER_RULE &&
        wl_tail_estimate_fix(&shape, launch_ns, &te) == 0) {
        /* the dispatch model of tail_model.h, measured on the H100: the gain of the whole-wave grid */
        /* the gain in the session's own (traced) time, and what the model gives without a profiler:
         * CUPTI's tracing delays late blocks more (93 against 33 us), so a remainder the traced
         * run absorbs can still cost the program run alone; the larger decides whether it fires */
        double gain = (double)k->sum.total_ns * te.gain_frac;
        double alone = (double)k->sum.total_ns * te.gain_frac_untraced, decides = gain > alone ? gain : alone;
        if (decides < 0.03 * (double)span_ns)
            return;
        wl_finding *f = wl_advise_add(r, "tail-effect", decides >= 0.2 * (double)span_ns ? WL_SEV_HIGH : WL_SEV_MEDIUM);
        if (!f)
            return;
        (*tail_fired)++;
        /* where the traced run absorbs the remainder, the finding is the program's own gain */
        int untraced_only = alone > 2 * gain;
        f->gain_ns = untraced_only ? alone : gain;
        set_span(f, r, span_ns);
        if (untraced_only) /* the traced estimate would hide it: say what the program run alone wins */
            snprintf(f->title, sizeof f->title,
                     "%s: last wave %.0f%% full (%.2f waves of %" PRId64 " blocks): ~%.0f%% of its time without a"
                     " profiler", k->short_name, o->waves.tail_pct, waves, bpw, 100 * te.gain_frac_untraced);
        else
            snprintf(f->title, sizeof f->title, "%s: last wave %.0f%% full (%.2f waves of %" PRId64 " blocks)",
                     k->short_name, o->waves.tail_pct, waves, bpw);
        snprintf(f->measured, sizeof f->measured,
                 "grid of %" PRId64 " blocks, %d per SM x %d SMs = %" PRId64 " per wave: %" PRId64
                 " full waves and a last one of %" PRId64 " blocks; %.1f us per launch",
                 grid, o->occ.active_blocks_per_sm, o->waves.active_sms, bpw, o->waves.full_waves,
                 grid - o->waves.full_waves * bpw, launch_ns / 1e3);
        snprintf(f->threshold, sizeof f->threshold, "1 to 8 waves with a partial last one, >= 5%% of kernel GPU time,"
                 " model gain >= 3%% traced or without a profiler");
        if (untraced_only)
            snprintf(f->estimate, sizeof f->estimate,
                     "GPU time x %.1f%% without a profiler (traced, as this session ran: %.1f%%; model range"
                     " %.1f-%.1f%%): at %.0f%% occupancy the H100 starts part of a wave's blocks up to min(block,"
                     " 33 us) late without a profiler, 93 us under CUPTI, which absorbs the last wave's %" PRId64
                     " blocks; blocks of %.1f us (solved) (docs/advise.md)",
                     100 * te.gain_frac_untraced, 100 * te.gain_frac, 100 * te.gain_frac_low, 100 * te.gain_frac_high,
                     o->occ.occupancy_pct, grid - o->waves.full_waves * bpw, te.block_ns / 1e3);
        else if (te.staggered)
            snprintf(f->estimate, sizeof f->estimate,
                     "GPU time x %.1f%% (model range %.1f-%.1f%%): at %.0f%% occupancy the H100 starts part of a"
                     " wave's blocks up to min(block, 93 us) late; blocks of %.1f us (solved), whole waves"
                     " %.1f us a launch; %.1f%% without a profiler (docs/advise.md)",
                     100 * te.gain_frac, 100 * te.gain_frac_low, 100 * te.gain_frac_high, o->occ.occupancy_pct,
                     te.block_ns / 1e3, te.fixed_ns / 1e3, 100 * te.gain_frac_untraced);
        else
            snprintf(f->estimate, sizeof f->estimate,
                     "GPU time x (1 - %.2f / %.0f) = %.1f%%: at %.0f%% occupancy the blocks of a wave start"
                     " together (measured on the H100), so the kernel takes %.0f waves' time for %.2f waves of"
                     " work",
                     waves, ceil(waves), 100 * te.gain_frac, o->occ.occupancy_pct, ceil(waves), waves);
        kernel_evidence(f, k);
        wl_finding_evidence(f, "model_gain_pct_untraced", 1, "%.1f", 100 * te.gain_frac_untraced);
        wl_finding_evidence(f, "waves", 1, "%.3f", waves);
        wl_finding_evidence(f, "blocks_per_wave", 1, "%" PRId64, bpw);
        wl_finding_evidence(f, "staggered_starts", 1, "%s", te.staggered ? "true" : "false");
        wl_finding_evidence(f, "model_block_us", 1, "%.1f", te.block_ns / 1e3);
        wl_finding_evidence(f, "model_whole_waves_us", 1, "%.1f", te.fixed_ns / 1e3);
        wl_finding_evidence(f, "model_gain_pct_range", 0, "%.1f-%.1f", 100 * te.gain_frac_low, 100 * te.gain_frac_high);
        snprintf(f->fix, sizeof f->fix,
                 "Size the grid to whole waves: %" PRId64 " blocks (%" PRId64 " waves of %" PRId64
                 ") each doing a %.3fx share (a grid-stride loop), or %" PRId64
                 " blocks with more, smaller blocks so the remainder spreads over every SM.",
                 o->waves.full_waves * bpw, o->waves.full_waves, bpw, waves / (double)o->waves.full_waves,
                 (o->waves.full_waves + 1) * bpw);
    } else if (waves < 0.5 && k->time_pct >= 10.0 && *under_fired < MAX_PER_RULE) {
        double gain = (double)k->sum.total_ns * (1.0 - o->sm_share);
        if (gain < 0.05 * (double)span_ns)
            return;
        wl_finding *f = wl_advise_add(r, "grid-underfill", WL_SEV_MEDIUM);
        if (!f)
            return;
        (*under_fired)++;
        f->gain_ns = gain;
        set_span(f, r, span_ns);
        snprintf(f->title, sizeof f->title, "%s: grid of %" PRId64 " blocks fills %.0f%% of the GPU", k->short_name, grid,
                 100 * o->sm_share);
        snprintf(f->measured, sizeof f->measured, "%" PRId64 " blocks where one wave holds %" PRId64 " (%d SMs busy)",
                 grid, bpw, o->waves.active_sms);
        snprintf(f->threshold, sizeof f->threshold, "< 0.5 waves, >= 10%% of kernel GPU time");
        snprintf(f->estimate, sizeof f->estimate,
                 "GPU time x (1 - %.2f): an upper bound that holds when the work splits into more blocks and"
                 " nothing else runs beside the kernel",
                 o->sm_share);
        kernel_evidence(f, k);
        snprintf(f->fix, sizeof f->fix,
                 "Split the work over at least %" PRId64 " blocks (smaller blocks, more blocks per item, split-K"
                 " for reductions), or run independent work beside it on another stream.",
                 bpw);
    }
}

static void rule_roofline(const wl_kernel_table_row *k, const wl_metric_set *m, wl_occ_cache *cache,
                          wl_advise_result *r, uint64_t span_ns, int *fired)
{
    if (!m || m->n == 0 || k->time_pct < 10.0 || *fired >= MAX_PER_RULE)
        return;
    const wl_metric_acc *a = wl_metric_set_find(m, k->sum.name_id);
    const wl_occ_device *dev = wl_occ_cache_device(cache, k->top.pid, k->top.device_id);
    if (!a || !dev)
        return;
    wl_metric_summary ms;
    wl_metric_acc_summary(a, &ms);
    double t = isnan(ms.gpu_time_ns) ? 0 : ms.gpu_time_ns;
    double mem = isnan(ms.dram_pct) ? NAN : ms.dram_pct;
    double peak32 = wl_occ_peak_fp32_tflops(dev) * 1e12;
    double comp = NAN;
    if (t > 0 && !isnan(ms.fp32_flop) && peak32 > 0)
        comp = 100.0 * ms.fp32_flop / (t / 1e9) / peak32 / (double)(a->kernels ? a->kernels : 1);
    double tensor = isnan(ms.tensor_pct) ? 0 : ms.tensor_pct;
    if (isnan(mem) && isnan(comp))
        return;
    double top = fmax(isnan(mem) ? 0 : mem, fmax(isnan(comp) ? 0 : comp, tensor));
    wl_finding *f = wl_advise_add(r, "roofline", top < 30.0 ? WL_SEV_LOW : WL_SEV_INFO);
    if (!f)
        return;
    (*fired)++;
    const char *bound = top < 30.0 ? "latency-bound (far from every peak)"
                        : (!isnan(mem) && mem >= (isnan(comp) ? 0 : comp) && mem >= tensor) ? "memory-bound"
                                                                                             : "compute-bound";
    f->gain_ns = 0;
    set_span(f, r, span_ns);
    snprintf(f->title, sizeof f->title, "%s is %s: DRAM %.0f%%, FP32 %.0f%%, tensor pipe %.0f%% of peak", k->short_name,
             bound, isnan(mem) ? 0 : mem, isnan(comp) ? 0 : comp, tensor);
    snprintf(f->measured, sizeof f->measured,
             "per launch: %.3g bytes from DRAM at %.0f%% of the peak, %.3g FP32 FLOP at %.0f%% of %.1f TFLOP/s",
             isnan(ms.dram_read_bytes) ? 0 : (ms.dram_read_bytes + (isnan(ms.dram_write_bytes) ? 0 : ms.dram_write_bytes)),
             isnan(mem) ? 0 : mem, isnan(ms.fp32_flop) ? 0 : ms.fp32_flop / (double)(a->kernels ? a->kernels : 1),
             isnan(comp) ? 0 : comp, peak32 / 1e12);
    snprintf(f->threshold, sizeof f->threshold, ">= 10%% of kernel GPU time with --metrics; latency-bound below 30%%");
    snprintf(f->estimate, sizeof f->estimate, "not estimated: the roofline says which resource to work on, not by how much");
    kernel_evidence(f, k);
    snprintf(f->fix, sizeof f->fix, "%s",
             top < 30.0 ? "Neither bandwidth nor arithmetic is the limit: raise occupancy or instruction-level"
                          " parallelism (more independent loads in flight), and look at its warp stall reasons"
                          " (`warplens run --stalls`)."
             : !strcmp(bound, "memory-bound") ? "Move fewer bytes: fuse it with its neighbours, use smaller types"
                                                " (bf16/fp8), reuse data through shared memory or L2."
                                              : "Use the tensor cores (TF32/BF16/FP8 matmuls), or fewer instructions"
                                                " per result.");
}

int wl_advise_kernels(wl_session *s, wl_occ_cache *cache, wl_advise_result *r, uint64_t span_ns, char *err,
                      size_t err_size)
{
    wl_kernel_table_row *rows = NULL;
    int n = wl_kernel_table(s, cache, &rows);
    if (n < 0) {
        snprintf(err, err_size, "reading the session's kernels failed");
        return -1;
    }
    wl_metric_set m;
    memset(&m, 0, sizeof m);
    int have_metrics = wl_session_has_metrics(s) && wl_session_metrics(s, WL_METRICS_BY_NAME, &m) == 0;
    int occ_fired = 0, tail_fired = 0, under_fired = 0, roof_fired = 0;
    for (int i = 0; i < n && span_ns; i++) {
        if (!rows[i].has_config)
            continue;
        rule_occupancy(&rows[i], cache, r, span_ns, &occ_fired);
        rule_waves(&rows[i], r, span_ns, &tail_fired, &under_fired);
        rule_roofline(&rows[i], have_metrics ? &m : NULL, cache, r, span_ns, &roof_fired);
    }
    if (have_metrics)
        wl_metric_set_free(&m);
    wl_kernel_table_free(rows, n);
    return 0;
}
