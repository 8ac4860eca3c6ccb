/* How every read verb opens and closes a session: a session that cannot be opened is one line
 * on stderr; at close, a verb that succeeded on a damaged session notes on stderr, in one line,
 * the rows every reader left out, and a file SQLite found damaged mid-read is one line that
 * fails the verb. */
#ifndef WARPLENS_TOOLS_CLI_SESSION_H
#define WARPLENS_TOOLS_CLI_SESSION_H

#include "store/session.h"

/* NULL after printing why (`warplens: <path> ...`). */
wl_session *cli_session_open(const char *path);
/* A verb's line about a read that failed: printed unless SQLite found the file damaged, which
 * cli_session_close then reports (one line either way). */
void cli_read_error(wl_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A row a verb was asked for and did not find: when the session has it but every reader left it
 * out as damaged, says so (with what is wrong) and returns 1; else prints the verb's line (as
 * cli_read_error) and returns 0. */
int cli_no_row(wl_session *s, const char *table, int64_t id, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Closes s; returns rc, or 1 when SQLite met a damaged file while reading. rc 0: the note on the
 * rows left out, if any. */
int cli_session_close(wl_session *s, int rc);

#endif
