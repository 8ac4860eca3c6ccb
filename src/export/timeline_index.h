/* The timeline's tracks by key (internal to src/export/): processes by pid, threads by (pid, tid),
 * GPUs by device, streams by (pid, device, stream). Open addressing, grown at half full, so a
 * lookup stays O(1) however many tracks a session makes: a session whose ids were damaged into
 * one per row makes as many tracks as rows (a linear search per row was quadratic). */
#ifndef WARPLENS_EXPORT_TIMELINE_INDEX_H
#define WARPLENS_EXPORT_TIMELINE_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef enum tl_key_kind { TL_KEY_PROC = 1, TL_KEY_THREAD, TL_KEY_GPU, TL_KEY_STREAM } tl_key_kind;

typedef struct tl_key {
    uint32_t kind, pid;
    uint64_t a, b; /* thread: tid; GPU: device; stream: device, stream */
} tl_key;

typedef struct tl_index {
    tl_key *keys; /* kind 0: empty slot */
    void **vals;
    size_t cap, n;
} tl_index;

/* The object of key, or NULL. */
void *tl_index_get(const tl_index *ix, tl_key k);
/* Adds key -> v (key not present); 0, or -1 out of memory. */
int tl_index_put(tl_index *ix, tl_key k, void *v);
void tl_index_free(tl_index *ix);

#endif
