/* The reader's handle, shared by the files of src/store/ that query a session. */
#ifndef WARPLENS_STORE_SESSION_INTERNAL_H
#define WARPLENS_STORE_SESSION_INTERNAL_H

#include <sqlite3.h>

#include "store/session.h"

struct wl_session {
    sqlite3 *db;
    int schema_version;
};

#endif
