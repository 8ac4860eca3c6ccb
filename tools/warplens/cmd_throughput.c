/* `warplens throughput <session> [--csv]`: achieved TFLOP/s and GB/s of the work the program
 * annotated (warplens_annotate_next_launch / warplens_annotate_scope), as a share of the recorded
 * device's peaks, with the roofline verdict. Rates are summed counts over summed GPU time. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_occupancy.h"
#include "analysis/throughput.h"
#include "format.h"
#include "store/session_kernels.h"
#include "cli_session.h"
#include "verbs.h"

static wl_tp_precision precision_of(const char *p)
{
    if (!strcmp(p, "fp64"))
        return WL_TP_FP64;
    if (!strcmp(p, "fp16_tensor"))
        return WL_TP_FP16_TENSOR;
    if (!strcmp(p, "bf16_tensor"))
        return WL_TP_BF16_TENSOR;
    return WL_TP_FP32;
}

enum { O_CSV = 1 };

static const cli_opt OPTS[] = {
    {O_CSV, 0, "csv", CLI_ARG_NONE, NULL, "comma-separated values instead of a table", NULL, NULL},
    {0},
};
const cli_cmd CLI_THROUGHPUT = {
    "throughput", "<session> [--csv]",
    "  TFLOP/s, GB/s, % of the device's peaks and roofline bound of annotated kernels and scopes\n"
    "  (warplens_annotate_next_launch / warplens_annotate_scope in warplens.h)\n",
    OPTS, NULL, NULL, 0, CLI_POS_SESSION, NULL};

int cmd_throughput(int argc, char **argv)
{
    const char *path = NULL;
    int csv = 0;
    cli_parser p;
    cli_init(&p, &CLI_THROUGHPUT, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_CSV: csv = 1; break;
        case CLI_POSITIONAL:
            if (cli_positional(&p, &path, 1, "one session at a time"))
                return 2;
            break;
        }
    }
    if (!path)
        return cli_error(&CLI_THROUGHPUT, "no session given (usage: warplens throughput <session> [--csv])");
    wl_session *s = cli_session_open(path);
    if (!s)
        return 1;
    wl_annotated_work *w;
    int n = wl_session_annotated_work(s, &w);
    if (n <= 0) {
        cli_read_error(s, "warplens: no annotated work in this session (see warplens_annotate_next_launch in warplens.h)\n");
        return cli_session_close(s, 1);
    }
    if (csv)
        printf("kind,name,precision,instances,flops,bytes,gpu_ns,tflops,gbps,pct_peak_compute,pct_peak_dram,"
               "intensity,bound\n");
    else
        printf("%-6s %-30s %-11s %6s %9s %9s %7s %7s %10s\n", "Kind", "Name", "Precision", "Count", "TFLOP/s",
               "GB/s", "%peakC", "%peakM", "Bound");
    for (int i = 0; i < n; i++) {
        wl_device_row dev;
        wl_occ_device odev;
        wl_tp_peaks peaks = {0, 0, 0};
        if (wl_session_device(s, w[i].pid, w[i].device_id, &dev) == 0 && wl_occ_device_from_row(&dev, &odev) == 0)
            wl_tp_device_peaks(&odev, precision_of(w[i].precision), &peaks);
        wl_throughput t;
        wl_tp_compute(&peaks, w[i].flops, w[i].bytes, w[i].gpu_ns, &t);
        if (csv) {
            printf("%s,\"%s\",%s,%" PRIu64 ",%.0f,%.0f,%" PRIu64 ",%.4f,%.3f,%.2f,%.2f,%.4f,%s\n", w[i].kind, w[i].name,
                   w[i].precision, w[i].instances, w[i].flops, w[i].bytes, w[i].gpu_ns, t.tflops, t.gbps,
                   t.pct_peak_compute, t.pct_peak_dram, t.intensity, wl_tp_bound_name(t.bound));
        } else {
            char nm[64];
            printf("%-6s %-30s %-11s %6" PRIu64 " %9.3f %9.1f %6.1f%% %6.1f%% %10s\n", w[i].kind,
                   fmt_middle(w[i].name, 30, nm, sizeof nm), w[i].precision, w[i].instances, t.tflops, t.gbps,
                   t.pct_peak_compute, t.pct_peak_dram, wl_tp_bound_name(t.bound));
        }
    }
    free(w);
    return cli_session_close(s, 0);
}
