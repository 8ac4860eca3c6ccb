/* Session database schema and identity (see schema.c and docs/schema.md). */
#ifndef WARPLENS_STORE_SCHEMA_H
#define WARPLENS_STORE_SCHEMA_H

#define WL_SESSION_FORMAT "warplens-session"
#define WL_SCHEMA_VERSION 1

extern const char *const WL_SCHEMA_SQL;
/* Fills api_call.flow_id from the GPU work linked to each call (run after api_id is set). */
extern const char *const WL_FLOW_LINK_SQL;

#endif
