/* Entry point of the recorder. The CUDA driver loads this library from CUDA_INJECTION64_PATH
 * while it initialises and calls InitializeInjection(); only CUPTI and the recorder's own thread
 * are set up here (no CUDA calls). At exit everything recorded is flushed and the capture file is
 * closed with an END record. A child created by fork() inherits no recorder threads, so the
 * recorder switches itself off there. */
#include "capture/recorder.h"
#include "capture/inkernel_capture.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

atomic_int wl_state;

static void on_fork_child(void)
{
    /* The child shares the parent's capture file descriptor but not its threads. */
    atomic_store(&wl_state, WL_STATE_FORKED_CHILD);
    wl_signals_forked_child();
}

static void shutdown_recorder(uint32_t reason)
{
    int expected = WL_STATE_RUNNING;
    if (!atomic_compare_exchange_strong(&wl_state, &expected, WL_STATE_STOPPED))
        return;
    /* Finish queued GPU work so kernels still running have end timestamps, then flush. The
     * recorder's own synchronisation is not the program's: API recording stops first. */
    wl_cupti_stop_api();
    wl_inkernel_shutdown();
    CUcontext ctx = NULL;
    if (cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx)
        (void)cuCtxSynchronize(); /* at exit the context may be gone; that is not an error here */
    wl_metrics_stop();        /* the last batch of ranges, while the writer still runs */
    wl_stalls_stop();         /* the last kernel's warp samples, likewise */
    wl_cupti_stop();
    wl_pm_stop();   /* after the activity flush: its last decode, then CUPTI's PM objects go */
    wl_nvml_stop(); /* its last samples close the final windows; the writer drains them below */
    wl_writer_stop(reason);
}

static void at_exit(void) { shutdown_recorder(WLCAP_END_EXIT); }

static void at_signal(void) { shutdown_recorder(WLCAP_END_SIGNAL); }

static void start_recorder(void)
{
    wl_config cfg;
    atomic_store(&wl_state, WL_STATE_STOPPED); /* until everything below has worked */
    if (wl_config_from_env(&cfg) != 0)
        return;
    wl_log_set_quiet(cfg.quiet);
    uint64_t start = wl_realtime_ns();
    unsigned initial = cfg.max_buffers < 4 ? cfg.max_buffers : 4;
    if (wl_pool_init(cfg.buffer_size, initial, cfg.max_buffers) != 0) {
        wl_log("out of memory for activity buffers; this process is not recorded");
        return;
    }
    if (wl_capw_open(cfg.capture_path, (uint64_t)getpid(), start) != 0)
        return;
    wl_process_write(&cfg, start);
    wl_inkernel_init(cfg.capture_path);
    if (wl_cupti_start(&cfg) != 0) {
        /* leave a marker instead of a capture, so `warplens run` knows the reason was already
         * given and adds no second message */
        wl_capw_close();
        unlink(cfg.capture_path);
        char marker[sizeof cfg.capture_path + 16];
        snprintf(marker, sizeof marker, "%.*s.disabled", (int)(strlen(cfg.capture_path) - 6), cfg.capture_path);
        int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
        return;
    }
    wl_cupti_write_api_names();
    wl_capw_flush();
    if (wl_writer_start() != 0) {
        atomic_store(&wl_state, WL_STATE_STOPPED);
        wl_cupti_stop();
        return;
    }
    wl_pm_start(); /* before RUNNING: the context callbacks then see it started (failures are logged) */
    atomic_store(&wl_state, WL_STATE_RUNNING);
    wl_nvml_start(cfg.nvml_interval_ms, cfg.nvml_library); /* failures are reported; tracing goes on */
    if (wl_scopes_used()) /* a scope opened while the recorder was starting */
        wl_cupti_enable_extcorr();
    pthread_atfork(NULL, NULL, on_fork_child);
    atexit(at_exit);
    if (wl_metrics_enabled()) /* the batch being profiled is only in CUPTI until decoded */
        wl_signals_keep(at_signal);
}

static pthread_once_t g_start_once = PTHREAD_ONCE_INIT;

/* Exported for the CUDA driver (CUDA_INJECTION64_PATH). Returns 1 ("initialised") in every case so
 * the program always runs. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    pthread_once(&g_start_once, start_recorder);
    return 1;
}

/* Exported for the NVTX loader (NVTX_INJECTION64_PATH, set by `warplens run`). NVTX may be used
 * before CUDA initialises; starting the recorder here means ranges opened that early are recorded
 * too. CUPTI's own NVTX handler then takes the calls. */
typedef int (*nvtx_injection_fn)(const void *get_export_table);

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *get_export_table)
{
    pthread_once(&g_start_once, start_recorder);
    void *cupti = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
    nvtx_injection_fn fn = cupti ? (nvtx_injection_fn)dlsym(cupti, "InitializeInjectionNvtx2") : NULL;
    if (!fn) {
        wl_log("libcupti has no NVTX handler (%s); NVTX ranges are not recorded", dlerror());
        return 0;
    }
    return fn(get_export_table);
}
