/* Sessions filled by SQL of their own, written atomically (see session_draft.h). The empty
 * session comes from the session writer (schema, meta, identity tables), so a draft is exactly
 * what an import of nothing gives. */
#include "store/session_draft.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "store/kernel_config.h"
#include "store/session_writer.h"

int wl_session_draft_open(wl_session_draft *d, const char *path, char *err, size_t err_size)
{
    memset(d, 0, sizeof *d);
    if (strlen(path) >= sizeof d->path || wl_tmp_path_for(path, d->tmp, sizeof d->tmp)) {
        snprintf(err, err_size, "path too long: %s", path);
        return -1;
    }
    snprintf(d->path, sizeof d->path, "%s", path);
    wl_session_writer *w = wl_session_writer_create(d->tmp, err, err_size);
    if (!w || wl_session_writer_finish(w, err, err_size))
        return -1;
    if (sqlite3_open_v2(d->tmp, &d->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        sqlite3_exec(d->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", NULL, NULL, NULL) != SQLITE_OK ||
        wl_kcfg_register(d->db)) {
        snprintf(err, err_size, "%s: %s", d->tmp, d->db ? sqlite3_errmsg(d->db) : "out of memory");
        sqlite3_close(d->db);
        d->db = NULL;
        unlink(d->tmp);
        return -1;
    }
    return 0;
}

int wl_session_draft_close(wl_session_draft *d, int ok, char *err, size_t err_size)
{
    if (d->db && sqlite3_close(d->db) != SQLITE_OK) {
        if (ok)
            snprintf(err, err_size, "closing %s failed: %s", d->tmp, sqlite3_errmsg(d->db));
        sqlite3_close_v2(d->db);
        ok = 0;
    }
    d->db = NULL;
    if (ok && wl_commit_tmp_path(d->tmp, d->path)) {
        snprintf(err, err_size, "cannot move %s into place", d->path);
        ok = 0;
    }
    if (!ok)
        unlink(d->tmp);
    return ok ? 0 : -1;
}
