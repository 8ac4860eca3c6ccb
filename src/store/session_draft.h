/* A session filled by code that writes its rows with SQL of its own (the synthetic sessions,
 * merge), with the writer's discipline: an empty session of the current schema is created under
 * a temporary name next to its path, opened for writing with no journal (the file is private until
 * renamed: a failure discards it), and renamed into place only when the filler succeeded. */
#ifndef WARPLENS_STORE_SESSION_DRAFT_H
#define WARPLENS_STORE_SESSION_DRAFT_H

#include <sqlite3.h>
#include <stddef.h>

typedef struct wl_session_draft {
    sqlite3 *db; /* the empty session, open read-write: fill it */
    char tmp[4096], path[4096];
} wl_session_draft;

/* 0, or -1 with err (nothing is left behind). */
int wl_session_draft_open(wl_session_draft *d, const char *path, char *err, size_t err_size);
/* Closes db; when ok, renames the file into place and returns 0. Otherwise, or when closing or
 * renaming fails (err says so then), removes the temporary file and returns -1; a filler's err is
 * left as it is when !ok. */
int wl_session_draft_close(wl_session_draft *d, int ok, char *err, size_t err_size);

#endif
