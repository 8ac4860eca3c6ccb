/* Ownership of the function names in CUPTI's PC-sampling records (pc_sampling.c). CUPTI documents
 * each record's functionName as memory the tool must free(), possibly shared between records and
 * not to be freed before all records are processed; it does not say whether a later
 * cuptiPCSamplingGetData hands out the same pointer again or a fresh copy. warplens never reads the
 * names (samples are attributed by correlation id), so it only has to free each allocation exactly
 * once, whichever CUPTI does:
 *   - the first pointer seen for a function (cubin CRC, function index) is kept until the end, so
 *     a CUPTI that keeps returning it is never freed under;
 *   - a different pointer for a function already seen is a fresh copy: it is freed once (however
 *     many records of the batch share it) when the batch is done, so fresh copies do not pile up.
 * Memory: at most KEPT_SLOTS kept names. Past that, new functions' names are freed after their
 * batch once fresh copies have been seen (CUPTI copies), else left alone (CUPTI may reuse them). */
#include "capture/recorder.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define KEPT_SLOTS 4096u /* power of two; one slot always stays empty so probes end */

typedef struct kept_fn {
    uint64_t crc;
    uint32_t index, used;
} kept_fn;

static kept_fn g_fn[KEPT_SLOTS];       /* functions whose first name is kept */
static char *g_names[KEPT_SLOTS];      /* the kept names, by pointer (several functions may share one) */
static uint32_t g_nfn, g_nnames;
static int g_fresh_seen; /* CUPTI has handed out a second copy of some function's name */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* The slot of p in g_names: where it is, or the empty slot where it would go. */
static uint32_t name_slot(const char *p)
{
    uint32_t i = (uint32_t)mix((uint64_t)(uintptr_t)p) & (KEPT_SLOTS - 1);
    while (g_names[i] && g_names[i] != p)
        i = (i + 1) & (KEPT_SLOTS - 1);
    return i;
}

int wl_pc_names_batch_init(wl_pc_names_batch *b, uint32_t max_records)
{
    uint32_t cap = 16;
    while (cap < 2 * max_records)
        cap *= 2;
    b->fresh = calloc(cap, sizeof *b->fresh);
    b->cap = b->fresh ? cap : 0;
    b->used = 0;
    return b->fresh ? 0 : -1;
}

/* The slot of p in the batch's set of copies to free: where it is, or where it would go. */
static uint32_t batch_slot(const wl_pc_names_batch *b, const char *p)
{
    uint32_t i = (uint32_t)mix((uint64_t)(uintptr_t)p) & (b->cap - 1);
    while (b->fresh[i] && b->fresh[i] != p)
        i = (i + 1) & (b->cap - 1);
    return i;
}

/* Adds p to the batch's set of copies to free (once). */
static void to_free(wl_pc_names_batch *b, char *p)
{
    uint32_t i = batch_slot(b, p);
    if (b->fresh[i] || b->used + 1 >= b->cap) /* the second cannot happen: <= max_records names */
        return;
    b->fresh[i] = p;
    b->used++;
}

void wl_pc_names_note(wl_pc_names_batch *b, uint64_t cubin_crc, uint32_t function_index, char *name)
{
    if (!name || !b->fresh)
        return;
    pthread_mutex_lock(&g_lock);
    uint32_t ns = name_slot(name);
    if (g_names[ns]) { /* a kept allocation: freed at the end only */
        pthread_mutex_unlock(&g_lock);
        return;
    }
    uint32_t i = (uint32_t)mix(cubin_crc ^ ((uint64_t)function_index << 40)) & (KEPT_SLOTS - 1);
    while (g_fn[i].used && !(g_fn[i].crc == cubin_crc && g_fn[i].index == function_index))
        i = (i + 1) & (KEPT_SLOTS - 1);
    if (g_fn[i].used || b->fresh[batch_slot(b, name)]) {
        g_fresh_seen = 1; /* a second pointer for this function: CUPTI's copy of this batch */
        to_free(b, name);
    } else if (g_nfn + 2 < KEPT_SLOTS && g_nnames + 2 < KEPT_SLOTS) {
        g_fn[i] = (kept_fn){cubin_crc, function_index, 1};
        g_nfn++;
        g_names[ns] = name;
        g_nnames++;
    } else if (g_fresh_seen) {
        to_free(b, name); /* tables full: CUPTI copies names, so this copy is the batch's own */
    }                     /* else left alone: CUPTI may hand it out again */
    pthread_mutex_unlock(&g_lock);
}

void wl_pc_names_end_batch(wl_pc_names_batch *b)
{
    if (!b->used)
        return;
    for (uint32_t i = 0; i < b->cap; i++) {
        free(b->fresh[i]);
        b->fresh[i] = NULL;
    }
    b->used = 0;
}

void wl_pc_names_batch_free(wl_pc_names_batch *b)
{
    wl_pc_names_end_batch(b);
    free(b->fresh);
    b->fresh = NULL;
    b->cap = 0;
}

void wl_pc_names_stats(unsigned *kept, int *fresh_seen)
{
    pthread_mutex_lock(&g_lock);
    *kept = g_nnames;
    *fresh_seen = g_fresh_seen;
    pthread_mutex_unlock(&g_lock);
}

void wl_pc_names_release_all(void)
{
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < KEPT_SLOTS; i++) {
        free(g_names[i]);
        g_names[i] = NULL;
        g_fn[i] = (kept_fn){0, 0, 0};
    }
    g_nfn = g_nnames = 0;
    pthread_mutex_unlock(&g_lock);
}
