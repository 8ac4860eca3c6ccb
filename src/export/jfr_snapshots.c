/* GpuOccupancyEvent scheduling (see jfr_snapshots.h). */
#include "export/jfr_snapshots.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "store/session_samples.h"

#define GAP_NS 100000u

typedef struct snap_dev {      /* one device */
    uint32_t device;
    size_t next_nvml, end_nvml; /* its samples still to write: nvml[next_nvml .. end_nvml) */
    wl_tl_gpu_state cur;       /* the state in effect */
    wl_tl_gpu_state deferred;  /* a state not written yet (it came inside the gap) */
    int has_deferred, written;
    uint64_t next_ok;          /* earliest time of the next kernel snapshot */
} snap_dev;

struct jfr_snapshots {
    jfr_snapshot_fn write;
    void *ctx;
    jfr_nvml *nvml;            /* by device, then time */
    size_t n_nvml, cap_nvml;
    snap_dev *devs;
    size_t n_devs, cap_devs;
    int failed;
};

static int on_sample(const wl_device_sample_row *r, void *arg)
{
    jfr_snapshots *j = arg;
    if (wl_grow((void **)&j->nvml, &j->cap_nvml, j->n_nvml, sizeof *j->nvml, 256)) {
        j->failed = 1;
        return 1;
    }
    j->nvml[j->n_nvml++] = (jfr_nvml){r->ts_ns, r->pid, r->device_id, r->gpu_util_pct, r->mem_util_pct};
    return 0;
}

static int by_device_time(const void *a, const void *b)
{
    const jfr_nvml *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static snap_dev *dev_of(jfr_snapshots *j, uint32_t device)
{
    for (size_t i = 0; i < j->n_devs; i++)
        if (j->devs[i].device == device)
            return &j->devs[i];
    if (wl_grow((void **)&j->devs, &j->cap_devs, j->n_devs, sizeof *j->devs, 8))
        return NULL;
    snap_dev *d = &j->devs[j->n_devs++];
    memset(d, 0, sizeof *d);
    d->device = device;
    d->cur.device = device;
    while (d->next_nvml < j->n_nvml && j->nvml[d->next_nvml].device < device)
        d->next_nvml++;
    for (d->end_nvml = d->next_nvml; d->end_nvml < j->n_nvml && j->nvml[d->end_nvml].device == device;)
        d->end_nvml++;
    return d;
}

jfr_snapshots *jfr_snapshots_open(wl_session *s, jfr_snapshot_fn write, void *ctx)
{
    jfr_snapshots *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->write = write, j->ctx = ctx;
    if (wl_session_each_device_sample_by_time(s, on_sample, j) < 0 || j->failed) {
        jfr_snapshots_close(j);
        return NULL;
    }
    if (j->n_nvml > 1)
        qsort(j->nvml, j->n_nvml, sizeof *j->nvml, by_device_time);
    /* every device with samples gets its place in them, kernels or not */
    for (size_t i = 0; i < j->n_nvml; i++)
        if (!dev_of(j, j->nvml[i].device)) {
            jfr_snapshots_close(j);
            return NULL;
        }
    return j;
}

/* The device's samples before ts (all with UINT64_MAX), with the state in effect. */
static int nvml_until(jfr_snapshots *j, snap_dev *d, uint64_t ts)
{
    for (; d->next_nvml < d->end_nvml && j->nvml[d->next_nvml].ts < ts; d->next_nvml++)
        if (j->write(j->ctx, &d->cur, j->nvml[d->next_nvml].ts, &j->nvml[d->next_nvml]))
            return -1;
    return 0;
}

/* The deferred state, at the end of its gap, when that comes before `before`. */
static int flush_deferred(jfr_snapshots *j, snap_dev *d, uint64_t before)
{
    if (!d->has_deferred || d->next_ok >= before)
        return 0;
    d->has_deferred = 0;
    uint64_t at = d->next_ok;
    d->next_ok = at + GAP_NS;
    return j->write(j->ctx, &d->deferred, at, NULL);
}

int jfr_snapshots_state(jfr_snapshots *j, const wl_tl_gpu_state *g)
{
    snap_dev *d = dev_of(j, g->device);
    if (!d || nvml_until(j, d, g->ts) || flush_deferred(j, d, g->ts))
        return -1;
    d->cur = *g;
    if (!d->written || g->ts >= d->next_ok) {
        d->written = 1;
        d->has_deferred = 0;
        d->next_ok = g->ts + GAP_NS;
        return j->write(j->ctx, g, g->ts, NULL);
    }
    d->deferred = *g;
    d->has_deferred = 1;
    return 0;
}

int jfr_snapshots_finish(jfr_snapshots *j)
{
    for (size_t i = 0; i < j->n_devs; i++)
        if (flush_deferred(j, &j->devs[i], UINT64_MAX) || nvml_until(j, &j->devs[i], UINT64_MAX))
            return -1;
    return 0;
}

void jfr_snapshots_close(jfr_snapshots *j)
{
    if (!j)
        return;
    free(j->nvml);
    free(j->devs);
    free(j);
}
