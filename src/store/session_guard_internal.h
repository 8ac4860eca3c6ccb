/* What the guard (session_guard.c: the row check, the views, what readers are told) and the
 * census (session_census.c: every row checked once at open, and the export pack against the rows)
 * share. Internal to the store. */
#ifndef WARPLENS_STORE_SESSION_GUARD_INTERNAL_H
#define WARPLENS_STORE_SESSION_GUARD_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store/row_pack.h"
#include "store/session_contract.h"
#include "store/session_guard.h"

#define MAX_TABLES 40
#define MAX_PROBLEMS 16

typedef struct ref_key {
    int64_t a, b;
} ref_key;

typedef struct ref_set {
    ref_key *keys;
    size_t n;
} ref_set;

struct wl_guard {
    int present[MAX_TABLES];  /* the table is in the file */
    uint64_t absent[MAX_TABLES]; /* its contract columns the file lacks (optional ones) */
    wl_contract_env env;
    ref_set refs[WL_N_REFS];
    char problems[MAX_PROBLEMS][320];
    int nproblems;
    /* the census at open: rows left out per table and the first of them */
    int census_ran;             /* 0: the file was known sound (check_cache.h) */
    /* the export pack (row_pack.h): the tables whose rows the census hashes as the pack holds
     * them, and what the comparison found: 1 it matches the rows, -1 it does not (why), 0 not
     * compared */
    uint8_t packed[MAX_TABLES];
    wl_pack_census pack_of[MAX_TABLES];
    int pack;
    char pack_why[220];
    uint64_t skipped[MAX_TABLES];
    char first[MAX_TABLES][420];
};

/* A structural problem (fmt takes three strings), kept while there is room. */
void wl_guard_add_problem(wl_guard *g, const char *fmt, const char *a, const char *b, const char *c);
/* Order of ref_keys (qsort, bsearch). */
int wl_guard_key_cmp(const void *x, const void *y);
/* "fn(i, rowid, c0, c1, ...)" for table i (NULL for the columns the file lacks); malloc'd. fn:
 * wl_fault (the fault or NULL) or wl_fault_pack (the fault, else the row's pack hash or NULL). */
char *wl_guard_fault_call(const wl_guard *g, int i, const char *fn);
/* The row checks wl_fault and wl_fault_pack on a connection: 0, or -1. */
int wl_guard_register(wl_guard *g, sqlite3 *db);

/* The census of every row of every table present, in up to four threads (session_census.c):
 * rows left out and the first of each table into g, referenced keys into g->refs, and the export
 * pack compared with the rows (g->pack). 0, or -1 with err and *code when a table cannot be read
 * (unless tolerate: then it is a problem and left out). */
int wl_census(wl_guard *g, sqlite3 *db, int tolerate, int one_thread, char *err, size_t err_size, int *code);
/* The statement that checks table i's rows: columns 0 rowid (NULL without one), 1 the fault
 * (NULL: sound), 2-3 key (SQL for the two parts of the row's key, when other tables reference
 * it), 4-6 the leading columns, which name a row without a rowid. ranged: rowid in [?1, ?2];
 * faults: only the unsound rows, at most that many (else column 1 is wl_fault_pack's: a text
 * fault, or the row's pack hash, or NULL). */
sqlite3_stmt *wl_census_rows(const wl_guard *g, sqlite3 *db, int i, const char *key, int ranged, int faults);
/* "row 12: <fault>", or for a row without a rowid "row with pid 1, device_id 0, ...: <fault>" */
void wl_census_describe(const wl_table_rule *t, sqlite3_stmt *st, char *out, size_t n);

#endif
