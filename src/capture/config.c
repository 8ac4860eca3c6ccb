/* Recorder configuration from the environment that `warplens run` prepares:
 *   WARPLENS_CAPTURE_DIR  folder for <pid>.wlcap (default: the working directory)
 *   WARPLENS_RECORD       kernels,memcpy,api,nvtx,sync | all (default all)
 *   WARPLENS_BUFFER_SIZE  CUPTI activity buffer bytes (default 1 MiB)
 *   WARPLENS_MAX_BUFFERS  pool limit (default 1024: at most 1 GiB mapped with the default size;
 *                         resident is only what CUPTI wrote, docs/recorder.md)
 *   WARPLENS_PER_THREAD_BUFFERS  1: CUPTI's per-thread activity buffers (its default), for
 *                         comparison; warplens uses one shared queue (0)
 *   WARPLENS_QUIET        1 silences the recorder's notices (errors still count in the session)
 *   WARPLENS_NVML_INTERVAL_MS  NVML device sampling period, 0 = off (default 100, 10..60000)
 *   WARPLENS_NVML_LIBRARY      the NVML library to load (default libnvidia-ml.so.1; tests: a fake)
 *   WARPLENS_CAPTURE_RANGE     profiler-api: trace only between cudaProfilerStart and cudaProfilerStop
 *   WARPLENS_RANKS        rank list (0,3-5): only processes whose launcher rank is in it record */
#include "capture/recorder.h"
#include "common/rank_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

static int parse_size(const char *name, const char *v, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || end == v)
        goto bad;
    if (*end == 'K' || *end == 'k')
        x <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        x <<= 20, end++;
    if (*end || x < lo || x > hi)
        goto bad;
    *out = x;
    return 0;
bad:
    wl_log("%s=%s is not valid (expected %llu..%llu); using the default", name, v, lo, hi);
    return -1;
}

int wl_config_from_env(wl_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->record_mask = WL_RECORD_ALL;
    cfg->buffer_size = 1u << 20;
    cfg->max_buffers = 1024;
    cfg->nvml_interval_ms = WL_NVML_DEFAULT_INTERVAL_MS;

    const char *v;
    if ((v = getenv("WARPLENS_QUIET")) && *v && strcmp(v, "0") != 0)
        cfg->quiet = 1;
    if ((v = getenv("WARPLENS_RECORD")) && *v) {
        char bad[64];
        if (wl_record_mask_parse(v, &cfg->record_mask, bad, sizeof bad) != 0) {
            wl_log("WARPLENS_RECORD: unknown item '%s' (use kernels,memcpy,api,nvtx,sync or all)", bad);
            cfg->record_mask = WL_RECORD_ALL;
        }
    }
    unsigned long long x;
    if ((v = getenv("WARPLENS_BUFFER_SIZE")) && *v &&
        parse_size("WARPLENS_BUFFER_SIZE", v, 64u << 10, 256u << 20, &x) == 0)
        cfg->buffer_size = (size_t)(x & ~7ull);
    if ((v = getenv("WARPLENS_MAX_BUFFERS")) && *v &&
        parse_size("WARPLENS_MAX_BUFFERS", v, 2, 4096, &x) == 0)
        cfg->max_buffers = (unsigned)x;
    if ((v = getenv("WARPLENS_PER_THREAD_BUFFERS")) && *v)
        cfg->per_thread_buffers = strcmp(v, "0") != 0;
    if ((v = getenv("WARPLENS_NVML_INTERVAL_MS")) && *v) {
        if (strcmp(v, "0") == 0)
            cfg->nvml_interval_ms = 0;
        else if (parse_size("WARPLENS_NVML_INTERVAL_MS", v, 10, 60000, &x) == 0)
            cfg->nvml_interval_ms = (unsigned)x;
    }
    if ((v = getenv("WARPLENS_CAPTURE_RANGE")) && *v) {
        if (strcmp(v, "profiler-api") == 0)
            cfg->capture_range = 1;
        else
            wl_log("WARPLENS_CAPTURE_RANGE=%s is not valid (expected profiler-api); recording the whole run", v);
    }
    if ((v = getenv("WARPLENS_NVML_LIBRARY")) && *v)
        snprintf(cfg->nvml_library, sizeof cfg->nvml_library, "%s", v);

    /* `warplens run --ranks` over a launcher it started (torchrun): ranks not in the list, and
     * processes that are no rank (the launcher), run unrecorded, without a word */
    if ((v = getenv("WARPLENS_RANKS")) && *v) {
        wl_rank_list ranks;
        char err[128];
        if (wl_rank_list_parse(v, &ranks, err, sizeof err) != 0) {
            wl_log("WARPLENS_RANKS: %s; recording every rank", err);
        } else {
            int32_t rank = wl_env_rank(NULL);
            if (rank < 0 || !wl_rank_list_has(&ranks, rank))
                return -1;
        }
    }
    const char *dir = getenv("WARPLENS_CAPTURE_DIR");
    int n;
    if (dir && *dir)
        n = snprintf(cfg->capture_path, sizeof cfg->capture_path, "%s/%ld.wlcap", dir, (long)getpid());
    else
        n = snprintf(cfg->capture_path, sizeof cfg->capture_path, "warplens-%ld.wlcap", (long)getpid());
    if (n < 0 || (size_t)n >= sizeof cfg->capture_path) {
        wl_log("WARPLENS_CAPTURE_DIR is too long; this process is not recorded");
        return -1;
    }
    return 0;
}
