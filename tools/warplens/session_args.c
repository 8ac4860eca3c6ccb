/* Session files from files, folders and globs (see session_args.h). */
#include "session_args.h"

#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int same_file(const char *a, const char *skip)
{
    struct stat x, y;
    return skip && stat(a, &x) == 0 && stat(skip, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static int push(char ***v, int *n, const char *path)
{
    char **nv = realloc(*v, (size_t)(*n + 1) * sizeof **v);
    if (!nv)
        return -1;
    *v = nv;
    if (!(nv[*n] = strdup(path)))
        return -1;
    (*n)++;
    return 0;
}

int session_args_expand(const char *verb, char **args, int n, const char *skip, char ***out)
{
    char **v = NULL;
    int nv = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        int first = nv;
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(args[i]);
            struct dirent *e;
            while (d && (e = readdir(d))) {
                size_t len = strlen(e->d_name);
                if (len <= 10 || strcmp(e->d_name + len - 10, ".wlsession"))
                    continue;
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/%s", args[i], e->d_name);
                if (!same_file(path, skip) && push(&v, &nv, path))
                    goto oom;
            }
            if (d)
                closedir(d);
            if (nv == first) {
                fprintf(stderr, "warplens %s: %s holds no .wlsession files\n", verb, args[i]);
                goto fail;
            }
        } else if (stat(args[i], &st) != 0 && strpbrk(args[i], "*?[")) {
            glob_t g;
            if (glob(args[i], 0, NULL, &g) != 0) {
                fprintf(stderr, "warplens %s: no session matches %s\n", verb, args[i]);
                goto fail;
            }
            for (size_t k = 0; k < g.gl_pathc; k++)
                if (!same_file(g.gl_pathv[k], skip) && push(&v, &nv, g.gl_pathv[k])) {
                    globfree(&g);
                    goto oom;
                }
            globfree(&g);
        } else if (push(&v, &nv, args[i])) {
            goto oom;
        }
        if (nv - first > 1)
            qsort(v + first, (size_t)(nv - first), sizeof *v, cmp_str);
    }
    *out = v;
    return nv;
oom:
    fprintf(stderr, "warplens %s: out of memory\n", verb);
fail:
    session_args_free(v, nv);
    return -1;
}

void session_args_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}
