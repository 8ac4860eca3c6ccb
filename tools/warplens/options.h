/* One option parser for every verb of the CLI. A verb declares its options once, in a table
 * (cli_opt: long name, short letter, argument kind, argument name, help), with its usage lines
 * (cli_cmd); from that one table come the parsing of its argv, its --help, the man pages (made from
 * --help by scripts/man-pages.sh) and the bash and zsh completions (completion.c), so they cannot
 * drift apart.
 *
 * The syntax is getopt_long's, which users' fingers know: `--opt=value` and `--opt value`, grouped
 * short options (`-qv`), `-oFILE` and `-o FILE`, `--` ends the options, options and positional
 * arguments mix (unless the verb stops at the first positional: `run`'s program). An optional
 * argument is taken only when attached (`--opt=value`, `-oVALUE`), or, where the option says so
 * (next_is_arg), from the next word. Long names are matched whole (no abbreviations, so adding an
 * option never breaks a script); an unknown one gets one line naming the closest known name. */
#ifndef WARPLENS_TOOLS_OPTIONS_H
#define WARPLENS_TOOLS_OPTIONS_H

#include <stdio.h>

typedef enum { CLI_ARG_NONE, CLI_ARG_REQUIRED, CLI_ARG_OPTIONAL } cli_arg_kind;

typedef struct cli_opt {
    int id;               /* what cli_next returns (> 0); aliases share an id; 0 ends the table */
    char short_name;      /* 0: none */
    const char *name;     /* long name without "--"; NULL: short only */
    cli_arg_kind arg;
    const char *arg_name; /* "FILE": shown in --help and in a missing-argument message */
    const char *help;     /* '\n' starts a continuation line */
    const char *choices;  /* the values, space-separated, for completion; NULL: any */
    /* CLI_ARG_OPTIONAL only: whether the word after the option is its argument (NULL: never) */
    int (*next_is_arg)(const char *word);
} cli_opt;

/* what a verb's positional arguments are, for completion */
typedef enum { CLI_POS_NONE, CLI_POS_FILE, CLI_POS_SESSION, CLI_POS_COMMAND, CLI_POS_WORDS } cli_pos_kind;

#define CLI_STOP_AT_POSITIONAL 1u /* the first positional argument ends the options (`run`'s program) */

typedef struct cli_cmd {
    const char *verb;
    const char *usage;   /* what follows "usage: warplens VERB "; '\n' separates alternative forms */
    const char *about;   /* a paragraph between the usage and the options, or NULL */
    const cli_opt *opts; /* ends with {0} */
    const char *footer;  /* text after the options, or NULL */
    void (*more_help)(FILE *out); /* help that is computed (a list of columns), or NULL */
    unsigned flags;
    cli_pos_kind positional;
    const char *words; /* CLI_POS_WORDS: the words, space-separated */
} cli_cmd;

typedef struct cli_parser {
    const cli_cmd *cmd;
    int argc;
    char **argv;
    int i;                 /* the next word of argv */
    const char *group;     /* the rest of a group of short options */
    const char *word;      /* the word the group came from, for messages */
    int only_positional;   /* after `--` */
    const char *arg;       /* the option's argument (NULL if none), or the positional argument */
    char opt_text[64];     /* the option as written, for a verb's message: "--top", "-t" */
} cli_parser;

enum { CLI_END = 0, CLI_POSITIONAL = -1, CLI_HELP = -2, CLI_ERROR = -3 };

void cli_init(cli_parser *p, const cli_cmd *cmd, int argc, char **argv);
/* The next option's id, with p->arg; CLI_POSITIONAL with p->arg; CLI_END (with
 * CLI_STOP_AT_POSITIONAL, argv + p->i is then the first positional, or the word after `--`);
 * CLI_HELP after printing the help on stdout (the verb returns 0); CLI_ERROR after one line on
 * stderr (the verb returns 2). */
int cli_next(cli_parser *p);

/* The verb's help, generated from its table. */
void cli_help(const cli_cmd *cmd, FILE *out);
/* "warplens VERB: <message>" on stderr; returns 2 (the usage error status). */
int cli_error(const cli_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A positional argument into the first empty slot of slots[0..n); when all are full, one line
 * naming what the verb takes (what: "one session at a time") and -1. */
int cli_positional(cli_parser *p, const char **slots, int n, const char *what);

/* p->arg as a whole number from min to max into *out; else one line naming the option, what it
 * takes and what it got, and -1. */
int cli_number(cli_parser *p, long long min, long long max, long long *out);

/* The edit distance between a and b (adjacent transpositions count one), for suggestions. */
int cli_distance(const char *a, const char *b);

#endif
