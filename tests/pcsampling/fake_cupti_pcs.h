/* The fake CUPTI PC-sampling API of the tests (fake_cupti_pcs.c): contexts are the pointers
 * (CUcontext)1 .. (CUcontext)FAKE_PCS_CONTEXTS, on devices 0 .. FAKE_PCS_CONTEXTS-1. */
#ifndef WARPLENS_TEST_FAKE_CUPTI_PCS_H
#define WARPLENS_TEST_FAKE_CUPTI_PCS_H

#include <cupti.h>
#include <cupti_pcsampling.h>
#include <stdint.h>

#define FAKE_PCS_CONTEXTS 2

typedef struct fake_pcs_state {
    int fresh_names;   /* a new copy of each function name per GetData call (else one per run) */
    int deny;          /* Enable fails with CUPTI_ERROR_INSUFFICIENT_PRIVILEGES */
    /* what the recorder did */
    int mode, period, reasons;
    int enables, disables, getdata_calls;
    int misuse;        /* calls the header does not allow (printed as they happen) */
} fake_pcs_state;
extern fake_pcs_state fake_pcs;

/* npcs PC records of launch `corr` in `function` (index of the fake's name list), each with n
 * (<= 4) reasons: index[k] with samples[k]. */
void fake_pcs_produce(CUcontext c, uint32_t corr, uint32_t function, uint32_t npcs, uint32_t n, const uint32_t *index,
                      const uint32_t *samples);
/* One record Disable leaves in the configuration buffer. */
void fake_pcs_late(CUcontext c, uint32_t corr, uint32_t index, uint32_t samples);
void fake_pcs_oom_next(CUcontext c);
void fake_pcs_dropped_next(CUcontext c, uint64_t n);

#endif
