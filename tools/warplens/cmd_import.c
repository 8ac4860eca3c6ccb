/* `warplens import -o SESSION CAPTURE...`: builds a session from capture files written by the
 * recorder without `warplens run` (CUDA_INJECTION64_PATH set by hand, or kept with --keep-capture).
 * `warplens import --upgrade SESSION`: adds to a session built by an older warplens what import now
 * derives (kernel identity: operations, shapes, tiers; launch configuration ids), in place. */
#include <stdio.h>
#include <string.h>

#include "session_build.h"
#include "store/session_identity.h"
#include "verbs.h"

static int upgrade(const char *path)
{
    char err[512];
    if (wl_session_upgrade(path, err, sizeof err)) {
        fprintf(stderr, "warplens import: %s\n", err);
        return 1;
    }
    printf("upgraded %s: kernel identity (operation, shape, tier) and launch configuration ids derived, the export"
           " pack written\n", path);
    return 0;
}

enum { O_OUT = 1, O_UPGRADE, O_QUIET };

static const cli_opt OPTS[] = {
    {O_OUT, 'o', "output", CLI_ARG_REQUIRED, "SESSION", "the session to write (written atomically)", NULL, NULL},
    {O_UPGRADE, 0, "upgrade", CLI_ARG_REQUIRED, "SESSION",
     "add to a session built by an older warplens what import now derives\n"
     "(kernel identity: operations, shapes, tiers; launch configuration ids) and\n"
     "writes its export pack again (docs/schema.md), in place", NULL, NULL},
    {O_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, "print nothing but errors (no progress line, no notes on damaged\ncaptures)",
     NULL, NULL},
    {0},
};
const cli_cmd CLI_IMPORT = {
    "import", "-o SESSION CAPTURE.wlcap [CAPTURE.wlcap ...] [TIMERS.wltimers ...] [BUFFER.wlik ...]\n"
    "--upgrade SESSION", NULL, OPTS, NULL, NULL, 0, CLI_POS_FILE, NULL};

int cmd_import(int argc, char **argv)
{
    const char *out = NULL, *upgrade_path = NULL;
    const char *inputs[256];
    int n = 0, quiet = 0;
    cli_parser p;
    cli_init(&p, &CLI_IMPORT, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_OUT: out = p.arg; break;
        case O_UPGRADE: upgrade_path = p.arg; break;
        case O_QUIET: quiet = 1; break;
        case CLI_POSITIONAL:
            if (n == 256)
                return cli_error(&CLI_IMPORT, "at most 256 capture files");
            inputs[n++] = p.arg;
            break;
        }
    }
    if (upgrade_path) {
        if (out || n)
            return cli_error(&CLI_IMPORT, "--upgrade takes one session and nothing else");
        return upgrade(upgrade_path);
    }
    if (!out || !n)
        return cli_error(&CLI_IMPORT, "%s (usage: warplens import -o SESSION CAPTURE.wlcap ...)",
                         !out ? "no output session given (-o SESSION)" : "no capture files given");
    /* side files (.wltimers from the timer API, .wlik in-kernel buffers) go with the captures */
    const char *caps[256], *timers[256];
    int nc = 0, nt = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(inputs[i]);
        if ((len > 9 && !strcmp(inputs[i] + len - 9, ".wltimers")) || (len > 5 && !strcmp(inputs[i] + len - 5, ".wlik")))
            timers[nt++] = inputs[i];
        else
            caps[nc++] = inputs[i];
    }
    session_build_result r;
    return session_build(out, caps, nc, timers, nt, NULL, &r, quiet) == 0 ? 0 : 1;
}
