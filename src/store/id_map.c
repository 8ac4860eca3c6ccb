/* Id -> row map for the importer (see id_map.h). */
#include "store/id_map.h"

#include <stdlib.h>

int wl_id_map_put(wl_id_map *m, uint64_t key, int64_t row)
{
    if (m->used * 2 >= m->cap) {
        uint32_t ncap = m->cap ? m->cap * 2 : 1024;
        uint64_t *keys = calloc(ncap, sizeof *keys);
        int64_t *rows = calloc(ncap, sizeof *rows);
        if (!keys || !rows) {
            free(keys);
            free(rows);
            return -1;
        }
        for (uint32_t i = 0; i < m->cap; i++) {
            if (!m->rows[i])
                continue;
            uint32_t j = (uint32_t)(m->keys[i] * 0x9E3779B97F4A7C15ull >> 32) & (ncap - 1);
            while (rows[j])
                j = (j + 1) & (ncap - 1);
            keys[j] = m->keys[i];
            rows[j] = m->rows[i];
        }
        free(m->keys);
        free(m->rows);
        m->keys = keys;
        m->rows = rows;
        m->cap = ncap;
    }
    uint32_t j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & (m->cap - 1);
    while (m->rows[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->rows[j])
        m->used++;
    m->keys[j] = key;
    m->rows[j] = row;
    return 0;
}

int64_t wl_id_map_take(wl_id_map *m, uint64_t key)
{
    if (!m->cap)
        return 0;
    uint32_t mask = m->cap - 1, j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & mask;
    while (m->rows[j] && m->keys[j] != key)
        j = (j + 1) & mask;
    int64_t row = m->rows[j];
    if (!row)
        return 0;
    m->rows[j] = 0;
    m->used--;
    for (uint32_t k = (j + 1) & mask; m->rows[k]; k = (k + 1) & mask) {
        uint64_t kk = m->keys[k];
        int64_t rr = m->rows[k];
        m->rows[k] = 0;
        m->used--;
        wl_id_map_put(m, kk, rr);
    }
    return row;
}

void wl_id_map_free(wl_id_map *m)
{
    free(m->keys);
    free(m->rows);
    m->keys = NULL;
    m->rows = NULL;
    m->cap = m->used = 0;
}
