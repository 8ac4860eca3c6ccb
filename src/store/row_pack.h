/* The export pack (internal to the store): a second, compact copy of the rows the exporters walk
 * (timed kernels, API calls, NVTX ranges, scopes), in the order they walk them, written once when
 * a session is written (import, merge, the synthetic sessions, `warplens import --upgrade`).
 *
 * Why: an export of a large session spends most of its CPU in SQLite turning records into
 * column values, row by row: about 600 ns a kernel and as much an API call, against ~90 ns an
 * event for the timeline itself (bench/results/export.txt). The pack holds the same values as
 * the cursors' statements return them, delta- and varint-coded in blocks of WL_PACK_BLOCK rows
 * (a few dozen bytes a row), so a reader decodes a block with one SQLite step and a tight loop.
 * Like an index, it is derived data: the rows stay the documented schema, every other reader
 * reads them, and a session without a pack (older, or written by another tool) reads as before.
 *
 * Trust: the census (session_census.c) that checks every row at open also sums a hash of each
 * packed row's values as the cursors would read them (wl_pack_census_hash) and compares
 * the sums, row counts and the untimed kernels with the pack's own, decoded whole. A pack that
 * does not match (the rows were edited after it was written, or its blocks are damaged) is left
 * unread: the session reads its rows, and is not kept as known sound, so each open says so. The
 * census's per-user cache (check_cache.h) keeps a match for the unchanged file.
 *
 * Layout: table pack_block(kind, seq, n, data), one row per block:
 *   kind 0: one block of zigzag varints: format version, packed kernels, untimed kernels, packed
 *           API calls, NVTX ranges and scopes (-1: that kind is not packed), strings, and the
 *           largest run of NVTX ranges or scopes with one start;
 *   kind 1: the strings (API names and categories, kernel tiers, range and scope names, NVTX
 *           domains): varint length, bytes; a string's index is its place across the blocks;
 *   kind 2: kernels, in (start, id) order; kind 3: API calls, in the host cursor's start order;
 *   kind 4: NVTX ranges in (start, id) order; kind 5: scopes in (start, pid, scope_id) order (the
 *           reader sorts each run of equal starts the cursor's way: WL_PACK_MAX_GROUP).
 * A row's fields (WL_PACK_FIELDS) go out in turn: integers as the zigzag varint of their change
 * from the same field of the previous row in the block, texts as a string index, nullable
 * integers as a byte 0 (NULL) or 1 and then the change. Memory of a reader: one block and the
 * strings (at most WL_PACK_MAX_STRINGS of them in WL_PACK_MAX_STRING_BYTES, none over 64 KiB). */
#ifndef WARPLENS_STORE_ROW_PACK_H
#define WARPLENS_STORE_ROW_PACK_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

enum { WL_PACK_META = 0, WL_PACK_STRINGS = 1, WL_PACK_KERNEL = 2, WL_PACK_API = 3, WL_PACK_NVTX = 4, WL_PACK_SCOPE = 5,
       WL_PACK_KINDS = 6 };
#define WL_PACK_VERSION 2
#define WL_PACK_BLOCK 4096
#define WL_PACK_MAX_FIELDS 29
#define WL_PACK_MAX_STRINGS 65536
#define WL_PACK_MAX_STRING_BYTES (8u << 20)
/* NVTX ranges and scopes are packed in (start, id) order and put in the cursor's order (the
 * longer first, which for a range never closed depends on the session's end) by sorting each run
 * of equal starts as it is read: at most this many rows, else they stay unpacked. */
#define WL_PACK_MAX_GROUP 4096
/* No block is larger (every field of every row at its longest varint): larger blobs are damage,
 * refused before they are read into memory. */
#define WL_PACK_MAX_BLOCK_BYTES 1310720 /* >= WL_PACK_BLOCK * (WL_PACK_MAX_FIELDS * 10 + 1) */
#define WL_STR_(x) #x
#define WL_STR(x) WL_STR_(x)

/* A row as the cursors read it: integers in v (0 for NULL), texts as (pointer, length) into the
 * reader's strings (each followed by a NUL), and which nullable fields are NULL. */
typedef struct wl_pack_row {
    int64_t v[WL_PACK_MAX_FIELDS]; /* a text field's: its index in the pack's string table (as read) */
    const char *text[WL_PACK_MAX_FIELDS];
    uint32_t len[WL_PACK_MAX_FIELDS];
    uint32_t nulls; /* bit i: field i is NULL */
} wl_pack_row;

/* The SQL each kind is packed from, in pack order: kernels (WL_CUR_KERNEL_COLUMNS with identity),
 * NVTX ranges and scopes (app_thread: the scope table has app_thread_id). */
const char *wl_pack_kernel_sql(void);
const char *wl_pack_nvtx_sql(void);
const char *wl_pack_scope_sql(int app_thread);

/* The census's side (session_census.c): the hash of a kernel or API call row from the cells the
 * contract's row check receives, equal to the hash of the same row read from the pack. */
typedef struct wl_pack_census {
    int kind, nfields;
    int timed;                         /* kernels: the has_timestamps cell */
    char how[WL_PACK_MAX_FIELDS];
    int16_t col[WL_PACK_MAX_FIELDS][3];
} wl_pack_census;
/* For table ("kernel" or "api_call") whose contract columns are cols[0, ncols) (absent: those the
 * file lacks): 0, or -1 when a column the pack holds is missing. */
int wl_pack_census_init(wl_pack_census *pc, const char *table, const char *const *cols, int ncols, uint64_t absent);
/* 1 with *hash for a packed row (cells: the contract's columns in order), 0 for a kernel without
 * timestamps (not packed). */
int wl_pack_census_hash(const wl_pack_census *pc, int64_t rowid, sqlite3_value **cells, uint64_t *hash);

/* 1 when db has a pack_block table. */
int wl_pack_present(sqlite3 *db);

/* What the census compares: per packed kind, the rows (-1: not packed) and the sum of their
 * hashes; the kernels without timestamps. Tables by kind: WL_PACK_TABLE. */
typedef struct wl_pack_sums {
    int64_t rows[WL_PACK_KINDS];
    uint64_t sum[WL_PACK_KINDS];
    uint64_t untimed;
} wl_pack_sums;
extern const char *const WL_PACK_TABLE[WL_PACK_KINDS];
/* The header's counts into out (sums 0) and the pack's size in bytes: 0, or -1 with why. */
int wl_pack_counts(sqlite3 *db, wl_pack_sums *out, uint64_t *bytes, char *why, size_t why_size);

/* Decodes the whole pack into *out: 0, or -1 with why (damaged, unknown version, out of memory). */
int wl_pack_digest(sqlite3 *db, wl_pack_sums *out, char *why, size_t why_size);

/* A reader of one kind's rows in pack order. NULL when that kind is not packed (quietly) or on an
 * error (with err). */
typedef struct wl_pack_reader wl_pack_reader;
wl_pack_reader *wl_pack_open(sqlite3 *db, int kind, char *err, size_t err_size);
/* 1 with *row (its texts valid until the reader closes), 0 at the end, -1 damaged (err of open,
 * filled with the block and byte offset). */
int wl_pack_next(wl_pack_reader *r, wl_pack_row *row);
/* Kernels without timestamps (not packed: in no walk), from the pack's header. */
uint64_t wl_pack_untimed(const wl_pack_reader *r);
/* NVTX ranges and scopes: the largest run of rows with one start (WL_PACK_MAX_GROUP at most). */
uint32_t wl_pack_max_group(const wl_pack_reader *r);
const char *wl_pack_error(const wl_pack_reader *r);
void wl_pack_close(wl_pack_reader *r);

/* Writes the pack of db's rows, replacing any (inside the caller's transaction). Sessions whose
 * tables lack the columns the cursors' fast statements read get none, and API calls past the
 * string limits stay unpacked. 0, or -1 with err. */
int wl_pack_build(sqlite3 *db, char *err, size_t err_size);

#endif
