/* `warplens run -o` name templates (tools/warplens/run_output.c) and rank lists and launcher
 * variables (common/rank_env.c), with a faked environment: expansion of every escape, values
 * made safe as file names, hostile templates refused with a reason, and the check that under a
 * launcher every rank gets a file of its own. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/rank_env.h"
#include "test.h"
#include "../tools/warplens/run_output.h"

/* A faked environment: "NAME=value" strings, NULL-terminated. */
static const char *fake_get(const char *name, void *arg)
{
    for (const char *const *e = arg; *e; e++) {
        size_t n = strlen(name);
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    }
    return NULL;
}

static const char *expand(const char *tmpl, const char *const *env, char *out, size_t n, char *err)
{
    run_output_ids ids = {4321, "node07", 12, 4};
    return run_output_expand(tmpl, &ids, fake_get, (void *)env, out, n, err, 256) == 0 ? out : NULL;
}

static void test_escapes(void)
{
    static const char *const env[] = {"SLURM_JOB_ID=991", "SLASHY=a/b", "DOTS=..", "CTRL=x\ny", "EMPTY=", NULL};
    char out[PATH_MAX], err[256];
    CHECK_EQ_STR(expand("job_%h_%r.wlsession", env, out, sizeof out, err), "job_node07_12.wlsession");
    CHECK_EQ_STR(expand("p%p-l%l-%%-%q{SLURM_JOB_ID}", env, out, sizeof out, err), "p4321-l4-%-991");
    CHECK_EQ_STR(expand("plain.wlsession", env, out, sizeof out, err), "plain.wlsession");
    CHECK_EQ_STR(expand("%%r", env, out, sizeof out, err), "%r");
    /* values never add path components */
    CHECK_EQ_STR(expand("d/%q{SLASHY}", env, out, sizeof out, err), "d/a_b");
    CHECK_EQ_STR(expand("d/%q{DOTS}/x", env, out, sizeof out, err), "d/_/x");
    CHECK_EQ_STR(expand("%q{CTRL}", env, out, sizeof out, err), "x_y");
    /* a rank this process does not have */
    run_output_ids none = {1, "", -1, -1};
    CHECK_EQ_INT(run_output_expand("r%r_l%l_%h", &none, fake_get, (void *)env, out, sizeof out, err, sizeof err), 0);
    CHECK_EQ_STR(out, "rnorank_lnorank_localhost");
    CHECK_EQ_INT(run_output_scan("a%r%p%h%l%q{X}", err, sizeof err),
                 RUN_OUT_RANK | RUN_OUT_PID | RUN_OUT_HOST | RUN_OUT_LOCAL | RUN_OUT_VAR);
    CHECK_EQ_INT(run_output_scan("%q{SLURM_PROCID}", err, sizeof err), RUN_OUT_VAR | RUN_OUT_RANK);
    CHECK_EQ_INT(run_output_scan("%q{LOCAL_RANK}", err, sizeof err), RUN_OUT_VAR | RUN_OUT_LOCAL);
}

static void test_hostile(void)
{
    static const char *const env[] = {"EMPTY=", "BIG=" "0123456789012345678901234567890123456789", NULL};
    char out[64], err[256];
    static const char *const bad[][2] = {
        {"x%", "lone %"},          {"x%z", "unknown escape %z at byte 1"}, {"%q", "needs a variable name"},
        {"%q{", "needs a variable name"}, {"%q{}", "needs a variable name"}, {"%qX", "needs a variable name"},
        {"%q{A=B}", "needs a variable name"}, {"%q{A B}", "needs a variable name"}, {"", "empty"},
        {"%q{NOPE}", "NOPE is not set"}, {"%q{EMPTY}", "EMPTY is empty"}, {"%\x01", "unknown escape %?"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK(expand(bad[i][0], env, out, sizeof out, err) == NULL);
        if (!strstr(err, bad[i][1]))
            fprintf(stderr, "template '%s': error '%s' lacks '%s'\n", bad[i][0], err, bad[i][1]);
        CHECK(strstr(err, bad[i][1]) != NULL);
    }
    /* longer than the buffer: refused, not cut */
    CHECK(expand("%q{BIG}%q{BIG}", env, out, sizeof out, err) == NULL);
    CHECK(strstr(err, "more than 63 bytes") != NULL);
    char name[300];
    memset(name, 'A', sizeof name - 1);
    name[sizeof name - 1] = 0;
    char tmpl[320];
    snprintf(tmpl, sizeof tmpl, "%%q{%s}", name); /* a variable name past 255 bytes */
    CHECK(run_output_scan(tmpl, err, sizeof err) < 0);
    /* exactly filling the buffer is fine; one more byte is not */
    char fill[64];
    memset(fill, 'f', 63);
    fill[63] = 0;
    CHECK(expand(fill, env, out, sizeof out, err) != NULL);
    char over[70];
    memset(over, 'f', 60);
    memcpy(over + 60, "%p", 3);
    CHECK(expand(over, env, out, sizeof out, err) == NULL);
}

static int unique(const char *tmpl, const char *const *env, char *err)
{
    int esc = run_output_scan(tmpl, err, 512);
    return esc < 0 ? -2 : run_output_check_unique(tmpl, (unsigned)esc, fake_get, (void *)env, err, 512);
}

static void test_unique(void)
{
    static const char *const slurm[] = {"SLURM_PROCID=5", "SLURM_NTASKS=16", "SLURM_LOCALID=1", NULL};
    static const char *const one[] = {"RANK=0", "WORLD_SIZE=1", NULL};
    static const char *const none[] = {"HOME=/x", NULL};
    static const char *const bad_rank[] = {"RANK=abc", "PMI_RANK=2", "PMI_SIZE=4", NULL};
    char err[512];
    CHECK_EQ_INT(unique("job.wlsession", slurm, err), -1);
    CHECK(strstr(err, "SLURM_PROCID=5 of SLURM_NTASKS=16 is set") && strstr(err, "%r"));
    CHECK_EQ_INT(unique("job_%h.wlsession", slurm, err), -1); /* several ranks per host */
    CHECK_EQ_INT(unique("job_%l.wlsession", slurm, err), -1); /* several hosts */
    CHECK_EQ_INT(unique("job_%h_%l.wlsession", slurm, err), 0);
    CHECK_EQ_INT(unique("job_%r.wlsession", slurm, err), 0);
    CHECK_EQ_INT(unique("job_%p.wlsession", slurm, err), 0);
    CHECK_EQ_INT(unique("job_%q{SLURM_PROCID}", slurm, err), 0);
    CHECK_EQ_INT(unique("job.wlsession", one, err), 0);  /* a world of one */
    CHECK_EQ_INT(unique("job.wlsession", none, err), 0); /* no launcher */
    CHECK_EQ_INT(unique("job.wlsession", bad_rank, err), -1); /* RANK=abc is unset: PMI_RANK counts */
    CHECK(strstr(err, "PMI_RANK=2 of PMI_SIZE=4") != NULL);
}

static void test_rank_lists(void)
{
    wl_rank_list l;
    char err[128];
    CHECK_EQ_INT(wl_rank_list_parse("0,3-5,9", &l, err, sizeof err), 0);
    int want[] = {1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0};
    for (int r = 0; r <= 10; r++)
        CHECK_EQ_INT(wl_rank_list_has(&l, r), want[r]);
    CHECK_EQ_INT(wl_rank_list_has(&l, -1), 0);
    static const char *const bad[] = {"", ",", "1,", "a", "-1", "3-1", "1-", "1--2", "1 ,2", "99999999999", "2-x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(wl_rank_list_parse(bad[i], &l, err, sizeof err) == -1);
    char many[1024] = "0";
    for (int i = 1; i <= WL_RANK_SPANS; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), ",%d", i * 2);
    CHECK(wl_rank_list_parse(many, &l, err, sizeof err) == -1);
    static const char *const env[] = {"OMPI_COMM_WORLD_RANK=7", "MPI_LOCALRANKID=3", "SLURM_PROCID=1", NULL};
    const char *var;
    CHECK_EQ_INT(wl_env_first_int(WL_RANK_VARS, fake_get, (void *)env, &var), 7);
    CHECK_EQ_STR(var, "OMPI_COMM_WORLD_RANK");
    CHECK_EQ_INT(wl_env_first_int(WL_LOCAL_RANK_VARS, fake_get, (void *)env, &var), 3);
    CHECK_EQ_INT(wl_env_first_int(WL_WORLD_SIZE_VARS, fake_get, (void *)env, &var), -1);
    CHECK(var == NULL);
}

int main(void)
{
    test_escapes();
    test_hostile();
    test_unique();
    test_rank_lists();
    return test_report("run_output");
}
