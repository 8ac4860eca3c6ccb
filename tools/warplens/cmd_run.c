/* `warplens run [options] -- <program> [args...]`: runs the program with the recorder injected
 * (CUDA_INJECTION64_PATH), waits for it, builds the session from the capture files its processes
 * wrote, prints a short summary and exits with the program's own status. The program is started
 * with execvp: arguments are never seen by a shell. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capfile/capfile.h"
#include "capfile/metric_spec.h"
#include "capfile/pm_metric_spec.h"
#include "common/rank_env.h"
#include "run_env.h"
#include "run_metrics_opts.h"
#include "run_output.h"
#include "run_progress.h"
#include "run_sessions.h"
#include "run_summary.h"
#include "session_build.h"
#include "verbs.h"

typedef struct run_options {
    const char *output;
    const char *record;
    const char *buffer_size;
    const char *max_buffers;
    const char *metrics;
    const char *nvml_interval;
    const char *pm_sampling;  /* metric list or preset, NULL: off */
    const char *pm_interval;
    const char *pc_period;     /* --pc-period: log2 of the PC-sampling period in cycles */
    const char *capture_range; /* --capture-range: "profiler-api" */
    const char *ranks;         /* --ranks: the ranks to record (others run unprofiled) */
    wl_rank_list rank_list;    /* --ranks, parsed */
    run_metric_opts mf;        /* --metrics filters and graph launches (run_metrics_opts.h) */
    int quiet, keep_capture, check_occupancy, stalls, torch_ops;
    char **argv; /* the program and its arguments */
} run_options;

/* After --pm-sampling, whether the next word is its list rather than the program: a preset, a
 * metric name or list, or a word that names no program (a misspelt preset then gets its error). */
static int pm_list_word(const char *w)
{
    if (!w[0] || w[0] == '-')
        return 0;
    if (strstr(w, "__") || strchr(w, ','))
        return 1;
    for (int i = 0; WL_PM_PRESETS[i]; i++)
        if (!strcmp(w, WL_PM_PRESETS[i]))
            return 1;
    if (strchr(w, '/'))
        return access(w, F_OK) != 0;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", w);
        if (access(full, X_OK) == 0)
            return 0;
        p += n;
        if (*p == ':')
            p++;
    }
    return 1;
}

static int check_pm(const run_options *o)
{
    if (o->metrics || o->stalls) {
        fprintf(stderr, "warplens run: --pm-sampling and %s cannot be used together: both take the GPU's profiling"
                        " hardware, and %s profiles kernels one at a time, which would change the sampled timeline."
                        " Run them separately.\n", o->metrics ? "--metrics" : "--stalls",
                o->metrics ? "--metrics" : "--stalls");
        return -1;
    }
    static char names[WL_PM_METRICS_MAX][WL_METRIC_NAME_MAX];
    char err[512];
    if (wl_pm_metrics_expand(o->pm_sampling, names, NULL, WL_PM_METRICS_MAX, err, sizeof err) < 0) {
        fprintf(stderr, "warplens run: --pm-sampling: %s\n", err);
        return -1;
    }
    if (o->pm_interval) {
        char *end;
        long v = strtol(o->pm_interval, &end, 10);
        if (*end || end == o->pm_interval || v < (long)WL_PM_MIN_INTERVAL_US || v > (long)WL_PM_MAX_INTERVAL_US) {
            fprintf(stderr, "warplens run: --pm-interval must be %u..%u microseconds, got '%s'\n",
                    WL_PM_MIN_INTERVAL_US, WL_PM_MAX_INTERVAL_US, o->pm_interval);
            return -1;
        }
    }
    return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)

enum {
    O_OUT = 1, O_RANKS, O_RECORD, O_BUFFER_SIZE, O_MAX_BUFFERS, O_NVML_INTERVAL, O_CAPTURE_RANGE, O_KEEP_CAPTURE,
    O_CHECK_OCC, O_TORCH_OPS, O_METRICS, O_PM_SAMPLING, O_PM_INTERVAL, O_STALLS, O_PC_PERIOD, O_QUIET,
    O_MF = 100 /* + RUN_MF_*: the --metrics filters (run_metrics_opts.h) */
};

static const cli_opt OPTS[] = {
    {O_OUT, 'o', "output", CLI_ARG_REQUIRED, "NAME",
     "session file (default: <program>.wlsession; under a launcher with several\n"
     "ranks <program>_rank%r.wlsession). Templates: %p pid, %h host, %r rank\n"
     "(RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID), %l local rank,\n"
     "%q{VAR} an environment variable, %% a percent sign. With %r under\n"
     "`warplens run -- torchrun ...`: one session per rank", NULL, NULL},
    {O_RANKS, 0, "ranks", CLI_ARG_REQUIRED, "LIST", "record only these ranks, e.g. 0,3-5; the others run unprofiled",
     NULL, NULL},
    {O_RECORD, 0, "record", CLI_ARG_REQUIRED, "LIST", "what to record: kernels,memcpy,api,nvtx,sync or all (default all)",
     "all kernels memcpy api nvtx sync", NULL},
    {O_BUFFER_SIZE, 0, "buffer-size", CLI_ARG_REQUIRED, "SIZE", "CUPTI activity buffer size, e.g. 4M (default 1M; 64K..256M)",
     NULL, NULL},
    {O_MAX_BUFFERS, 0, "max-buffers", CLI_ARG_REQUIRED, "N",
     "activity buffers the recorder may map at once (default 1024; 2..4096):\n"
     "with --buffer-size, the bound of their memory", NULL, NULL},
    {O_NVML_INTERVAL, 0, "nvml-interval", CLI_ARG_REQUIRED, "MS",
     "NVML device sampling period (utilisation, clocks, power, temperature,\n"
     "memory); 0 = off (default 100; 10..60000)", NULL, NULL},
    {O_CAPTURE_RANGE, 0, "capture-range", CLI_ARG_REQUIRED, "profiler-api",
     "trace only between cudaProfilerStart and cudaProfilerStop (each such\n"
     "span; NVTX is recorded throughout). Not with --metrics, --stalls or\n"
     "--pm-sampling", "profiler-api", NULL},
    {O_KEEP_CAPTURE, 0, "keep-capture", CLI_ARG_NONE, NULL, "keep the raw capture files (<output>.capture/)", NULL, NULL},
    {O_CHECK_OCC, 0, "check-occupancy", CLI_ARG_NONE, NULL,
     "ask the driver for each distinct launch's occupancy, to compare\n"
     "with warplens' calculator (`warplens occupancy-check`)", NULL, NULL},
    {O_TORCH_OPS, 0, "torch-ops", CLI_ARG_NONE, NULL,
     "PyTorch programs: turn on torch.autograd.profiler.emit_nvtx(record_shapes=True)\n"
     "when the program imports torch (no change to the script), so each kernel\n"
     "gets its operator and input shapes (`warplens kernels --by op`)", NULL, NULL},
    {O_METRICS, 0, "metrics", CLI_ARG_REQUIRED, "LIST",
     "hardware metrics per kernel (CUPTI range profiler): presets default,\n"
     "memory, compute, occupancy and/or CUPTI metric names, comma-separated.\n"
     "Kernels are serialised and replayed once per pass: timings change", "default memory compute occupancy", NULL},
    {O_MF + RUN_MF_KERNEL, 'k', "metrics-kernel", CLI_ARG_REQUIRED, "REGEX",
     "with --metrics: profile only kernels whose demangled name\n"
     "matches (POSIX extended; ncu's regex: prefix accepted; copies and\n"
     "sets are then not profiled)", NULL, NULL},
    {O_MF + RUN_MF_KERNEL, 0, "kernel-name", CLI_ARG_REQUIRED, "REGEX", "ncu's name for --metrics-kernel", NULL, NULL},
    {O_MF + RUN_MF_SKIP, 's', "metrics-skip", CLI_ARG_REQUIRED, "N",
     "with --metrics: skip the first N kernel launches that pass -k and\n"
     "--metrics-nvtx", NULL, NULL},
    {O_MF + RUN_MF_SKIP, 0, "launch-skip", CLI_ARG_REQUIRED, "N", "ncu's name for --metrics-skip", NULL, NULL},
    {O_MF + RUN_MF_COUNT, 'c', "metrics-count", CLI_ARG_REQUIRED, "N", "with --metrics: profile at most N such launches",
     NULL, NULL},
    {O_MF + RUN_MF_COUNT, 0, "launch-count", CLI_ARG_REQUIRED, "N", "ncu's name for --metrics-count", NULL, NULL},
    {O_MF + RUN_MF_NVTX, 0, "metrics-nvtx", CLI_ARG_REQUIRED, "NAME",
     "with --metrics: only work launched while an NVTX range NAME is open\n"
     "(nested ranges included; repeatable)", NULL, NULL},
    {O_MF + RUN_MF_NVTX, 0, "nvtx-include", CLI_ARG_REQUIRED, "NAME", "ncu's name for --metrics-nvtx", NULL, NULL},
    {O_MF + RUN_MF_GRAPHS, 0, "metrics-graphs", CLI_ARG_REQUIRED, "MODE",
     "with --metrics: graph launches off (not profiled, default), node\n"
     "(each node its own range) or launch (one range per launch, one-pass\n"
     "sets)", "off node launch", NULL},
    {O_PM_SAMPLING, 0, "pm-sampling", CLI_ARG_OPTIONAL, "LIST",
     "device-wide hardware counters over fixed windows (CUPTI PM sampling;\n"
     "kernels run as usual): presets default, memory, compute and/or CUPTI\n"
     "metric names that fit one pass, comma-separated (default: default).\n"
     "The next word is taken as LIST unless it is the program to run;\n"
     "--pm-sampling=LIST always is. Not with --metrics or --stalls", "default memory compute", pm_list_word},
    {O_PM_INTERVAL, 0, "pm-interval", CLI_ARG_REQUIRED, "US", "PM sampling interval in microseconds (default 100; 10..1000000)",
     NULL, NULL},
    {O_STALLS, 0, "stalls", CLI_ARG_NONE, NULL,
     "warp stall reasons per kernel (CUPTI PC sampling): kernels run one at\n"
     "a time, so timings change; not with --metrics (both need the GPU's\n"
     "profiling hardware)", NULL, NULL},
    {O_PC_PERIOD, 0, "pc-period", CLI_ARG_REQUIRED, "N",
     "with --stalls: one warp sample per SM every 2^N cycles (5..31,\n"
     "default " STR(WL_PC_PERIOD_DEFAULT) "); smaller samples short kernels better, costs more", NULL, NULL},
    {O_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, "print nothing but errors; the program's output is untouched", NULL, NULL},
    {0},
};
const cli_cmd CLI_RUN = {"run", "[options] [--] <program> [args...]", NULL, OPTS,
                         "Options end at the program: nothing after it is read by warplens.\n"
                         "The exit status is the program's (128+N if it was killed by signal N).\n",
                         NULL, CLI_STOP_AT_POSITIONAL, CLI_POS_COMMAND, NULL};

static int parse(int argc, char **argv, run_options *o)
{
    memset(o, 0, sizeof *o);
    o->record = "all";
    cli_parser p;
    cli_init(&p, &CLI_RUN, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 1;
        case CLI_ERROR: return -1;
        case O_OUT: o->output = p.arg; break;
        case O_METRICS: o->metrics = p.arg; break;
        case O_RANKS: o->ranks = p.arg; break;
        case O_STALLS: o->stalls = 1; break;
        case O_PC_PERIOD: o->pc_period = p.arg; break;
        case O_RECORD: o->record = p.arg; break;
        case O_BUFFER_SIZE: o->buffer_size = p.arg; break;
        case O_MAX_BUFFERS: o->max_buffers = p.arg; break;
        case O_NVML_INTERVAL: o->nvml_interval = p.arg; break;
        case O_PM_SAMPLING: o->pm_sampling = p.arg ? p.arg : "default"; break;
        case O_PM_INTERVAL: o->pm_interval = p.arg; break;
        case O_CAPTURE_RANGE: o->capture_range = p.arg; break;
        case O_KEEP_CAPTURE: o->keep_capture = 1; break;
        case O_CHECK_OCC: o->check_occupancy = 1; break;
        case O_TORCH_OPS: o->torch_ops = 1; break;
        case O_QUIET: o->quiet = 1; break;
        default:
            if (run_metric_opt(&o->mf, id - O_MF, p.arg) != 0)
                return -1;
        }
    }
    if (p.i >= argc) {
        cli_error(&CLI_RUN, "no program given (usage: warplens run [options] [--] <program> [args...])");
        return -1;
    }
    o->argv = argv + p.i;
    char rerr[160];
    if (o->ranks && wl_rank_list_parse(o->ranks, &o->rank_list, rerr, sizeof rerr) != 0) {
        fprintf(stderr, "warplens run: --ranks: %s\n", rerr);
        return -1;
    }
    uint32_t mask;
    char bad[64];
    if (o->metrics) {
        static char names[WL_METRICS_MAX][WL_METRIC_NAME_MAX];
        char err[512];
        if (wl_metrics_expand(o->metrics, names, WL_METRICS_MAX, err, sizeof err) < 0) {
            fprintf(stderr, "warplens run: --metrics: %s\n", err);
            return -1;
        }
    }
    if (o->pm_sampling && check_pm(o) != 0)
        return -1;
    if (run_metric_opts_check(&o->mf, o->metrics != NULL) != 0)
        return -1;
    if (o->pm_interval && !o->pm_sampling) {
        fprintf(stderr, "warplens run: --pm-interval needs --pm-sampling\n");
        return -1;
    }
    if (o->stalls && o->metrics) {
        fprintf(stderr, "warplens run: --stalls and --metrics cannot run together: both need the GPU's profiling"
                        " hardware (PC sampling and the range profiler); record them in two runs\n");
        return -1;
    }
    if (o->pc_period) {
        char *end;
        long v = strtol(o->pc_period, &end, 10);
        if (!o->stalls) {
            fprintf(stderr, "warplens run: --pc-period goes with --stalls\n");
            return -1;
        }
        if (*end || end == o->pc_period || v < WL_PC_PERIOD_MIN || v > WL_PC_PERIOD_MAX) {
            fprintf(stderr, "warplens run: --pc-period must be %d..%d (the period is 2^N cycles), got '%s'\n",
                    WL_PC_PERIOD_MIN, WL_PC_PERIOD_MAX, o->pc_period);
            return -1;
        }
    }
    if (o->capture_range) {
        if (strcmp(o->capture_range, "profiler-api") != 0) {
            fprintf(stderr, "warplens run: --capture-range: unknown range '%s' (use profiler-api: between"
                            " cudaProfilerStart and cudaProfilerStop)\n", o->capture_range);
            return -1;
        }
        if (o->metrics || o->stalls || o->pm_sampling) {
            fprintf(stderr, "warplens run: --capture-range limits tracing only; it cannot be combined with %s\n",
                    o->metrics ? "--metrics" : o->stalls ? "--stalls" : "--pm-sampling");
            return -1;
        }
    }
    if (wl_record_mask_parse(o->record, &mask, bad, sizeof bad) != 0) {
        fprintf(stderr, "warplens run: --record: unknown item '%s' (use kernels,memcpy,api,nvtx,sync or all)\n", bad);
        return -1;
    }
    if (o->torch_ops && (mask & (WL_RECORD_NVTX | WL_RECORD_API)) != (WL_RECORD_NVTX | WL_RECORD_API)) {
        fprintf(stderr, "warplens run: --torch-ops needs nvtx and api in --record (operator ranges and the launch"
                        " calls inside them)\n");
        return -1;
    }
    if (o->buffer_size) {
        char *end;
        unsigned long long v = strtoull(o->buffer_size, &end, 10);
        unsigned long long mul = (*end == 'K' || *end == 'k') ? 1024 : (*end == 'M' || *end == 'm') ? 1048576 : 1;
        if (mul > 1)
            end++;
        v *= mul;
        if (*end || v < (64u << 10) || v > (256u << 20)) {
            fprintf(stderr, "warplens run: --buffer-size must be between 64K and 256M, got '%s'\n", o->buffer_size);
            return -1;
        }
    }
    if (o->max_buffers) {
        char *end;
        long v = strtol(o->max_buffers, &end, 10);
        if (*end || v < 2 || v > 4096) {
            fprintf(stderr, "warplens run: --max-buffers must be between 2 and 4096, got '%s'\n", o->max_buffers);
            return -1;
        }
    }
    if (o->nvml_interval) {
        char *end;
        long v = strtol(o->nvml_interval, &end, 10);
        if (*end || end == o->nvml_interval || (v != 0 && (v < 10 || v > 60000))) {
            fprintf(stderr, "warplens run: --nvml-interval must be 0 (off) or 10..60000 ms, got '%s'\n",
                    o->nvml_interval);
            return -1;
        }
    }
    return 0;
}

static volatile sig_atomic_t g_child;

static void forward_signal(int sig)
{
    if (g_child > 0)
        kill((pid_t)g_child, sig);
}

/* Runs argv; returns the wait status, or -1 if it could not be started (reason printed). With
 * progress, the wait polls every 250 ms and updates the progress line. */
static int run_program(char **argv, run_progress *progress)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        fprintf(stderr, "warplens: pipe: %s\n", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "warplens: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(pipefd[0]);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(pipefd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(pipefd[1]);
    g_child = pid;
    /* Ctrl-C reaches the program directly (same process group); warplens waits so it can still
     * write what was recorded. Termination requests sent to warplens are passed on. */
    struct sigaction ign = {0}, fwd = {0}, old_int, old_quit, old_term, old_hup;
    ign.sa_handler = SIG_IGN;
    fwd.sa_handler = forward_signal;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);
    int exec_errno = 0;
    ssize_t r;
    do {
        r = read(pipefd[0], &exec_errno, sizeof exec_errno);
    } while (r < 0 && errno == EINTR);
    close(pipefd[0]);
    int status = 0;
    if (progress && progress->on && r == 0) {
        for (;;) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid || (w < 0 && errno != EINTR))
                break;
            struct timespec ts = {0, 250000000};
            nanosleep(&ts, NULL);
            run_progress_tick(progress);
        }
        run_progress_end(progress);
    } else {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    g_child = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (r == (ssize_t)sizeof exec_errno) {
        fprintf(stderr, "warplens: cannot run '%s': %s\n", argv[0], strerror(exec_errno));
        return -1;
    }
    return status;
}

static int exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

/* The default session name: <program>.wlsession, or under a launcher with several ranks
 * <program>_rank%r.wlsession (a '%' in the program's name is written as %%). */
static void default_output(const char *program, int ranked, char *out, size_t n)
{
    const char *base = strrchr(program, '/');
    base = base ? base + 1 : program;
    if (!base[0])
        base = "warplens";
    size_t at = 0;
    for (; *base && at + 2 < n; base++) {
        if (*base == '%')
            out[at++] = '%';
        out[at++] = *base;
    }
    out[at] = 0;
    snprintf(out + at, n - at, "%s", ranked ? "_rank%r.wlsession" : ".wlsession");
}

/* The session's name: -o (a template) expanded for this process. *split: the template asks for a
 * rank this process was not given (it starts the launcher whose children carry it), so each
 * rank gets its session after the run. 0, or -1 after saying why. */
static int resolve_output(const run_options *o, char *tmpl, char *output, size_t n, run_output_ids *ids, int *split)
{
    static char host[256];
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = 0;
    ids->pid = (long)getpid();
    ids->host = host;
    ids->rank = wl_env_rank(NULL);
    ids->local_rank = wl_env_local_rank(NULL);
    if (o->output)
        snprintf(tmpl, n, "%s", o->output);
    else
        default_output(o->argv[0], ids->rank >= 0 && wl_env_world_size(NULL) != 1, tmpl, n);
    char err[512];
    int esc = run_output_scan(tmpl, err, sizeof err);
    if (esc >= 0 && run_output_check_unique(tmpl, (unsigned)esc, NULL, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "warplens run: %s\n", err);
        return -1;
    }
    if (esc < 0 || run_output_expand(tmpl, ids, NULL, NULL, output, n, err, sizeof err) != 0) {
        fprintf(stderr, "warplens run: -o '%s': %s\n", tmpl, err);
        return -1;
    }
    *split = ((esc & RUN_OUT_RANK) && ids->rank < 0) || ((esc & RUN_OUT_LOCAL) && ids->local_rank < 0);
    return 0;
}

static void join_args(char **argv, char *out, size_t n)
{
    out[0] = 0;
    for (int i = 0; argv[i]; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? " " : "", argv[i]);
}

int cmd_run(int argc, char **argv)
{
    run_options o;
    int pr = parse(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;

    char tmpl[PATH_MAX], output[PATH_MAX];
    run_output_ids ids;
    int split;
    if (resolve_output(&o, tmpl, output, sizeof output, &ids, &split) != 0)
        return 2;
    if (o.ranks && ids.rank >= 0 && !wl_rank_list_has(&o.rank_list, ids.rank)) {
        int st = run_program(o.argv, NULL); /* a rank not asked for: unprofiled */
        return st < 0 ? 127 : exit_code(st);
    }

    char why[256];
    run_export_java_binding();
    if (!run_have_driver(why, sizeof why)) {
        fprintf(stderr, "warplens: %s: %s runs without GPU recording\n", why, o.argv[0]);
        setenv("WARPLENS_NO_GPU", "1", 1);
        int st = run_program(o.argv, NULL);
        return st < 0 ? 127 : exit_code(st);
    }
    char recorder[PATH_MAX];
    if (run_find_recorder(recorder) != 0) {
        fprintf(stderr, "warplens: cannot find libwarplens_recorder.so in the warplens installation"
                        " (" WARPLENS_PRIVLIB_FROM_BIN " or ../lib next to the binary; set WARPLENS_RECORDER_LIB)\n");
        return 2;
    }

    char capdir[PATH_MAX + 32];
    snprintf(capdir, sizeof capdir, "%s.capture.XXXXXX", output);
    if (!mkdtemp(capdir)) {
        fprintf(stderr, "warplens: cannot create %s: %s\n", capdir, strerror(errno));
        return 2;
    }
    char capdir_abs[PATH_MAX + 32];
    if (!realpath(capdir, capdir_abs))
        snprintf(capdir_abs, sizeof capdir_abs, "%s", capdir);

    /* the options decide: nothing of an outer run's (or the shell's) recorder settings leaks in */
    static const char *const owned[] = {"WARPLENS_BUFFER_SIZE", "WARPLENS_MAX_BUFFERS", "WARPLENS_NVML_INTERVAL_MS",
                                        "WARPLENS_QUIET", "WARPLENS_CHECK_OCCUPANCY", "WARPLENS_CAPTURE_RANGE",
                                        "WARPLENS_METRICS", "WARPLENS_PM_SAMPLING", "WARPLENS_PM_INTERVAL_US",
                                        "WARPLENS_PC_SAMPLING", "WARPLENS_PC_PERIOD", "WARPLENS_TORCH_OPS",
                                        "WARPLENS_METRICS_KERNEL", "WARPLENS_METRICS_SKIP", "WARPLENS_METRICS_COUNT",
                                        "WARPLENS_METRICS_NVTX", "WARPLENS_METRICS_GRAPHS", "WARPLENS_RANKS"};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        unsetenv(owned[i]);
    setenv("CUDA_INJECTION64_PATH", recorder, 1);
    setenv("WARPLENS_RECORDER", recorder, 1);
    setenv("WARPLENS_CAPTURE_DIR", capdir_abs, 1);
    setenv("WARPLENS_RECORD", o.record, 1);
    if (o.buffer_size)
        setenv("WARPLENS_BUFFER_SIZE", o.buffer_size, 1);
    if (o.max_buffers)
        setenv("WARPLENS_MAX_BUFFERS", o.max_buffers, 1);
    if (o.nvml_interval)
        setenv("WARPLENS_NVML_INTERVAL_MS", o.nvml_interval, 1);
    if (o.quiet)
        setenv("WARPLENS_QUIET", "1", 1);
    if (o.check_occupancy)
        setenv("WARPLENS_CHECK_OCCUPANCY", "1", 1);
    if (o.ranks && ids.rank < 0) /* the launcher it starts gives the ranks: each recorder decides */
        setenv("WARPLENS_RANKS", o.ranks, 1);
    if (o.torch_ops && run_export_torch_ops() != 0) {
        rmdir(capdir);
        return 2;
    }
    if (o.capture_range)
        setenv("WARPLENS_CAPTURE_RANGE", o.capture_range, 1);
    char filter_text[600] = "";
    if (o.metrics) {
        setenv("WARPLENS_METRICS", o.metrics, 1);
        run_metric_opts_apply(&o.mf, filter_text, sizeof filter_text);
    }
    if (o.pm_sampling) {
        setenv("WARPLENS_PM_SAMPLING", o.pm_sampling, 1);
        char us[16];
        snprintf(us, sizeof us, "%u", WL_PM_DEFAULT_INTERVAL_US);
        setenv("WARPLENS_PM_INTERVAL_US", o.pm_interval ? o.pm_interval : us, 1);
    }
    if (o.stalls) {
        char period[16];
        snprintf(period, sizeof period, "%s", o.pc_period ? o.pc_period : "");
        if (!period[0])
            snprintf(period, sizeof period, "%d", WL_PC_PERIOD_DEFAULT);
        setenv("WARPLENS_PC_SAMPLING", "1", 1);
        setenv("WARPLENS_PC_PERIOD", period, 1);
    }
    uint32_t mask = 0;
    wl_record_mask_parse(o.record, &mask, NULL, 0);
    /* The recorder is also NVTX's injection library: it starts recording at the first NVTX call
     * (which may precede CUDA's initialisation) and hands NVTX over to CUPTI. */
    if ((mask & WL_RECORD_NVTX) || o.mf.nnvtx) {
        const char *prior = getenv("NVTX_INJECTION64_PATH");
        if (prior && *prior && strcmp(prior, recorder) != 0 && !o.quiet)
            fprintf(stderr, "warplens: replacing NVTX_INJECTION64_PATH=%s to record NVTX ranges\n", prior);
        setenv("NVTX_INJECTION64_PATH", recorder, 1);
    }

    char started[32];
    snprintf(started, sizeof started, "%lld", (long long)time(NULL));
    run_progress progress;
    run_progress_init(&progress, capdir_abs, o.metrics && !o.quiet && isatty(STDERR_FILENO));
    int status = run_program(o.argv, &progress);
    if (status < 0) {
        rmdir(capdir);
        return 127;
    }
    int code = exit_code(status);

    char command[4096], status_text[32], signal_text[16];
    join_args(o.argv, command, sizeof command);
    snprintf(status_text, sizeof status_text, "%d", code);
    snprintf(signal_text, sizeof signal_text, "%d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    session_meta_kv meta[] = {{"command", command},
                              {"exit_status", status_text},
                              {"signal", signal_text},
                              {"started_unix", started},
                              {"record", o.record},
                              {NULL, NULL},
                              {NULL, NULL},
                              {NULL, NULL},
                              {NULL, NULL},
                              {NULL, NULL}};
    int nmeta = 5; /* the list ends at the first NULL key */
    if (o.metrics)
        meta[nmeta++] = (session_meta_kv){"metrics", o.metrics};
    if (filter_text[0])
        meta[nmeta++] = (session_meta_kv){"metrics_filter", filter_text};
    else if (o.stalls)
        meta[nmeta++] = (session_meta_kv){"stalls", getenv("WARPLENS_PC_PERIOD")};
    if (o.pm_sampling)
        meta[nmeta++] = (session_meta_kv){"pm_sampling", o.pm_sampling};
    if (o.torch_ops)
        meta[nmeta++] = (session_meta_kv){"torch_ops", "1"};
    if (WIFSIGNALED(status))
        meta[nmeta++] = (session_meta_kv){"complete", "0"};
    run_sessions_opts so = {capdir, output, split ? tmpl : NULL, &ids, o.argv[0], meta, o.quiet, o.keep_capture,
                            WIFSIGNALED(status) ? WTERMSIG(status) : 0};
    run_sessions_build(&so);
    return code;
}
