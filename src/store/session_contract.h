/* What a sound session is: for every table the readers use, the type and range of each column,
 * the relations between a row's columns (an end not before its start, derived columns equal to
 * what they derive from, ids that name an existing row), the tables and columns every schema-1
 * session has, and the indexes the readers need to stay linear. Pure data and checks, no SQL:
 * session_guard.c applies it to rows as SQLite reads them, session_check.c lists what breaks it.
 * docs/schema.md ("Damaged sessions") says what readers do with rows that break it. */
#ifndef WARPLENS_STORE_SESSION_CONTRACT_H
#define WARPLENS_STORE_SESSION_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

typedef enum wl_col_kind {
    WL_COL_INT,   /* an integer in [lo, hi] */
    WL_COL_TIME,  /* an integer time in [0, 2^62], inside the session's window when it has one */
    WL_COL_REAL,  /* a finite number (integer or real) */
    WL_COL_TEXT,  /* any value that reads as text (the rule only refuses NULL where it is not allowed) */
} wl_col_kind;

typedef struct wl_col_rule {
    const char *name;
    uint8_t kind;     /* wl_col_kind */
    uint8_t null_ok;  /* NULL allowed */
    uint8_t optional; /* added within schema 1: older sessions lack the column */
    int64_t lo, hi;   /* WL_COL_INT */
} wl_col_rule;

/* One cell of a row as the checks see it (types as SQLite's: 1 integer, 2 real, 3 text, 4 blob,
 * 5 NULL; absent columns are NULL). */
typedef struct wl_cell {
    int type;
    int64_t i;
    double d;
    const unsigned char *text; /* text or blob bytes (len of them), for messages */
    int len;
} wl_cell;

/* What checks need beyond the row: the session's time window and the ids other tables hold. */
typedef enum wl_ref_kind { WL_REF_KERNEL_NAME, WL_REF_METRIC, WL_REF_STALL_REASON, WL_REF_INKERNEL_BUFFER,
                           WL_REF_PM_METRIC, WL_N_REFS } wl_ref_kind;
typedef struct wl_contract_env {
    int64_t window_lo, window_hi; /* times outside are damage; [0, 2^62] when the session has none */
    /* 1 when (a, b) names a row of the referenced table (b is 0 but for pm_metric, keyed by
     * (pid << 32 | device_id, metric_index)) */
    int (*has_ref)(const void *arg, wl_ref_kind kind, int64_t a, int64_t b);
    const void *ref_arg;
} wl_contract_env;

#define WL_TIME_MAX ((int64_t)1 << 62)
/* Bump when a check's logic changes what it accepts (wl_contract_check, a table's relate, the
 * window): sessions that the per-user cache (check_cache.h) holds as sound are then checked again.
 * Changes to the tables below change the contract's fingerprint by themselves. 3: a session is
 * sound only with its export pack matching its rows (row_pack.h). */
#define WL_CONTRACT_REVISION 3
#define WL_PM_DEVICE_KEY(pid, dev) ((int64_t)((uint64_t)(pid) << 32 | (uint32_t)(dev)))

typedef struct wl_table_rule {
    const char *name;
    uint8_t required;   /* every schema-1 session has it */
    uint8_t rowid;      /* has a rowid (pm_sample is WITHOUT ROWID) */
    const wl_col_rule *cols;
    int ncols;
    /* Relations between the cells (in cols order): the index of the column to blame with a
     * reason in why, or -1. NULL when the table has none. */
    int (*relate)(const wl_cell *c, const wl_contract_env *env, char *why, size_t n);
} wl_table_rule;

extern const wl_table_rule WL_CONTRACT[];
extern const int WL_CONTRACT_TABLES;

/* The rule of a table by name, or NULL (tables the readers do not use). */
const wl_table_rule *wl_contract_table(const char *name);
/* Checks one row: -1 when sound, else the index of the first column at fault with the reason
 * in why ("is text 'abc'", "is -5, below 0", "is 3, not end_ns - start_ns (7)", ...). absent:
 * bit i set when column i is not in the table (an older session). */
int wl_contract_check(const wl_table_rule *t, const wl_cell *cells, uint64_t absent, const wl_contract_env *env,
                      char *why, size_t n);
/* A cell for a message: 'text' (quoted, cut at 40 bytes, bytes outside printable ASCII as \xNN),
 * a blob's size, a number, NULL. */
void wl_cell_describe(const wl_cell *c, char *out, size_t n);

/* Indexes the readers need (without one a walk turns quadratic): the remedy creates it. */
typedef struct wl_index_rule {
    const char *name, *table, *columns;
} wl_index_rule;
extern const wl_index_rule WL_INDEXES[];
extern const int WL_INDEX_COUNT;

#endif
