/* `warplens info <session> [--check]`: what a session holds (processes, devices, completeness,
 * counts, the rows left out of a damaged session), or with --check every check of its damage. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "cli_session.h"
#include "stats_print.h"
#include "store/session_check.h"
#include "verbs.h"

/* The recorder's own figures: how much memory recording took and how its buffers were served. */
static void print_recorder(wl_session *s, uint32_t pid)
{
    uint64_t size, requests, on_demand = 0, refused = 0, peak = 0, bound = 0, rss = 0, api_spill = 0, ev_spill = 0;
    if (!wl_session_recorder_stat(s, pid, "buffer_size", &size) ||
        !wl_session_recorder_stat(s, pid, "buffer_requests", &requests))
        return;
    wl_session_recorder_stat(s, pid, "buffers_mapped_on_demand", &on_demand);
    wl_session_recorder_stat(s, pid, "buffer_requests_refused", &refused);
    wl_session_recorder_stat(s, pid, "peak_buffers_mapped", &peak);
    wl_session_recorder_stat(s, pid, "recorder_peak_bytes", &bound);
    wl_session_recorder_stat(s, pid, "process_peak_rss_bytes", &rss);
    wl_session_recorder_stat(s, pid, "api_calls_spilled", &api_spill);
    wl_session_recorder_stat(s, pid, "scope_events_spilled", &ev_spill);
    char a[32], b[32], c[32];
    printf("  recorder: %" PRIu64 " buffer requests (%s each), at most %" PRIu64 " mapped at once, %" PRIu64
           " mapped on demand, %" PRIu64 " refused\n",
           requests, fmt_bytes((double)size, a, sizeof a), peak, on_demand, refused);
    printf("  recorder memory at its peak at most %s (buffers, rings, spills; only what CUPTI wrote is resident);"
           " process peak RSS %s\n", fmt_bytes((double)bound, b, sizeof b), rss ? fmt_bytes((double)rss, c, sizeof c) : "?");
    if (api_spill || ev_spill)
        printf("  the writer fell behind: %" PRIu64 " API calls and %" PRIu64 " scope events waited in the spill"
               " (none lost)\n", api_spill, ev_spill);
}

static void print_process(const wl_process_row *p, void *arg)
{
    printf("process %u (parent %u) on %s%s\n  %s\n", p->pid, p->ppid, p->hostname[0] ? p->hostname : "?",
           p->complete ? "" : "  [INCOMPLETE]", p->cmdline);
    if (p->rank >= 0 || p->local_rank >= 0 || p->world_size >= 0)
        printf("  rank %d, local rank %d, world size %d\n", p->rank, p->local_rank, p->world_size);
    if (!p->complete)
        printf("  incomplete: %s\n", p->incomplete_reason);
    print_recorder(arg, p->pid);
}

static void print_device(const wl_device_row *d, void *arg)
{
    (void)arg;
    char mem[32], smem[32], l2[32];
    printf("device %u of process %u: %s (sm_%d%d, %d SMs, %s, L2 %s, bus %s)\n", d->device_id, d->pid, d->name,
           d->cc_major, d->cc_minor, d->sm_count, fmt_bytes((double)d->total_mem_bytes, mem, sizeof mem),
           fmt_bytes(d->l2_bytes, l2, sizeof l2), d->pci_bus_id);
    printf("  per SM: %d threads, %d blocks, %d registers, %s shared memory\n", d->max_threads_per_sm,
           d->max_blocks_per_sm, d->regs_per_sm, fmt_bytes(d->smem_per_sm, smem, sizeof smem));
    printf("  per block: %d threads, %d registers, %d B shared (opt-in %d B, reserved %d B)\n",
           d->max_threads_per_block, d->regs_per_block, d->smem_per_block, d->smem_per_block_optin,
           d->reserved_smem_per_block);
    printf("  clocks: SM %.0f MHz, memory %.0f MHz, %d-bit bus\n", d->core_clock_khz / 1e3, d->mem_clock_khz / 1e3,
           d->mem_bus_width_bits);
}

/* The rows every reader left out, per table, in one line (info's overview). */
static void print_damage(wl_session *s)
{
    wl_damage_count d[40];
    int n = wl_session_damage(s, 0, d, 40);
    if (n < 0) {
        printf("damaged   the rows could not all be checked (see `warplens info --check %s`)\n", wl_session_path(s));
        return;
    }
    if (n == 0)
        return;
    uint64_t total = 0;
    for (int i = 0; i < n && i < 40; i++)
        total += d[i].rows;
    printf("damaged   %" PRIu64 " row%s left out by every reader (they break the session's schema):", total,
           total == 1 ? "" : "s");
    for (int i = 0; i < n && i < 40; i++)
        printf("%s %s %" PRIu64, i ? "," : "", d[i].table, d[i].rows);
    printf("; `warplens info --check %s` lists them\n", wl_session_path(s));
}

typedef struct check_out {
    const char *section;
} check_out;

static void print_finding(const char *section, const char *line, void *arg)
{
    check_out *o = arg;
    static const struct {
        const char *section, *title;
    } T[] = {{"file", "SQLite's integrity check of the file"},
             {"structure", "tables, columns and indexes the readers need"},
             {"rows", "rows that break the session's schema (every reader leaves them out)"},
             {"consistency", "rows that disagree with others (read as they are: a link that names no row as no link,"
                             " a repeated row twice)"}};
    if (!o->section || strcmp(o->section, section)) {
        for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
            if (!strcmp(T[i].section, section))
                printf("%s:\n", T[i].title);
        o->section = section;
    }
    printf("  %s\n", line);
}

/* `warplens info --check`: every check; the status says whether anything is wrong. */
static int check(const char *path)
{
    char err[1024];
    wl_session *s = wl_session_open_flags(path, WL_OPEN_DAMAGED | WL_OPEN_RECHECK, err, sizeof err);
    if (!s) {
        fprintf(stderr, "warplens: %s\n", err);
        return 1;
    }
    check_out o = {NULL};
    int problems = wl_session_check(s, 5, print_finding, &o);
    if (problems)
        printf("%s: %d problem%s found (docs/schema.md, \"Damaged sessions\", says what readers do with them)\n", path,
               problems, problems == 1 ? "" : "s");
    else
        printf("%s: no problem found (file, structure, every row and link checked)\n", path);
    char what[512];
    if (wl_session_pack_note(s, what, sizeof what)) /* derived data: not a problem of the session's rows */
        printf("%s: note: %s; the exports read the rows instead (`warplens import --upgrade %s` writes the pack"
               " again)\n", path, what, path);
    if (wl_session_read_failure(s, what, sizeof what) && !problems) {
        printf("%s: SQLite reported %s while checking\n", path, what);
        problems = 1;
    }
    wl_session_close(s);
    return problems ? 1 : 0;
}

/* The export pack (docs/schema.md, "The export pack"): what the exports read. */
static void print_pack(wl_session *s)
{
    wl_session_pack p;
    wl_session_pack_info(s, &p);
    if (p.state == 0) {
        printf("pack      none: the exports read the rows (`warplens import --upgrade %s` writes one)\n",
               wl_session_path(s));
        return;
    }
    if (p.state < 0) {
        printf("pack      not read: it does not match the rows (see the note below)\n");
        return;
    }
    char size[32];
    printf("pack      %" PRIu64 " kernels", p.kernels);
    if (p.api_calls >= 0)
        printf(", %" PRId64 " API calls", p.api_calls);
    if (p.nvtx_ranges >= 0)
        printf(", %" PRId64 " NVTX ranges", p.nvtx_ranges);
    if (p.scopes >= 0)
        printf(", %" PRId64 " scopes", p.scopes);
    printf(" in %s, matching the rows: the exports read it\n", fmt_bytes((double)p.bytes, size, sizeof size));
}

enum { O_CHECK = 1 };

static const cli_opt OPTS[] = {
    {O_CHECK, 0, "check", CLI_ARG_NONE, NULL,
     "check the file (SQLite's integrity check), its tables, columns and indexes, every row\n"
     "against the session's schema and the links between rows; list what is wrong (exit\n"
     "status 1 when anything is)", NULL, NULL},
    {0},
};
const cli_cmd CLI_INFO = {"info", "<session> [--check]", NULL, OPTS, NULL, NULL, 0, CLI_POS_SESSION, NULL};

int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    int do_check = 0;
    cli_parser p;
    cli_init(&p, &CLI_INFO, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_CHECK: do_check = 1; break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path)
        return cli_error(&CLI_INFO, "no session given (usage: warplens info <session> [--check])");
    if (do_check)
        return check(path);
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    char v[256];
    printf("session   %s (schema %d", path, wl_session_schema_version(s));
    if (wl_session_meta(s, "command", v, sizeof v) == 0)
        printf(", exit status %s", wl_session_meta(s, "exit_status", v, sizeof v) == 0 ? v : "?");
    printf(")\n");
    print_overview(s);
    print_damage(s);
    print_pack(s);
    printf("\n");
    wl_session_each_process(s, print_process, s);
    wl_session_each_device(s, print_device, NULL);
    return cli_session_close(s, 0);
}
