/* FNV-1a, 64 bits: the byte hash of the recorder's string table, the store's and exporters' hash
 * tables and the cache of sessions found sound (one definition; its values are not stored in any
 * file format but check_cache.c's slot names, which a changed hash would only make miss). */
#ifndef WARPLENS_COMMON_FNV_H
#define WARPLENS_COMMON_FNV_H

#include <stddef.h>
#include <stdint.h>

#define WL_FNV_OFFSET 0xcbf29ce484222325ull

/* h continued over n bytes at p (start from WL_FNV_OFFSET) */
static inline uint64_t wl_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* a NUL-terminated string's hash */
static inline uint64_t wl_fnv1a_str(const char *s)
{
    uint64_t h = WL_FNV_OFFSET;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

#endif
