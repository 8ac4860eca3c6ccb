/* Text and JSON of the block-size suggestion and the next occupancy step (occ_suggest_print.h). */
#include "occ_suggest_print.h"

#include <string.h>

#include "analysis/kernel_occupancy.h"
#include "format.h"

wl_occ_status occ_advise(const wl_occ_device *d, const wl_occ_kernel *k, int block, int block_size_limit,
                         const wl_occ_smem_linear *smem, occ_advice *out)
{
    memset(out, 0, sizeof *out);
    out->block_size_limit = block_size_limit > 0 && block_size_limit < d->max_threads_per_block
                                ? block_size_limit
                                : d->max_threads_per_block;
    out->smem = smem ? *smem : (wl_occ_smem_linear){k->dynamic_smem, 0};
    int variable = out->smem.per_thread != 0;
    wl_occ_status st = wl_occ_suggest_block_size(d, k, block_size_limit, variable ? wl_occ_smem_linear_fn : NULL,
                                                 &out->smem, &out->s);
    if (st != WL_OCC_OK)
        return st;
    if (block <= 0)
        block = out->s.block_size > 0 ? out->s.block_size
                : out->block_size_limit < d->warp_size ? out->block_size_limit
                                                       : d->warp_size;
    out->launch = *k;
    out->launch.block_size = block;
    out->launch.dynamic_smem = wl_occ_smem_linear_fn(block, &out->smem);
    st = wl_occ_next_step(d, &out->launch, &out->step);
    if (!wl_occ_status_has_result(st))
        return st;
    wl_occ_calculate(d, &out->launch, &out->now);
    return WL_OCC_OK;
}

static const char *unit_of(const wl_occ_device *d)
{
    return d->vendor != WL_OCC_AMD ? "SM" : d->cu_count != d->sm_count ? "WGP" : "CU";
}

/* "1 block/SM", "3 blocks/SM" */
static const char *per_unit(int n, const char *unit, char *buf, size_t cap)
{
    snprintf(buf, cap, "%d block%s/%s", n, n == 1 ? "" : "s", unit);
    return buf;
}

/* Why a resource has no next step: it is not used, or other limits bind. */
static void no_step(FILE *out, const wl_occ_device *d, const occ_advice *a, int used)
{
    char lim[96];
    if (!used)
        fprintf(out, "not used, so not the step\n");
    else if (a->now.max_warps_per_sm > 0 && a->now.active_warps_per_sm == a->now.max_warps_per_sm)
        fprintf(out, "none needed: the launch already fills the %s\n", unit_of(d));
    else if (a->now.block_limit_warps == 0)
        fprintf(out, "no count helps: the block is larger than the device allows\n");
    else
        fprintf(out, "no smaller count gains a block (limited by %s)\n",
                wl_occ_limiters_text(a->now.limiters, 0, lim, sizeof lim));
}

void occ_advice_print(FILE *out, const wl_occ_device *d, const occ_advice *a, const char *indent)
{
    const char *unit = unit_of(d);
    const wl_occ_suggestion *s = &a->s;
    int smallest = a->block_size_limit < d->warp_size ? a->block_size_limit : d->warp_size;
    char b1[48], b2[48], lim[96], pu[48];
    if (s->block_size == 0) {
        fprintf(out, "%ssuggestion     no block size from %d down to %d can run (at %d: limited by %s)\n", indent,
                a->block_size_limit, smallest, smallest, wl_occ_limiters_text(s->occ.limiters, 0, lim, sizeof lim));
    } else {
        fprintf(out, "%ssuggestion     block size %d: %s, %.1f %% occupancy, min grid %d (%d x %d %ss)\n", indent,
                s->block_size, per_unit(s->occ.active_blocks_per_sm, unit, pu, sizeof pu), s->occ.occupancy_pct,
                s->min_grid_size, s->occ.active_blocks_per_sm, d->sm_count, unit);
        fprintf(out, "%s               searched %d down to %d in steps of %d; limited there by %s", indent,
                a->block_size_limit, smallest, d->warp_size, wl_occ_limiters_text(s->occ.limiters, 0, lim, sizeof lim));
        if (a->smem.per_thread != 0)
            fprintf(out, "; dynamic smem %s", fmt_bytes_exact(s->dynamic_smem, b1, sizeof b1));
        fprintf(out, "\n");
    }

    const wl_occ_step *st = &a->step;
    const wl_occ_kernel *k = &a->launch;
    fprintf(out, "%snext step      of the launch at block %d (%s, %.1f %%), one resource at a time:\n", indent,
            k->block_size, per_unit(st->active_blocks_per_sm, unit, pu, sizeof pu), st->occupancy_pct);
    fprintf(out, "%s  registers    ", indent);
    if (st->regs_per_thread >= 0)
        fprintf(out, "%d/thread (now %d) -> %s, %.1f %%\n", st->regs_per_thread, k->regs_per_thread,
                per_unit(st->regs_active_blocks_per_sm, unit, pu, sizeof pu), st->regs_occupancy_pct);
    else
        no_step(out, d, a, k->regs_per_thread > 0);
    int64_t total = k->static_smem + k->dynamic_smem;
    fprintf(out, "%s  shared mem   ", indent);
    if (st->smem_per_block >= 0)
        fprintf(out, "%s/block (now %s) -> %s, %.1f %%\n", fmt_bytes_exact(st->smem_per_block, b1, sizeof b1),
                fmt_bytes_exact(total, b2, sizeof b2), per_unit(st->smem_active_blocks_per_sm, unit, pu, sizeof pu),
                st->smem_occupancy_pct);
    else
        no_step(out, d, a, total > 0);
}

static void json_count(FILE *out, const char *key, int64_t v, int present)
{
    if (present)
        fprintf(out, ",\"%s\":%lld", key, (long long)v);
    else
        fprintf(out, ",\"%s\":null", key);
}

static void json_pct(FILE *out, const char *key, double v, int present)
{
    if (present)
        fprintf(out, ",\"%s\":%.2f", key, v);
    else
        fprintf(out, ",\"%s\":null", key);
}

void occ_advice_json(FILE *out, const occ_advice *a)
{
    const wl_occ_suggestion *s = &a->s;
    int runs = s->block_size > 0;
    fprintf(out, ",\"block_size_limit\":%d,\"smem_per_thread\":%lld,\"suggested_block_size\":%d", a->block_size_limit,
            (long long)a->smem.per_thread, s->block_size);
    fprintf(out, ",\"suggested_active_blocks_per_sm\":%d,\"suggested_occupancy_pct\":%.2f",
            runs ? s->occ.active_blocks_per_sm : 0, runs ? s->occ.occupancy_pct : 0.0);
    fprintf(out, ",\"suggested_min_grid_size\":%d", s->min_grid_size);
    json_count(out, "suggested_dynamic_shared_memory", s->dynamic_smem, runs);
    const wl_occ_step *st = &a->step;
    int r = st->regs_per_thread >= 0, m = st->smem_per_block >= 0;
    json_count(out, "next_step_registers_per_thread", st->regs_per_thread, r);
    json_count(out, "next_step_registers_active_blocks_per_sm", st->regs_active_blocks_per_sm, r);
    json_pct(out, "next_step_registers_occupancy_pct", st->regs_occupancy_pct, r);
    json_count(out, "next_step_shared_memory_per_block", st->smem_per_block, m);
    json_count(out, "next_step_shared_memory_active_blocks_per_sm", st->smem_active_blocks_per_sm, m);
    json_pct(out, "next_step_shared_memory_occupancy_pct", st->smem_occupancy_pct, m);
}
