/* Checking a session for damage (`warplens info --check`): SQLite's integrity check, the
 * structure the readers need, the rows that break the contract, and links that name no row or
 * rows that repeat others. */
#ifndef WARPLENS_STORE_SESSION_CHECK_H
#define WARPLENS_STORE_SESSION_CHECK_H

#include "store/session.h"

/* section: "file", "structure", "rows" or "consistency"; line: one finding (lines starting with two
 * spaces are examples of the finding before them). */
typedef void (*wl_check_fn)(const char *section, const char *line, void *arg);
/* Runs every check, calling fn per finding; returns the number of problems (0: sound). Open the
 * session with WL_OPEN_DAMAGED so that structural damage is listed instead of refused. */
int wl_session_check(wl_session *s, int examples, wl_check_fn fn, void *arg);

#endif
