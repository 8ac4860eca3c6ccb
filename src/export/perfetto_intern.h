/* Interning for a Perfetto packet sequence: each distinct string (an event name, a category, an
 * annotation name) gets an iid, 1, 2, ... in the order first seen, which the writer emits once in
 * the packet's InternedData and then refers to by number (perfetto_packets.c). Memory: a copy of
 * each distinct string and four words a slot, the table kept at most half full. */
#ifndef WARPLENS_EXPORT_PERFETTO_INTERN_H
#define WARPLENS_EXPORT_PERFETTO_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_pf_intern {
    char **keys;     /* owned copies */
    size_t *lens;
    uint64_t *iids, *hashes;
    size_t cap, n;   /* open addressing, cap a power of two */
} wl_pf_intern;      /* all zero: empty */

/* The iid of s, *is_new telling whether s was seen for the first time (then the caller emits it);
 * 0 when out of memory. */
uint64_t wl_pf_intern_find(wl_pf_intern *t, const char *s, int *is_new);
/* Frees the copies and the table; t is empty again. */
void wl_pf_intern_free(wl_pf_intern *t);

#endif
