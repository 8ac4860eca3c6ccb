/* What was measured survives SIGTERM, SIGINT and SIGHUP (`--metrics`: the batch of ranges being
 * collected exists only inside CUPTI until it is decoded). For each of these signals whose
 * disposition is still the default when the recorder starts, a handler writes the signal's number
 * to a pipe and returns; the recorder's own thread reading that pipe runs the recorder's shutdown
 * (decode, flush, END record), puts the default disposition back and sends the signal to the
 * process again, which then ends as it would have, with the same status. A program that installs
 * its own handler later replaces this one (its exit path reaches the recorder's atexit). A second
 * signal while the shutdown runs ends the process at once; a forked child gets the defaults back. */
#include "capture/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

static const int SIGNALS[] = {SIGTERM, SIGINT, SIGHUP};
#define NSIG_KEPT (sizeof SIGNALS / sizeof SIGNALS[0])

static int g_pipe[2] = {-1, -1};
static pid_t g_pid;
static int g_installed[NSIG_KEPT];
static volatile sig_atomic_t g_got;
static void (*g_finish)(void);

static void on_signal(int sig)
{
    if (g_got || getpid() != g_pid) { /* a second signal, or a child that inherited this handler */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_got = sig;
    int e = errno;
    unsigned char c = (unsigned char)sig;
    ssize_t w = write(g_pipe[1], &c, 1);
    (void)w;
    errno = e;
}

static void *signal_main(void *arg)
{
    (void)arg;
    unsigned char c = 0;
    ssize_t r;
    do {
        r = read(g_pipe[0], &c, 1);
    } while (r < 0 && errno == EINTR);
    if (r != 1)
        return NULL;
    g_finish();
    signal(c, SIG_DFL);
    kill(getpid(), c); /* to the process: a thread of the program takes it and the default action ends it */
    return NULL;
}

void wl_signals_keep(void (*finish)(void))
{
    g_pid = getpid();
    g_finish = finish;
    if (pipe2(g_pipe, O_CLOEXEC) != 0)
        return;
    pthread_t t;
    if (wl_thread_start(&t, "warplens-signal", signal_main) != 0) {
        wl_log("cannot start the recorder's signal thread; a run stopped by a signal may lose its last ranges");
        return;
    }
    pthread_detach(t);
    for (size_t i = 0; i < NSIG_KEPT; i++) {
        struct sigaction old, sa;
        if (sigaction(SIGNALS[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue; /* the program handles it: its exit path reaches atexit */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        g_installed[i] = sigaction(SIGNALS[i], &sa, NULL) == 0;
    }
}

void wl_signals_forked_child(void)
{
    for (size_t i = 0; i < NSIG_KEPT; i++) {
        struct sigaction cur;
        if (g_installed[i] && sigaction(SIGNALS[i], NULL, &cur) == 0 && cur.sa_handler == on_signal)
            signal(SIGNALS[i], SIG_DFL);
        g_installed[i] = 0;
    }
}
