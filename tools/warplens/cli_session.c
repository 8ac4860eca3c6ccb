/* Opening and closing a session for a read verb (see cli_session.h). */
#include "cli_session.h"

#include <stdarg.h>
#include <stdio.h>

wl_session *cli_session_open(const char *path)
{
    char err[1024];
    wl_session *s = wl_session_open(path, err, sizeof err);
    if (!s)
        fprintf(stderr, "warplens: %s\n", err);
    return s;
}

void cli_read_error(wl_session *s, const char *fmt, ...)
{
    char what[8];
    if (wl_session_read_failure(s, what, sizeof what))
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

int cli_no_row(wl_session *s, const char *table, int64_t id, const char *fmt, ...)
{
    char why[512];
    if (wl_session_row_fault(s, table, id, why, sizeof why)) {
        fprintf(stderr, "warplens: %s %lld of %s is damaged and left out by every reader (%s); `warplens info --check"
                        " %s` lists what is wrong\n", table, (long long)id, wl_session_path(s), why, wl_session_path(s));
        return 1;
    }
    char what[8];
    if (!wl_session_read_failure(s, what, sizeof what)) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int cli_session_close(wl_session *s, int rc)
{
    if (!s)
        return rc;
    char what[512];
    const char *path = wl_session_path(s);
    if (wl_session_read_failure(s, what, sizeof what)) {
        fprintf(stderr, "warplens: %s is damaged (%s, found while reading it): the output is incomplete;"
                        " `warplens info --check %s` lists what is wrong, `sqlite3 %s .recover | sqlite3"
                        " recovered.wlsession` keeps what is readable\n", path, what, path, path);
        rc = 1;
    } else if (rc == 0 && wl_session_damage_note(s, what, sizeof what)) {
        /* (a verb that failed has said why in its one line) */
        fprintf(stderr, "warplens: note: %s is damaged: every reader left out %s, as breaking the session's schema;"
                        " `warplens info --check %s` lists them\n", path, what, path);
    } else if (rc == 0 && wl_session_pack_note(s, what, sizeof what)) {
        fprintf(stderr, "warplens: note: %s: %s; the exports read the rows instead, slower"
                        " (`warplens import --upgrade %s` writes the pack again)\n", path, what, path);
    }
    wl_session_close(s);
    return rc;
}
