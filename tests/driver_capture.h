/* Shared by the no-GPU drivers of recorder modules (tests/pm, tests/pcsampling, tests/rangeprof),
 * which write their capture with the recorder's own writer: the PROCESS record a capture starts
 * with and the END record that closes it. */
#ifndef WARPLENS_TEST_DRIVER_CAPTURE_H
#define WARPLENS_TEST_DRIVER_CAPTURE_H

#include <string.h>
#include <unistd.h>

#include "capture/recorder.h"
#include "common/clock.h"

static inline void driver_process_record(uint64_t t0)
{
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = (uint32_t)getpid();
    p.start_ns = t0;
    p.rank = p.local_rank = p.world_size = p.ompi_rank = p.slurm_procid = -1;
    wl_capw_record(WLCAP_PROCESS, &p, sizeof p);
}

/* END with this reason, then the file closed; 0 or -1. */
static inline int driver_end_record(uint32_t reason)
{
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = wl_realtime_ns();
    e.reason = reason;
    wl_capw_record(WLCAP_END, &e, sizeof e);
    return wl_capw_close();
}

#endif
