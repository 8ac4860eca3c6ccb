/* Running a timeline export so that it may read the kernels in the table's own order
 * (session_cursors.h, WL_CUR_TABLE_ORDER: about half the CPU of the start-index walk) and still
 * never write rows out of order: on an output it can cut back (a regular file), the export runs
 * with table_order set; when the walk says that order was not close enough to start order
 * (WL_TL_RESTART), the output is cut back to where the export began and the export runs again
 * through the index. On any other output (a pipe, a memory stream) it reads through the index
 * from the start. Internal to the exporters. */
#ifndef WARPLENS_EXPORT_EXPORT_RERUN_H
#define WARPLENS_EXPORT_EXPORT_RERUN_H

#include <stddef.h>
#include <stdio.h>

#include "export/session_export.h"

/* An export's one pass: writes the whole export to fp with the options given; returns 0, -1
 * (err filled) or WL_TL_RESTART. */
typedef int (*wl_export_pass)(wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st, char *err,
                              size_t err_size);
/* Runs pass as above; returns its final result (-1 with err when the output cannot be cut back)
 * and sets st->restarted. */
int wl_export_rerun(wl_export_pass pass, wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st,
                    char *err, size_t err_size);

#endif
