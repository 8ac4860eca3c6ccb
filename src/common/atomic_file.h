/* Output files are written under a temporary name in the destination folder and renamed into
 * place only when complete, so a reader never sees half a file and a failed run never replaces a
 * good file. */
#ifndef WARPLENS_COMMON_ATOMIC_FILE_H
#define WARPLENS_COMMON_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct wl_atomic_file {
    FILE *fp;           /* write here */
    char tmp_path[4096];
    char final_path[4096];
} wl_atomic_file;

/* Creates "<path>.tmp.<pid>" next to path. Returns 0, or -1 with errno set. */
int wl_atomic_file_open(wl_atomic_file *f, const char *path);
/* Flushes, fsyncs and renames into place. Returns 0, or -1 (the temporary file is removed). */
int wl_atomic_file_commit(wl_atomic_file *f);
/* Removes the temporary file without touching the destination. */
void wl_atomic_file_abort(wl_atomic_file *f);

/* The same discipline for files produced by a library (e.g. SQLite) that opens paths itself:
 * builds the temporary name, then renames it into place. */
int wl_tmp_path_for(const char *path, char *out, size_t out_size);
int wl_commit_tmp_path(const char *tmp_path, const char *path);

#endif
