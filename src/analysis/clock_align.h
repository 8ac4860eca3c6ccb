/* Clock offsets between hosts, estimated from the collectives every rank runs (merge's clock
 * alignment). Processes of one host share CLOCK_REALTIME; across hosts, the same NCCL collective
 * (matched as analysis/collective_match.h says)
 * ends within microseconds on every rank, so the k-th collective of a kind on a process's n-th
 * collective stream (streams numbered by their first collective) ends at one true time on every
 * rank. A host's offset is the median, over the collectives it shares with the reference host
 * (the host of rank 0, else of the first input), of the reference's mean end minus the host's
 * mean end; its residual is the median distance of those differences from the offset. This
 * assumes the sessions cover the same run from its start (the k-th collective is the same one).
 *
 * Memory: the first WL_CLOCK_MAX_PER_STREAM collectives of each process's stream are used, kept
 * per host in a table of at most WL_CLOCK_MAX_KEYS collectives (16 bytes each). */
#ifndef WARPLENS_ANALYSIS_CLOCK_ALIGN_H
#define WARPLENS_ANALYSIS_CLOCK_ALIGN_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"
#include "store/session_merge.h"

#define WL_CLOCK_MAX_PER_STREAM 1024
#define WL_CLOCK_MAX_KEYS 4096

typedef struct wl_clock_align wl_clock_align;

/* For ninputs inputs (at most ninputs hosts). NULL when out of memory. */
wl_clock_align *wl_clock_align_new(int ninputs);
/* Reads input i's processes and collectives (merge calls it from its survey, with every input
 * open once). 0, or -1 with err. */
int wl_clock_align_add(wl_clock_align *a, wl_session *s, int input, char *err, size_t err_size);
/* The estimate: *hosts (malloc'd, *nhosts of them) gets every host with its offset (source
 * "reference", "estimated", or "none" when it shares no collective with the reference: offset
 * 0); input_host[i] is input i's host's index (its first process's host). 0, or -1 with err. */
int wl_clock_align_finish(wl_clock_align *a, wl_merge_clock **hosts, int *nhosts, int *input_host, char *err,
                          size_t err_size);
void wl_clock_align_free(wl_clock_align *a);

#endif
