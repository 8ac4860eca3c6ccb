/* OS thread ids and names. CUPTI is told to report system thread ids (gettid), so the names can be
 * read from /proc/self/task/<tid>/comm by the writer thread the first time a thread shows up in a
 * record, and again at the end for threads that renamed themselves later. Also the start of the
 * recorder's own threads (writer, NVML and PM samplers). */
#include "capture/recorder.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SEEN_SIZE 8192u /* threads named per process; more are recorded without names */

static uint32_t g_seen[SEEN_SIZE];
static unsigned g_seen_count;

int wl_thread_start(pthread_t *thread, const char *name, void *(*main_fn)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits the mask: no application signal */
    int rc = pthread_create(thread, NULL, main_fn, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        pthread_setname_np(*thread, name);
    return rc;
}

_Thread_local wl_thread_locals wl_tls;

uint32_t wl_current_tid(void)
{
    wl_thread_locals *me = &wl_tls;
    if (!me->tid)
        me->tid = (uint32_t)syscall(SYS_gettid);
    return me->tid;
}

static void write_os_name(uint32_t tid)
{
    char path[64], name[32];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return; /* the thread has exited; it keeps its last known name */
    ssize_t n = read(fd, name, sizeof name - 1);
    close(fd);
    if (n <= 0)
        return;
    while (n > 0 && (name[n - 1] == '\n' || name[n - 1] == 0))
        n--;
    wlcap_thread r = {tid, wl_capw_string_n(name, (size_t)n), WLCAP_THREAD_OS, 0};
    wl_capw_record(WLCAP_THREAD, &r, sizeof r);
}

void wl_threads_seen(uint32_t tid)
{
    if (!tid)
        return;
    uint32_t i = (tid * 2654435761u) & (SEEN_SIZE - 1);
    for (unsigned probe = 0; probe < SEEN_SIZE; probe++, i = (i + 1) & (SEEN_SIZE - 1)) {
        if (g_seen[i] == tid)
            return;
        if (!g_seen[i]) {
            if (g_seen_count >= SEEN_SIZE / 4 * 3)
                return;
            g_seen[i] = tid;
            g_seen_count++;
            write_os_name(tid);
            return;
        }
    }
}

void wl_threads_refresh_all(void)
{
    for (unsigned i = 0; i < SEEN_SIZE; i++)
        if (g_seen[i])
            write_os_name(g_seen[i]);
}
