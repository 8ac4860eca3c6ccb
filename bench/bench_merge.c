/* `warplens merge` and `warplens ranks` on synthetic multi-host jobs (store/session_synth_ranks.h).
 *   bench_merge --make DIR --ranks N --hosts H --kernels K [--offset-us US] [--straggler R --slowdown F]
 *       writes DIR/rank<r>.wlsession for r < N, ranks spread over H hosts (host<h>, ranks r with
 *       r % H == h), host h's clock offset h * US microseconds (its sign alternating), about K
 *       kernels per rank; prints each host's planted offset ("host<h> <ns>").
 *   bench_merge --time -- CMD...  runs CMD, prints its wall time and peak RSS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/session_synth_ranks.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int time_cmd(char **argv)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
        return 2;
    printf("wall %.2f s, peak RSS %.1f MiB, exit %d\n", now_s() - t0, (double)ru.ru_maxrss / 1024.0,
           WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    int ranks = 4, hosts = 2, straggler = -1, kernels = 1000;
    double offset_us = 250.0, slowdown = 0.3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--time") && i + 2 < argc && !strcmp(argv[i + 1], "--"))
            return time_cmd(argv + i + 2);
        if (!strcmp(argv[i], "--make") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hosts") && i + 1 < argc)
            hosts = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
            kernels = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--offset-us") && i + 1 < argc)
            offset_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--straggler") && i + 1 < argc)
            straggler = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--slowdown") && i + 1 < argc)
            slowdown = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_merge --make DIR [--ranks N] [--hosts H] [--kernels K] [--offset-us US]"
                            " [--straggler R] [--slowdown F]\n       bench_merge --time -- CMD...\n");
            return 2;
        }
    }
    if (!dir || ranks < 1 || hosts < 1 || hosts > ranks || kernels < 2) {
        fprintf(stderr, "bench_merge: --make DIR with 1 <= hosts <= ranks and kernels >= 2\n");
        return 2;
    }
    mkdir(dir, 0755);
    for (int h = 0; h < hosts; h++)
        printf("host%d %lld\n", h, (long long)(h * offset_us * 1000.0) * (h % 2 ? 1 : -1));
    for (int r = 0; r < ranks; r++) {
        wl_synth_rank_options o;
        wl_synth_rank_defaults(&o);
        char host[32], path[4200], err[512];
        int h = r % hosts;
        snprintf(host, sizeof host, "host%d", h);
        o.host = host;
        o.pid = 1000 + (uint32_t)(r / hosts); /* the same pids on every host: merge renumbers */
        o.rank = r;
        o.local_rank = r / hosts;
        o.world_size = ranks;
        o.clock_offset_ns = (int64_t)(h * offset_us * 1000.0) * (h % 2 ? 1 : -1);
        o.kernels_per_step = kernels >= 100 ? 99 : 7;
        o.steps = kernels / (o.kernels_per_step + 1);
        o.straggler = straggler;
        o.slowdown = slowdown;
        snprintf(path, sizeof path, "%s/rank%03d.wlsession", dir, r);
        if (wl_synth_rank_session(path, &o, err, sizeof err) != 0) {
            fprintf(stderr, "bench_merge: %s\n", err);
            return 1;
        }
    }
    return 0;
}
