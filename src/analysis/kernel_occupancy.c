/* Occupancy of recorded kernels and the configuration cache (see kernel_occupancy.h). */
#include "analysis/kernel_occupancy.h"
#include "common/fnv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/device_tables.h"

static int positive_or_one(int v) { return v > 0 ? v : 1; }

void wl_kernel_launch_from_row(const wl_kernel_row *k, wl_kernel_launch *l)
{
    memset(l, 0, sizeof *l);
    l->pid = k->pid;
    l->device_id = k->device_id;
    l->grid_blocks = (int64_t)positive_or_one(k->grid[0]) * positive_or_one(k->grid[1]) * positive_or_one(k->grid[2]);
    l->block_size = positive_or_one(k->block[0]) * positive_or_one(k->block[1]) * positive_or_one(k->block[2]);
    /* CUPTI records 0 x 0 x 0 for a launch without a cluster */
    l->cluster_size = positive_or_one(k->cluster[0]) * positive_or_one(k->cluster[1]) * positive_or_one(k->cluster[2]);
    l->registers_per_thread = k->registers_per_thread;
    l->static_smem = k->static_smem;
    l->dynamic_smem = k->dynamic_smem;
    l->smem_limit_config = k->smem_limit_config;
    l->carveout_pct = k->carveout_requested;
    l->cache_config = k->cache_config_requested;
}

void wl_kernel_launch_from_config(const wl_kernel_config *c, wl_kernel_launch *l)
{
    wl_kernel_row k;
    memset(&k, 0, sizeof k);
    k.pid = c->pid;
    k.device_id = c->device_id;
    memcpy(k.grid, c->grid, sizeof k.grid);
    memcpy(k.block, c->block, sizeof k.block);
    memcpy(k.cluster, c->cluster, sizeof k.cluster);
    k.registers_per_thread = c->registers_per_thread;
    k.static_smem = c->static_smem;
    k.dynamic_smem = c->dynamic_smem;
    k.smem_limit_config = c->smem_limit_config;
    k.carveout_requested = c->carveout_requested;
    k.cache_config_requested = c->cache_config_requested;
    wl_kernel_launch_from_row(&k, l);
}

int wl_occ_device_from_row(const wl_device_row *row, wl_occ_device *d)
{
    if (wl_occ_device_init_cc(d, row->cc_major, row->cc_minor) != 0)
        return -1;
    snprintf(d->product, sizeof d->product, "%.47s", row->name);
    /* What was measured wins over the table; a missing (0) value keeps the table's. */
#define TAKE(field, value)                                                                          \
    do {                                                                                           \
        if ((value) > 0)                                                                           \
            d->field = (value);                                                                    \
    } while (0)
    TAKE(sm_count, row->sm_count);
    TAKE(warp_size, row->warp_size);
    TAKE(max_threads_per_block, row->max_threads_per_block);
    TAKE(max_threads_per_sm, row->max_threads_per_sm);
    TAKE(max_blocks_per_sm, row->max_blocks_per_sm);
    TAKE(regs_per_sm, row->regs_per_sm);
    TAKE(regs_per_block, row->regs_per_block);
    TAKE(smem_per_sm, row->smem_per_sm);
    TAKE(smem_per_block, row->smem_per_block);
    TAKE(smem_per_block_optin, row->smem_per_block_optin);
    TAKE(core_clock_khz, row->core_clock_khz);
    TAKE(mem_clock_khz, row->mem_clock_khz);
    TAKE(mem_bus_width_bits, row->mem_bus_width_bits);
#undef TAKE
    if (row->reserved_smem_per_block >= 0 && row->sm_count > 0)
        d->smem_reserved_per_block = row->reserved_smem_per_block;
    return 0;
}

static void set_shares(const wl_occ_device *dev, const wl_kernel_launch *l, wl_kernel_occ *out)
{
    int64_t capacity = (int64_t)out->occ.active_blocks_per_sm * dev->sm_count;
    if (capacity <= 0)
        return;
    double share = (double)l->grid_blocks / (double)capacity;
    out->sm_share = share > 1.0 ? 1.0 : share;
    out->warp_fill = out->occ.occupancy_pct / 100.0 * out->sm_share;
}

static void set_waves(const wl_occ_device *dev, const wl_kernel_launch *l, wl_kernel_occ *out)
{
    out->has_waves = 0;
    memset(&out->waves, 0, sizeof out->waves);
    out->sm_share = out->warp_fill = 0;
    if (!out->has_result || out->occ.active_blocks_per_sm < 1 || l->grid_blocks < 1)
        return;
    if (wl_occ_waves(dev, &out->occ, l->grid_blocks, l->cluster_size, &out->waves) == WL_OCC_OK)
        out->has_waves = 1;
    set_shares(dev, l, out);
}

/* The occupancy of the configuration alone (no grid). */
static void calculate(const wl_occ_device *dev, const wl_kernel_launch *l, wl_kernel_occ *out)
{
    memset(out, 0, sizeof *out);
    wl_occ_kernel k;
    wl_occ_kernel_init(&k);
    k.block_size = l->block_size;
    k.regs_per_thread = l->registers_per_thread;
    k.static_smem = l->static_smem;
    k.dynamic_smem = l->dynamic_smem;
    /* The function's declared maximum is not recorded: take the launch's own dynamic size, like
     * a program that raised cudaFuncAttributeMaxDynamicSharedMemorySize to what it launches. */
    k.max_dynamic_smem = l->dynamic_smem;
    k.smem_config = l->smem_limit_config == 1 ? WL_OCC_SMEM_LIMIT_OPTIN : WL_OCC_SMEM_LIMIT_DEFAULT;
    k.carveout_pct = l->carveout_pct >= -1 && l->carveout_pct <= 100 ? l->carveout_pct : -1;
    k.cache_config = l->cache_config >= 0 && l->cache_config <= 3 ? (wl_occ_cache_config)l->cache_config
                                                                   : WL_OCC_CACHE_PREFER_NONE;
    k.cluster_size = l->cluster_size > 0 ? l->cluster_size : 1;
    /* Named barriers are not recorded; every kernel has barrier 0. */
    out->status = wl_occ_calculate(dev, &k, &out->occ);
    if (out->status == WL_OCC_ERR_SMEM_PER_BLOCK && k.smem_config == WL_OCC_SMEM_LIMIT_DEFAULT) {
        /* The kernel ran, so its function must have opted in to the larger limit. */
        k.smem_config = WL_OCC_SMEM_LIMIT_OPTIN;
        wl_occ_status st = wl_occ_calculate(dev, &k, &out->occ);
        if (st == WL_OCC_OK) {
            out->status = st;
            out->smem_optin_assumed = 1;
        }
    }
    out->has_result = wl_occ_status_has_result(out->status);
    out->kernel = k;
}

wl_occ_status wl_launch_occupancy(const wl_occ_device *dev, const wl_kernel_launch *l, wl_kernel_occ *out)
{
    calculate(dev, l, out);
    set_waves(dev, l, out);
    return out->status;
}

wl_occ_status wl_kernel_occupancy(const wl_device_row *row, const wl_kernel_row *k, wl_kernel_occ *out)
{
    wl_occ_device dev;
    if (wl_occ_device_from_row(row, &dev) != 0) {
        memset(out, 0, sizeof *out);
        out->status = WL_OCC_ERR_DEVICE;
        return out->status;
    }
    wl_kernel_launch l;
    wl_kernel_launch_from_row(k, &l);
    return wl_launch_occupancy(&dev, &l, out);
}

/* ---- cache ---------------------------------------------------------------------------------- */

typedef struct cache_dev {
    uint32_t pid, device_id;
    int known;              /* the architecture has a table entry */
    wl_occ_device dev;
} cache_dev;

/* The fields that decide occupancy, packed so the key can be hashed and compared as bytes. */
typedef struct cache_key {
    uint32_t pid, device_id;
    int32_t block_size, cluster_size, registers, smem_config, carveout, cache_config;
    int64_t static_smem, dynamic_smem;
} cache_key;

typedef struct cache_slot {
    int used;
    cache_key key;
    wl_kernel_occ value;    /* without waves */
} cache_slot;

struct wl_occ_cache {
    cache_dev *devs;
    int ndevs;
    cache_slot *slots;
    size_t cap, used;
    uint64_t hits, misses;
};

static void add_row(const wl_device_row *row, void *arg) { wl_occ_cache_add_device(arg, row); }

wl_occ_cache *wl_occ_cache_new(wl_session *s)
{
    wl_occ_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cap = 64;
    c->slots = calloc(c->cap, sizeof *c->slots);
    if (!c->slots) {
        free(c);
        return NULL;
    }
    if (s)
        wl_session_each_device(s, add_row, c);
    return c;
}

void wl_occ_cache_free(wl_occ_cache *c)
{
    if (!c)
        return;
    free(c->devs);
    free(c->slots);
    free(c);
}

static cache_dev *find_dev(wl_occ_cache *c, uint32_t pid, uint32_t device_id)
{
    for (int i = 0; i < c->ndevs; i++)
        if (c->devs[i].pid == pid && c->devs[i].device_id == device_id)
            return &c->devs[i];
    return NULL;
}

int wl_occ_cache_add_device(wl_occ_cache *c, const wl_device_row *row)
{
    cache_dev *d = find_dev(c, row->pid, row->device_id);
    if (!d) {
        cache_dev *p = realloc(c->devs, (size_t)(c->ndevs + 1) * sizeof *p);
        if (!p)
            return -1;
        c->devs = p;
        d = &c->devs[c->ndevs++];
    }
    memset(d, 0, sizeof *d);
    d->pid = row->pid;
    d->device_id = row->device_id;
    d->known = wl_occ_device_from_row(row, &d->dev) == 0;
    /* A replaced device invalidates what was computed for it: simplest is to forget everything. */
    memset(c->slots, 0, c->cap * sizeof *c->slots);
    c->used = 0;
    return 0;
}

const wl_occ_device *wl_occ_cache_device(wl_occ_cache *c, uint32_t pid, uint32_t device_id)
{
    cache_dev *d = find_dev(c, pid, device_id);
    return d && d->known ? &d->dev : NULL;
}

static uint64_t hash_key(const cache_key *k)
{
    /* FNV-1a over the key's bytes (the key has no padding: 8 x 4 bytes, then 2 x 8). */
    return wl_fnv1a(WL_FNV_OFFSET, k, sizeof *k);
}

static int grow(wl_occ_cache *c)
{
    size_t ncap = c->cap * 2;
    cache_slot *n = calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->slots[i].used)
            continue;
        size_t j = hash_key(&c->slots[i].key) & (ncap - 1);
        while (n[j].used)
            j = (j + 1) & (ncap - 1);
        n[j] = c->slots[i];
    }
    free(c->slots);
    c->slots = n;
    c->cap = ncap;
    return 0;
}

wl_occ_status wl_occ_cache_launch(wl_occ_cache *c, const wl_kernel_launch *l, wl_kernel_occ *out)
{
    const wl_occ_device *dev = wl_occ_cache_device(c, l->pid, l->device_id);
    if (!dev) {
        memset(out, 0, sizeof *out);
        out->status = WL_OCC_ERR_DEVICE;
        return out->status;
    }
    cache_key key;
    memset(&key, 0, sizeof key);
    key.pid = l->pid;
    key.device_id = l->device_id;
    key.block_size = l->block_size;
    key.cluster_size = l->cluster_size;
    key.registers = l->registers_per_thread;
    key.smem_config = l->smem_limit_config;
    key.carveout = l->carveout_pct;
    key.cache_config = l->cache_config;
    key.static_smem = l->static_smem;
    key.dynamic_smem = l->dynamic_smem;
    size_t j = hash_key(&key) & (c->cap - 1);
    while (c->slots[j].used && memcmp(&c->slots[j].key, &key, sizeof key) != 0)
        j = (j + 1) & (c->cap - 1);
    if (c->slots[j].used) {
        c->hits++;
        *out = c->slots[j].value;
    } else {
        c->misses++;
        calculate(dev, l, out);
        /* keep the table at most half full so probes stay short */
        if ((c->used + 1) * 2 > c->cap && grow(c) == 0) {
            j = hash_key(&key) & (c->cap - 1);
            while (c->slots[j].used)
                j = (j + 1) & (c->cap - 1);
        }
        if ((c->used + 1) * 2 <= c->cap) {
            c->slots[j].used = 1;
            c->slots[j].key = key;
            c->slots[j].value = *out;
            c->used++;
        }
    }
    set_waves(dev, l, out);
    return out->status;
}

wl_occ_status wl_occ_cache_kernel(wl_occ_cache *c, const wl_kernel_row *k, wl_kernel_occ *out)
{
    wl_kernel_launch l;
    wl_kernel_launch_from_row(k, &l);
    return wl_occ_cache_launch(c, &l, out);
}

void wl_occ_cache_stats(const wl_occ_cache *c, uint64_t *hits, uint64_t *misses)
{
    if (hits)
        *hits = c->hits;
    if (misses)
        *misses = c->misses;
}

const char *wl_occ_limiters_text(unsigned mask, int short_names, char *buf, size_t n)
{
    static const unsigned bits[] = {WL_OCC_LIMIT_REGISTERS, WL_OCC_LIMIT_SHARED_MEMORY, WL_OCC_LIMIT_WARPS,
                                    WL_OCC_LIMIT_BLOCKS, WL_OCC_LIMIT_BARRIERS};
    static const char *const brief[] = {"regs", "smem", "warps", "blocks", "barriers"};
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < 5; i++) {
        if (!(mask & bits[i]))
            continue;
        const char *name = short_names ? brief[i] : wl_occ_limiter_name(bits[i]);
        int w = snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? "+" : "", name);
        if (w > 0)
            len += (size_t)w;
    }
    if (!len)
        snprintf(buf, n, "none");
    return buf;
}
