/* warplens CLI entry: dispatches `warplens <verb> ...` to the verb's own file. */
#include <stdio.h>
#include <string.h>

#include "verbs.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: warplens <command> [options]\n\ncommands:\n");
    for (int i = 0; i < WL_NVERBS; i++)
        fprintf(out, "  %-16s %s\n", WL_VERBS[i].name, WL_VERBS[i].summary);
    fprintf(out, "\n`warplens <command> --help` describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("warplens 0.1.0\n");
        return 0;
    }
    for (int i = 0; i < WL_NVERBS; i++)
        if (!strcmp(argv[1], WL_VERBS[i].name))
            return WL_VERBS[i].fn(argc - 1, argv + 1);
    const char *near = NULL;
    for (int i = 0, best = 3; i < WL_NVERBS; i++) {
        int d = cli_distance(argv[1], WL_VERBS[i].name);
        if (d < best) {
            best = d;
            near = WL_VERBS[i].name;
        }
    }
    if (near) {
        fprintf(stderr, "warplens: unknown command '%s'; did you mean %s?\n", argv[1], near);
        return 2;
    }
    fprintf(stderr, "warplens: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
