/* Export benchmark: builds a synthetic session of N kernels (with their API calls, copies, sets,
 * NVTX ranges and scopes), or takes one already made, then exports it in each format, each in a
 * fresh child process so its peak RSS (VmHWM, else getrusage) is the exporter's own. Prints
 * events/s, bytes/event, peak RSS and the Perfetto/JSON size ratio; --append FILE adds the block,
 * dated, with the machine. Events: Perfetto TrackEvents (BEGIN/END/COUNTER), JSON events (X, s, f,
 * C), JFR events (one per kernel, copy, set, API call, NVTX range, scope and occupancy snapshot).
 *
 *   bench_export [--kernels N | --session FILE] [--formats perfetto,json,jfr] [--dir DIR] [--keep]
 *                [--append FILE]
 *   bench_export --make-session FILE [--kernels N]   (only writes the session)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export/session_export.h"
#include "store/session_synth.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void synth_progress(uint64_t done, uint64_t total, void *arg)
{
    (void)arg;
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\rgenerating: %3.0f%%", total ? 100.0 * (double)done / (double)total : 100.0);
}

/* Child: export one format and print "events bytes slices flows seconds maxrss_kib restarted". */
static int export_only(const char *format, const char *session, const char *out)
{
    char err[512];
    wl_session *s = wl_session_open(session, err, sizeof err);
    if (!s) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    FILE *fp = fopen(out, "wb");
    if (!fp)
        return 1;
    static char iobuf[1 << 20];
    setvbuf(fp, iobuf, _IOFBF, sizeof iobuf);
    wl_export_stats st;
    double t0 = now_s();
    int rc = !strcmp(format, "json")  ? wl_export_chrome_json(s, fp, NULL, &st, err, sizeof err)
             : !strcmp(format, "jfr") ? wl_export_jfr(s, fp, NULL, &st, err, sizeof err)
                                      : wl_export_perfetto(s, fp, NULL, &st, err, sizeof err);
    if (fclose(fp))
        rc = -1;
    double dt = now_s() - t0;
    wl_session_close(s);
    if (rc) {
        fprintf(stderr, "export failed: %s\n", err);
        return 1;
    }
    /* Peak RSS of this process image: getrusage's ru_maxrss carries the parent's peak across
     * fork + exec on Linux (the forked copy shares the generator's pages), VmHWM does not. */
    long hwm = -1;
    char line[256];
    FILE *st_f = fopen("/proc/self/status", "r");
    while (st_f && fgets(line, sizeof line, st_f))
        if (!strncmp(line, "VmHWM:", 6))
            hwm = strtol(line + 6, NULL, 10);
    if (st_f)
        fclose(st_f);
    if (hwm < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        hwm = ru.ru_maxrss;
    }
    printf("%llu %llu %llu %llu %.6f %ld %d\n", (unsigned long long)st.events, (unsigned long long)st.bytes,
           (unsigned long long)st.tl.slices, (unsigned long long)st.tl.flows, dt, hwm, st.restarted);
    return 0;
}

typedef struct result {
    unsigned long long events, bytes, slices, flows;
    double seconds;
    long rss_kib;
    int restarted; /* the export started over (export_rerun.h): its time includes the first try */
} result;

static int run_child(const char *self, const char *format, const char *session, const char *out, result *r)
{
    int fd[2];
    if (pipe(fd))
        return -1;
    /* The previous step's output (the session just generated, the other format's trace) goes to
     * disk first: its writeback would otherwise run during this export and be timed with it. */
    sync();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        execl(self, self, "--export-only", format, session, out, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[256] = "";
    ssize_t n = read(fd[0], buf, sizeof buf - 1);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status))
        return -1;
    buf[n] = 0;
    return sscanf(buf, "%llu %llu %llu %llu %lf %ld %d", &r->events, &r->bytes, &r->slices, &r->flows, &r->seconds,
                  &r->rss_kib, &r->restarted) == 7 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--export-only"))
        return export_only(argv[2], argv[3], argv[4]);
    wl_synth_options o;
    wl_synth_defaults(&o);
    o.kernels = 1000000;
    o.threads = 4;
    o.streams = 4;
    const char *dir = "/tmp", *append = NULL, *make = NULL, *given = NULL, *formats = "perfetto,json,jfr";
    int keep = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
            o.kernels = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--append") && i + 1 < argc)
            append = argv[++i];
        else if (!strcmp(argv[i], "--make-session") && i + 1 < argc)
            make = argv[++i];
        else if (!strcmp(argv[i], "--session") && i + 1 < argc)
            given = argv[++i];
        else if (!strcmp(argv[i], "--formats") && i + 1 < argc)
            formats = argv[++i];
        else if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else {
            fprintf(stderr, "usage: bench_export [--kernels N | --session FILE] [--formats perfetto,json,jfr] [--dir DIR]\n"
                            "                    [--keep] [--append FILE]\n"
                            "       bench_export --make-session FILE [--kernels N]\n");
            return 2;
        }
    }
    static const char *const FORMATS[3] = {"perfetto", "json", "jfr"}, *const EXT[3] = {"pftrace", "json", "jfr"};
    int want[3] = {0, 0, 0};
    for (int f = 0; f < 3; f++)
        want[f] = strstr(formats, FORMATS[f]) != NULL;
    char session[4096], out[3][4096], err[512], what[512];
    wl_synth_counts c;
    memset(&c, 0, sizeof c);
    double gen = 0;
    if (given) {
        snprintf(session, sizeof session, "%s", given);
        wl_session *s = wl_session_open(session, err, sizeof err);
        wl_session_span span;
        if (!s || wl_session_get_span(s, &span)) {
            fprintf(stderr, "bench_export: %s\n", s ? "cannot read the session" : err);
            wl_session_close(s);
            return 1;
        }
        c.kernels = span.kernels, c.api_calls = span.api_calls, c.memcpys = span.memcpys;
        c.memsets = span.memsets, c.nvtx_ranges = span.nvtx_ranges, c.scopes = span.scopes;
        wl_session_close(s);
        snprintf(what, sizeof what, "given: %.400s", session);
    } else {
        snprintf(session, sizeof session, "%s", make ? make : "");
        if (!make)
            snprintf(session, sizeof session, "%s/bench_export_%llu.wlsession", dir, (unsigned long long)o.kernels);
        o.progress = synth_progress;
        double t0 = now_s();
        if (wl_synth_session(session, &o, &c, err, sizeof err)) {
            fprintf(stderr, "bench_export: %s\n", err);
            return 1;
        }
        gen = now_s() - t0;
        if (isatty(STDERR_FILENO))
            fputc('\n', stderr);
        if (make) {
            printf("%s: %llu kernels, %llu API calls, %llu memcpy, %llu memset, %llu NVTX, %llu scopes, %llu flows\n",
                   make, (unsigned long long)c.kernels, (unsigned long long)c.api_calls,
                   (unsigned long long)c.memcpys, (unsigned long long)c.memsets, (unsigned long long)c.nvtx_ranges,
                   (unsigned long long)c.scopes, (unsigned long long)c.flows);
            return 0;
        }
        snprintf(what, sizeof what, "generated in %.1f s", gen);
    }
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return 1;
    self[sl] = 0;
    result r[3];
    memset(r, 0, sizeof r);
    for (int f = 0; f < 3; f++) {
        if (!want[f])
            continue;
        snprintf(out[f], sizeof out[f], "%s/bench_export_%llu.%s", dir, (unsigned long long)c.kernels, EXT[f]);
        if (run_child(self, FORMATS[f], session, out[f], &r[f])) {
            fprintf(stderr, "bench_export: the %s export failed\n", FORMATS[f]);
            return 1;
        }
    }
    char block[4096], host[256] = "?";
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(host, sizeof host, "%s %s, %ld CPUs", u.machine, u.release, sysconf(_SC_NPROCESSORS_ONLN));
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    int n = snprintf(block, sizeof block,
                     "%s, %s\n"
                     "session: %llu kernels, %llu API calls, %llu memcpy, %llu memset, %llu NVTX, %llu scopes (%s)\n",
                     date, host, (unsigned long long)c.kernels, (unsigned long long)c.api_calls,
                     (unsigned long long)c.memcpys, (unsigned long long)c.memsets,
                     (unsigned long long)c.nvtx_ranges, (unsigned long long)c.scopes, what);
    for (int f = 0; f < 3; f++)
        if (want[f])
            n += snprintf(block + n, sizeof block - (size_t)n,
                          "%-8s %12llu events %8.2f s %6.2f M events/s %6.1f bytes/event %8.1f MiB  peak RSS %6.1f MiB"
                          "  (%llu slices, %llu flows)%s\n",
                          FORMATS[f], r[f].events, r[f].seconds, (double)r[f].events / r[f].seconds / 1e6,
                          (double)r[f].bytes / (double)r[f].events, (double)r[f].bytes / 1048576.0,
                          (double)r[f].rss_kib / 1024.0, r[f].slices, r[f].flows,
                          r[f].restarted ? " started over: kernels far from start order" : "");
    int agree = 1;
    if (want[0] && want[1]) {
        agree = r[0].slices == r[1].slices && r[0].flows == r[1].flows;
        snprintf(block + n, sizeof block - (size_t)n, "size perfetto/json = %.3f; slices/flows agree: %s\n",
                 (double)r[0].bytes / (double)r[1].bytes, agree ? "yes" : "NO");
    }
    fputs(block, stdout);
    if (append) {
        FILE *fa = fopen(append, "a");
        if (!fa || fprintf(fa, "\n%s", block) < 0 || fclose(fa)) {
            fprintf(stderr, "bench_export: cannot append to %s\n", append);
            return 1;
        }
    }
    if (!keep) {
        if (!given)
            unlink(session);
        for (int f = 0; f < 3; f++)
            if (want[f])
                unlink(out[f]);
    }
    return agree ? 0 : 1;
}
