/* `warplens kernels <session>`: one row per kernel name (GPU time with percentiles, launch
 * configuration, resources, theoretical occupancy and limiter, waves, queue and launch cost, the
 * library it comes from), sortable by any column; `--calls` gives one row per launch with its
 * occupancy instead, `--stalls` the names' warp stall reasons and `--by op` one row per framework
 * operation and input shapes (cmd_kernels_ops.c). The table fits 100 columns; --csv and --json carry
 * every column and full names (JSON with the metrics and stall reasons the session has). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_backend.h"
#include "analysis/kernel_table.h"
#include "format.h"
#include "kernel_format.h"
#include "metrics_print.h"
#include "stalls_print.h"
#include "cli_session.h"
#include "verbs.h"

#define WIDTH 100
#define MIN_NAME 16

enum col_id {
    C_TIME_PCT, C_TOTAL, C_CALLS, C_MEAN, C_MIN, C_P50, C_P99, C_MAX, C_GRID, C_BLOCK, C_CONFIGS,
    C_REGS, C_STATIC_SMEM, C_DYN_SMEM, C_OCC, C_LIMITER, C_ACTIVE_BLOCKS, C_WAVES, C_QUEUE, C_LAUNCH,
    C_BACKEND, C_NAME, N_COLS
};

typedef enum { F_PCT, F_NS, F_INT, F_BYTES, F_FLOAT, F_STR } col_format;

typedef struct column {
    const char *id, *header;
    int width;
    col_format format;
    const char *help;
} column;

static const column COLS[N_COLS] = {
    {"time_pct", "Time%", 5, F_PCT, "share of all kernels' GPU time"},
    {"total_ns", "Total", 9, F_NS, "GPU time of all calls"},
    {"calls", "Calls", 6, F_INT, "launches"},
    {"mean_ns", "Mean", 9, F_NS, "mean GPU time per call"},
    {"min_ns", "Min", 9, F_NS, "shortest call"},
    {"p50_ns", "p50", 9, F_NS, "median call (nearest rank)"},
    {"p99_ns", "p99", 9, F_NS, "99th percentile call (nearest rank)"},
    {"max_ns", "Max", 9, F_NS, "longest call"},
    {"grid", "Grid", 10, F_STR, "most frequent grid (blocks)"},
    {"block", "Block", 8, F_STR, "most frequent block (threads)"},
    {"configs", "Cfgs", 4, F_INT, "distinct launch configurations"},
    {"registers", "Regs", 4, F_INT, "registers per thread (most frequent configuration)"},
    {"static_smem", "SMem", 9, F_BYTES, "static shared memory per block"},
    {"dynamic_smem", "DynSMem", 9, F_BYTES, "dynamic shared memory per block"},
    {"occupancy_pct", "Occ%", 5, F_PCT, "theoretical occupancy (not achieved)"},
    {"limiter", "Limiter", 10, F_STR, "what limits active blocks per SM"},
    {"active_blocks", "Blk/SM", 6, F_INT, "active blocks per SM"},
    {"waves", "Waves", 6, F_FLOAT, "waves per SM of the grid"},
    {"mean_queue_ns", "Queue", 9, F_NS, "mean queued -> submitted delay"},
    {"mean_launch_ns", "Launch", 9, F_NS, "mean duration of the launch API call"},
    {"backend", "Backend", 14, F_STR, "library the kernel comes from (cuBLAS, cuDNN, Triton, ...), by its name"},
    {"name", "Name", 0, F_STR, "kernel name (shortened in the table)"},
};

static const enum col_id DEFAULT_COLS[] = {C_TIME_PCT, C_TOTAL, C_CALLS, C_P50, C_P99, C_OCC, C_LIMITER,
                                           C_WAVES, C_BACKEND, C_NAME};

static void list_columns(FILE *out)
{
    fprintf(out, "columns:\n");
    for (int i = 0; i < N_COLS; i++)
        fprintf(out, "  %-15s %s\n", COLS[i].id, COLS[i].help);
    fprintf(out, "Occupancy is theoretical (what registers, shared memory, warps and block slots allow for the\n"
                 "most frequent configuration on the recorded device), not achieved occupancy.\n");
}

enum { O_SORT = 1, O_REVERSE, O_TOP, O_CSV, O_JSON, O_COLUMNS, O_CALLS, O_STALLS, O_BY };

static const cli_opt OPTS[] = {
    {O_SORT, 0, "sort", CLI_ARG_REQUIRED, "COLUMN", "order by a column (numbers: largest first; text: A to Z)", NULL, NULL},
    {O_REVERSE, 0, "reverse", CLI_ARG_NONE, NULL, "the opposite order", NULL, NULL},
    {O_TOP, 0, "top", CLI_ARG_REQUIRED, "N", "the first N rows only", NULL, NULL},
    {O_CSV, 0, "csv", CLI_ARG_NONE, NULL, "every column with full names", NULL, NULL},
    {O_JSON, 0, "json", CLI_ARG_NONE, NULL, "every column with full names, as an array of objects", NULL, NULL},
    {O_COLUMNS, 0, "columns", CLI_ARG_REQUIRED, "LIST", "comma-separated columns of the table (name is always last)",
     NULL, NULL},
    {O_CALLS, 0, "calls", CLI_ARG_NONE, NULL, "one row per launch, in launch order, with its occupancy", NULL, NULL},
    {O_STALLS, 0, "stalls", CLI_ARG_NONE, NULL,
     "the warp stall reasons of each name (sessions of `warplens run --stalls`):\n"
     "samples summed over the name's launches, top reasons in % of samples;\n"
     "--csv: one row per (name, reason). --json always includes them.", NULL, NULL},
    {O_BY, 0, "by", CLI_ARG_REQUIRED, "op|name",
     "op: one row per framework operation and input shapes, as torch.profiler's\n"
     "key_averages(group_by_input_shape=True): calls, CPU time of its ranges, its\n"
     "kernels and their GPU time (PyTorch operators with `warplens run --torch-ops`,\n"
     "else NVTX ranges and warplens scopes); --sort calls|cpu|gpu|kernels|name", "op name", NULL},
    {0},
};
const cli_cmd CLI_KERNELS = {
    "kernels", "<session> [--sort COLUMN] [--reverse] [--top N] [--csv|--json] [--columns LIST]\n"
    "<session> [--calls | --stalls | --by op] [options]",
    NULL, OPTS, NULL, list_columns, 0, CLI_POS_SESSION, NULL};

static int col_by_name(const char *s)
{
    for (int i = 0; i < N_COLS; i++)
        if (!strcmp(s, COLS[i].id))
            return i;
    return -1;
}

/* ---- values --------------------------------------------------------------------------------- */

static int has_occ(const wl_kernel_table_row *r) { return r->has_config && r->occ.has_result; }

/* NAN = unknown (shown as "-", null in JSON, sorted last). */
static double num(const wl_kernel_table_row *r, int c)
{
    const wl_kernel_summary *s = &r->sum;
    switch (c) {
    case C_TIME_PCT: return r->time_pct;
    case C_TOTAL: return (double)s->total_ns;
    case C_CALLS: return (double)s->calls;
    case C_MEAN: return s->timed_calls ? s->mean_ns : NAN;
    case C_MIN: return s->timed_calls ? (double)s->min_ns : NAN;
    case C_P50: return s->timed_calls ? (double)s->p50_ns : NAN;
    case C_P99: return s->timed_calls ? (double)s->p99_ns : NAN;
    case C_MAX: return s->timed_calls ? (double)s->max_ns : NAN;
    case C_GRID: return r->has_config ? (double)r->top.grid[0] * r->top.grid[1] * r->top.grid[2] : NAN;
    case C_BLOCK: return r->has_config ? (double)r->top.block[0] * r->top.block[1] * r->top.block[2] : NAN;
    case C_CONFIGS: return r->configs;
    case C_REGS: return r->has_config ? r->top.registers_per_thread : NAN;
    case C_STATIC_SMEM: return r->has_config ? (double)r->top.static_smem : NAN;
    case C_DYN_SMEM: return r->has_config ? (double)r->top.dynamic_smem : NAN;
    case C_OCC: return has_occ(r) ? r->occ.occ.occupancy_pct : NAN;
    case C_ACTIVE_BLOCKS: return has_occ(r) ? r->occ.occ.active_blocks_per_sm : NAN;
    case C_WAVES: return r->occ.has_waves ? r->occ.waves.waves_per_sm : NAN;
    case C_QUEUE: return s->mean_queue_ns > 0 ? s->mean_queue_ns : NAN;
    case C_LAUNCH: return s->mean_launch_ns > 0 ? s->mean_launch_ns : NAN;
    }
    return NAN;
}

static const char *str(const wl_kernel_table_row *r, int c, int brief, char *buf, size_t n)
{
    switch (c) {
    case C_GRID: return r->has_config ? kf_dim3(r->top.grid, brief, buf, n) : "-";
    case C_BLOCK: return r->has_config ? kf_dim3(r->top.block, brief, buf, n) : "-";
    case C_LIMITER: return has_occ(r) ? wl_occ_limiters_text(r->occ.occ.limiters, brief, buf, n) : "-";
    case C_BACKEND: return wl_kernel_backend(r->short_name, r->name, r->mangled);
    case C_NAME: return r->name;
    }
    return "";
}

/* ---- sorting -------------------------------------------------------------------------------- */

static int g_sort_col = C_TOTAL, g_reverse;

static int cmp_rows(const void *pa, const void *pb)
{
    const wl_kernel_table_row *a = pa, *b = pb;
    int c = g_sort_col, res;
    if (COLS[c].format == F_STR && c != C_GRID && c != C_BLOCK) {
        char x[256], y[256];
        res = strcmp(str(a, c, 0, x, sizeof x), str(b, c, 0, y, sizeof y));
    } else {
        double x = num(a, c), y = num(b, c);
        if (isnan(x) || isnan(y)) /* unknown values last in either direction */
            return isnan(x) - isnan(y);
        res = x < y ? 1 : x > y ? -1 : 0; /* numbers: largest first */
    }
    if (g_reverse)
        res = -res;
    if (!res) /* stable order for equal keys: most GPU time, then name */
        res = a->sum.total_ns < b->sum.total_ns ? 1 : a->sum.total_ns > b->sum.total_ns ? -1 : strcmp(a->name, b->name);
    return res;
}

/* ---- output --------------------------------------------------------------------------------- */

static void json_num(FILE *o, double v, const char *fmt)
{
    if (isnan(v))
        fputs("null", o);
    else
        fprintf(o, fmt, v);
}

static void print_json(const wl_kernel_table_row *rows, int n, const wl_metric_set *m, const wl_stall_set *st)
{
    printf("[");
    for (int i = 0; i < n; i++) {
        const wl_kernel_table_row *r = &rows[i];
        char b[128];
        printf("%s\n{\"name\":", i ? "," : "");
        kf_json_str(stdout, r->name);
        printf(",\"short_name\":");
        kf_json_str(stdout, r->short_name);
        printf(",\"mangled\":");
        kf_json_str(stdout, r->mangled);
        printf(",\"name_id\":%lld", (long long)r->sum.name_id);
        for (int c = 0; c < N_COLS; c++) {
            if (c == C_NAME)
                continue;
            printf(",\"%s\":", COLS[c].id);
            if (c == C_GRID || c == C_BLOCK) {
                const int *d = c == C_GRID ? r->top.grid : r->top.block;
                if (r->has_config)
                    printf("[%d,%d,%d]", d[0], d[1], d[2]);
                else
                    printf("null");
            } else if (c == C_LIMITER) {
                if (has_occ(r))
                    kf_json_str(stdout, wl_occ_limiters_text(r->occ.occ.limiters, 0, b, sizeof b));
                else
                    printf("null");
            } else if (c == C_BACKEND) {
                kf_json_str(stdout, str(r, c, 0, b, sizeof b));
            } else {
                json_num(stdout, num(r, c), COLS[c].format == F_PCT ? "%.2f" : COLS[c].format == F_FLOAT ? "%.4f" : "%.0f");
            }
        }
        if (has_occ(r)) {
            const wl_occ_result *o = &r->occ.occ;
            printf(",\"active_warps_per_sm\":%d,\"max_warps_per_sm\":%d,\"limiting_factors_mask\":%u,"
                   "\"block_limit_registers\":%d,\"block_limit_shared_memory\":%d,\"block_limit_warps\":%d,"
                   "\"block_limit_blocks\":%d,\"block_limit_barriers\":%d,\"launchable\":%s",
                   o->active_warps_per_sm, o->max_warps_per_sm, o->limiters, o->block_limit_registers,
                   o->block_limit_shared_memory, o->block_limit_warps, o->block_limit_blocks, o->block_limit_barriers,
                   r->occ.status == WL_OCC_OK ? "true" : "false");
        }
        if (r->occ.has_waves)
            printf(",\"tail_pct\":%.2f,\"active_sms\":%d", r->occ.waves.tail_pct, r->occ.waves.active_sms);
        printf(",\"occupancy_kind\":\"theoretical\"");
        print_metric_json(stdout, m, r->sum.name_id);
        print_stall_json(stdout, st, r->sum.name_id);
        printf("}");
    }
    printf("\n]\n");
}

static void print_csv(const wl_kernel_table_row *rows, int n)
{
    for (int c = 0; c < N_COLS; c++)
        printf("%s,", COLS[c].id);
    printf("short_name,name_id\n");
    for (int i = 0; i < n; i++) {
        const wl_kernel_table_row *r = &rows[i];
        for (int c = 0; c < N_COLS; c++) {
            char b[128];
            if (COLS[c].format == F_STR) {
                kf_csv_str(stdout, str(r, c, 0, b, sizeof b));
            } else {
                double v = num(r, c);
                if (!isnan(v))
                    printf(COLS[c].format == F_PCT ? "%.2f" : COLS[c].format == F_FLOAT ? "%.4f" : "%.0f", v);
            }
            putchar(',');
        }
        kf_csv_str(stdout, r->short_name);
        printf(",%lld\n", (long long)r->sum.name_id);
    }
}

static void cell(const wl_kernel_table_row *r, int c, char *buf, size_t n)
{
    if (COLS[c].format == F_STR) {
        char tmp[128];
        snprintf(buf, n, "%s", str(r, c, 1, tmp, sizeof tmp));
        return;
    }
    double v = num(r, c);
    if (isnan(v)) {
        snprintf(buf, n, "-");
        return;
    }
    switch (COLS[c].format) {
    case F_PCT: snprintf(buf, n, "%.1f", v); break;
    case F_NS: fmt_ns(v, buf, n); break;
    case F_BYTES: fmt_bytes(v, buf, n); break;
    case F_FLOAT: snprintf(buf, n, "%.2f", v); break;
    default: snprintf(buf, n, "%.0f", v); break;
    }
}

/* The name a row is shown under: the short name when no other row shares it. */
static const char *shown_name(const wl_kernel_table_row *rows, int n, int i)
{
    for (int j = 0; j < n; j++)
        if (j != i && !strcmp(rows[j].short_name, rows[i].short_name))
            return kf_display_name(rows[i].name);
    return rows[i].short_name[0] ? rows[i].short_name : kf_display_name(rows[i].name);
}

static int print_table(const wl_kernel_table_row *rows, int n, int shown, const int *cols, int ncols)
{
    int used = 0;
    for (int i = 0; i < ncols; i++)
        used += COLS[cols[i]].width + 1;
    int name_w = WIDTH - used - 1;
    print_title("GPU kernels by name (occupancy: theoretical, most frequent configuration)", WIDTH);
    for (int i = 0; i < ncols; i++)
        printf(COLS[cols[i]].format == F_STR ? "%-*s " : "%*s ", COLS[cols[i]].width, COLS[cols[i]].header);
    printf(" %s\n", "Name");
    for (int i = 0; i < shown; i++) {
        for (int j = 0; j < ncols; j++) {
            char b[128], w[128];
            cell(&rows[i], cols[j], b, sizeof b);
            fmt_middle(b, (size_t)COLS[cols[j]].width, w, sizeof w);
            printf(COLS[cols[j]].format == F_STR ? "%-*s " : "%*s ", COLS[cols[j]].width, w);
        }
        char nm[WIDTH + 1];
        printf(" %s\n", kf_shorten(shown_name(rows, n, i), (size_t)name_w, nm, sizeof nm));
    }
    if (shown < n)
        printf("... %d more kernel name%s (--top shows more)\n", n - shown, n - shown == 1 ? "" : "s");
    if (!n)
        printf("(no kernels recorded)\n");
    return 0;
}

/* Parses --columns: returns the count (name excluded) or -1 after printing the problem. */
static int parse_columns(const char *list, int *cols)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    int n = 0, width = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int c = col_by_name(tok);
        if (c < 0) {
            fprintf(stderr, "warplens kernels: unknown column '%s' (see --help for the list)\n", tok);
            return -1;
        }
        if (c == C_NAME)
            continue;
        if (n == N_COLS)
            break;
        cols[n++] = c;
        width += COLS[c].width + 1;
    }
    if (WIDTH - width - 1 < MIN_NAME) {
        fprintf(stderr, "warplens kernels: those columns need more than %d characters; use --csv or --json\n", WIDTH);
        return -1;
    }
    return n;
}

int kernels_calls(wl_session *s, int csv, int json, long long top);                      /* cmd_kernels_calls.c */
int kernels_by_op(wl_session *s, const char *sort, int reverse, int csv, int json, long long top); /* cmd_kernels_ops.c */

int cmd_kernels(int argc, char **argv)
{
    const char *path = NULL, *columns = NULL, *by = NULL, *sort = NULL;
    int csv = 0, json = 0, calls = 0, sort_set = 0, stalls = 0;
    long long top = 0;
    cli_parser p;
    cli_init(&p, &CLI_KERNELS, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_CSV: csv = 1; break;
        case O_JSON: json = 1; break;
        case O_CALLS: calls = 1; break;
        case O_STALLS: stalls = 1; break;
        case O_REVERSE: g_reverse = 1; break;
        case O_BY:
            by = p.arg;
            if (strcmp(by, "op") && strcmp(by, "name"))
                return cli_error(&CLI_KERNELS, "--by takes op or name, got '%s'", by);
            break;
        case O_SORT: /* checked once --by is known */
            sort = p.arg;
            g_sort_col = col_by_name(sort);
            sort_set = 1;
            break;
        case O_TOP:
            if (kf_parse_count(p.arg, &top) != 0)
                return cli_error(&CLI_KERNELS, "--top needs a positive number, got '%s'", p.arg);
            break;
        case O_COLUMNS: columns = p.arg; break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path)
        return cli_error(&CLI_KERNELS, "no session given (usage: warplens kernels <session> [options])");
    if (csv && json) {
        fprintf(stderr, "warplens kernels: --csv and --json exclude each other\n");
        return 2;
    }
    if (calls && stalls) {
        fprintf(stderr, "warplens kernels: --stalls is per kernel name; `warplens kernel SESSION ID` shows one launch's\n");
        return 2;
    }
    if (stalls && columns) {
        fprintf(stderr, "warplens kernels: --columns applies to the main table, not to --stalls\n");
        return 2;
    }
    if (calls && (sort_set || columns)) {
        fprintf(stderr, "warplens kernels: --calls lists launches in order; --sort and --columns do not apply\n");
        return 2;
    }
    int by_op = by && !strcmp(by, "op");
    if (by_op && (calls || stalls || columns)) {
        fprintf(stderr, "warplens kernels: --by op has its own columns; --calls, --stalls and --columns do not apply\n");
        return 2;
    }
    if (!by_op && sort_set && g_sort_col < 0) {
        fprintf(stderr, "warplens kernels: unknown sort column '%s' (see --help for the list)\n", sort);
        return 2;
    }
    int cols[N_COLS], ncols = (int)(sizeof DEFAULT_COLS / sizeof DEFAULT_COLS[0]) - 1;
    for (int i = 0; i < ncols; i++)
        cols[i] = DEFAULT_COLS[i];
    if (columns && (ncols = parse_columns(columns, cols)) < 0)
        return 2;
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    if (calls || by_op) {
        int rc = by_op ? kernels_by_op(s, sort, g_reverse, csv, json, top) : kernels_calls(s, csv, json, top);
        return cli_session_close(s, rc);
    }
    wl_kernel_table_row *rows;
    int n = wl_kernel_table(s, NULL, &rows);
    if (n < 0) {
        cli_read_error(s, "warplens kernels: cannot read the kernels of %s\n", path);
        return cli_session_close(s, 1);
    }
    if (n > 1)
        qsort(rows, (size_t)n, sizeof *rows, cmp_rows);
    int shown = top > 0 && top < n ? (int)top : n;
    wl_metric_set metrics;
    if (wl_session_metrics(s, WL_METRICS_BY_NAME, &metrics) != 0)
        cli_read_error(s, "warplens kernels: cannot read the hardware metrics of %s\n", path);
    wl_stall_set stall_set;
    if (wl_session_stalls(s, WL_STALLS_BY_NAME, -1, &stall_set) != 0)
        cli_read_error(s, "warplens kernels: cannot read the warp stall samples of %s\n", path);
    int64_t *ids = malloc((size_t)(shown ? shown : 1) * sizeof *ids);
    char **names = malloc((size_t)(shown ? shown : 1) * sizeof *names);
    char **short_names = malloc((size_t)(shown ? shown : 1) * sizeof *short_names);
    uint64_t *ncalls = malloc((size_t)(shown ? shown : 1) * sizeof *ncalls);
    int have = ids && names && short_names && ncalls;
    for (int i = 0; have && i < shown; i++) {
        ids[i] = rows[i].sum.name_id;
        names[i] = (char *)(csv ? rows[i].name : shown_name(rows, n, i));
        short_names[i] = (char *)rows[i].short_name;
        ncalls[i] = rows[i].sum.calls;
    }
    if (json) {
        print_json(rows, shown, &metrics, &stall_set);
    } else if (stalls && csv) {
        if (have)
            print_stall_csv(&stall_set, ids, names, short_names, shown);
    } else if (stalls) {
        if (have)
            print_stall_table(&stall_set, ids, names, ncalls, shown);
    } else if (csv) {
        print_csv(rows, shown);
    } else {
        print_table(rows, n, shown, cols, ncols);
        if (have)
            print_metric_table(&metrics, ids, names, shown);
        if (stall_set.samples)
            printf("\nWarp stall reasons were sampled: warplens kernels %s --stalls\n", path);
    }
    free(ids);
    free(names);
    free(short_names);
    free(ncalls);
    wl_stall_set_free(&stall_set);
    wl_metric_set_free(&metrics);
    wl_kernel_table_free(rows, n);
    return cli_session_close(s, 0);
}
