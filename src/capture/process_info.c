/* The PROCESS record: who was profiled (pid, command line, host, rank variables of MPI, Slurm and
 * torch.distributed launchers). */
#include "capture/recorder.h"
#include "common/rank_env.h"

#include <cupti.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int32_t env_int(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return (*end || x < 0 || x > 0x7fffffff) ? -1 : (int32_t)x;
}

void wl_process_write(const wl_config *cfg, uint64_t start_ns)
{
    wlcap_process p;
    memset(&p, 0, sizeof p);
    p.pid = (uint32_t)getpid();
    p.ppid = (uint32_t)getppid();
    p.start_ns = start_ns;
    /* the launcher's rank, whichever launcher set it (common/rank_env.h) */
    p.rank = wl_env_rank(NULL);
    p.local_rank = wl_env_local_rank(NULL);
    p.world_size = wl_env_world_size(NULL);
    p.ompi_rank = env_int("OMPI_COMM_WORLD_RANK");
    p.slurm_procid = env_int("SLURM_PROCID");
    p.record_mask = cfg->record_mask;
    p.buffer_size = (uint32_t)cfg->buffer_size;
    uint32_t v = 0;
    if (cuptiGetVersion(&v) == CUPTI_SUCCESS)
        p.cupti_version = v;

    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0)
        p.hostname_str = wl_capw_string(host);

    /* /proc/self/cmdline: arguments separated by NUL; stored separated by spaces */
    char cmd[8192];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, cmd, sizeof cmd - 1);
        close(fd);
        if (n > 0) {
            while (n > 0 && cmd[n - 1] == 0)
                n--;
            for (ssize_t i = 0; i < n; i++)
                if (cmd[i] == 0)
                    cmd[i] = ' ';
            p.cmdline_str = wl_capw_string_n(cmd, (size_t)n);
        }
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0)
        p.exe_str = wl_capw_string_n(exe, (size_t)n);
    wl_capw_record(WLCAP_PROCESS, &p, sizeof p);
    if (cfg->capture_range) {
        wlcap_capture_range r = {start_ns, WLCAP_CAPTURE_MODE, 0};
        wl_capw_record(WLCAP_CAPTURE_RANGE, &r, sizeof r);
    }
    /* WARPLENS_TIER: the tier of every kernel whose thread sets none (thread 0, from the start) */
    const char *tier = getenv("WARPLENS_TIER");
    if (tier && *tier) {
        size_t len = strnlen(tier, WL_EVENT_NAME_MAX);
        wlcap_attr a = {0, 0, 0, WLCAP_ATTR_TIER, 0, wl_capw_string_n(tier, len), 0};
        wl_capw_record(WLCAP_ATTR, &a, sizeof a);
    }
}
