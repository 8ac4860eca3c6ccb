/* A merge's inputs checked beside the copy (see merge_census.h). On the one core the copy leaves
 * free (the check's own helper threads off: WL_OPEN_ONE_THREAD), and at most LOOKAHEAD inputs
 * ahead of the copy, so the copy reads each input from the page cache the check filled: run freely
 * ahead, at 256 inputs of 30 MiB the check's reads were evicted before the copy came to them (175 s
 * against 160 s with the check before the copy; 134 s this way, bench/results/merge.txt). */
#include "store/merge_census.h"

#include <stdio.h>
#include <string.h>

#include "store/session.h"

#define LOOKAHEAD 2

int wl_merge_check_input(const char *path, int flags, char *why, size_t n)
{
    char err[512], note[400];
    wl_session *s = wl_session_open_flags(path, flags, err, sizeof err);
    if (!s) {
        snprintf(why, n, "%s", err);
        return -1;
    }
    int damaged = wl_session_damage_note(s, note, sizeof note);
    wl_session_close(s);
    if (damaged)
        snprintf(why, n, "%s is damaged: %s (`warplens info --check %s` lists it); not merged", path, note, path);
    return damaged ? -1 : 0;
}

/* In order; the first input found damaged (or that no longer opens) ends it. */
static void *check_inputs(void *arg)
{
    wl_merge_census *c = arg;
    for (int i = 0; i < c->n; i++) {
        pthread_mutex_lock(&c->lock);
        while (!c->stop && i > c->copying + LOOKAHEAD)
            pthread_cond_wait(&c->moved, &c->lock);
        int stop = c->stop;
        pthread_mutex_unlock(&c->lock);
        if (stop)
            break;
        if (wl_merge_check_input(c->paths[i], WL_OPEN_ONE_THREAD, c->why, sizeof c->why) != 0) {
            atomic_store(&c->failed, 1);
            break;
        }
    }
    return NULL;
}

void wl_merge_census_start(wl_merge_census *c, const char *const *paths, int n)
{
    memset(c, 0, sizeof *c);
    atomic_init(&c->failed, 0);
    c->paths = paths;
    c->n = n;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->moved, NULL);
    c->started = pthread_create(&c->thread, NULL, check_inputs, c) == 0;
    if (!c->started) {
        c->copying = n;
        check_inputs(c);
    }
}

void wl_merge_census_at(wl_merge_census *c, int i, int stop)
{
    pthread_mutex_lock(&c->lock);
    c->copying = i;
    c->stop |= stop;
    pthread_cond_broadcast(&c->moved);
    pthread_mutex_unlock(&c->lock);
}

int wl_merge_census_wait(wl_merge_census *c, char *err, size_t n)
{
    if (c->started) {
        pthread_join(c->thread, NULL);
        c->started = 0;
    }
    if (!atomic_load(&c->failed))
        return 0;
    snprintf(err, n, "%s", c->why);
    return -1;
}

void wl_merge_census_free(wl_merge_census *c)
{
    pthread_cond_destroy(&c->moved);
    pthread_mutex_destroy(&c->lock);
}
