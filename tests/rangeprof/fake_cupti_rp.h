/* The fake CUPTI range profiler of the tests (fake_cupti_rp.c): contexts are the pointers
 * (CUcontext)1 .. (CUcontext)FAKE_RP_CONTEXTS, on devices 0 .. FAKE_RP_CONTEXTS-1. Work "runs"
 * through fake_rp_run: when the context's profiler is started in auto-range mode it becomes one
 * range, inside an open user range it adds to that range, otherwise it runs unprofiled. */
#ifndef WARPLENS_TEST_FAKE_CUPTI_RP_H
#define WARPLENS_TEST_FAKE_CUPTI_RP_H

#include <cuda.h>
#include <stdint.h>

#define FAKE_RP_CONTEXTS 2
#define FAKE_RP_CTA "sm__ctas_launched.sum"

typedef struct fake_rp_state {
    int deny;             /* Enable fails with CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (FAKE_RP_DENY) */
    int no_cta;           /* the chip has no sm__ctas_launched (FAKE_RP_NO_CTA) */
    int cta_costs_pass;   /* adding it makes one pass more (FAKE_RP_CTA_PASS) */
    int fail_next_stop;   /* the next Stop fails (set by the driver) */
    int capturing;        /* a stream capture is under way (set by the driver): Start, Stop and
                           * SetConfig are then misuse (they may synchronise) */
    /* what the recorder did */
    int enables, disables, configs, starts, stops, decodes, pushes, pops;
    int auto_configs, user_configs, kernel_replay_configs;
    uint64_t profiled, unprofiled; /* pieces of work that ran with / without the profiler started */
    int passes;           /* of the last configuration image */
    int misuse;           /* calls the headers do not allow (printed as they happen) */
} fake_rp_state;
extern fake_rp_state fake_rp;

/* A piece of GPU work on context c: value is what every metric reads for it (the driver encodes
 * who it is), ctas what sm__ctas_launched.sum reads. */
void fake_rp_run(CUcontext c, double value, uint64_t ctas);
/* Whether c's profiler is started (for the driver's own checks). */
int fake_rp_started(CUcontext c);

#endif
