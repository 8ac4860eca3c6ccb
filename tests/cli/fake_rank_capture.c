/* Stands in for a rank of a distributed job under `warplens run` on a machine without a GPU:
 * writes the capture file the recorder would ($WARPLENS_CAPTURE_DIR/<pid>.wlcap) with the ranks
 * of its environment (common/rank_env.h, as the recorder reads them) and argv[1] kernels, unless
 * WARPLENS_RANKS leaves its rank out (as the recorder's configuration does). Used by
 * tests/cli/test_run_ranks_cli.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_builder.h"
#include "common/rank_env.h"

int main(int argc, char **argv)
{
    const char *dir = getenv("WARPLENS_CAPTURE_DIR"), *only = getenv("WARPLENS_RANKS");
    int kernels = argc > 1 ? atoi(argv[1]) : 1;
    int32_t rank = wl_env_rank(NULL);
    if (!dir)
        return 3;
    if (only && *only) {
        wl_rank_list l;
        char err[128];
        if (wl_rank_list_parse(only, &l, err, sizeof err) == 0 && (rank < 0 || !wl_rank_list_has(&l, rank)))
            return 0;
    }
    uint64_t t = 1700000000000000000ull;
    capbuf b;
    cb_init(&b, (uint64_t)getpid(), t);
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = (uint32_t)getpid();
    p.ppid = (uint32_t)getppid();
    p.start_ns = t;
    p.record_mask = WL_RECORD_ALL;
    p.rank = rank;
    p.local_rank = wl_env_local_rank(NULL);
    p.world_size = wl_env_world_size(NULL);
    p.ompi_rank = p.slurm_procid = -1;
    p.hostname_str = cb_string(&b, "fakehost");
    cb_record(&b, WLCAP_PROCESS, &p, sizeof p);
    uint32_t name = cb_string(&b, "_Z6kernelv");
    for (int i = 0; i < kernels; i++) {
        wlcap_kernel k;
        memset(&k, 0, sizeof k);
        k.correlation_id = (uint32_t)i + 1;
        k.name_str = name;
        k.stream_id = 7;
        k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
        k.start = t + 1000 + (uint64_t)i * 1000;
        k.end = k.start + 500;
        cb_record(&b, WLCAP_KERNEL, &k, sizeof k);
    }
    wlcap_end e;
    memset(&e, 0, sizeof e);
    e.end_ns = t + 1000000;
    e.reason = WLCAP_END_EXIT;
    cb_record(&b, WLCAP_END, &e, sizeof e);
    char path[4200];
    snprintf(path, sizeof path, "%s/%ld.wlcap", dir, (long)getpid());
    int rc = cb_write(&b, path);
    free(b.data);
    return rc ? 4 : 0;
}
