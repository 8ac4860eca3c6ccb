/* warplens CLI entry: dispatches `warplens <verb> ...` to the verb's own file. */
#include <stdio.h>
#include <string.h>

#include "verbs.h"

typedef struct verb {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} verb;

static const verb VERBS[] = {
    {"run", cmd_run, "run a program with the recorder injected and write a session"},
    {"stats", cmd_stats, "summary tables of a session (kernels, memcpy, API, NVTX, scopes, lost records)"},
    {"info", cmd_info, "what a session holds: process, devices, record counts; --check: what is damaged"},
    {"import", cmd_import, "turn capture files (.wlcap) into a session database"},
    {"occupancy", cmd_occupancy, "theoretical occupancy of a launch configuration"},
    {"throughput", cmd_throughput, "TFLOP/s, GB/s, % of peak and roofline bound of annotated work"},
    {"occupancy-check", cmd_occupancy_check, "compare warplens' occupancy with the driver's (run --check-occupancy)"},
    {"decode", cmd_decode, "decode an in-kernel timer buffer"},
    {"export", cmd_export, "timeline as a Perfetto trace or Chrome JSON (docs/formats.md)"},
    {"report", cmd_report, "self-contained HTML report: timeline, kernels, GPU fill, summaries"},
    {"advise", cmd_advise, "why the program is slow: findings ranked by estimated gain, with evidence and the fix"},
    {"kernels", cmd_kernels, "one row per kernel name: GPU time percentiles, launch config, occupancy"},
    {"kernel", cmd_kernel, "one kernel in detail: configuration, resources, occupancy, timing"},
    {"concurrency", cmd_concurrency, "kernels running at once per device, GPU fill over time"},
    {"samples", cmd_samples, "NVML device samples (run --nvml-interval) attributed to kernels"},
    {"merge", cmd_merge, "one session from the sessions of a job's ranks and hosts, clocks aligned on collectives"},
    {"ranks", cmd_ranks, "per rank and step: step time, GPU busy, collectives, waiting for the slowest rank"},
    {"ranges", cmd_ranges, "NVTX ranges and scopes with the kernels inside: GPU time, hardware metrics"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: warplens <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof VERBS / sizeof VERBS[0]; i++)
        fprintf(out, "  %-16s %s\n", VERBS[i].name, VERBS[i].summary);
    fprintf(out, "\n`warplens <command> --help` describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("warplens 0.1.0\n");
        return 0;
    }
    for (size_t i = 0; i < sizeof VERBS / sizeof VERBS[0]; i++)
        if (!strcmp(argv[1], VERBS[i].name))
            return VERBS[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "warplens: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
