/* A small open-addressing map from 64-bit ids to row ids (non-zero), used while importing to pair
 * records that arrive apart (an NVTX range's start and end). Deletion re-inserts the rest of the
 * probe cluster, so no tombstones accumulate. */
#ifndef WARPLENS_STORE_ID_MAP_H
#define WARPLENS_STORE_ID_MAP_H

#include <stdint.h>

typedef struct wl_id_map {
    uint64_t *keys;
    int64_t *rows; /* 0 = empty slot */
    uint32_t cap, used;
} wl_id_map;

int wl_id_map_put(wl_id_map *m, uint64_t key, int64_t row); /* 0, or -1 out of memory */
int64_t wl_id_map_take(wl_id_map *m, uint64_t key);         /* the row (removed), or 0 */
void wl_id_map_free(wl_id_map *m);

#endif
