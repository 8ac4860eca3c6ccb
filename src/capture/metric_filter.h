/* Which calls `warplens run --metrics` profiles (the ncu-style filters): kernels whose demangled
 * name matches a regular expression (--metrics-kernel / -k), the N first matching launches
 * skipped and at most M profiled (--metrics-skip / -s, --metrics-count / -c), only launches made
 * while an NVTX range of a given name is open (--metrics-nvtx / --nvtx-include). Copies and sets
 * are profiled unless a kernel-name filter is set (they have no name), inside the NVTX ranges
 * when that filter is set; skip and count apply to kernel launches only.
 *
 * Read from the environment (WARPLENS_METRICS_KERNEL, _SKIP, _COUNT, _NVTX: names separated by
 * newlines). The decision for a kernel function is made once per context and cached by the
 * caller; NVTX state is kept per thread (push/pop) and per process (start/end). */
#ifndef WARPLENS_CAPTURE_METRIC_FILTER_H
#define WARPLENS_CAPTURE_METRIC_FILTER_H

#include <stdint.h>

#define WL_MF_NVTX_NAMES 16

/* 0, or -1 after logging why (a bad regular expression: the CLI checks it first). */
int wl_mf_init(void);
int wl_mf_active(void);          /* some filter is set */
int wl_mf_has_name_filter(void);
int wl_mf_wants_nvtx(void);      /* NVTX callbacks are needed */
/* 1 when a kernel of this (mangled or plain) symbol passes the name filter. Demangles with the
 * C++ runtime found in the process (libcupti brings it); allocates, so callers cache the answer. */
int wl_mf_name_passes(const char *symbol);
/* The NVTX condition for a call on this thread now. */
int wl_mf_nvtx_passes(void);
/* For a kernel launch that passed the name and NVTX filters: 1 when it is inside the skip/count
 * window (counts it, process-wide), 0 when skipped or past the count. */
int wl_mf_take_launch(void);
/* 1 once --metrics-count launches were taken: no later launch will be profiled. */
int wl_mf_count_reached(void);
/* 1 between the skipped launches and the count's end: copies, sets and graph launches are
 * profiled only there. */
int wl_mf_in_window(void);
/* NVTX callback (CUPTI_CB_DOMAIN_NVTX): push/pop/start/end of ranges, by CUPTI callback id. */
void wl_mf_nvtx_callback(uint32_t cbid, const void *nvtx_data);
/* How many launches passed the name/NVTX filters but fell outside the skip/count window, and how
 * many kernel launches the filters left out altogether (progress line, status). */
uint64_t wl_mf_left_out(void);
void wl_mf_note_left_out(void);

#endif
