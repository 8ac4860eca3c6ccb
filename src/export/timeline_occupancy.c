/* Theoretical occupancy of each kernel launch for the timeline (see timeline_internal.h). Devices
 * are described by the session's device rows laid over the calculator's table for their compute
 * capability; results are cached per launch configuration because a session repeats a handful of
 * configurations millions of times. */
#include "export/timeline_internal.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/device_tables.h"
#include "common/mix64.h"

#define CACHE_SLOTS 4096 /* direct-mapped; a miss only costs one calculation */

typedef struct occ_key {
    uint32_t pid, device;
    int block, regs, static_smem, dynamic_smem, smem_config, carveout, cluster;
} occ_key;

typedef struct occ_slot {
    int used;
    occ_key key;
    int valid, active_blocks, sm_count;
    double pct;
    const char *limiter;
} occ_slot;

typedef struct occ_dev {
    uint32_t pid, device;
    wl_occ_device dev;
} occ_dev;

struct tl_occ_cache {
    occ_dev *devs;
    size_t n_devs, cap_devs;
    occ_slot *slots;
};

tl_occ_cache *tl_occ_cache_new(void)
{
    tl_occ_cache *c = calloc(1, sizeof *c);
    if (c && !(c->slots = calloc(CACHE_SLOTS, sizeof *c->slots))) {
        free(c);
        return NULL;
    }
    return c;
}

void tl_occ_cache_free(tl_occ_cache *c)
{
    if (!c)
        return;
    free(c->devs);
    free(c->slots);
    free(c);
}

int tl_occ_add_device(tl_occ_cache *c, const wl_device_row *d)
{
    wl_occ_device dev;
    if (wl_occ_device_init_cc(&dev, d->cc_major, d->cc_minor) != 0)
        return 0; /* unknown architecture: kernels on it get no occupancy */
    /* The session's measured limits win over the table's. */
    if (d->sm_count > 0) dev.sm_count = d->sm_count;
    if (d->max_threads_per_sm > 0) dev.max_threads_per_sm = d->max_threads_per_sm;
    if (d->max_threads_per_block > 0) dev.max_threads_per_block = d->max_threads_per_block;
    if (d->max_blocks_per_sm > 0) dev.max_blocks_per_sm = d->max_blocks_per_sm;
    if (d->regs_per_sm > 0) dev.regs_per_sm = d->regs_per_sm;
    if (d->regs_per_block > 0) dev.regs_per_block = d->regs_per_block;
    if (d->smem_per_sm > 0) dev.smem_per_sm = d->smem_per_sm;
    if (d->smem_per_block > 0) dev.smem_per_block = d->smem_per_block;
    if (d->smem_per_block_optin > 0) dev.smem_per_block_optin = d->smem_per_block_optin;
    if (d->reserved_smem_per_block > 0) dev.smem_reserved_per_block = d->reserved_smem_per_block;
    if (d->core_clock_khz > 0) dev.core_clock_khz = d->core_clock_khz;
    if (d->mem_clock_khz > 0) dev.mem_clock_khz = d->mem_clock_khz;
    if (d->mem_bus_width_bits > 0) dev.mem_bus_width_bits = d->mem_bus_width_bits;
    if (c->n_devs == c->cap_devs) {
        size_t ncap = c->cap_devs ? c->cap_devs * 2 : 8;
        occ_dev *p = realloc(c->devs, ncap * sizeof *p);
        if (!p)
            return -1;
        c->devs = p;
        c->cap_devs = ncap;
    }
    c->devs[c->n_devs++] = (occ_dev){d->pid, d->device_id, dev};
    return 0;
}

static const wl_occ_device *find_dev(const tl_occ_cache *c, uint32_t pid, uint32_t device)
{
    for (size_t i = 0; i < c->n_devs; i++)
        if (c->devs[i].pid == pid && c->devs[i].device == device)
            return &c->devs[i].dev;
    return NULL;
}

/* Field by field (inlined, where memcmp is a call once a kernel). */
static int same_key(const occ_key *a, const occ_key *b)
{
    return a->pid == b->pid && a->device == b->device && a->block == b->block && a->regs == b->regs &&
           a->static_smem == b->static_smem && a->dynamic_smem == b->dynamic_smem &&
           a->smem_config == b->smem_config && a->carveout == b->carveout && a->cluster == b->cluster;
}

static uint64_t key_hash(const occ_key *k)
{
    /* two cells a step: a kernel's look-up hashes five words instead of nine bytes-wise steps */
    uint64_t h = wl_mix64_step(0, (uint64_t)k->pid << 32 | k->device);
    h = wl_mix64_step(h, (uint64_t)(uint32_t)k->block << 32 | (uint32_t)k->regs);
    h = wl_mix64_step(h, (uint64_t)(uint32_t)k->static_smem << 32 | (uint32_t)k->dynamic_smem);
    h = wl_mix64_step(h, (uint64_t)(uint32_t)k->smem_config << 32 | (uint32_t)k->carveout);
    return wl_mix64_finish(wl_mix64_step(h, (uint32_t)k->cluster));
}

static const char *limiter_name(unsigned bits)
{
    /* The first set bit in Nsight Compute's order of importance. */
    static const unsigned order[] = {WL_OCC_LIMIT_REGISTERS, WL_OCC_LIMIT_SHARED_MEMORY, WL_OCC_LIMIT_WARPS,
                                     WL_OCC_LIMIT_BLOCKS, WL_OCC_LIMIT_BARRIERS};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (bits & order[i])
            return wl_occ_limiter_name(order[i]);
    return "none";
}

void tl_occ_kernel(tl_occ_cache *c, const wl_gpu_item *k, tl_occ *out)
{
    memset(out, 0, sizeof *out);
    occ_key key;
    memset(&key, 0, sizeof key);
    key.pid = k->pid;
    key.device = k->device_id;
    key.block = k->block[0] * k->block[1] * k->block[2];
    key.regs = k->registers;
    key.static_smem = k->static_smem;
    key.dynamic_smem = k->dynamic_smem;
    key.smem_config = k->smem_limit_config;
    key.carveout = k->carveout;
    key.cluster = k->cluster_size > 0 ? k->cluster_size : 1;
    occ_slot *slot = &c->slots[key_hash(&key) & (CACHE_SLOTS - 1)];
    if (!slot->used || !same_key(&slot->key, &key)) {
        memset(slot, 0, sizeof *slot);
        slot->used = 1;
        slot->key = key;
        const wl_occ_device *dev = find_dev(c, k->pid, k->device_id);
        if (dev && key.block > 0) {
            wl_occ_kernel kk;
            wl_occ_kernel_init(&kk);
            kk.block_size = key.block;
            kk.regs_per_thread = key.regs;
            kk.static_smem = key.static_smem;
            kk.dynamic_smem = key.dynamic_smem;
            kk.smem_config = key.smem_config ? WL_OCC_SMEM_LIMIT_OPTIN : WL_OCC_SMEM_LIMIT_DEFAULT;
            if (kk.smem_config == WL_OCC_SMEM_LIMIT_OPTIN)
                kk.max_dynamic_smem = key.dynamic_smem;
            kk.carveout_pct = key.carveout >= 0 && key.carveout <= 100 ? key.carveout : WL_OCC_CARVEOUT_DEFAULT;
            /* clusters only where the device has them (a recorded size of 1 means none) */
            kk.cluster_size = dev->max_cluster_size > 0 && key.cluster <= dev->max_cluster_size ? key.cluster : 1;
            wl_occ_result r;
            wl_occ_status stt = wl_occ_calculate(dev, &kk, &r);
            if (stt == WL_OCC_OK || wl_occ_status_has_result(stt)) {
                slot->valid = 1;
                slot->pct = r.occupancy_pct;
                slot->active_blocks = r.active_blocks_per_sm;
                slot->limiter = limiter_name(r.limiters);
                slot->sm_count = dev->sm_count;
            }
        }
    }
    if (!slot->valid)
        return;
    out->valid = 1;
    out->occupancy_pct = slot->pct;
    out->active_blocks_per_sm = slot->active_blocks;
    out->limiter = slot->limiter;
    double capacity = (double)slot->active_blocks * (double)slot->sm_count;
    double blocks = (double)k->grid[0] * (double)k->grid[1] * (double)k->grid[2];
    double share = capacity > 0 ? blocks / capacity : 0.0;
    out->fill = slot->pct / 100.0 * (share < 1.0 ? share : 1.0);
}
