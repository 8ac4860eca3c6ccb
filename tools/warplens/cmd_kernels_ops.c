/* `warplens kernels <session> --by op`: torch.profiler's key_averages(group_by_input_shape=True)
 * from a session: one row per framework operation and input shapes (store/session_identity.h),
 * with its calls and their host (CPU) time, and the kernels launched directly inside it (innermost)
 * with their GPU time, so a row's GPU time is the operator's self GPU time. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_session.h"
#include "format.h"
#include "kernel_format.h"
#include "store/session_identity.h"

#define WIDTH 100

int kernels_by_op(wl_session *s, const char *sort, int reverse, int csv, int json, long long top);

static int g_key, g_reverse; /* 0 gpu, 1 cpu, 2 calls, 3 kernels, 4 name */

static int cmp_ops(const void *pa, const void *pb)
{
    const wl_op_summary *a = pa, *b = pb;
    int res = 0;
    switch (g_key) {
    case 1: res = a->cpu_ns < b->cpu_ns ? 1 : a->cpu_ns > b->cpu_ns ? -1 : 0; break;
    case 2: res = a->calls < b->calls ? 1 : a->calls > b->calls ? -1 : 0; break;
    case 3: res = a->kernels < b->kernels ? 1 : a->kernels > b->kernels ? -1 : 0; break;
    case 4: res = strcmp(a->name, b->name); break;
    default: res = a->gpu_ns < b->gpu_ns ? 1 : a->gpu_ns > b->gpu_ns ? -1 : 0; break;
    }
    if (g_reverse)
        res = -res;
    if (!res)
        res = a->gpu_ns < b->gpu_ns ? 1 : a->gpu_ns > b->gpu_ns ? -1 : strcmp(a->name, b->name);
    return res ? res : strcmp(a->shape, b->shape);
}

int kernels_by_op(wl_session *s, const char *sort, int reverse, int csv, int json, long long top)
{
    static const char *const KEYS[] = {"gpu", "cpu", "calls", "kernels", "name"};
    g_key = 0;
    for (int i = 0; sort && i < 5; i++)
        if (!strcmp(sort, KEYS[i]))
            g_key = i;
    if (sort && strcmp(sort, KEYS[g_key])) {
        fprintf(stderr, "warplens kernels: --by op sorts by gpu, cpu, calls, kernels or name, not '%s'\n", sort);
        return 2;
    }
    g_reverse = reverse;
    wl_op_summary *ops;
    int n = wl_session_op_summaries(s, &ops);
    if (n < 0) {
        char what[8];
        if (wl_session_read_failure(s, what, sizeof what) || wl_session_has_identity(s))
            cli_read_error(s, "warplens kernels: cannot read the operations of %s\n", wl_session_path(s));
        else
            fprintf(stderr, "warplens kernels: this session carries no operations (made before kernel identity):"
                            " run `warplens import --upgrade SESSION` first\n");
        return 1;
    }
    uint64_t gpu_all = 0, kernels_all = 0;
    for (int i = 0; i < n; i++)
        gpu_all += ops[i].gpu_ns, kernels_all += ops[i].kernels;
    if (n > 1)
        qsort(ops, (size_t)n, sizeof *ops, cmp_ops);
    int shown = top > 0 && top < n ? (int)top : n;
    if (json) {
        printf("[");
        for (int i = 0; i < shown; i++) {
            const wl_op_summary *o = &ops[i];
            printf("%s\n{\"source\":\"%s\",\"operation\":", i ? "," : "", o->source);
            kf_json_str(stdout, o->name);
            printf(",\"input_shapes\":");
            if (o->shape[0])
                kf_json_str(stdout, o->shape);
            else
                printf("null");
            printf(",\"calls\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 ",\"kernels\":%" PRIu64 ",\"gpu_ns\":%" PRIu64 "}",
                   o->calls, o->cpu_ns, o->kernels, o->gpu_ns);
        }
        printf("\n]\n");
    } else if (csv) {
        printf("source,operation,input_shapes,calls,cpu_ns,kernels,gpu_ns\n");
        for (int i = 0; i < shown; i++) {
            const wl_op_summary *o = &ops[i];
            printf("%s,", o->source);
            kf_csv_str(stdout, o->name);
            putchar(',');
            kf_csv_str(stdout, o->shape);
            printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", o->calls, o->cpu_ns, o->kernels, o->gpu_ns);
        }
    } else {
        print_title("Operations (kernels: launched directly inside, so GPU time is the operation's self time)", WIDTH);
        printf("%-24s %-22s %6s %9s %9s %9s %6s %7s\n", "Operation", "Input shapes", "Calls", "CPU total", "CPU avg",
               "GPU total", "GPU%", "Kernels");
        for (int i = 0; i < shown; i++) {
            const wl_op_summary *o = &ops[i];
            char name[32], shape[32], ct[16], ca[16], gt[16];
            kf_shorten(o->name, 24, name, sizeof name);
            kf_shorten(o->shape[0] ? o->shape : "-", 22, shape, sizeof shape);
            fmt_ns((double)o->cpu_ns, ct, sizeof ct);
            fmt_ns(o->calls ? (double)o->cpu_ns / (double)o->calls : 0, ca, sizeof ca);
            fmt_ns((double)o->gpu_ns, gt, sizeof gt);
            printf("%-24s %-22s %6" PRIu64 " %9s %9s %9s %6.1f %7" PRIu64 "\n", name, shape, o->calls,
                   o->calls ? ct : "-", o->calls ? ca : "-", gt,
                   gpu_all ? 100.0 * (double)o->gpu_ns / (double)gpu_all : 0.0, o->kernels);
        }
        if (shown < n)
            printf("... %d more operation%s (--top shows more)\n", n - shown, n - shown == 1 ? "" : "s");
        if (!n)
            printf("(no NVTX ranges or scopes: run with --torch-ops for PyTorch operators)\n");
        printf("%" PRIu64 " kernels in %d operations (PyTorch operators, NVTX ranges, scopes)\n", kernels_all, n);
    }
    free(ops);
    return 0;
}
