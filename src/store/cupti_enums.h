/* Names for the CUPTI enum values the capture file keeps verbatim (copy kinds, memory kinds,
 * synchronisation types, launch types) and the category of a recorded API call. */
#ifndef WARPLENS_STORE_CUPTI_ENUMS_H
#define WARPLENS_STORE_CUPTI_ENUMS_H

#include <stdint.h>

const char *wl_copy_kind_name(uint8_t kind, int is_peer);
const char *wl_memory_kind_name(uint32_t kind);
const char *wl_sync_type_name(uint32_t type);
const char *wl_launch_type_name(uint32_t type);
/* launch, graph_launch, memcpy, memset, sync, alloc or other, from the API's name */
const char *wl_api_category(const char *name);

#endif
