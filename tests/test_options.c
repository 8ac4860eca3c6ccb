/* The CLI's option parser (tools/warplens/options.c): --opt=value and --opt value, grouped short
 * options, -oFILE and -o FILE, `--`, positional arguments mixed with options or ending them,
 * optional arguments (attached, or the next word where the option decides), unknown options with
 * the closest name, missing and unwanted values, and the generated help. Messages are read back
 * from stderr, redirected to a file. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "test.h"

enum { O_OUT = 1, O_QUIET, O_VERBOSE, O_SORT, O_TOP, O_LIST, O_FORMAT };

static int is_list(const char *w) { return !strcmp(w, "default") || strchr(w, ',') != NULL; }

static const cli_opt OPTS[] = {
    {O_OUT, 'o', "output", CLI_ARG_REQUIRED, "FILE", "where to write", NULL, NULL},
    {O_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, "quiet", NULL, NULL},
    {O_VERBOSE, 'v', NULL, CLI_ARG_NONE, NULL, "more", NULL, NULL},
    {O_SORT, 0, "sort", CLI_ARG_REQUIRED, "KEY", "sort key\nsecond line", NULL, NULL},
    {O_TOP, 't', "top", CLI_ARG_OPTIONAL, "N", "first N", NULL, NULL},
    {O_LIST, 0, "list", CLI_ARG_OPTIONAL, "LIST", "a list", NULL, is_list},
    {O_FORMAT, 0, "format", CLI_ARG_REQUIRED, "F", "format", "json perfetto", NULL},
    {0},
};
static const cli_cmd CMD = {"demo", "<session> [options]", NULL, OPTS, "footer text\n", NULL, 0, CLI_POS_SESSION, NULL};
static const cli_cmd CMD_STOP = {"demo", "[options] -- PROG", NULL, OPTS, NULL, NULL, CLI_STOP_AT_POSITIONAL,
                                 CLI_POS_COMMAND, NULL};

/* Parses the words; writes "id:arg " per result into out; returns the last result. */
static int parse(const cli_cmd *cmd, const char *words, char *out, size_t n, int *stop_at)
{
    static char buf[512];
    char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "demo %s", words);
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
        argv[argc++] = strcmp(t, "''") ? t : (char *)"";
    argv[argc] = NULL;
    cli_parser p;
    cli_init(&p, cmd, argc, argv);
    out[0] = 0;
    int id;
    while ((id = cli_next(&p)) != CLI_END && id != CLI_ERROR && id != CLI_HELP)
        snprintf(out + strlen(out), n - strlen(out), "%d:%s ", id, p.arg ? p.arg : "-");
    if (stop_at)
        *stop_at = p.i;
    return id;
}

static char err_path[] = "/tmp/wl_options_err.XXXXXX";
static int saved_stderr = -1;

/* stderr of what follows, read back */
static void err_begin(void)
{
    fflush(stderr);
    int fd = open(err_path, O_WRONLY | O_TRUNC);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
        abort();
    close(fd);
}

static const char *err_end(void)
{
    static char text[512];
    fflush(stderr);
    FILE *f = fopen(err_path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f)
        fclose(f);
    dup2(saved_stderr, STDERR_FILENO);
    return text;
}

int main(void)
{
    int fd = mkstemp(err_path);
    if (fd < 0)
        return 1;
    close(fd);
    saved_stderr = dup(STDERR_FILENO);
    char out[512];
    int at;

    /* = and next word, long and short, attached short argument */
    CHECK_EQ_INT(parse(&CMD, "--output=a.json s1", out, sizeof out, NULL), CLI_END);
    CHECK_EQ_STR(out, "1:a.json -1:s1 ");
    parse(&CMD, "s1 --output a.json -ob.json -o c.json", out, sizeof out, NULL);
    CHECK_EQ_STR(out, "-1:s1 1:a.json 1:b.json 1:c.json ");
    /* a required argument is the next word even when it starts with '-' (getopt's rule) */
    parse(&CMD, "--sort -x", out, sizeof out, NULL);
    CHECK_EQ_STR(out, "4:-x ");
    /* an empty value is a value */
    parse(&CMD, "--sort= --format ''", out, sizeof out, NULL);
    CHECK_EQ_STR(out, "4: 7: ");

    /* grouped short options; a group ending in an option with an argument takes the rest or the next word */
    parse(&CMD, "-qv -qvo out.pb -qoX", out, sizeof out, NULL);
    CHECK_EQ_STR(out, "2:- 3:- 2:- 3:- 1:out.pb 2:- 1:X ");

    /* `--` ends the options; '-' alone is positional */
    parse(&CMD, "-q -- -v --output - x", out, sizeof out, NULL);
    CHECK_EQ_STR(out, "2:- -1:-v -1:--output -1:- -1:x ");

    /* stop at the first positional (run's program), or after `--` */
    CHECK_EQ_INT(parse(&CMD_STOP, "-q prog -v --output x", out, sizeof out, &at), CLI_END);
    CHECK_EQ_STR(out, "2:- ");
    CHECK_EQ_INT(at, 2);
    parse(&CMD_STOP, "-q -- -prog -v", out, sizeof out, &at);
    CHECK_EQ_STR(out, "2:- ");
    CHECK_EQ_INT(at, 3);

    /* optional arguments: attached only, or the next word where next_is_arg says so */
    parse(&CMD, "--top s1 --top=5 -t7 -t", out, sizeof out, NULL);
    CHECK_EQ_STR(out, "5:- -1:s1 5:5 5:7 5:- ");
    parse(&CMD_STOP, "--list prog", out, sizeof out, &at);
    CHECK_EQ_STR(out, "6:- ");
    CHECK_EQ_INT(at, 2);
    parse(&CMD_STOP, "--list a,b prog", out, sizeof out, &at);
    CHECK_EQ_STR(out, "6:a,b ");
    CHECK_EQ_INT(at, 3);
    parse(&CMD_STOP, "--list=prog prog", out, sizeof out, &at);
    CHECK_EQ_STR(out, "6:prog ");

    /* unknown options: one line, the closest name */
    err_begin();
    CHECK_EQ_INT(parse(&CMD, "s1 --sotr x", out, sizeof out, NULL), CLI_ERROR);
    CHECK_EQ_STR(err_end(), "warplens demo: unknown option '--sotr'; did you mean --sort?\n");
    err_begin();
    parse(&CMD, "--outptu=x", out, sizeof out, NULL);
    CHECK_EQ_STR(err_end(), "warplens demo: unknown option '--outptu'; did you mean --output?\n");
    err_begin();
    parse(&CMD, "--form json", out, sizeof out, NULL);
    CHECK_EQ_STR(err_end(), "warplens demo: unknown option '--form'; did you mean --format?\n");
    err_begin();
    parse(&CMD, "--bogus", out, sizeof out, NULL);
    CHECK_EQ_STR(err_end(), "warplens demo: unknown option '--bogus' (see warplens demo --help)\n");
    err_begin();
    parse(&CMD, "-qx", out, sizeof out, NULL);
    CHECK_EQ_STR(err_end(), "warplens demo: unknown option '-x' in '-qx' (see warplens demo --help)\n");
    err_begin();
    parse(&CMD, "-sort k", out, sizeof out, NULL);
    CHECK_EQ_STR(err_end(), "warplens demo: unknown option '-s' in '-sort'; did you mean --sort?\n");
    /* abbreviations are not taken (a new option must never change what a script means) */
    err_begin();
    CHECK_EQ_INT(parse(&CMD, "--out x", out, sizeof out, NULL), CLI_ERROR);
    CHECK_EQ_STR(err_end(), "warplens demo: unknown option '--out'; did you mean --output?\n");

    /* missing and unwanted values */
    err_begin();
    CHECK_EQ_INT(parse(&CMD, "s1 --sort", out, sizeof out, NULL), CLI_ERROR);
    CHECK_EQ_STR(err_end(), "warplens demo: --sort needs a value (KEY)\n");
    err_begin();
    parse(&CMD, "-qo", out, sizeof out, NULL);
    CHECK_EQ_STR(err_end(), "warplens demo: -o needs a value (FILE)\n");
    err_begin();
    CHECK_EQ_INT(parse(&CMD, "--quiet=yes", out, sizeof out, NULL), CLI_ERROR);
    CHECK_EQ_STR(err_end(), "warplens demo: --quiet takes no value (got 'yes')\n");

    /* positional slots */
    {
        char *argv[] = {"demo", "a", "b", "c", NULL};
        cli_parser p;
        cli_init(&p, &CMD, 4, argv);
        const char *slots[2] = {NULL, NULL};
        CHECK_EQ_INT(cli_next(&p), CLI_POSITIONAL);
        CHECK_EQ_INT(cli_positional(&p, slots, 2, "two at most"), 0);
        cli_next(&p);
        CHECK_EQ_INT(cli_positional(&p, slots, 2, "two at most"), 0);
        cli_next(&p);
        err_begin();
        CHECK_EQ_INT(cli_positional(&p, slots, 2, "two at most"), -1);
        CHECK_EQ_STR(err_end(), "warplens demo: two at most ('c' is extra)\n");
        CHECK_EQ_STR(slots[1], "b");
    }

    /* the help, from the table */
    {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        cli_help(&CMD, f);
        fclose(f);
        CHECK(strstr(text, "usage: warplens demo <session> [options]\n") == text);
        CHECK(strstr(text, "  -o, --output FILE       where to write\n") != NULL);
        CHECK(strstr(text, "  -v                      more\n") != NULL);
        CHECK(strstr(text, "      --sort KEY          sort key\n                          second line\n") != NULL);
        CHECK(strstr(text, "  -t, --top[=N]           first N\n") != NULL);
        CHECK(strstr(text, "      --list [LIST]       a list\n") != NULL);
        CHECK(strstr(text, "  -h, --help              this help\nfooter text\n") != NULL);
        free(text);
    }
    CHECK_EQ_INT(cli_distance("sotr", "sort"), 1);
    CHECK_EQ_INT(cli_distance("", "abc"), 3);
    CHECK_EQ_INT(cli_distance("kitten", "sitting"), 3);
    unlink(err_path);
    return test_report("options");
}
