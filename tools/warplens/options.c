/* The CLI's option parser and the --help it generates (see options.h). */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HELP_COLUMN 26 /* where an option's help starts */

void cli_init(cli_parser *p, const cli_cmd *cmd, int argc, char **argv)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->i = 1; /* argv[0] is the verb */
}

int cli_error(const cli_cmd *cmd, const char *fmt, ...)
{
    fprintf(stderr, "warplens %s: ", cmd->verb);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

int cli_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 64;
    int d[64][64]; /* optimal string alignment: edits plus adjacent transpositions */
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

/* The long name closest to name: one it starts (`--max` for --max-lanes), else one a few edits
 * away (a third of the name's length, at least one); NULL when none is close. */
static const char *closest(const cli_opt *opts, const char *name, size_t len)
{
    char typed[64];
    if (len >= sizeof typed)
        return NULL;
    memcpy(typed, name, len);
    typed[len] = 0;
    const char *best = NULL;
    int best_d = (int)len / 3 > 1 ? (int)len / 3 : 1;
    best_d++;
    for (const cli_opt *o = opts; o->id; o++) {
        if (!o->name)
            continue;
        if (len >= 2 && !strncmp(o->name, typed, len))
            return o->name;
        int d = cli_distance(typed, o->name);
        if (d < best_d) {
            best_d = d;
            best = o->name;
        }
    }
    if (!best && (!strncmp("help", typed, len > 1 ? len : 4) || cli_distance(typed, "help") <= 1))
        best = "help";
    return best;
}

static int unknown_long(cli_parser *p, const char *name, size_t len)
{
    const char *near = closest(p->cmd->opts, name, len);
    if (near)
        return cli_error(p->cmd, "unknown option '--%.*s'; did you mean --%s?", (int)len, name, near), CLI_ERROR;
    return cli_error(p->cmd, "unknown option '--%.*s' (see warplens %s --help)", (int)len, name, p->cmd->verb),
           CLI_ERROR;
}

static int missing(cli_parser *p, const cli_opt *o)
{
    cli_error(p->cmd, "%s needs a value (%s)", p->opt_text, o->arg_name ? o->arg_name : "an argument");
    return CLI_ERROR;
}

/* The argument of o, whose name has been read: attached (val, may be NULL) or the next word. */
static int take_arg(cli_parser *p, const cli_opt *o, const char *val)
{
    switch (o->arg) {
    case CLI_ARG_NONE:
        if (val) {
            cli_error(p->cmd, "%s takes no value (got '%s')", p->opt_text, val);
            return CLI_ERROR;
        }
        break;
    case CLI_ARG_REQUIRED:
        if (!val) {
            if (p->i >= p->argc)
                return missing(p, o);
            val = p->argv[p->i++]; /* as getopt: the next word even when it starts with '-' */
        }
        break;
    case CLI_ARG_OPTIONAL:
        if (!val && o->next_is_arg && p->i < p->argc && o->next_is_arg(p->argv[p->i]))
            val = p->argv[p->i++];
        break;
    }
    p->arg = val;
    return o->id;
}

static int long_opt(cli_parser *p, const char *body)
{
    const char *eq = strchr(body, '=');
    size_t len = eq ? (size_t)(eq - body) : strlen(body);
    snprintf(p->opt_text, sizeof p->opt_text, "--%.*s", (int)len, body);
    for (const cli_opt *o = p->cmd->opts; o->id; o++)
        if (o->name && strlen(o->name) == len && !strncmp(o->name, body, len))
            return take_arg(p, o, eq ? eq + 1 : NULL);
    if (len == 4 && !strncmp(body, "help", 4)) {
        cli_help(p->cmd, stdout);
        return CLI_HELP;
    }
    return unknown_long(p, body, len);
}

static int short_opt(cli_parser *p)
{
    const char *word = p->word;
    char c = *p->group++;
    snprintf(p->opt_text, sizeof p->opt_text, "-%c", c);
    for (const cli_opt *o = p->cmd->opts; o->id; o++) {
        if (o->short_name != c)
            continue;
        const char *val = NULL;
        if (o->arg != CLI_ARG_NONE && *p->group) { /* -oFILE */
            val = p->group;
            p->group = NULL;
        }
        return take_arg(p, o, val);
    }
    if (c == 'h') {
        cli_help(p->cmd, stdout);
        return CLI_HELP;
    }
    /* `-output`: a long name typed with one dash */
    for (const cli_opt *o = p->cmd->opts; c == word[1] && o->id; o++)
        if (o->name && !strcmp(o->name, word + 1)) {
            cli_error(p->cmd, "unknown option '-%c' in '%s'; did you mean --%s?", c, word, o->name);
            return CLI_ERROR;
        }
    if (strlen(word) > 2)
        cli_error(p->cmd, "unknown option '-%c' in '%s' (see warplens %s --help)", c, word, p->cmd->verb);
    else
        cli_error(p->cmd, "unknown option '-%c' (see warplens %s --help)", c, p->cmd->verb);
    return CLI_ERROR;
}

int cli_next(cli_parser *p)
{
    p->arg = NULL;
    if (p->group && *p->group)
        return short_opt(p);
    p->group = NULL;
    if (p->i >= p->argc)
        return CLI_END;
    const char *w = p->argv[p->i];
    if (p->only_positional || w[0] != '-' || !w[1]) {
        if (p->cmd->flags & CLI_STOP_AT_POSITIONAL)
            return CLI_END;
        p->i++;
        p->arg = w;
        return CLI_POSITIONAL;
    }
    p->i++;
    if (!strcmp(w, "--")) {
        if (p->cmd->flags & CLI_STOP_AT_POSITIONAL)
            return CLI_END;
        p->only_positional = 1;
        return cli_next(p);
    }
    if (w[1] == '-')
        return long_opt(p, w + 2);
    p->group = w + 1;
    p->word = w;
    return short_opt(p);
}

int cli_positional(cli_parser *p, const char **slots, int n, const char *what)
{
    for (int k = 0; k < n; k++)
        if (!slots[k]) {
            slots[k] = p->arg;
            return 0;
        }
    cli_error(p->cmd, "%s ('%s' is extra)", what, p->arg);
    return -1;
}

int cli_number(cli_parser *p, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(p->arg, &end, 10);
    if (!errno && end != p->arg && !*end && v >= min && v <= max) {
        *out = v;
        return 0;
    }
    if (max == LLONG_MAX)
        cli_error(p->cmd, "%s needs a whole number of at least %lld, got '%s'", p->opt_text, min, p->arg);
    else
        cli_error(p->cmd, "%s needs a whole number from %lld to %lld, got '%s'", p->opt_text, min, max, p->arg);
    return -1;
}

/* "  -o, --output FILE" */
static int option_label(const cli_opt *o, char *out, size_t n)
{
    int at = snprintf(out, n, "  ");
    if (o->short_name)
        at += snprintf(out + at, n - (size_t)at, "-%c%s", o->short_name, o->name ? ", " : "");
    else
        at += snprintf(out + at, n - (size_t)at, "    ");
    if (o->name)
        at += snprintf(out + at, n - (size_t)at, "--%s", o->name);
    const char *an = o->arg_name ? o->arg_name : "ARG";
    if (o->arg == CLI_ARG_REQUIRED)
        at += snprintf(out + at, n - (size_t)at, " %s", an);
    else if (o->arg == CLI_ARG_OPTIONAL)
        at += snprintf(out + at, n - (size_t)at, o->next_is_arg ? " [%s]" : "[=%s]", an);
    return at;
}

static void help_text(FILE *out, const char *text, int column, int first_at)
{
    if (!*text)
        fputc('\n', out);
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        fprintf(out, "%*s%.*s\n", first_at < column ? column - first_at : 0, "", (int)len, line);
        first_at = 0;
        line += len;
        if (*line)
            line++;
    }
}

void cli_help(const cli_cmd *cmd, FILE *out)
{
    const char *u = cmd->usage ? cmd->usage : "";
    for (int first = 1;; first = 0) {
        size_t len = strcspn(u, "\n");
        fprintf(out, "%s warplens %s%s%.*s\n", first ? "usage:" : "      ", cmd->verb, len ? " " : "", (int)len, u);
        u += len;
        if (!*u++)
            break;
    }
    if (cmd->about)
        fputs(cmd->about, out);
    for (const cli_opt *o = cmd->opts; o->id; o++) {
        char label[128];
        int at = option_label(o, label, sizeof label);
        fputs(label, out);
        if (at + 1 > HELP_COLUMN - 1) { /* the help on its own line */
            fputc('\n', out);
            at = 0;
        }
        help_text(out, o->help ? o->help : "", HELP_COLUMN, at);
    }
    fprintf(out, "  -h, --help              this help\n");
    if (cmd->footer)
        fputs(cmd->footer, out);
    if (cmd->more_help)
        cmd->more_help(out);
}
