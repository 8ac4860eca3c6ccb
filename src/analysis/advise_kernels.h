/* Kernel rules of `warplens advise` (advise.h): occupancy, tail effect, grid underfill, roofline. */
#ifndef WARPLENS_ANALYSIS_ADVISE_KERNELS_H
#define WARPLENS_ANALYSIS_ADVISE_KERNELS_H

#include "analysis/advise.h"
#include "analysis/kernel_occupancy.h"

/* Adds the kernel findings to r; gains are taken as a share of span_ns. 0 or -1 with err set. */
int wl_advise_kernels(wl_session *s, wl_occ_cache *cache, wl_advise_result *r, uint64_t span_ns, char *err,
                      size_t err_size);

#endif
