/* The reader's handle, shared by the files of src/store/ that query a session. */
#ifndef WARPLENS_STORE_SESSION_INTERNAL_H
#define WARPLENS_STORE_SESSION_INTERNAL_H

#include <sqlite3.h>

#include "store/session.h"
#include "store/session_guard.h"

struct wl_session {
    sqlite3 *db;
    int schema_version;
    wl_guard *guard; /* rows that break the contract are left out of every read */
    struct wl_session_scan *scan; /* the large tables' folds, once read (session_scan.h) */
    int pack;                     /* the export pack matches the rows: the cursors read it (row_pack.h) */
    int work_unordered;           /* the kernel table proved too far from start order (session_work.h) */
    int read_threads;             /* wl_session_set_read_threads */
    int annotation_lookups;       /* wl_session_kernel_annotation calls so far */
    sqlite3_stmt *annotation_by_kernel; /* ... from the second on: by a TEMP copy's index */
    char path[4096];
};

#endif
