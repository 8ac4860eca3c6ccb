/* `warplens info <session>`: what a session holds (processes, devices, completeness, counts). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "stats_print.h"
#include "verbs.h"

static void print_process(const wl_process_row *p, void *arg)
{
    (void)arg;
    printf("process %u (parent %u) on %s%s\n  %s\n", p->pid, p->ppid, p->hostname[0] ? p->hostname : "?",
           p->complete ? "" : "  [INCOMPLETE]", p->cmdline);
    if (p->rank >= 0 || p->local_rank >= 0 || p->world_size >= 0)
        printf("  rank %d, local rank %d, world size %d\n", p->rank, p->local_rank, p->world_size);
    if (!p->complete)
        printf("  incomplete: %s\n", p->incomplete_reason);
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

int cmd_info(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            printf("usage: warplens info <session>\n");
            return 0;
        }
        fprintf(stderr, "usage: warplens info <session>\n");
        return 2;
    }
    char err[512];
    wl_session *s = wl_session_open(argv[1], err, sizeof err);
    if (!s) {
        fprintf(stderr, "warplens: %s\n", err);
        return 1;
    }
    char v[256];
    printf("session   %s (schema %d", argv[1], wl_session_schema_version(s));
    if (wl_session_meta(s, "command", v, sizeof v) == 0)
        printf(", exit status %s", wl_session_meta(s, "exit_status", v, sizeof v) == 0 ? v : "?");
    printf(")\n");
    print_overview(s);
    printf("\n");
    wl_session_each_process(s, print_process, NULL);
    wl_session_each_device(s, print_device, NULL);
    wl_session_close(s);
    return 0;
}
