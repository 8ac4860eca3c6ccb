/* The findings at the top of the HTML report: `warplens advise` (analysis/advise.h) run on a
 * second handle of the same session in a second thread while the report reads and writes its
 * timeline and tables, so the two full reads of the session overlap on two cores. */
#ifndef WARPLENS_EXPORT_REPORT_FINDINGS_H
#define WARPLENS_EXPORT_REPORT_FINDINGS_H

#include <stdint.h>

#include "export/json_out.h"
#include "store/session.h"

typedef struct wl_report_findings wl_report_findings;

/* Starts advise on s's file (NULL only when out of memory). Where no second handle or thread can
 * be had, advise runs on s itself when the findings are written. */
wl_report_findings *wl_report_findings_start(wl_session *s);
/* Waits for advise and writes ,"findings":[...] (the five best, times relative to origin);
 * frees f. An advise that failed writes an empty list. */
void wl_report_findings_write(wl_report_findings *f, wl_json_out *j, wl_session *s, uint64_t origin);

#endif
