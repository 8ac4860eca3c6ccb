/* libFuzzer harness for reading sessions: every read verb and exporter of the CLI, run in process
 * on a real session from tests/data damaged by the input, must end with status 0 or 1 (2 only for
 * `kernel NAME|ID` that finds none), and when it fails with one line on stderr saying why: never a
 * crash, a hang (libFuzzer's -timeout), a sanitizer report, a leak or a huge allocation
 * (-malloc_limit_mb).
 *
 * Input: byte 0 picks the session (bits 1..) and its schema (bit 0: as written, or relaxed: no
 * NOT NULL and no column types, so any value of any type fits anywhere, as in a table a user
 * re-created); byte 1 picks the verb; then up to MAX_OPS mutations, each an op byte and its
 * operands. SQL-level ops (applied to an in-memory copy): set one cell, a whole column, or a cell
 * to another cell's value or to itself plus a delta; delete, duplicate or insert rows; drop a
 * table, an index or a view; edit meta. Values: NULL, 0, +-1, extremes of 32 and 64 bits, reals,
 * text and blobs with any bytes. Byte-level ops (applied to the file image after the SQL ops):
 * set or flip a byte, scribble over part of a page, truncate. Built and run by
 * tests/cli/test_fuzz_session.sh; WL_FUZZ_DATA names the folder of sessions (default: the
 * source tree's tests/data); WL_FUZZ_OPS=sql or bytes keeps to one level of mutation (default:
 * both); with WL_FUZZ_KEEP=FILE each run's damaged session is copied to FILE
 * (run the harness on one input to reproduce a finding with the CLI). At exit it prints the runs,
 * the mutations applied and the verbs' exit statuses. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/session.h"
#include "verbs.h"

#ifndef WL_FUZZ_DATA_DIR
#define WL_FUZZ_DATA_DIR "tests/data"
#endif
#define MAX_SESSIONS 32
#define MAX_OPS 8

#define REQUIRE(c, ...)                                                                            \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_session: invariant failed: %s: ", #c);                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

typedef struct image {
    unsigned char *bytes;
    size_t n;
} image;

static image g_base[2][MAX_SESSIONS];
static char g_names[MAX_SESSIONS][64];
static int g_nbase;
static char g_dir[128], g_session[160], g_pftrace[160], g_json[160], g_html[160], g_jfr[160];
static unsigned long long g_runs, g_sql_ops, g_sql_failed, g_byte_ops, g_status[3];
static enum { OPS_BOTH, OPS_SQL, OPS_BYTES } g_ops; /* WL_FUZZ_OPS: sql, bytes or both (default) */

/* ---- the verbs ---------------------------------------------------------------------------- */

typedef struct verb_call {
    int (*fn)(int, char **);
    const char *args[8]; /* "S" stands for the session, "P"/"J"/"R"/"H" for the output files */
    int verdict;         /* status 1 may be the verb's verdict, printed on stdout (problems found) */
} verb_call;

static const verb_call VERBS[] = {
    {cmd_info, {"info", "S"}},
    {cmd_info, {"info", "S", "--check"}, 1},
    {cmd_stats, {"stats", "S"}},
    {cmd_stats, {"stats", "S", "--csv"}},
    {cmd_kernels, {"kernels", "S"}},
    {cmd_kernels, {"kernels", "S", "--json"}},
    {cmd_kernels, {"kernels", "S", "--csv"}},
    {cmd_kernels, {"kernels", "S", "--calls"}},
    {cmd_kernels, {"kernels", "S", "--stalls"}},
    {cmd_kernels, {"kernels", "S", "--calls", "--json"}},
    {cmd_kernels, {"kernels", "S", "--by", "op"}},
    {cmd_kernel, {"kernel", "S", "1"}},
    {cmd_kernel, {"kernel", "S", "2", "--call", "2"}},
    {cmd_kernel, {"kernel", "S", "matmul"}},
    {cmd_kernel, {"kernel", "S", "gemm"}},
    {cmd_ranges, {"ranges", "S"}},
    {cmd_ranges, {"ranges", "S", "--instances", "--json"}},
    {cmd_ranges, {"ranges", "S", "--csv"}},
    {cmd_samples, {"samples", "S"}},
    {cmd_samples, {"samples", "S", "--pm"}},
    {cmd_samples, {"samples", "S", "--pm", "--windows"}},
    {cmd_concurrency, {"concurrency", "S"}},
    {cmd_concurrency, {"concurrency", "S", "--series"}},
    {cmd_throughput, {"throughput", "S"}},
    {cmd_advise, {"advise", "S"}},
    {cmd_advise, {"advise", "S", "--json", "--min-gain", "0"}},
    {cmd_occupancy_check, {"occupancy-check", "S", "--all"}, 1},
    {cmd_export, {"export", "S", "-o", "P"}},
    {cmd_export, {"export", "S", "--format", "json", "-o", "J"}},
    {cmd_export, {"export", "S", "-o", "R"}},
    {cmd_report, {"report", "S", "-o", "H"}},
};
#define NVERBS (sizeof VERBS / sizeof VERBS[0])

/* ---- reading the input -------------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned u8(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static uint64_t un(reader *r, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)u8(r) << (8 * i);
    return v;
}

/* ---- SQL-level mutations ------------------------------------------------------------------ */

/* The name of the k-th (mod count) row of sql's single text column, in name order; 0 if none. */
static int pick_name(sqlite3 *db, const char *sql, unsigned k, char *out, size_t n)
{
    sqlite3_stmt *st;
    int count = 0, found = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    while (sqlite3_step(st) == SQLITE_ROW)
        count++;
    if (count) {
        sqlite3_reset(st);
        for (int i = 0; sqlite3_step(st) == SQLITE_ROW; i++)
            if (i == (int)(k % (unsigned)count)) {
                snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
                found = 1;
                break;
            }
    }
    sqlite3_finalize(st);
    return found;
}

static int pick_table(sqlite3 *db, unsigned k, char *out, size_t n)
{
    return pick_name(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", k, out, n);
}

static int pick_column(sqlite3 *db, const char *table, unsigned k, char *out, size_t n)
{
    char *sql = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q) ORDER BY cid", table);
    int ok = pick_name(db, sql, k, out, n);
    sqlite3_free(sql);
    return ok;
}

/* A WHERE clause choosing rows of table: one row (by position), every k-th row, or all. */
static char *row_filter(sqlite3 *db, const char *table, reader *r)
{
    unsigned sel = (unsigned)un(r, 2);
    char *probe = sqlite3_mprintf("SELECT rowid FROM \"%w\" LIMIT 1", table);
    sqlite3_stmt *st;
    int has_rowid = sqlite3_prepare_v2(db, probe, -1, &st, NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    sqlite3_free(probe);
    if ((sel & 0xc000) == 0xc000)
        return sqlite3_mprintf("1");
    if ((sel & 0xc000) == 0x8000 && has_rowid)
        return sqlite3_mprintf("rowid %% %u = 0", (sel & 0xff) % 7 + 2);
    unsigned k = sel & 0x3fff;
    if (has_rowid)
        return sqlite3_mprintf("rowid = (SELECT rowid FROM \"%w\" LIMIT 1 OFFSET (%u %% max(1, (SELECT count(*) FROM"
                               " \"%w\"))))",
                               table, k, table);
    /* WITHOUT ROWID (pm_sample): its whole key */
    char keys[512] = "";
    char *sql = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q) WHERE pk > 0 ORDER BY pk", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            size_t len = strlen(keys);
            snprintf(keys + len, sizeof keys - len, "%s\"%s\"", len ? "," : "", (const char *)sqlite3_column_text(st, 0));
        }
        sqlite3_finalize(st);
    }
    sqlite3_free(sql);
    if (!keys[0])
        return sqlite3_mprintf("1");
    return sqlite3_mprintf("(%s) = (SELECT %s FROM \"%w\" LIMIT 1 OFFSET (%u %% max(1, (SELECT count(*) FROM \"%w\"))))",
                           keys, keys, table, k, table);
}

/* A value: an SQL expression with at most one parameter, bound by bind_value. */
typedef struct value {
    int kind;
    int64_t i;
    double d;
    unsigned char bytes[64];
    int len;
    char expr[256];
} value;

static void read_value(sqlite3 *db, const char *table, const char *column, reader *r, value *v)
{
    static const int64_t ints[] = {0, 1, -1, INT64_MAX, INT64_MIN, INT32_MAX, (int64_t)INT32_MAX + 1,
                                   UINT32_MAX, (int64_t)UINT32_MAX + 1, (int64_t)1 << 53, INT64_MIN + 1,
                                   INT64_MAX - 1, 1000000000000000000ll, 65535, 65536, 1024, 1025};
    memset(v, 0, sizeof *v);
    unsigned k = u8(r) % 26;
    snprintf(v->expr, sizeof v->expr, "?1");
    if (k == 0) {
        v->kind = SQLITE_NULL;
    } else if (k <= 17) {
        v->kind = SQLITE_INTEGER;
        v->i = ints[k - 1];
    } else if (k == 18) {
        v->kind = SQLITE_INTEGER;
        v->i = (int64_t)un(r, 8);
    } else if (k == 19) {
        v->kind = SQLITE_INTEGER;
        v->i = (int8_t)u8(r);
    } else if (k == 20) {
        static const double reals[] = {1.5, -0.5, 1e300, -1e300, 9.3e18, 0.0, 4294967296.5, 1e-300};
        v->kind = SQLITE_FLOAT;
        v->d = reals[u8(r) % 8];
    } else if (k == 21 || k == 22) {
        v->kind = k == 21 ? SQLITE_TEXT : SQLITE_BLOB;
        v->len = (int)(u8(r) % (sizeof v->bytes + 1));
        for (int i = 0; i < v->len; i++)
            v->bytes[i] = (unsigned char)u8(r);
    } else if (k == 23) {
        char other[128];
        if (pick_column(db, table, u8(r), other, sizeof other))
            snprintf(v->expr, sizeof v->expr, "\"%.100s\"", other);
        else
            snprintf(v->expr, sizeof v->expr, "NULL");
    } else if (k == 24) {
        snprintf(v->expr, sizeof v->expr, "\"%.100s\" + %d", column, (int16_t)un(r, 2));
    } else {
        /* another row's value of this column */
        snprintf(v->expr, sizeof v->expr, "(SELECT \"%.60s\" FROM \"%.60s\" LIMIT 1 OFFSET %u)", column, table,
                 u8(r));
    }
}

static void bind_value(sqlite3_stmt *st, const value *v)
{
    if (sqlite3_bind_parameter_count(st) < 1)
        return;
    switch (v->kind) {
    case SQLITE_INTEGER: sqlite3_bind_int64(st, 1, v->i); break;
    case SQLITE_FLOAT: sqlite3_bind_double(st, 1, v->d); break;
    case SQLITE_TEXT: sqlite3_bind_text(st, 1, (const char *)v->bytes, v->len, SQLITE_TRANSIENT); break;
    case SQLITE_BLOB: sqlite3_bind_blob(st, 1, v->bytes, v->len, SQLITE_TRANSIENT); break;
    default: sqlite3_bind_null(st, 1); break;
    }
}

static void exec(sqlite3 *db, char *sql, const value *v)
{
    sqlite3_stmt *st;
    int ok = 0;
    if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (v)
            bind_value(st, v);
        ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_finalize(st);
    }
    sqlite3_free(sql);
    if (ok)
        g_sql_ops++;
    else
        g_sql_failed++;
}

/* A new row for table: every column a value from the input (rowid tables get a fresh rowid). */
static void insert_row(sqlite3 *db, const char *table, reader *r)
{
    char *sql = sqlite3_mprintf("SELECT count(*) FROM pragma_table_info(%Q)", table);
    sqlite3_stmt *st;
    int ncol = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            ncol = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_free(sql);
    if (ncol <= 0 || ncol > 64)
        return;
    /* a copy of an existing row with one column changed keeps the row plausible */
    char col[128];
    value v;
    if (!pick_column(db, table, u8(r), col, sizeof col))
        return;
    read_value(db, table, col, r, &v);
    char *tmp = sqlite3_mprintf("CREATE TEMP TABLE fz AS SELECT * FROM \"%w\" LIMIT 1 OFFSET %u", table, u8(r));
    exec(db, tmp, NULL);
    exec(db, sqlite3_mprintf("UPDATE temp.fz SET \"%w\" = %s", col, v.expr), &v);
    exec(db, sqlite3_mprintf("INSERT OR IGNORE INTO main.\"%w\" SELECT * FROM temp.fz", table), NULL);
    exec(db, sqlite3_mprintf("DROP TABLE IF EXISTS temp.fz"), NULL);
}

static void sql_op(sqlite3 *db, unsigned op, reader *r)
{
    char table[128], column[128];
    if (!pick_table(db, u8(r), table, sizeof table))
        return;
    switch (op) {
    case 0: case 1: case 2: case 3: { /* one cell, some rows or a whole column */
        if (!pick_column(db, table, u8(r), column, sizeof column))
            return;
        char *where = row_filter(db, table, r);
        value v;
        read_value(db, table, column, r, &v);
        exec(db, sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = %s WHERE %s", table, column, v.expr, where), &v);
        sqlite3_free(where);
        break;
    }
    case 4: {
        char *where = row_filter(db, table, r);
        exec(db, sqlite3_mprintf("DELETE FROM \"%w\" WHERE %s", table, where), NULL);
        sqlite3_free(where);
        break;
    }
    case 5: { /* duplicate rows: same values, a new rowid where the table has one */
        char *where = row_filter(db, table, r);
        exec(db, sqlite3_mprintf("CREATE TEMP TABLE fz AS SELECT * FROM \"%w\" WHERE %s", table, where), NULL);
        char pk[128];
        char *q = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q) WHERE pk = 1 AND type = 'INTEGER'"
                                  " AND (SELECT count(*) FROM pragma_table_info(%Q) WHERE pk > 0) = 1", table, table);
        if (pick_name(db, q, 0, pk, sizeof pk))
            exec(db, sqlite3_mprintf("UPDATE temp.fz SET \"%w\" = NULL", pk), NULL);
        sqlite3_free(q);
        exec(db, sqlite3_mprintf("INSERT OR IGNORE INTO main.\"%w\" SELECT * FROM temp.fz", table), NULL);
        exec(db, sqlite3_mprintf("DROP TABLE IF EXISTS temp.fz"), NULL);
        sqlite3_free(where);
        break;
    }
    case 6:
        insert_row(db, table, r);
        break;
    case 7: /* drop a table, an index or the view */
        if (u8(r) & 1) {
            exec(db, sqlite3_mprintf("DROP TABLE \"%w\"", table), NULL);
        } else {
            char idx[128];
            if (pick_name(db, "SELECT name FROM sqlite_master WHERE type IN ('index', 'view') AND sql IS NOT NULL"
                              " ORDER BY name", u8(r), idx, sizeof idx))
                exec(db, sqlite3_mprintf("DROP %s \"%w\"", strncmp(idx, "kernels", 8) ? "INDEX" : "VIEW", idx), NULL);
        }
        break;
    default: { /* meta */
        static const char *const keys[] = {"format", "schema_version", "complete", "clock", "metrics", "stalls"};
        value v;
        read_value(db, "meta", "value", r, &v);
        exec(db, sqlite3_mprintf("UPDATE meta SET value = %s WHERE key = '%s'", v.expr, keys[u8(r) % 6]), &v);
        break;
    }
    }
}

/* ---- byte-level mutations ----------------------------------------------------------------- */

static void byte_op(image *im, unsigned op, reader *r)
{
    if (!im->n)
        return;
    g_byte_ops++;
    if (op == 0) { /* one byte set or flipped */
        size_t at = (size_t)(un(r, 3) * im->n >> 24);
        unsigned v = u8(r);
        im->bytes[at] = (v & 1) ? (unsigned char)(im->bytes[at] ^ (1u << (v >> 5))) : (unsigned char)v;
    } else if (op == 1) { /* part of one page scribbled over (cell pointers, headers, payloads) */
        size_t page = 4096, npages = (im->n + page - 1) / page;
        size_t at = (size_t)un(r, 2) % npages * page + u8(r) * 16;
        size_t len = u8(r) + 1;
        unsigned char fill = (unsigned char)u8(r);
        for (size_t i = at; i < at + len && i < im->n; i++)
            im->bytes[i] = fill;
    } else { /* truncated */
        im->n = (size_t)(un(r, 2) * im->n >> 16);
    }
}

/* ---- sessions ----------------------------------------------------------------------------- */

static int load(const char *path, image *im)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    im->bytes = malloc(n > 0 ? (size_t)n : 1);
    im->n = im->bytes && n > 0 && fread(im->bytes, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return im->n ? 0 : -1;
}

static sqlite3 *open_image(const image *im)
{
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        return NULL;
    unsigned char *copy = sqlite3_malloc64(im->n);
    if (!copy) {
        sqlite3_close(db);
        return NULL;
    }
    memcpy(copy, im->bytes, im->n);
    if (sqlite3_deserialize(db, "main", copy, (sqlite3_int64)im->n, (sqlite3_int64)im->n,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static int save_image(sqlite3 *db, image *out)
{
    sqlite3_int64 n = 0;
    unsigned char *b = sqlite3_serialize(db, "main", &n, 0);
    if (!b)
        return -1;
    out->bytes = malloc((size_t)n);
    if (out->bytes)
        memcpy(out->bytes, b, (size_t)n);
    out->n = out->bytes ? (size_t)n : 0;
    sqlite3_free(b);
    return out->bytes ? 0 : -1;
}

/* The relaxed schema: NOT NULL and declared column types removed (INTEGER PRIMARY KEY kept: it
 * is the rowid). The records are unchanged, so the file stays consistent. */
static void relax_sql(const char *in, char *out, size_t n)
{
    size_t o = 0;
    while (*in && o + 1 < n) {
        static const char *const drop[] = {" NOT NULL", " INTEGER", " TEXT", " REAL"};
        int skipped = 0;
        for (int i = 0; i < 4 && !skipped; i++) {
            size_t len = strlen(drop[i]);
            if (!strncmp(in, drop[i], len) && strncmp(in + len, " PRIMARY KEY", 12) &&
                (in[len] == ',' || in[len] == ' ' || in[len] == ')' || in[len] == '\n')) {
                in += len;
                skipped = 1;
            }
        }
        if (!skipped)
            out[o++] = *in++;
    }
    out[o] = 0;
}

static int relax(const image *in, image *out)
{
    sqlite3 *db = open_image(in);
    if (!db)
        return -1;
    sqlite3_stmt *st;
    int rc = sqlite3_exec(db, "PRAGMA writable_schema = ON", NULL, NULL, NULL);
    if (rc == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL", -1, &st,
                           NULL) == SQLITE_OK) {
        char names[64][64], sqls[64][2048];
        int n = 0;
        while (n < 64 && sqlite3_step(st) == SQLITE_ROW) {
            snprintf(names[n], sizeof names[n], "%s", (const char *)sqlite3_column_text(st, 0));
            relax_sql((const char *)sqlite3_column_text(st, 1), sqls[n], sizeof sqls[n]);
            n++;
        }
        sqlite3_finalize(st);
        for (int i = 0; i < n && rc == SQLITE_OK; i++) {
            char *u = sqlite3_mprintf("UPDATE sqlite_master SET sql = %Q WHERE type = 'table' AND name = %Q", sqls[i],
                                      names[i]);
            rc = sqlite3_exec(db, u, NULL, NULL, NULL);
            sqlite3_free(u);
        }
    }
    rc = rc == SQLITE_OK ? sqlite3_exec(db, "PRAGMA writable_schema = OFF", NULL, NULL, NULL) : rc;
    image tmp = {0, 0};
    if (rc == SQLITE_OK)
        rc = save_image(db, &tmp) ? SQLITE_ERROR : SQLITE_OK;
    sqlite3_close(db);
    if (rc != SQLITE_OK)
        return -1;
    /* reopened, the edited schema must parse and the file check clean */
    sqlite3 *chk = open_image(&tmp);
    char verdict[16] = "";
    if (chk && sqlite3_prepare_v2(chk, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            snprintf(verdict, sizeof verdict, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_close(chk);
    if (strcmp(verdict, "ok")) {
        free(tmp.bytes);
        return -1;
    }
    *out = tmp;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static void report(void)
{
    fprintf(stderr,
            "fuzz_session: %llu runs, %llu mutations applied (%llu SQL statements, %llu byte-level; %llu SQL statements"
            " refused), verbs ended with status 0: %llu, 1: %llu, 2: %llu\n",
            g_runs, g_sql_ops + g_byte_ops, g_sql_ops, g_byte_ops, g_sql_failed, g_status[0], g_status[1], g_status[2]);
    if (g_dir[0]) {
        unlink(g_session);
        unlink(g_pftrace);
        unlink(g_json);
        unlink(g_html);
        unlink(g_jfr);
        rmdir(g_dir);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    wl_store_init(); /* before the harness's own SQLite use: failures met mid-read are then reported */
    const char *ops = getenv("WL_FUZZ_OPS");
    g_ops = ops && !strcmp(ops, "sql") ? OPS_SQL : ops && !strcmp(ops, "bytes") ? OPS_BYTES : OPS_BOTH;
    const char *data = getenv("WL_FUZZ_DATA") ? getenv("WL_FUZZ_DATA") : WL_FUZZ_DATA_DIR;
    DIR *d = opendir(data);
    if (!d) {
        fprintf(stderr, "fuzz_session: cannot open %s (set WL_FUZZ_DATA)\n", data);
        exit(1);
    }
    struct dirent *e;
    while ((e = readdir(d)) && g_nbase < MAX_SESSIONS) {
        size_t len = strlen(e->d_name);
        if (len > 10 && len < sizeof g_names[0] && !strcmp(e->d_name + len - 10, ".wlsession"))
            snprintf(g_names[g_nbase++], sizeof g_names[0], "%s", e->d_name);
    }
    closedir(d);
    qsort(g_names, (size_t)g_nbase, sizeof g_names[0], by_name);
    for (int i = 0; i < g_nbase; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", data, g_names[i]);
        if (load(path, &g_base[0][i]) || relax(&g_base[0][i], &g_base[1][i])) {
            fprintf(stderr, "fuzz_session: cannot read or relax %s\n", path);
            exit(1);
        }
    }
    if (!g_nbase) {
        fprintf(stderr, "fuzz_session: no sessions in %s\n", data);
        exit(1);
    }
    snprintf(g_dir, sizeof g_dir, "%s/wlfuzz.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("fuzz_session: mkdtemp");
        exit(1);
    }
    snprintf(g_session, sizeof g_session, "%s/s.wlsession", g_dir);
    snprintf(g_pftrace, sizeof g_pftrace, "%s/t.pftrace", g_dir);
    snprintf(g_json, sizeof g_json, "%s/t.json", g_dir);
    snprintf(g_html, sizeof g_html, "%s/t.html", g_dir);
    snprintf(g_jfr, sizeof g_jfr, "%s/t.jfr", g_dir);
    /* the verbs' tables go nowhere (their stderr is captured per run) */
    int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, STDOUT_FILENO) < 0) {
        perror("fuzz_session: /dev/null");
        exit(1);
    }
    close(null);
    fprintf(stderr, "fuzz_session: %d sessions from %s, %zu verbs, %s mutations\n", g_nbase, data, NVERBS,
            g_ops == OPS_SQL ? "SQL-level" : g_ops == OPS_BYTES ? "byte-level" : "SQL- and byte-level");
    atexit(report);
    return 0;
}

static int write_file(const char *path, const image *im)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = im->n ? fwrite(im->bytes, 1, im->n, f) : 0;
    return fclose(f) == 0 && w == im->n ? 0 : -1;
}

/* Runs one verb with its stderr captured; returns its status, the captured text in err. The verbs
 * write through the stderr FILE, which points at a memory stream meanwhile; the sanitizers and
 * libFuzzer write to file descriptor 2, which stays the terminal, so a finding is never lost. */
static int run_verb(const verb_call *v, char *err, size_t err_size)
{
    char *argv[9];
    int argc = 0;
    for (; argc < 8 && v->args[argc]; argc++) {
        const char *a = v->args[argc];
        argv[argc] = (char *)(!strcmp(a, "S")   ? g_session
                              : !strcmp(a, "P") ? g_pftrace
                              : !strcmp(a, "J") ? g_json
                              : !strcmp(a, "H") ? g_html
                              : !strcmp(a, "R") ? g_jfr
                                                : a);
    }
    argv[argc] = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *real = stderr, *cap = open_memstream(&text, &len);
    if (!cap)
        abort();
    stderr = cap;
    int rc = v->fn(argc, argv);
    fflush(stdout);
    stderr = real;
    fclose(cap);
    snprintf(err, err_size, "%s", text ? text : "");
    free(text);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    reader r = {data + 2, size - 2};
    const image *base = &g_base[data[0] & 1][(data[0] >> 1) % g_nbase];
    const verb_call *verb = &VERBS[data[1] % NVERBS];
    sqlite3 *db = open_image(base);
    if (!db)
        return 0;
    /* byte ops are kept for after the SQL ones, which need a readable database */
    unsigned byte_ops[MAX_OPS];
    reader byte_args[MAX_OPS];
    int nbyte = 0;
    for (int i = 0; i < MAX_OPS && r.n; i++) {
        unsigned op = u8(&r) % 12;
        if (g_ops == OPS_SQL)
            op %= 9;
        else if (g_ops == OPS_BYTES)
            op = 9 + op % 3;
        if (op >= 9) {
            byte_ops[nbyte] = op - 9;
            byte_args[nbyte++] = r;
            un(&r, 5); /* the longest byte op's operands */
        } else {
            sql_op(db, op, &r);
        }
    }
    image im = {0, 0};
    int saved = save_image(db, &im);
    sqlite3_close(db);
    if (saved)
        return 0;
    for (int i = 0; i < nbyte; i++)
        byte_op(&im, byte_ops[i], &byte_args[i]);
    if (write_file(g_session, &im)) {
        free(im.bytes);
        return 0;
    }
    free(im.bytes);
    const char *keep = getenv("WL_FUZZ_KEEP"); /* reproducing a finding: the damaged session and the verb */
    if (keep) {
        char cmd[PATH_MAX * 2 + 16];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", g_session, keep);
        if (system(cmd) == 0) {
            fprintf(stderr, "fuzz_session: damaged session in %s; verb:", keep);
            for (int i = 0; i < 8 && verb->args[i]; i++)
                fprintf(stderr, " %s", verb->args[i]);
            fprintf(stderr, "\n");
        }
    }
    char err[4096];
    int rc = run_verb(verb, err, sizeof err);
    g_runs++;
    /* 2: `kernel NAME` finds no such kernel (or several) in the damaged session */
    REQUIRE(rc == 0 || rc == 1 || (rc == 2 && verb->fn == cmd_kernel), "warplens %s exited %d: %s", verb->args[0],
            rc, err);
    g_status[rc]++;
    REQUIRE(rc == 0 || err[0] || verb->verdict, "warplens %s failed without saying why", verb->args[0]);
    /* one line says why (`kernel NAME` lists the names a partial name matches) */
    int lines = 0;
    for (const char *c = err; *c; c++)
        lines += *c == '\n';
    REQUIRE(rc == 0 || !err[0] || lines == 1 || verb->fn == cmd_kernel, "warplens %s failed with %d lines: %s",
            verb->args[0], lines, err);
    return 0;
}
