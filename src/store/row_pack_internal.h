/* What the export pack's reader (row_pack.c) and writer (row_pack_build.c) share. */
#ifndef WARPLENS_STORE_ROW_PACK_INTERNAL_H
#define WARPLENS_STORE_ROW_PACK_INTERNAL_H

#include <stdint.h>

#include "store/row_pack.h"

/* Field types by kind (row_pack.h): 'i' integer, 't' text, 'n' integer or NULL. */
extern const char *const WL_PACK_FIELDS[WL_PACK_KINDS];
/* The hash of a row the census sums (the same from the rows' values and from the pack's). */
uint64_t wl_pack_row_hash(int kind, const wl_pack_row *r);

static inline uint64_t wl_pack_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

#endif
