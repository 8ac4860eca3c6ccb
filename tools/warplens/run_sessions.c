/* From `warplens run`'s capture folder to the session or the per-rank sessions (see
 * run_sessions.h). */
#include "run_sessions.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capfile/capfile_reader.h"
#include "run_summary.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ends_with(const char *name, size_t len, const char *suffix)
{
    size_t sl = suffix ? strlen(suffix) : 0;
    return suffix && len > sl && strcmp(name + len - sl, suffix) == 0;
}

/* Lists the files of dir ending in suffix or suffix2 (may be NULL): .wlcap, one per recorded
 * process; side files .wltimers (timer API) and .wlik (in-kernel buffers). Sorted; returns the
 * count. */
static int list_files(const char *dir, const char *suffix, const char *suffix2, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **v = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (!ends_with(e->d_name, len, suffix) && !ends_with(e->d_name, len, suffix2))
            continue;
        char **nv = realloc(v, (size_t)(n + 1) * sizeof *v);
        if (!nv)
            break;
        v = nv;
        size_t plen = strlen(dir) + len + 2;
        v[n] = malloc(plen);
        if (!v[n])
            break;
        snprintf(v[n], plen, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n > 1) /* none: v is NULL, which qsort may not be given */
        qsort(v, (size_t)n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static void free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Removes the files of dir ending in suffix; returns how many there were. */
static int remove_files(const char *dir, const char *suffix)
{
    char **v;
    int n = list_files(dir, suffix, NULL, &v);
    for (int i = 0; i < n; i++)
        unlink(v[i]);
    free_list(v, n);
    return n;
}

/* The pid a capture folder's file is named after (<pid>.wlcap, <pid>.wltimers, <pid>.<n>.wlik). */
static long file_pid(const char *path)
{
    const char *base = strrchr(path, '/');
    return strtol(base ? base + 1 : path, NULL, 10);
}

/* The ranks in a capture's process record; -1 each when it has none (or cannot be read: the
 * build then says why). *work: whether it holds any GPU work or API call (read only for a capture
 * without a rank: a launcher such as torchrun's agent records nothing and gets no session). */
static void capture_ranks(const char *path, int32_t *rank, int32_t *local, int *work)
{
    *rank = *local = -1;
    *work = 1;
    wlcap_reader r;
    if (wlcap_reader_open_file(&r, path) != 0)
        return;
    uint16_t type;
    const uint8_t *p;
    uint32_t size;
    int seen_process = 0, any = 0;
    while (wlcap_reader_next(&r, &type, &p, &size) == 1) {
        if (type == WLCAP_PROCESS && !seen_process && size >= sizeof(wlcap_process)) {
            wlcap_process proc;
            memcpy(&proc, p, sizeof proc);
            *rank = proc.rank;
            *local = proc.local_rank;
            seen_process = 1;
            if (*rank >= 0)
                break;
        } else if (type == WLCAP_KERNEL || type == WLCAP_MEMCPY || type == WLCAP_MEMSET || type == WLCAP_API) {
            any = 1;
            if (seen_process)
                break;
        }
    }
    if (*rank < 0)
        *work = any;
    wlcap_reader_close(&r);
}

typedef struct group {
    char name[PATH_MAX];
    const char **caps, **side;
    int ncaps, nside;
} group;

/* The captures grouped by the name the template gives each one's ranks: groups are returned in
 * *out (ngroups), their lists point into caps and side. -1 when a name cannot be made. */
static int split(const run_sessions_opts *o, char **caps, int n, char **side, int nside, group **out)
{
    group *g = calloc((size_t)n, sizeof *g);
    int ng = 0;
    long *pids = calloc((size_t)n, sizeof *pids);
    int *gof = calloc((size_t)n, sizeof *gof);
    if (!g || !pids || !gof)
        goto fail;
    int32_t *rank = calloc((size_t)n, sizeof *rank), *local = calloc((size_t)n, sizeof *local);
    int *work = calloc((size_t)n, sizeof *work), ranked = 0;
    if (!rank || !local || !work) {
        free(rank), free(local), free(work);
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        capture_ranks(caps[i], &rank[i], &local[i], &work[i]);
        ranked |= rank[i] >= 0;
    }
    for (int i = 0; i < n; i++) {
        gof[i] = -1;
        if (ranked && rank[i] < 0 && !work[i]) { /* the launcher of ranked processes, idle on the GPU */
            if (!o->quiet)
                fprintf(stderr, "warplens: process %ld has no rank and recorded no GPU work (a launcher): no session"
                                " of its own\n", file_pid(caps[i]));
            continue;
        }
        run_output_ids ids = *o->ids;
        ids.rank = rank[i];
        ids.local_rank = local[i];
        char name[PATH_MAX], err[300];
        if (run_output_expand(o->tmpl, &ids, NULL, NULL, name, sizeof name, err, sizeof err) != 0) {
            fprintf(stderr, "warplens run: -o '%s': %s\n", o->tmpl, err);
            free(rank), free(local), free(work);
            goto fail;
        }
        int k = 0;
        while (k < ng && strcmp(g[k].name, name))
            k++;
        if (k == ng) {
            snprintf(g[ng].name, sizeof g[ng].name, "%s", name);
            if (!(g[ng].caps = calloc((size_t)n, sizeof *g->caps)) ||
                !(g[ng].side = calloc((size_t)nside + 1, sizeof *g->side))) {
                free(rank), free(local), free(work);
                goto fail_ng;
            }
            ng++;
        }
        g[k].caps[g[k].ncaps++] = caps[i];
        pids[i] = file_pid(caps[i]);
        gof[i] = k;
    }
    free(rank), free(local), free(work);
    for (int j = 0; j < nside; j++) { /* a side file goes with its process (else with the first group) */
        int k = 0;
        for (int i = 0; i < n; i++)
            if (gof[i] >= 0 && pids[i] == file_pid(side[j]))
                k = gof[i];
        g[k].side[g[k].nside++] = side[j];
    }
    free(pids);
    free(gof);
    *out = g;
    return ng;
fail_ng:
    ng++;
fail:
    for (int k = 0; g && k < ng; k++) {
        free(g[k].caps);
        free(g[k].side);
    }
    free(g);
    free(pids);
    free(gof);
    return -1;
}

static void print_split(const group *g, const session_build_result *res, int ok)
{
    if (ok)
        fprintf(stderr, "warplens: %s: %d process%s, %llu kernels%s\n", g->name, res->captures,
                res->captures == 1 ? "" : "es", (unsigned long long)res->kernels,
                res->lost ? " (records lost: see warplens stats)" : "");
}

int run_sessions_build(const run_sessions_opts *o)
{
    char **files, **side;
    int n = list_files(o->capdir, ".wlcap", NULL, &files);
    int nside = list_files(o->capdir, ".wltimers", ".wlik", &side);
    remove_files(o->capdir, ".wlprogress"); /* the progress line's side files: not part of the session */
    if (n == 0) {
        /* a recorder that could not start left <pid>.disabled after saying why */
        int disabled = remove_files(o->capdir, ".disabled");
        if (!o->quiet && !disabled)
            fprintf(stderr, "warplens: %s made no CUDA calls (or the recorder could not start): no session written\n",
                    o->program);
        for (int i = 0; i < nside; i++)
            unlink(side[i]);
        rmdir(o->capdir);
        free_list(side, nside);
        free(files);
        return 1;
    }
    int failed = 0, written = 0;
    session_build_result res;
    if (!o->tmpl) {
        failed = session_build(o->output, (const char *const *)files, n, (const char *const *)side, nside, o->meta,
                               &res, o->quiet) != 0;
        written = !failed;
    } else {
        group *g;
        int ng = split(o, files, n, side, nside, &g);
        failed = ng < 0;
        for (int k = 0; k < ng; k++) {
            int ok = session_build(g[k].name, g[k].caps, g[k].ncaps, g[k].side, g[k].nside, o->meta, &res, o->quiet) == 0;
            failed |= !ok;
            written += ok;
            if (!o->quiet)
                print_split(&g[k], &res, ok);
            free(g[k].caps);
            free(g[k].side);
        }
        if (ng >= 0)
            free(g);
    }
    if (!failed && !o->keep_capture) {
        for (int i = 0; i < nside; i++)
            unlink(side[i]);
        for (int i = 0; i < n; i++)
            unlink(files[i]);
        rmdir(o->capdir);
    } else if (!o->quiet) {
        fprintf(stderr, "warplens: capture files kept in %s\n", o->capdir);
    }
    free_list(files, n);
    free_list(side, nside);
    if (!written)
        return -1;
    if (o->killed && !o->quiet)
        fprintf(stderr, "warplens: %s was killed by signal %d (%s); the session is marked incomplete\n", o->program,
                o->killed, strsignal(o->killed));
    if (!o->quiet && !o->tmpl)
        print_run_summary(o->output);
    return failed ? -1 : 0;
}
