/* The list of the CLI's verbs (see verbs.h), in the order `warplens --help` shows them. */
#include "verbs.h"

const wl_verb WL_VERBS[] = {
    {"run", cmd_run, &CLI_RUN, "run a program with the recorder injected and write a session"},
    {"stats", cmd_stats, &CLI_STATS, "summary tables of a session (kernels, memcpy, API, NVTX, scopes, lost records)"},
    {"info", cmd_info, &CLI_INFO, "what a session holds: process, devices, record counts; --check: what is damaged"},
    {"import", cmd_import, &CLI_IMPORT, "turn capture files (.wlcap) into a session database"},
    {"occupancy", cmd_occupancy, &CLI_OCCUPANCY, "theoretical occupancy of a launch configuration"},
    {"throughput", cmd_throughput, &CLI_THROUGHPUT, "TFLOP/s, GB/s, % of peak and roofline bound of annotated work"},
    {"occupancy-check", cmd_occupancy_check, &CLI_OCCUPANCY_CHECK,
     "compare warplens' occupancy with the driver's (run --check-occupancy)"},
    {"decode", cmd_decode, &CLI_DECODE, "decode an in-kernel timer buffer"},
    {"export", cmd_export, &CLI_EXPORT, "timeline as a Perfetto trace or Chrome JSON (docs/formats.md)"},
    {"report", cmd_report, &CLI_REPORT, "self-contained HTML report: timeline, kernels, GPU fill, summaries"},
    {"advise", cmd_advise, &CLI_ADVISE,
     "why the program is slow: findings ranked by estimated gain, with evidence and the fix"},
    {"kernels", cmd_kernels, &CLI_KERNELS, "one row per kernel name: GPU time percentiles, launch config, occupancy"},
    {"kernel", cmd_kernel, &CLI_KERNEL, "one kernel in detail: configuration, resources, occupancy, timing"},
    {"concurrency", cmd_concurrency, &CLI_CONCURRENCY, "kernels running at once per device, GPU fill over time"},
    {"samples", cmd_samples, &CLI_SAMPLES, "NVML device samples (run --nvml-interval) attributed to kernels"},
    {"merge", cmd_merge, &CLI_MERGE,
     "one session from the sessions of a job's ranks and hosts, clocks aligned on collectives"},
    {"ranks", cmd_ranks, &CLI_RANKS, "per rank and step: step time, GPU busy, collectives, waiting for the slowest rank"},
    {"ranges", cmd_ranges, &CLI_RANGES, "NVTX ranges and scopes with the kernels inside: GPU time, hardware metrics"},
    {"completion", cmd_completion, &CLI_COMPLETION, "bash or zsh completion script for warplens"},
};
const int WL_NVERBS = (int)(sizeof WL_VERBS / sizeof WL_VERBS[0]);
