/* Ranks from the launchers' environment variables and rank lists (see rank_env.h). */
#include "common/rank_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const WL_RANK_VARS[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL};
const char *const WL_LOCAL_RANK_VARS[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                          "SLURM_LOCALID", NULL};
const char *const WL_WORLD_SIZE_VARS[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL};

/* A whole number 0..2^31-1 with nothing around it, else -1. */
static int32_t parse_rank(const char *v, const char **end_out)
{
    if (!v || *v < '0' || *v > '9')
        return -1;
    errno = 0;
    char *end;
    long x = strtol(v, &end, 10);
    if (errno || x < 0 || x > 0x7fffffff)
        return -1;
    if (end_out)
        *end_out = end;
    else if (*end)
        return -1;
    return (int32_t)x;
}

int32_t wl_env_first_int(const char *const *vars, wl_getenv_fn get, void *arg, const char **var)
{
    for (int i = 0; vars[i]; i++) {
        const char *v = get ? get(vars[i], arg) : getenv(vars[i]);
        int32_t x = parse_rank(v, NULL);
        if (x >= 0) {
            if (var)
                *var = vars[i];
            return x;
        }
    }
    if (var)
        *var = NULL;
    return -1;
}

int32_t wl_env_rank(const char **var) { return wl_env_first_int(WL_RANK_VARS, NULL, NULL, var); }
int32_t wl_env_local_rank(const char **var) { return wl_env_first_int(WL_LOCAL_RANK_VARS, NULL, NULL, var); }
int32_t wl_env_world_size(const char **var) { return wl_env_first_int(WL_WORLD_SIZE_VARS, NULL, NULL, var); }

int wl_rank_list_parse(const char *text, wl_rank_list *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    const char *p = text ? text : "";
    if (!*p) {
        snprintf(err, err_size, "empty rank list (e.g. 0,3-5)");
        return -1;
    }
    for (;;) {
        size_t len = strcspn(p, ",");
        const char *end;
        int32_t lo = parse_rank(p, &end), hi = lo;
        if (lo >= 0 && *end == '-')
            hi = parse_rank(end + 1, &end);
        if (lo < 0 || hi < 0 || end != p + len) {
            snprintf(err, err_size, "'%.*s' is not a rank or a range of ranks (e.g. 0,3-5)", (int)(len > 40 ? 40 : len),
                     p);
            return -1;
        }
        if (hi < lo) {
            snprintf(err, err_size, "'%.*s': a range must go up", (int)len, p);
            return -1;
        }
        if (out->n == WL_RANK_SPANS) {
            snprintf(err, err_size, "more than %d ranks or ranges", WL_RANK_SPANS);
            return -1;
        }
        out->lo[out->n] = lo;
        out->hi[out->n++] = hi;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

int wl_rank_list_has(const wl_rank_list *l, int32_t rank)
{
    for (int i = 0; i < l->n; i++)
        if (rank >= l->lo[i] && rank <= l->hi[i])
            return 1;
    return 0;
}
