/* Session database schema and identity (see schema.c and docs/schema.md). */
#ifndef WARPLENS_STORE_SCHEMA_H
#define WARPLENS_STORE_SCHEMA_H

#define WL_SESSION_FORMAT "warplens-session"
#define WL_SCHEMA_VERSION 1
/* The page size new sessions are written with (bytes, as SQL text). A reader takes any: SQLite
 * reads it from the file's header, so sessions of 4 KiB pages read as before. */
#define WL_SESSION_PAGE_SIZE "16384"

extern const char *const WL_SCHEMA_SQL;
/* Fills api_call.flow_id from the GPU work linked to each call (run after api_id is set). */
extern const char *const WL_FLOW_LINK_SQL;

#endif
