/* The export pack's format: its fields, the row hash the census compares, and the reader (see
 * row_pack.h; the writer is row_pack_build.c). */
#include "store/row_pack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fnv.h"
#include "common/grow.h"
#include "common/mix64.h"
#include "store/row_pack_internal.h"
#include "store/session_cursors_internal.h"
#include "store/sql_util.h"

/* Field types by kind: 'i' integer, 't' text, 'n' integer or NULL. Kernels: the GPU cursor's 28
 * integer columns and the tier (WL_CUR_KERNEL_COLUMNS with identity); API calls: the host
 * cursor's columns (WL_CUR_API_COLUMNS). */
const char *const WL_PACK_FIELDS[WL_PACK_KINDS] = {NULL, NULL, "iiiiiiiiiiiiiiiiiiiiiiiiiiiit", "iiiiittiiiin",
                                                   "iiinitt", "iiiniti"};
const char *const WL_PACK_TABLE[WL_PACK_KINDS] = {NULL, NULL, "kernel", "api_call", "nvtx_range", "scope"};

const char *wl_pack_kernel_sql(void)
{
    return "SELECT " WL_CUR_KERNEL_COLUMNS("0", WL_CUR_IDENT) " FROM kernel k WHERE k.has_timestamps"
           " ORDER BY k.start_ns, k.id";
}

const char *wl_pack_nvtx_sql(void)
{
    return "SELECT pid, coalesce(tid, 0), start_ns, end_ns, id, name, coalesce(domain, '') FROM nvtx_range"
           " ORDER BY start_ns, id";
}

const char *wl_pack_scope_sql(int app_thread)
{
    return app_thread ? "SELECT pid, tid, start_ns, end_ns, scope_id, name, coalesce(app_thread_id, 0) FROM scope"
                        " ORDER BY start_ns, pid, scope_id"
                      : "SELECT pid, tid, start_ns, end_ns, scope_id, name, 0 FROM scope ORDER BY start_ns, pid, scope_id";
}

/* ---- the row hash ------------------------------------------------------------------------- */

/* The values mixed in turn (common/mix64.h), a text as its FNV-1a hash: a row changed in any
 * field changes its hash, and so the census's sum. */
uint64_t wl_pack_row_hash(int kind, const wl_pack_row *r)
{
    const char *f = WL_PACK_FIELDS[kind];
    uint64_t h = 0x243f6a8885a308d3ull ^ (uint64_t)kind;
    for (int i = 0; f[i]; i++) {
        if (f[i] == 't')
            h = wl_mix64_step(h, wl_fnv1a(WL_FNV_OFFSET, r->text[i], r->len[i]));
        else if (f[i] == 'n' && (r->nulls >> i & 1))
            h = wl_mix64_step(h, 0x5bd1e995u) ^ 1; /* NULL apart from every integer */
        else
            h = wl_mix64_step(h, (uint64_t)r->v[i]);
    }
    return wl_mix64_finish(h);
}

/* ---- the census's side: the same hash from the cells the row check receives ------------------ */

/* Per packed field, the contract column it comes from and how the cursors' statement reads it
 * (WL_CUR_KERNEL_COLUMNS with identity, WL_CUR_API_COLUMNS): 'v' the value, 'c' the value or -1
 * for NULL, 'r' the rowid, 'z' 0, 't' text, 'n' integer or NULL, 'm' max(column, second column)
 * (NULL when either is), 'k' max(1, the product of three columns, NULL counting 1). */
typedef struct field_src {
    char how;
    const char *col[3];
} field_src;
static const field_src KERNEL_SRC[] = {
    {'v', {"start_ns"}}, {'v', {"end_ns"}}, {'r', {NULL}}, {'v', {"pid"}}, {'v', {"device_id"}}, {'v', {"stream_id"}},
    {'v', {"correlation_id"}}, {'z', {NULL}}, {'c', {"graph_id"}}, {'c', {"scope_id"}}, {'c', {"tid"}},
    {'v', {"name_id"}}, {'v', {"grid_x"}}, {'v', {"grid_y"}}, {'v', {"grid_z"}}, {'v', {"block_x"}},
    {'v', {"block_y"}}, {'v', {"block_z"}}, {'k', {"cluster_x", "cluster_y", "cluster_z"}},
    {'v', {"registers_per_thread"}}, {'v', {"static_smem"}}, {'v', {"dynamic_smem"}}, {'v', {"smem_limit_config"}},
    {'c', {"carveout_requested"}}, {'c', {"queue_delay_ns"}}, {'v', {"local_mem_per_thread"}},
    {'c', {"submit_delay_ns"}}, {'c', {"op_id"}}, {'t', {"tier"}}};
static const field_src API_SRC[] = {
    {'v', {"pid"}}, {'v', {"tid"}}, {'v', {"start_ns"}}, {'m', {"end_ns", "start_ns"}}, {'r', {NULL}},
    {'t', {"name"}}, {'t', {"category"}}, {'z', {NULL}}, {'v', {"correlation_id"}}, {'v', {"return_value"}},
    {'c', {"scope_id"}}, {'n', {"flow_id"}}};
/* The host cursor's NVTX and scope statements read coalesce(tid, 0), coalesce(domain, ''),
 * coalesce(app_thread_id, 0): as sqlite3_value_int64 and _text read NULL ('v', 't'). A file
 * without app_thread_id reads 0 ('o': optional). */
static const field_src NVTX_SRC[] = {{'v', {"pid"}},    {'v', {"tid"}},  {'v', {"start_ns"}}, {'n', {"end_ns"}},
                                     {'r', {NULL}},     {'t', {"name"}}, {'t', {"domain"}}};
static const field_src SCOPE_SRC[] = {{'v', {"pid"}},      {'v', {"tid"}},  {'v', {"start_ns"}},       {'n', {"end_ns"}},
                                      {'v', {"scope_id"}}, {'t', {"name"}}, {'o', {"app_thread_id"}}};
static const field_src *const SRC[WL_PACK_KINDS] = {NULL, NULL, KERNEL_SRC, API_SRC, NVTX_SRC, SCOPE_SRC};

int wl_pack_census_init(wl_pack_census *pc, const char *table, const char *const *cols, int ncols, uint64_t absent)
{
    int kind = WL_PACK_KERNEL;
    while (kind < WL_PACK_KINDS && strcmp(WL_PACK_TABLE[kind], table))
        kind++;
    if (kind == WL_PACK_KINDS)
        return -1;
    const field_src *src = SRC[kind];
    memset(pc, 0, sizeof *pc);
    pc->kind = kind;
    pc->nfields = (int)strlen(WL_PACK_FIELDS[pc->kind]);
    pc->timed = -1;
    for (int i = 0; i < ncols && pc->kind == WL_PACK_KERNEL; i++)
        if (!strcmp(cols[i], "has_timestamps") && !(absent >> i & 1))
            pc->timed = i;
    if (pc->kind == WL_PACK_KERNEL && pc->timed < 0)
        return -1;
    for (int f = 0; f < pc->nfields; f++) {
        pc->how[f] = src[f].how;
        for (int k = 0; k < 3; k++) {
            pc->col[f][k] = -1;
            if (!src[f].col[k])
                continue;
            for (int i = 0; i < ncols; i++)
                if (!strcmp(cols[i], src[f].col[k]) && !(absent >> i & 1))
                    pc->col[f][k] = (int16_t)i;
            if (pc->col[f][k] < 0 && src[f].how == 'o')
                pc->how[f] = 'z'; /* an optional column the file lacks: read as 0 */
            else if (pc->col[f][k] < 0)
                return -1; /* a column the pack holds is not in the file: no pack to compare */
        }
    }
    return 0;
}

int wl_pack_census_hash(const wl_pack_census *pc, int64_t rowid, sqlite3_value **cells, uint64_t *hash)
{
    if (pc->kind == WL_PACK_KERNEL && !sqlite3_value_int64(cells[pc->timed]))
        return 0; /* no timestamps: not packed (`CASE WHEN k.has_timestamps`, as SQL tests a value) */
    wl_pack_row r;
    r.nulls = 0;
    for (int f = 0; f < pc->nfields; f++) {
        sqlite3_value *v = pc->col[f][0] >= 0 ? cells[pc->col[f][0]] : NULL;
        int null = v && sqlite3_value_type(v) == SQLITE_NULL;
        switch (pc->how[f]) {
        case 'v': case 'o': r.v[f] = sqlite3_value_int64(v); break;
        case 'c': r.v[f] = null ? -1 : sqlite3_value_int64(v); break;
        case 'r': r.v[f] = rowid; break;
        case 'z': r.v[f] = 0; break;
        case 'n':
            r.v[f] = null ? 0 : sqlite3_value_int64(v);
            r.nulls |= (uint32_t)null << f;
            break;
        case 'm': {
            sqlite3_value *w = cells[pc->col[f][1]];
            int64_t a = sqlite3_value_int64(v), b = sqlite3_value_int64(w);
            r.v[f] = null || sqlite3_value_type(w) == SQLITE_NULL ? 0 : a > b ? a : b;
            break;
        }
        case 'k': {
            int64_t p = 1;
            for (int k = 0; k < 3; k++) {
                sqlite3_value *c = cells[pc->col[f][k]];
                int64_t d = sqlite3_value_type(c) == SQLITE_NULL ? 1 : sqlite3_value_int64(c);
                if (__builtin_mul_overflow(p, d, &p))
                    p = INT64_MAX; /* SQL's product turns real: only in rows the contract refuses */
            }
            r.v[f] = p < 1 ? 1 : p;
            break;
        }
        default: { /* 't' */
            const unsigned char *t = sqlite3_value_text(v);
            r.text[f] = t ? (const char *)t : "";
            r.len[f] = t ? (uint32_t)sqlite3_value_bytes(v) : 0;
        }
        }
    }
    *hash = wl_pack_row_hash(pc->kind, &r);
    return 1;
}

int wl_pack_present(sqlite3 *db) { return wl_sql_has_table(db, "pack_block"); }

/* ---- decoding ------------------------------------------------------------------------------ */

/* The varint at *p (at most 10 bytes, none past end): 0 with *out, -1 when it runs past end or is
 * longer than 64 bits. */
static inline int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* get_varint for a reader sure that ten bytes follow p (none is checked against the end): the same
 * values, the same refusal of an eleventh byte; NULL then. */
static inline const unsigned char *varint10(const unsigned char *p, uint64_t *out)
{
    uint64_t b = *p++;
    if (b < 0x80) { /* most deltas: one byte */
        *out = b;
        return p;
    }
    uint64_t v = b & 0x7f;
    for (int shift = 7; shift < 64; shift += 7) {
        b = *p++;
        v |= (b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            return p;
        }
    }
    return NULL;
}

static inline int64_t unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

struct wl_pack_reader {
    sqlite3_stmt *blocks;           /* n, data, seq of the kind's blocks in seq order */
    int kind;
    const char *fields;
    char **str;                     /* the strings, with their lengths */
    uint32_t *str_len, nstr;
    char *str_mem;
    unsigned char *block;           /* the current block's bytes (a copy: SQLite's may move) */
    size_t block_cap, block_len, at;
    int64_t seq, left;              /* rows left in the block */
    int64_t prev[WL_PACK_MAX_FIELDS];
    uint64_t untimed;
    int64_t rows;                   /* rows the header counts for the kind, and rows read */
    int64_t read;
    int64_t last_start;             /* the previous row's start (rows come in start order) */
    int64_t group;                  /* NVTX ranges and scopes: rows so far with last_start */
    uint32_t max_group;
    char err[200];
};

const char *wl_pack_error(const wl_pack_reader *r) { return r->err; }
uint32_t wl_pack_max_group(const wl_pack_reader *r) { return r->max_group; }
uint64_t wl_pack_untimed(const wl_pack_reader *r) { return r->untimed; }

void wl_pack_close(wl_pack_reader *r)
{
    if (!r)
        return;
    sqlite3_finalize(r->blocks);
    free(r->str);
    free(r->str_len);
    free(r->str_mem);
    free(r->block);
    free(r);
}

static int damaged(wl_pack_reader *r, const char *what)
{
    snprintf(r->err, sizeof r->err, "the export pack is damaged: %s (pack_block kind %d, seq %lld, byte %zu)", what,
             r->kind, (long long)r->seq, r->at);
    return -1;
}

/* The header (row_pack.h): version, then the rows of kinds 2-5 (-1: not packed), untimed kernels,
 * strings, the largest run of equal starts among NVTX ranges and scopes. */
typedef struct pack_header {
    int64_t rows[WL_PACK_KINDS];
    int64_t untimed, strings, max_group;
} pack_header;
#define HEADER_FIELDS 8

static int read_header(sqlite3 *db, pack_header *hd, char *why, size_t n)
{
    sqlite3_stmt *st;
    int rc = -1;
    if (sqlite3_prepare_v2(db, "SELECT CASE WHEN length(data) <= 96 THEN data END FROM pack_block WHERE kind = 0", -1,
                           &st, NULL) != SQLITE_OK) {
        snprintf(why, n, "the export pack cannot be read: %s", sqlite3_errmsg(db));
        return -1;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *p = sqlite3_column_blob(st, 0);
        const unsigned char *end = p ? p + sqlite3_column_bytes(st, 0) : NULL;
        int64_t h[HEADER_FIELDS] = {0};
        rc = 0;
        for (int i = 0; i < HEADER_FIELDS && rc == 0; i++) {
            uint64_t u = 0;
            rc = p ? get_varint(&p, end, &u) : -1;
            h[i] = unzigzag(u);
            if (rc == 0 && i == 0 && h[0] != WL_PACK_VERSION)
                break; /* another format: its fields are not these */
        }
        memset(hd, 0, sizeof *hd);
        hd->rows[WL_PACK_KERNEL] = h[1], hd->untimed = h[2], hd->rows[WL_PACK_API] = h[3];
        hd->rows[WL_PACK_NVTX] = h[4], hd->rows[WL_PACK_SCOPE] = h[5], hd->strings = h[6], hd->max_group = h[7];
        if (rc == 0 && h[0] != WL_PACK_VERSION)
            snprintf(why, n, "the export pack has format %lld, this warplens reads %d (`warplens import --upgrade`"
                     " writes it again)", (long long)h[0], WL_PACK_VERSION), rc = -1;
        else if (rc || p != end || h[1] < 0 || h[2] < 0 || h[3] < -1 || h[4] < -1 || h[5] < -1 || h[6] < 0 ||
                 h[6] > WL_PACK_MAX_STRINGS || h[7] < 0 || h[7] > WL_PACK_MAX_GROUP)
            snprintf(why, n, "the export pack's header is damaged"), rc = -1;
    } else {
        snprintf(why, n, "the export pack has no header");
    }
    sqlite3_finalize(st);
    return rc;
}

/* The strings, into r (count from the header). */
static int read_strings(wl_pack_reader *r, sqlite3 *db, uint32_t count)
{
    sqlite3_stmt *st;
    size_t used = 0, cap = 0;
    r->str = calloc(count ? count : 1, sizeof *r->str);
    r->str_len = calloc(count ? count : 1, sizeof *r->str_len);
    size_t *off = calloc(count ? count : 1, sizeof *off);
    if (!r->str || !r->str_len || !off) {
        free(off);
        snprintf(r->err, sizeof r->err, "out of memory");
        return -1;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT seq, CASE WHEN length(data) <= " WL_STR(WL_PACK_MAX_BLOCK_BYTES)
                           " THEN data END, length(data) > 0 FROM pack_block WHERE kind = 1 ORDER BY seq", -1, &st, NULL) !=
        SQLITE_OK) {
        free(off);
        snprintf(r->err, sizeof r->err, "the export pack cannot be read: %s", sqlite3_errmsg(db));
        return -1;
    }
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        r->seq = sqlite3_column_int64(st, 0);
        const unsigned char *b = sqlite3_column_blob(st, 1), *p = b;
        const unsigned char *end = b ? b + sqlite3_column_bytes(st, 1) : NULL;
        if (!b && sqlite3_column_int(st, 2)) { /* past the largest block a writer makes: not read into memory */
            rc = damaged(r, "a strings block is larger than any pack holds");
            break;
        }
        while (rc == 0 && p && p < end) {
            uint64_t len;
            r->at = (size_t)(p - b);
            if (get_varint(&p, end, &len) || len > (uint64_t)(end - p) || r->nstr == count ||
                used + len + 1 > WL_PACK_MAX_STRING_BYTES) {
                rc = damaged(r, "a string runs past its block or the limits");
                break;
            }
            if (wl_reserve((void **)&r->str_mem, &cap, used + len + 1, 4096)) {
                snprintf(r->err, sizeof r->err, "out of memory");
                rc = -1;
                break;
            }
            memcpy(r->str_mem + used, p, (size_t)len);
            r->str_mem[used + len] = 0;
            off[r->nstr] = used;
            r->str_len[r->nstr++] = (uint32_t)len;
            used += (size_t)len + 1;
            p += len;
        }
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1, snprintf(r->err, sizeof r->err, "the export pack cannot be read: %s", sqlite3_errmsg(db));
    if (rc == 0 && r->nstr != count)
        rc = damaged(r, "fewer strings than its header says");
    for (uint32_t i = 0; rc == 0 && i < r->nstr; i++)
        r->str[i] = r->str_mem + off[i];
    sqlite3_finalize(st);
    free(off);
    r->seq = 0, r->at = 0;
    return rc;
}

wl_pack_reader *wl_pack_open(sqlite3 *db, int kind, char *err, size_t err_size)
{
    if (kind < WL_PACK_KERNEL || kind >= WL_PACK_KINDS)
        return NULL;
    pack_header h;
    char why[200];
    if (read_header(db, &h, why, sizeof why)) {
        snprintf(err, err_size, "%s", why);
        return NULL;
    }
    if (h.rows[kind] < 0)
        return NULL; /* that kind is not packed: read it from its table */
    wl_pack_reader *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    r->kind = kind;
    r->fields = WL_PACK_FIELDS[kind];
    r->untimed = (uint64_t)h.untimed;
    r->max_group = (uint32_t)h.max_group;
    r->rows = h.rows[kind];
    if (read_strings(r, db, (uint32_t)h.strings) ||
        sqlite3_prepare_v2(db,
                           "SELECT n, CASE WHEN length(data) <= " WL_STR(WL_PACK_MAX_BLOCK_BYTES)
                           " THEN data END, seq FROM pack_block WHERE kind = ?1 ORDER BY seq", -1, &r->blocks,
                           NULL) != SQLITE_OK) {
        snprintf(err, err_size, "%s", r->err[0] ? r->err : sqlite3_errmsg(db));
        wl_pack_close(r);
        return NULL;
    }
    sqlite3_bind_int(r->blocks, 1, kind);
    return r;
}

/* The next block into r->block: 1, 0 after the last, -1 on an error. */
static int next_block(wl_pack_reader *r)
{
    int step = sqlite3_step(r->blocks);
    if (step == SQLITE_DONE) {
        if (r->read != r->rows)
            return damaged(r, "fewer rows than its header says");
        return 0;
    }
    if (step != SQLITE_ROW) {
        snprintf(r->err, sizeof r->err, "the export pack cannot be read: %s",
                 sqlite3_errmsg(sqlite3_db_handle(r->blocks)));
        return -1;
    }
    r->seq = sqlite3_column_int64(r->blocks, 2);
    r->at = 0;
    int64_t n = sqlite3_column_int64(r->blocks, 0);
    const void *b = sqlite3_column_blob(r->blocks, 1);
    size_t len = (size_t)sqlite3_column_bytes(r->blocks, 1);
    if (n <= 0 || n > WL_PACK_BLOCK || !b || r->read + n > r->rows)
        return damaged(r, "a block's row count is out of range");
    if (len > r->block_cap) {
        unsigned char *m = realloc(r->block, len);
        if (!m) {
            snprintf(r->err, sizeof r->err, "out of memory");
            return -1;
        }
        r->block = m, r->block_cap = len;
    }
    memcpy(r->block, b, len);
    r->block_len = len;
    r->left = n;
    memset(r->prev, 0, sizeof r->prev);
    return 1;
}

/* One row's fields from *pp into row (the reader's fields, deltas and strings in locals: the row's
 * stores cannot change them); 0 when damaged, *pp where the damage was found. */
static int decode_row(wl_pack_reader *r, const unsigned char **pp, wl_pack_row *restrict row)
{
    const char *f = r->fields;
    int64_t *restrict prev = r->prev;
    char *const *str = r->str;
    const uint32_t *str_len = r->str_len;
    uint32_t nstr = r->nstr, nulls = 0;
    const unsigned char *p = *pp, *end = r->block + r->block_len;
    /* a row takes at most 11 bytes a field: far from the block's end none is checked against it */
    int far = end - p >= 11 * WL_PACK_MAX_FIELDS, ok = 0;
    for (int i = 0; f[i]; i++) {
        char k = f[i];
        uint64_t u = 0;
        if (k == 'n') {
            if (p >= end)
                goto out;
            unsigned char present = *p++;
            if (present > 1)
                goto out;
            if (!present) {
                nulls |= 1u << i;
                row->v[i] = 0;
                continue;
            }
        }
        if (far) {
            const unsigned char *q = varint10(p, &u);
            if (!q)
                goto out;
            p = q;
        } else if (get_varint(&p, end, &u))
            goto out;
        if (k == 't') {
            if (u >= nstr)
                goto out;
            row->text[i] = str[u];
            row->len[i] = str_len[u];
            row->v[i] = (int64_t)u;
            continue;
        }
        int64_t x = (int64_t)((uint64_t)prev[i] + (uint64_t)unzigzag(u));
        prev[i] = x;
        row->v[i] = x;
    }
    ok = 1;
out:
    row->nulls = nulls;
    *pp = p;
    return ok;
}

int wl_pack_next(wl_pack_reader *r, wl_pack_row *row)
{
    if (r->left == 0) {
        if (r->at != r->block_len)
            return damaged(r, "bytes after a block's last row");
        int b = next_block(r);
        if (b <= 0)
            return b;
    }
    const unsigned char *p = r->block + r->at;
    int ok = decode_row(r, &p, row);
    r->at = (size_t)(p - r->block);
    if (!ok)
        return damaged(r, "a row runs past its block or names no string");
    /* the cursors merge by start (ranges and scopes: sorted in runs of equal starts, of at most
     * max_group rows): a pack out of order is damaged */
    int64_t start = r->kind == WL_PACK_KERNEL ? row->v[0] : row->v[2];
    if (r->read && start < r->last_start)
        return damaged(r, "rows out of start order");
    r->group = r->read && start == r->last_start ? r->group + 1 : 1;
    if ((r->kind == WL_PACK_NVTX || r->kind == WL_PACK_SCOPE) && r->group > r->max_group)
        return damaged(r, "more rows of one start than its header says");
    r->last_start = start;
    r->left--;
    r->read++;
    return 1;
}

/* The header's counts into out, the sums 0. */
static int header_counts(sqlite3 *db, wl_pack_sums *out, char *why, size_t why_size)
{
    pack_header h;
    if (read_header(db, &h, why, why_size))
        return -1;
    memset(out, 0, sizeof *out);
    memcpy(out->rows, h.rows, sizeof out->rows);
    out->untimed = (uint64_t)h.untimed;
    return 0;
}

int wl_pack_counts(sqlite3 *db, wl_pack_sums *out, uint64_t *bytes, char *why, size_t why_size)
{
    if (header_counts(db, out, why, why_size))
        return -1;
    *bytes = wl_sql_scalar_u64(db, "SELECT sum(length(data)) FROM pack_block");
    return 0;
}

int wl_pack_digest(sqlite3 *db, wl_pack_sums *out, char *why, size_t why_size)
{
    if (header_counts(db, out, why, why_size)) /* (not the size: a scan of the table the census need not make) */
        return -1;
    for (int kind = WL_PACK_KERNEL; kind < WL_PACK_KINDS; kind++) {
        if (out->rows[kind] < 0)
            continue;
        wl_pack_reader *r = wl_pack_open(db, kind, why, why_size);
        if (!r)
            return -1;
        wl_pack_row row;
        uint64_t sum = 0;
        int got;
        while ((got = wl_pack_next(r, &row)) == 1)
            sum += wl_pack_row_hash(kind, &row);
        if (got < 0)
            snprintf(why, why_size, "%s", wl_pack_error(r));
        wl_pack_close(r);
        if (got < 0)
            return -1;
        out->sum[kind] = sum; /* the reader checked that the rows are as many as the header says */
    }
    return 0;
}
