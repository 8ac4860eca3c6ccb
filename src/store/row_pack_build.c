/* Writing the export pack (see row_pack.h): the kernels through the start index, the API calls in
 * the host cursor's order, each row's values read by the cursors' own column lists, coded into
 * blocks, and the strings they name. Memory: one block and the strings (bounded by the limits in
 * row_pack.h; API calls whose names would pass them stay unpacked). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fnv.h"
#include "common/grow.h"
#include "store/row_pack.h"
#include "store/row_pack_internal.h"
#include "store/session_cursors_internal.h"
#include "store/sql_util.h"

#define DICT_SLOTS (2 * WL_PACK_MAX_STRINGS) /* open addressing, at most half full */
#define STRING_BLOCK (64u << 10)

typedef struct builder {
    sqlite3 *db;
    sqlite3_stmt *ins;
    /* the strings: bytes in order, and a table of (hash, index + 1) to find one again */
    char *mem;
    size_t used, cap;
    uint32_t *off, *len, nstr;
    uint64_t *slot_hash;
    uint32_t *slot;
    /* the block being coded */
    unsigned char *buf;
    size_t n, buf_cap;
    int kind, rows;
    int64_t seq;
    int64_t prev[WL_PACK_MAX_FIELDS];
    char *err;
    size_t err_size;
} builder;

static int sql_fail(builder *b, const char *what)
{
    snprintf(b->err, b->err_size, "export pack: %s: %s", what, sqlite3_errmsg(b->db));
    return -1;
}

static int oom(builder *b)
{
    snprintf(b->err, b->err_size, "export pack: out of memory");
    return -1;
}

/* The home slot of a string whose hash is h. */
static size_t home(uint64_t h) { return (size_t)(h ^ h >> 32) & (DICT_SLOTS - 1); }

/* The index of string s (len bytes), added when new: 0, 1 when the limits are reached, -1 out of memory. */
static int intern(builder *b, const char *s, uint32_t len, uint32_t *out)
{
    uint64_t h = wl_fnv1a(WL_FNV_OFFSET, s, len);
    size_t i = home(h);
    for (; b->slot[i]; i = (i + 1) & (DICT_SLOTS - 1)) {
        uint32_t k = b->slot[i] - 1;
        if (b->slot_hash[i] == h && b->len[k] == len && (!len || !memcmp(b->mem + b->off[k], s, len))) {
            *out = k;
            return 0;
        }
    }
    /* a string fits one strings block (a reader refuses larger blocks) */
    if (b->nstr == WL_PACK_MAX_STRINGS || b->used + len > WL_PACK_MAX_STRING_BYTES || len > STRING_BLOCK - 10)
        return 1;
    if (wl_reserve((void **)&b->mem, &b->cap, b->used + len, 65536))
        return -1;
    if (len)
        memcpy(b->mem + b->used, s, len);
    b->off[b->nstr] = (uint32_t)b->used;
    b->len[b->nstr] = len;
    b->used += len;
    b->slot_hash[i] = h;
    b->slot[i] = b->nstr + 1;
    *out = b->nstr++;
    return 0;
}

/* Forgets the strings from index keep on (an unpacked kind's). */
static void forget_strings(builder *b, uint32_t keep)
{
    /* open addressing without tombstones: the table is built again from the kept strings */
    b->nstr = keep;
    b->used = keep ? b->off[keep - 1] + b->len[keep - 1] : 0;
    memset(b->slot, 0, DICT_SLOTS * sizeof *b->slot);
    for (uint32_t k = 0; k < keep; k++) {
        uint64_t h = wl_fnv1a(WL_FNV_OFFSET, b->mem + b->off[k], b->len[k]);
        size_t i = home(h);
        while (b->slot[i])
            i = (i + 1) & (DICT_SLOTS - 1);
        b->slot_hash[i] = h;
        b->slot[i] = k + 1;
    }
}

static int reserve(builder *b, size_t more) { return wl_reserve((void **)&b->buf, &b->buf_cap, b->n + more, 65536); }

static void put_varint(builder *b, uint64_t v)
{
    while (v >= 0x80) {
        b->buf[b->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b->buf[b->n++] = (unsigned char)v;
}

static int insert(builder *b, int kind, int64_t seq, int64_t n, const void *data, size_t len)
{
    sqlite3_bind_int(b->ins, 1, kind);
    sqlite3_bind_int64(b->ins, 2, seq);
    sqlite3_bind_int64(b->ins, 3, n);
    sqlite3_bind_blob64(b->ins, 4, data, len, SQLITE_STATIC);
    int rc = sqlite3_step(b->ins) == SQLITE_DONE ? 0 : sql_fail(b, "writing a block");
    sqlite3_reset(b->ins);
    return rc;
}

/* A new block: no rows, and its first row's changes coded from 0. */
static void start_block(builder *b)
{
    b->n = 0, b->rows = 0;
    memset(b->prev, 0, sizeof b->prev);
}

static int flush(builder *b)
{
    if (!b->rows)
        return 0;
    int rc = insert(b, b->kind, b->seq++, b->rows, b->buf, b->n);
    start_block(b);
    return rc;
}

/* The ready row of st (the kind's columns in order) into the block: 0, 1 past the string
 * limits, -1 on an error. */
static int add_row(builder *b, sqlite3_stmt *st)
{
    const char *f = WL_PACK_FIELDS[b->kind];
    if (reserve(b, 11 * WL_PACK_MAX_FIELDS))
        return oom(b);
    for (int i = 0; f[i]; i++) {
        if (f[i] == 't') {
            const unsigned char *t = sqlite3_column_text(st, i);
            uint32_t idx, len = t ? (uint32_t)sqlite3_column_bytes(st, i) : 0;
            int r = intern(b, t ? (const char *)t : "", len, &idx);
            if (r)
                return r < 0 ? oom(b) : 1;
            put_varint(b, idx);
            continue;
        }
        if (f[i] == 'n') {
            int null = sqlite3_column_type(st, i) == SQLITE_NULL;
            b->buf[b->n++] = !null;
            if (null)
                continue;
        }
        int64_t v = sqlite3_column_int64(st, i);
        put_varint(b, wl_pack_zigzag((int64_t)((uint64_t)v - (uint64_t)b->prev[i])));
        b->prev[i] = v;
    }
    return ++b->rows == WL_PACK_BLOCK ? flush(b) : 0;
}

/* ---- the kinds ----------------------------------------------------------------------------- */

/* The rows of sql (kind's columns, in pack order) into kind's blocks: 0, 1 past the limits (the
 * strings, or a run of more than WL_PACK_MAX_GROUP equal starts in column start_col >= 0, whose
 * largest run goes to *group), -1 on an error. */
static int pack_rows(builder *b, int kind, const char *sql, int start_col, int64_t *packed, int64_t *group)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(b->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sql_fail(b, WL_PACK_TABLE[kind]);
    b->kind = kind, b->seq = 0;
    int rc = 0, step;
    int64_t last = 0, run = 0;
    *packed = 0;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (start_col >= 0) {
            int64_t start = sqlite3_column_int64(st, start_col);
            run = *packed && start == last ? run + 1 : 1;
            last = start;
            if (run > WL_PACK_MAX_GROUP) {
                rc = 1;
                break;
            }
            *group = run > *group ? run : *group;
        }
        if ((rc = add_row(b, st)) == 0)
            ++*packed;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = sql_fail(b, WL_PACK_TABLE[kind]);
    sqlite3_finalize(st);
    return rc ? rc : flush(b);
}

/* The host cursor's order between two threads' ready rows (keys: pid, tid, start, end): start, the
 * longer first, pid, tid (thread order; session_cursors_host.c's host_less for API calls of two
 * threads). */
static int api_less(const wl_cur_source *s, int a, int b)
{
    const int64_t *x = s[a].key, *y = s[b].key;
    if (x[2] != y[2])
        return x[2] < y[2];
    if (x[3] != y[3])
        return x[3] > y[3];
    if (x[0] != y[0])
        return x[0] < y[0];
    if (x[1] != y[1])
        return x[1] < y[1];
    return a < b;
}

static void api_sift(const wl_cur_source *s, int *heap, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && api_less(s, heap[l], heap[m]))
            m = l;
        if (r < n && api_less(s, heap[r], heap[m]))
            m = r;
        if (m == i)
            return;
        int t = heap[i];
        heap[i] = heap[m], heap[m] = t;
        i = m;
    }
}

/* The API calls as the host cursor merges them by start: one statement per thread and a heap, or
 * past WL_CUR_MAX_THREAD_SOURCES threads one statement sorting them all. 0 packed, 1 left
 * unpacked (string limits, threads not in index order), -1 on an error. */
static int pack_api(builder *b, int64_t *packed)
{
    sqlite3_stmt *threads;
    if (sqlite3_prepare_v2(b->db, WL_CUR_THREADS_SQL, -1, &threads, NULL) != SQLITE_OK)
        return sql_fail(b, "threads");
    int64_t (*thread)[2] = malloc((WL_CUR_MAX_THREAD_SOURCES + 1) * sizeof *thread);
    int nthreads = 0, started = 0, r = 0;
    for (int64_t pid = 0, tid = 0; thread && nthreads <= WL_CUR_MAX_THREAD_SOURCES;) {
        if ((r = wl_cur_next_api_thread(threads, &started, &pid, &tid)) != 1)
            break;
        thread[nthreads][0] = pid, thread[nthreads++][1] = tid;
    }
    sqlite3_finalize(threads);
    if (!thread)
        return oom(b);
    if (r < 0) {
        free(thread);
        return sqlite3_errcode(b->db) == SQLITE_OK ? 1 : sql_fail(b, "threads");
    }
    int all = nthreads > WL_CUR_MAX_THREAD_SOURCES, nsrc = all ? 1 : nthreads, rc = 0, nheap = 0;
    wl_cur_source *src = calloc((size_t)(nsrc ? nsrc : 1), sizeof *src);
    int *heap = malloc((size_t)(nsrc ? nsrc : 1) * sizeof *heap);
    if (!src || !heap)
        rc = oom(b);
    for (int i = 0; rc == 0 && i < nsrc; i++) {
        if (sqlite3_prepare_v2(b->db, all ? WL_CUR_API_ALL_SQL WL_CUR_BY_START : WL_CUR_API_THREAD_SQL, -1,
                               &src[i].st, NULL) != SQLITE_OK) {
            rc = sql_fail(b, "API calls");
            break;
        }
        if (!all) {
            sqlite3_bind_int64(src[i].st, 1, thread[i][0]);
            sqlite3_bind_int64(src[i].st, 2, thread[i][1]);
        }
        src[i].nkeys = 4;
        int s = wl_cur_peek(&src[i]);
        if (s < 0)
            rc = sql_fail(b, "API calls");
        else if (s)
            heap[nheap++] = i;
    }
    for (int i = nheap / 2 - 1; rc == 0 && i >= 0; i--)
        api_sift(src, heap, nheap, i);
    b->kind = WL_PACK_API, b->seq = 0;
    *packed = 0;
    while (rc == 0 && nheap) {
        wl_cur_source *s = &src[heap[0]];
        if ((rc = add_row(b, s->st)) != 0)
            break;
        ++*packed;
        s->state = 0;
        int more = wl_cur_peek(s);
        if (more < 0) {
            rc = sql_fail(b, "API calls");
            break;
        }
        if (!more)
            heap[0] = heap[--nheap];
        api_sift(src, heap, nheap, 0);
    }
    for (int i = 0; src && i < nsrc; i++)
        sqlite3_finalize(src[i].st);
    free(src);
    free(heap);
    free(thread);
    return rc ? rc : flush(b);
}

/* The strings in blocks of about STRING_BLOCK bytes. */
static int write_strings(builder *b)
{
    int64_t seq = 0;
    b->n = 0;
    uint32_t first = 0;
    for (uint32_t k = 0; k <= b->nstr; k++) {
        if (k == b->nstr || (b->n && b->n + b->len[k] + 10 > STRING_BLOCK)) {
            if (b->n && insert(b, WL_PACK_STRINGS, seq++, k - first, b->buf, b->n))
                return -1;
            b->n = 0, first = k;
        }
        if (k == b->nstr)
            break;
        if (reserve(b, (size_t)b->len[k] + 10))
            return oom(b);
        put_varint(b, b->len[k]);
        if (b->len[k])
            memcpy(b->buf + b->n, b->mem + b->off[k], b->len[k]);
        b->n += b->len[k];
    }
    return 0;
}

static int write_header(builder *b, const int64_t *rows, int64_t untimed, int64_t group)
{
    int64_t h[8] = {WL_PACK_VERSION, rows[WL_PACK_KERNEL], untimed, rows[WL_PACK_API], rows[WL_PACK_NVTX],
                    rows[WL_PACK_SCOPE], b->nstr, group};
    b->n = 0;
    if (reserve(b, 96))
        return oom(b);
    for (int i = 0; i < 8; i++)
        put_varint(b, wl_pack_zigzag(h[i]));
    return insert(b, WL_PACK_META, 0, 1, b->buf, b->n);
}

/* An optional kind: packed (0), or left unpacked past the limits, its blocks and strings gone
 * (0 with *rows -1); -1 on an error. */
static int pack_optional(builder *b, int kind, int64_t *rows, int64_t *group)
{
    uint32_t keep = b->nstr;
    int64_t before = *group;
    int r;
    if (kind == WL_PACK_API)
        r = pack_api(b, &rows[kind]);
    else if (kind == WL_PACK_NVTX)
        r = pack_rows(b, kind, wl_pack_nvtx_sql(), 2, &rows[kind], group);
    else
        r = pack_rows(b, kind, wl_pack_scope_sql(wl_sql_has_column(b->db, "scope", "app_thread_id")), 2, &rows[kind],
                      group);
    if (r != 1)
        return r;
    rows[kind] = -1;
    *group = before;
    start_block(b); /* the block begun is dropped, and the changes it coded from */
    forget_strings(b, keep);
    char q[64];
    snprintf(q, sizeof q, "DELETE FROM pack_block WHERE kind = %d", kind);
    return sqlite3_exec(b->db, q, NULL, NULL, NULL) == SQLITE_OK ? 0 : sql_fail(b, WL_PACK_TABLE[kind]);
}

int wl_pack_build(sqlite3 *db, char *err, size_t err_size)
{
    builder b = {.db = db, .err = err, .err_size = err_size};
    if (sqlite3_exec(db, "DROP TABLE IF EXISTS pack_block", NULL, NULL, NULL) != SQLITE_OK)
        return sql_fail(&b, "dropping the old one");
    /* the columns the cursors' fast statements read: sessions older than them read their rows */
    if (!wl_cur_has_ident(db) || !wl_sql_has_column(db, "kernel", "tier"))
        return 0;
    if (sqlite3_exec(db, "CREATE TABLE pack_block (kind INTEGER NOT NULL, seq INTEGER NOT NULL, n INTEGER NOT NULL,"
                         " data BLOB NOT NULL, PRIMARY KEY (kind, seq))", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO pack_block (kind, seq, n, data) VALUES (?1, ?2, ?3, ?4)", -1, &b.ins,
                           NULL) != SQLITE_OK)
        return sql_fail(&b, "creating its table");
    int rc = 0;
    b.off = malloc(WL_PACK_MAX_STRINGS * sizeof *b.off);
    b.len = malloc(WL_PACK_MAX_STRINGS * sizeof *b.len);
    b.slot = calloc(DICT_SLOTS, sizeof *b.slot);
    b.slot_hash = malloc(DICT_SLOTS * sizeof *b.slot_hash);
    if (!b.off || !b.len || !b.slot || !b.slot_hash)
        rc = oom(&b);
    int64_t rows[WL_PACK_KINDS] = {0, 0, 0, -1, -1, -1}, all = 0, group = 0;
    if (rc == 0)
        rc = pack_rows(&b, WL_PACK_KERNEL, wl_pack_kernel_sql(), -1, &rows[WL_PACK_KERNEL], &group);
    if (rc == 0) {
        all = (int64_t)wl_sql_scalar_u64(db, "SELECT count(*) FROM kernel");
        /* the host cursor's API statements read api_call.flow_id (older sessions: a join instead) */
        if (wl_sql_has_column(db, "api_call", "flow_id"))
            rc = pack_optional(&b, WL_PACK_API, rows, &group);
    }
    for (int kind = WL_PACK_NVTX; rc == 0 && kind <= WL_PACK_SCOPE; kind++)
        if (wl_sql_has_table(db, WL_PACK_TABLE[kind]))
            rc = pack_optional(&b, kind, rows, &group);
    if (rc == 0)
        rc = write_strings(&b) || write_header(&b, rows, all - rows[WL_PACK_KERNEL], group) ? -1 : 0;
    sqlite3_finalize(b.ins);
    if (rc == 1) /* kernel tiers past the string limits: no pack */
        rc = sqlite3_exec(db, "DROP TABLE pack_block", NULL, NULL, NULL) == SQLITE_OK ? 0 : sql_fail(&b, "dropping");
    free(b.mem);
    free(b.off);
    free(b.len);
    free(b.slot);
    free(b.slot_hash);
    free(b.buf);
    return rc;
}
