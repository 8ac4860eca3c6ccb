/* Reading only sound rows (internal to the store). At open the guard reads what the contract
 * (session_contract.h) needs from the file: the tables, columns and indexes it has, the
 * session's time window, the ids other tables reference. Installed on a connection, it shadows
 * each table with unsound rows with a TEMP view of the same name that keeps the rows the
 * contract accepts, so every query of the store (sums, joins, cursors) sees sound rows only,
 * unchanged.
 * The check runs once over every row at open (the census): tables with no unsound row are read
 * as they are, at no cost; the others through their view. A file a census found sound is not
 * censused again while it stays unchanged (check_cache.h). */
#ifndef WARPLENS_STORE_SESSION_GUARD_H
#define WARPLENS_STORE_SESSION_GUARD_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

typedef struct wl_guard wl_guard;

/* Reads the structure and time window of db's main schema and checks every row of every table
 * (the census: a pass over each, in two threads; on db, the guard's row check is registered).
 * NULL with err and SQLite's code in *code when the schema or a table cannot be read (a
 * malformed page, ...), unless tolerate: then such a table is a problem and left out.
 * known_sound: the file is known to hold no unsound row (check_cache.h), or the caller checks it
 * later (WL_OPEN_NO_CENSUS): no census. one_thread: the census without helper threads. */
wl_guard *wl_guard_build(sqlite3 *db, int tolerate, int known_sound, int one_thread, char *err, size_t err_size,
                         int *code);
/* 1 when the census ran and found nothing wrong: no unsound row, no structural problem. */
int wl_guard_sound(const wl_guard *g);
/* What the census found of the export pack (row_pack.h): 1 it matches the rows, -1 it does not
 * (why into why), 0 no pack, or not compared (no census, or rows left out of its tables). */
int wl_guard_pack(const wl_guard *g, char *why, size_t n);
void wl_guard_free(wl_guard *g);
/* 1 when the table is in the file and could be read whole. */
int wl_guard_has(const wl_guard *g, const char *table);
/* The structural problems found (missing tables, columns, indexes): i-th one into out, 0; -1
 * past the last. */
int wl_guard_problem(const wl_guard *g, int i, char *out, size_t n);
/* Registers the row check and creates the views of the tables with unsound rows on db (the
 * session's or a cursor's own connection). 0, or -1 with db's error. */
int wl_guard_install(wl_guard *g, sqlite3 *db);
/* The rows left out, in one line: "3 rows (api_call 1, kernel 2; first: api_call row 1: pid is
 * text '', not an integer)"; "" and 0 when the session is sound, else 1. */
int wl_guard_note(const wl_guard *g, char *out, size_t n);
/* Why row `rowid` of table was left out: 1 with "<column> <what is wrong>" in out, else 0. */
int wl_guard_row_fault(const wl_guard *g, sqlite3 *db, const char *table, int64_t rowid, char *out, size_t n);
/* The census per table with unsound rows: up to max entries, each with up to `examples` rows
 * described ("row 12: pid is text ''", read again through db). Returns the number of such
 * tables, or -1 when a table cannot be read. */
int wl_guard_census(const wl_guard *g, sqlite3 *db, int examples, wl_damage_count *out, int max);

#endif
