/* The environment `warplens run` gives a program (see run_env.h). */
#include "run_env.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file of the installation, found from the CLI's own path: <prefix>/<libdir>/warplens/<file> when
 * installed (WARPLENS_PRIVLIB_FROM_BIN, set by the build from the install layout), else the build
 * tree's bin/../lib/<file> (out: PATH_MAX bytes). 0 when it exists. */
static int beside_cli(const char *file, char *out)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    static const char *const dirs[] = {WARPLENS_PRIVLIB_FROM_BIN, "../lib"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char candidate[PATH_MAX + 128];
        snprintf(candidate, sizeof candidate, "%s/%s/%s", exe, dirs[i], file);
        if (realpath(candidate, out))
            return 0;
    }
    return -1;
}

int run_find_recorder(char *out)
{
    const char *env = getenv("WARPLENS_RECORDER_LIB");
    if (env && *env)
        return realpath(env, out) ? 0 : -1;
    return beside_cli("libwarplens_recorder.so", out);
}

/* --torch-ops: python/torch_ops/sitecustomize.py, installed as <libdir>/warplens/warplens-python, goes
 * first on PYTHONPATH; it turns PyTorch's operator ranges on when the program imports torch. */
int run_export_torch_ops(void)
{
    char site[PATH_MAX];
    if (beside_cli("warplens-python/sitecustomize.py", site) != 0) {
        fprintf(stderr, "warplens run: --torch-ops: warplens-python/sitecustomize.py is missing from the warplens"
                        " installation (" WARPLENS_PRIVLIB_FROM_BIN " or ../lib next to the binary)\n");
        return -1;
    }
    *strrchr(site, '/') = 0;
    const char *prior = getenv("PYTHONPATH");
    size_t n = strlen(site) + (prior ? strlen(prior) : 0) + 2;
    char *path = malloc(n);
    if (!path)
        return -1;
    snprintf(path, n, "%s%s%s", site, prior && *prior ? ":" : "", prior && *prior ? prior : "");
    setenv("PYTHONPATH", path, 1);
    free(path);
    setenv("WARPLENS_TORCH_OPS", "1", 1);
    return 0;
}

/* The Java binding (java/) loads its JNI library from WARPLENS_JNI: a JVM program under `warplens
 * run` finds it without -Djava.library.path. */
void run_export_java_binding(void)
{
    char jni[PATH_MAX];
    if (beside_cli("libwarplens_jni.so", jni) == 0)
        setenv("WARPLENS_JNI", jni, 1);
}

int run_have_driver(char *why, size_t n)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        snprintf(why, n, "no NVIDIA driver on this machine (libcuda.so.1 not found)");
        return 0;
    }
    dlclose(h);
    return 1;
}
