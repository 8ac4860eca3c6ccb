/* Hashing a row of 64-bit values into one (the store's launch-configuration ids, stored in
 * sessions as kernel.config_id, and the export pack's row hashes, compared by the census): one
 * multiply and shift per value, the finaliser of SplitMix64 at the end. Cheap, and a change in
 * any value changes the result but for a chance of 2^-64; not a defence against crafted input.
 * One definition: config ids written by one build must be the ids the next build computes. */
#ifndef WARPLENS_COMMON_MIX64_H
#define WARPLENS_COMMON_MIX64_H

#include <stdint.h>

/* h continued with the value x */
static inline uint64_t wl_mix64_step(uint64_t h, uint64_t x)
{
    h = (h ^ x) * 0x9e3779b97f4a7c15ull;
    return h ^ h >> 29;
}

/* the full avalanche of h (SplitMix64's finaliser) */
static inline uint64_t wl_mix64_finish(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ h >> 31;
}

#endif
