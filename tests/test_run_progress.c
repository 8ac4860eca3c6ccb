/* The progress line of `warplens run --metrics` (tools/warplens/run_progress.c): progress side
 * files of two processes summed, a torn and a foreign file ignored, the line's wording with and
 * without a rate, waiting calls and their time, ranges by kind and filters, and the forced switch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_progress.h"
#include "test.h"

static void put(const char *dir, const char *name, const void *p, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(p, 1, n, f) == n);
        fclose(f);
    }
}

int main(void)
{
    char dir[] = "/tmp/wl_progress.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    wlcap_progress a = {WLCAP_PROGRESS_MAGIC, sizeof a, 1, 1300, 1234, 1250, 1200, 30, 4, 0, 0, 16, 4,
                        WLCAP_METRIC_REPLAY_KERNEL};
    wlcap_progress b = a;
    b.calls_seen = 12, b.calls_done = 10, b.kernels = 10, b.copies = b.sets = 0, b.left_out = 0, b.passes = 2;
    b.replay = WLCAP_METRIC_REPLAY_NONE;
    put(dir, "100.wlprogress", &a, sizeof a);
    put(dir, "101.wlprogress", &b, sizeof b);
    put(dir, "102.wlprogress", &a, 20);          /* torn: no news */
    wlcap_progress bad = a;
    bad.magic = 0;
    put(dir, "103.wlprogress", &bad, sizeof bad); /* not ours */
    put(dir, "104.wlcap", &a, sizeof a);          /* not a progress file */
    wlcap_progress sum;
    CHECK_EQ_INT(run_progress_read(dir, &sum), 2);
    CHECK_EQ_INT(sum.calls_seen, 1312);
    CHECK_EQ_INT(sum.calls_done, 1244);
    CHECK_EQ_INT(sum.kernels, 1210);
    CHECK_EQ_INT(sum.passes, 4);
    CHECK_EQ_INT(sum.replay, WLCAP_METRIC_REPLAY_KERNEL);
    char line[400];
    run_progress_format(&sum, 125.4, 5.2, line, sizeof line);
    CHECK_EQ_STR(line, "metrics: 1,244 calls profiled (4 passes, kernel replay), 5.2/s, 68 waiting ~13s | ranges: "
                       "1,210 kernels, 30 copies, 4 sets | 16 launches left out by filters | 2m05s");
    wlcap_progress one = {WLCAP_PROGRESS_MAGIC, sizeof one, 0, 3, 3, 3, 3, 0, 0, 0, 0, 0, 1, WLCAP_METRIC_REPLAY_NONE};
    run_progress_format(&one, 0.2, 0, line, sizeof line);
    CHECK_EQ_STR(line, "metrics: 3 calls profiled (1 pass, no replay) | ranges: 3 kernels | 0s");
    one.calls_seen = 5, one.unknown = 2, one.graphs = 1;
    run_progress_format(&one, 7200, 0, line, sizeof line);
    CHECK_EQ_STR(line, "metrics: 3 calls profiled (1 pass, no replay), 2 waiting | ranges: 3 kernels, 1 graph launches,"
                       " 2 untied | 2h00m");
    char tiny[16];
    run_progress_format(&sum, 1, 1, tiny, sizeof tiny); /* truncated, terminated */
    CHECK(strlen(tiny) == 15);
    run_progress p;
    setenv("WARPLENS_PROGRESS", "0", 1);
    run_progress_init(&p, dir, 1);
    CHECK_EQ_INT(p.on, 0);
    setenv("WARPLENS_PROGRESS", "1", 1);
    run_progress_init(&p, dir, 0);
    CHECK_EQ_INT(p.on, 1);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return test_report("test_run_progress");
}
