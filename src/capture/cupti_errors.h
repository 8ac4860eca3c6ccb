/* CUPTI results in words, shared by the parts of the recorder that take the GPU's profiling
 * hardware (range profiler, PC sampling, PM sampling): CUPTI's own message, and the remedy, which
 * reads the same everywhere for the failures a user can act on alike. */
#ifndef WARPLENS_CAPTURE_CUPTI_ERRORS_H
#define WARPLENS_CAPTURE_CUPTI_ERRORS_H

#include <cupti.h>

/* CUPTI's message for st, never NULL. */
const char *wl_cupti_result_text(CUptiResult st);
/* What to do about st: the permission and busy remedies read the same for every feature; an
 * unsupported GPU or configuration gets `unsupported`, a lack of memory `out_of_memory` (NULL: CUPTI's
 * message stands alone), anything else "see the CUPTI message". */
const char *wl_cupti_remedy(CUptiResult st, const char *unsupported, const char *out_of_memory);
/* The busy remedy alone, for a result that means "taken by another tool" in one feature only. */
const char *wl_cupti_busy_remedy(void);

#endif
