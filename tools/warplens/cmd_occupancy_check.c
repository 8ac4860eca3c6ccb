/* `warplens occupancy-check <session>`: compares warplens' occupancy calculator with the driver's
 * answer (cuOccupancyMaxActiveBlocksPerMultiprocessor) recorded by `warplens run
 * --check-occupancy` for every distinct launch configuration of the run. The calculator gets the
 * function's compiled register count (CUPTI reports at least 16) so both answer the same question.
 * Exit status 0 when all agree, 1 when any differ or none were recorded. */
#include <stdio.h>
#include <string.h>

#include "analysis/kernel_occupancy.h"
#include "format.h"
#include "store/session_kernels.h"
#include "cli_session.h"
#include "verbs.h"

typedef struct check_ctx {
    wl_session *s;
    int verbose, header_done;
    int checked, agree, differ, skipped;
} check_ctx;

static void check_one(const wl_occ_check_row *c, void *arg)
{
    check_ctx *x = arg;
    if (c->kernel_id < 0 || c->status != 0 || c->driver_active_blocks < 0) {
        x->skipped++;
        return;
    }
    char err[256];
    wl_kernel_filter f = {-1, c->kernel_id, WL_KERNEL_BY_ID};
    wl_kernel_cursor *cur = wl_kernel_cursor_open(x->s, &f, err, sizeof err);
    wl_kernel_row k;
    if (!cur || wl_kernel_cursor_next(cur, &k) != 1) {
        x->skipped++;
        if (cur)
            wl_kernel_cursor_close(cur);
        return;
    }
    wl_device_row dev;
    if (wl_session_device(x->s, k.pid, k.device_id, &dev) != 0) {
        x->skipped++;
        wl_kernel_cursor_close(cur);
        return;
    }
    int cupti_regs = k.registers_per_thread;
    if (c->function_registers >= 0)
        k.registers_per_thread = c->function_registers;
    wl_kernel_occ o;
    wl_kernel_occupancy(&dev, &k, &o);
    int ours = o.has_result ? o.occ.active_blocks_per_sm : -1;
    int same = ours == c->driver_active_blocks;
    x->checked++;
    same ? x->agree++ : x->differ++;
    if (x->verbose || !same) {
        char nm[64];
        if (!x->header_done++)
            printf("%-6s %8s %-34s %6s %9s %7s %7s %6s %8s\n", "", "kernel", "name", "block", "regs f/c", "smem",
                   "dyn", "driver", "warplens");
        printf("%-6s %8lld %-34s %6d %4d/%-4d %7lld %7lld %6d %8d\n", same ? "ok" : "DIFFER", (long long)k.id,
               fmt_middle(k.short_name, 34, nm, sizeof nm), k.block[0] * k.block[1] * k.block[2],
               c->function_registers, cupti_regs, (long long)k.static_smem, (long long)k.dynamic_smem,
               c->driver_active_blocks, ours);
    }
    wl_kernel_cursor_close(cur);
}

enum { O_ALL = 1 };

static const cli_opt OPTS[] = {
    {O_ALL, 0, "all", CLI_ARG_NONE, NULL, "list the configurations that agree too", NULL, NULL},
    {0},
};
const cli_cmd CLI_OCCUPANCY_CHECK = {
    "occupancy-check", "<session> [--all]",
    "  compares warplens' occupancy with the driver's for every distinct launch configuration\n"
    "  recorded by `warplens run --check-occupancy`\n",
    OPTS, NULL, NULL, 0, CLI_POS_SESSION, NULL};

int cmd_occupancy_check(int argc, char **argv)
{
    const char *path = NULL;
    int verbose = 0;
    cli_parser p;
    cli_init(&p, &CLI_OCCUPANCY_CHECK, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_ALL: verbose = 1; break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path)
        return cli_error(&CLI_OCCUPANCY_CHECK, "no session given (usage: warplens occupancy-check <session> [--all])");
    char err[512];
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    check_ctx x = {s, verbose, 0, 0, 0, 0, 0};
    int n = wl_session_each_occ_check(s, check_one, &x, err, sizeof err);
    if (n <= 0) {
        cli_read_error(s, "warplens: %s\n", err);
        cli_session_close(s, 1);
        return 1;
    }
    printf("\n%d distinct launch configurations: %d agree with the driver, %d differ, %d not comparable\n",
           x.checked, x.agree, x.differ, x.skipped);
    return cli_session_close(s, x.differ || !x.checked ? 1 : 0);
}
