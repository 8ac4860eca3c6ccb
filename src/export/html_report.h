/* `warplens report`: one self-contained HTML page (inline CSS and JavaScript, data embedded as
 * JSON, nothing fetched from the network) with the overview, an SVG timeline of host threads and
 * streams with flows (zoom and pan), the sortable kernels table with a details panel, the GPU
 * fill chart with oversubscribed intervals shaded, and the memcpy, NVTX and scope summaries.
 * Large sessions embed only a leading time window (max_slices) and the page says so. */
#ifndef WARPLENS_EXPORT_HTML_REPORT_H
#define WARPLENS_EXPORT_HTML_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/timeline_model.h"
#include "store/session.h"

typedef struct wl_report_options {
    uint64_t max_slices;       /* slices embedded in the timeline; 0 = 50000 */
    const char *title;         /* page title; NULL = the program */
    const wl_tl_options *tl;   /* lanes and progress, may be NULL */
} wl_report_options;

typedef struct wl_report_stats {
    uint64_t slices_total, slices_embedded, flows_embedded, fill_points;
    int capped;
    uint64_t window_end_ns;    /* relative to the origin when capped */
    int rank_section;          /* the ranks' table and imbalance chart are in (export/report_ranks.h) */
} wl_report_stats;

int wl_report_html(wl_session *s, FILE *fp, const wl_report_options *o, wl_report_stats *st, char *err,
                   size_t err_size);

/* The page's stylesheet and script (html_report_assets.c). */
extern const char *const WL_REPORT_CSS;
extern const char *const WL_REPORT_JS;

#endif
