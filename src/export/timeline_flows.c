/* The flows the timeline model has started and not yet ended (see timeline_internal.h): a hash
 * map from flow id to the duration of the API call that started it, open addressing with linear
 * probing and backward-shift deletion. API calls
 * come before the GPU work they start, so the set holds the work launched but not yet started
 * (what is in flight at one instant), not the session. */
#include "export/timeline_internal.h"

#include <stdlib.h>

static size_t slot_of(uint64_t id, size_t cap) { return (size_t)((id * 0x9e3779b97f4a7c15u) >> 20) & (cap - 1); }

void tl_flows_free(tl_flows *f)
{
    free(f->ids);
    free(f->vals);
    f->ids = f->vals = NULL;
    f->n = f->cap = 0;
}

int tl_flows_add(tl_flows *f, uint64_t id, uint64_t val)
{
    if ((f->n + 1) * 2 > f->cap) { /* at most half full */
        size_t ncap = f->cap ? f->cap * 2 : 1024;
        uint64_t *ids = calloc(ncap, sizeof *ids), *vals = malloc(ncap * sizeof *vals);
        if (!ids || !vals) {
            free(ids);
            free(vals);
            return -1;
        }
        for (size_t i = 0; i < f->cap; i++) {
            if (!f->ids[i])
                continue;
            size_t j = slot_of(f->ids[i], ncap);
            while (ids[j])
                j = (j + 1) & (ncap - 1);
            ids[j] = f->ids[i];
            vals[j] = f->vals[i];
        }
        free(f->ids);
        free(f->vals);
        f->ids = ids;
        f->vals = vals;
        f->cap = ncap;
    }
    size_t j = slot_of(id, f->cap);
    while (f->ids[j]) {
        if (f->ids[j] == id)
            return 0;
        j = (j + 1) & (f->cap - 1);
    }
    f->ids[j] = id;
    f->vals[j] = val;
    f->n++;
    return 0;
}

int tl_flows_take(tl_flows *f, uint64_t id, uint64_t *val)
{
    if (!f->n || !id)
        return 0;
    size_t mask = f->cap - 1, j = slot_of(id, f->cap);
    while (f->ids[j] != id) {
        if (!f->ids[j])
            return 0;
        j = (j + 1) & mask;
    }
    *val = f->vals[j];
    /* close the gap: move later entries of the run back when their home allows it */
    for (size_t k = (j + 1) & mask; f->ids[k]; k = (k + 1) & mask) {
        size_t home = slot_of(f->ids[k], f->cap);
        if (((k - home) & mask) >= ((k - j) & mask)) {
            f->ids[j] = f->ids[k];
            f->vals[j] = f->vals[k];
            j = k;
        }
    }
    f->ids[j] = 0;
    f->n--;
    return 1;
}
