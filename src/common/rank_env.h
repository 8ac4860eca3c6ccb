/* Which rank of a distributed job this process is, as the launchers say it through the
 * environment (torchrun, Open MPI, MPICH/Intel MPI's PMI, Slurm), and rank lists such as
 * "0,3-5" (`warplens run --ranks`). Shared by the CLI, which names per-rank sessions, and the
 * recorder, which skips ranks that were not asked for. */
#ifndef WARPLENS_COMMON_RANK_ENV_H
#define WARPLENS_COMMON_RANK_ENV_H

#include <stddef.h>
#include <stdint.h>

/* The variables read, first set wins (a variable that is not a whole number in 0..2^31-1 counts
 * as unset). Global rank: RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID. Local rank:
 * LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID. World size:
 * WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS. NULL-terminated. */
extern const char *const WL_RANK_VARS[];
extern const char *const WL_LOCAL_RANK_VARS[];
extern const char *const WL_WORLD_SIZE_VARS[];

/* An environment to read: getenv, or a test's table. */
typedef const char *(*wl_getenv_fn)(const char *name, void *arg);

/* The first variable of vars that holds a valid number: its value, with its name in *var (may be
 * NULL); -1 when none does. get NULL: the process's environment. */
int32_t wl_env_first_int(const char *const *vars, wl_getenv_fn get, void *arg, const char **var);
int32_t wl_env_rank(const char **var);
int32_t wl_env_local_rank(const char **var);
int32_t wl_env_world_size(const char **var);

/* A set of ranks: comma-separated ranks and inclusive ranges ("0,3-5"), at most WL_RANK_SPANS of
 * them. */
#define WL_RANK_SPANS 64
typedef struct wl_rank_list {
    int n;
    int32_t lo[WL_RANK_SPANS], hi[WL_RANK_SPANS];
} wl_rank_list;
/* 0, or -1 with why in err ("'3-1': a range must go up", ...). */
int wl_rank_list_parse(const char *text, wl_rank_list *out, char *err, size_t err_size);
int wl_rank_list_has(const wl_rank_list *l, int32_t rank);

#endif
