/* Atomic output files (see atomic_file.h). */
#include "common/atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int wl_tmp_path_for(const char *path, char *out, size_t out_size)
{
    int n = snprintf(out, out_size, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= out_size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int wl_commit_tmp_path(const char *tmp_path, const char *path)
{
    if (rename(tmp_path, path) != 0) {
        int e = errno;
        unlink(tmp_path);
        errno = e;
        return -1;
    }
    return 0;
}

int wl_atomic_file_open(wl_atomic_file *f, const char *path)
{
    memset(f, 0, sizeof *f);
    if (strlen(path) >= sizeof f->final_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(f->final_path, path);
    if (wl_tmp_path_for(path, f->tmp_path, sizeof f->tmp_path) != 0)
        return -1;
    f->fp = fopen(f->tmp_path, "wb");
    return f->fp ? 0 : -1;
}

int wl_atomic_file_commit(wl_atomic_file *f)
{
    if (!f->fp)
        return -1;
    int bad = ferror(f->fp) || fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
    int e = errno;
    if (fclose(f->fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    f->fp = NULL;
    if (bad) {
        unlink(f->tmp_path);
        errno = e ? e : EIO;
        return -1;
    }
    return wl_commit_tmp_path(f->tmp_path, f->final_path);
}

void wl_atomic_file_abort(wl_atomic_file *f)
{
    if (f->fp)
        fclose(f->fp);
    f->fp = NULL;
    if (f->tmp_path[0])
        unlink(f->tmp_path);
}
