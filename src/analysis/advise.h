/* `warplens advise`: findings about why a recorded program is slow, each with the quantity
 * measured, the threshold it crossed, the time it could win back and how that was estimated,
 * its evidence (ids, names, the span and step it happened in) and the fix in concrete terms.
 *
 * The rules (docs/advise.md has each threshold and estimate):
 *   gpu-idle-launch  the GPU waited for the host to launch (loops of small operations)
 *   gpu-idle-host    the GPU waited while the host did other work between launches
 *   gpu-idle-sync    the GPU drained behind a host synchronisation inside the steps
 *   copy-pageable    copies from/to pageable host memory
 *   copy-small       many copies under 64 KiB
 *   occupancy        kernels with low theoretical occupancy and a large share of GPU time
 *   tail-effect      grids whose last wave is mostly empty
 *   grid-underfill   grids smaller than one wave on a GPU otherwise idle
 *   serial-streams   streams of independent work that never overlap
 *   roofline         kernels far from both the memory and the compute peak (with --metrics)
 *   data-quality     what the analysis could not see (lost records, damaged rows, capture ranges)
 *
 * Memory: per device, stream and kernel name (a few hundred bytes each) and the findings; the
 * GPU work and the host's blocking calls are read in one ordered pass each (the blocking calls of
 * one thread are kept while its GPU work is walked: at most WL_ADVISE_MAX_BLOCKING, 96 bytes each). */
#ifndef WARPLENS_ANALYSIS_ADVISE_H
#define WARPLENS_ANALYSIS_ADVISE_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

#define WL_ADVISE_MAX_BLOCKING (1u << 20)
#define WL_ADVISE_MAX_EVIDENCE 16 /* the tail-effect rule gives 13: its kernel's 6 and the model's 7 */

typedef enum wl_severity { WL_SEV_INFO = 0, WL_SEV_LOW = 1, WL_SEV_MEDIUM = 2, WL_SEV_HIGH = 3 } wl_severity;

typedef struct wl_evidence {
    char key[40];
    char value[320];
    int is_number; /* value is a JSON number or array of numbers, printed bare */
} wl_evidence;

typedef struct wl_finding {
    char rule[24];
    char title[200];
    wl_severity severity;
    char measured[240];   /* the quantity that fired the rule */
    char threshold[160];  /* the rule's threshold */
    double gain_ns;       /* estimated time recoverable */
    double gain_pct;      /* of span_ns */
    char estimate[320];   /* how gain_ns was estimated */
    uint64_t start_ns, end_ns; /* where it happened (the whole run or a step) */
    char span_name[128];  /* the step / NVTX range name, "" for the whole run */
    uint64_t span_ns;     /* the wall time gain_pct is taken of */
    wl_evidence evidence[WL_ADVISE_MAX_EVIDENCE];
    int n_evidence;
    char fix[480];
} wl_finding;

typedef struct wl_advise_opts {
    const char *range;   /* only work inside NVTX ranges / scopes of this name (NULL: all) */
    double min_gain_pct; /* leave out findings below this estimated gain (data-quality stays) */
} wl_advise_opts;

typedef struct wl_advise_result {
    wl_finding *findings; /* best first */
    int n, cap;
    uint64_t start_ns, end_ns; /* first to last GPU work analysed */
    uint64_t span_ns;          /* the wall time gains are taken of: the --range ranges', else end - start */
    char step_name[128];       /* the step ranges used ("" when none) */
    uint64_t steps;
    uint64_t work_items;
} wl_advise_result;

/* Runs every rule. Returns 0, or -1 with err set (a read error). */
int wl_advise(wl_session *s, const wl_advise_opts *o, wl_advise_result *out, char *err, size_t err_size);
void wl_advise_free(wl_advise_result *r);

const char *wl_severity_name(wl_severity s);
/* 0 for the findings that carry no gain estimate (roofline, data quality), else 1. */
int wl_finding_estimated(const wl_finding *f);

/* ---- for the rule files (advise_*.c) ------------------------------------------------------ */
wl_finding *wl_advise_add(wl_advise_result *r, const char *rule, wl_severity sev);
void wl_finding_evidence(wl_finding *f, const char *key, int is_number, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
