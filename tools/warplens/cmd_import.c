/* `warplens import -o SESSION CAPTURE...`: builds a session from capture files written by the
 * recorder without `warplens run` (CUDA_INJECTION64_PATH set by hand, or kept with --keep-capture).
 * `warplens import --upgrade SESSION`: adds to a session built by an older warplens what import now
 * derives (kernel identity: operations, shapes, tiers), in place. */
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
    printf("upgraded %s: kernel identity (operation, shape, tier) derived\n", path);
    return 0;
}

int cmd_import(int argc, char **argv)
{
    const char *out = NULL;
    const char *inputs[256];
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: warplens import -o SESSION CAPTURE.wlcap [CAPTURE.wlcap ...] [TIMERS.wltimers ...] [BUFFER.wlik ...]\n"
                   "       warplens import --upgrade SESSION   (add what this version derives at import, in place)\n");
            return 0;
        } else if (!strcmp(argv[i], "--upgrade")) {
            if (i + 2 != argc) {
                fprintf(stderr, "warplens import: --upgrade takes one session\n");
                return 2;
            }
            return upgrade(argv[i + 1]);
        } else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "warplens import: unknown option '%s'\n", argv[i]);
            return 2;
        } else if (n < 256) {
            inputs[n++] = argv[i];
        } else {
            fprintf(stderr, "warplens import: at most 256 capture files\n");
            return 2;
        }
    }
    if (!out || !n) {
        fprintf(stderr, "usage: warplens import -o SESSION CAPTURE.wlcap [CAPTURE.wlcap ...]\n");
        return 2;
    }
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
    return session_build(out, caps, nc, timers, nt, NULL, &r, 0) == 0 ? 0 : 1;
}
