/* Sessions already found sound (internal to the store). The census of issue 18 reads every
 * column of every row at each open: about 2 s of CPU per million kernels, most of the time of
 * `info`, `stats` or `kernels` on a large session. Its answer depends only on the file's bytes
 * and on the contract this build checks, so when a census finds nothing wrong the answer is kept
 * in a per-user cache keyed by the file's identity (device, inode, size, modification and
 * change times, the contract's fingerprint) and the next open of the unchanged file skips it.
 *
 * Why the identity is enough: any write to the file moves its change time (ctime), which no
 * program can set back; a copy or a replacement is another inode. A result is only kept when the
 * file's times are old enough that a later write within the same clock tick could not go
 * unseen, and never while a journal or write-ahead log beside it may still change what a reader
 * sees. The rows are still read through SQLite: a file damaged after a hit (a bit flip on disk)
 * is reported by SQLite as corrupt, as before.
 *
 * Where: $WARPLENS_CACHE_DIR, else $XDG_CACHE_HOME/warplens, else $HOME/.cache/warplens, folder
 * "checked": at most 1024 files of one line each (a slot per identity hash; a collision evicts).
 * WARPLENS_CACHE_DIR=off turns the cache off. The cache is only an optimisation: when it cannot be
 * read or written nothing is reported and the census runs. */
#ifndef WARPLENS_STORE_CHECK_CACHE_H
#define WARPLENS_STORE_CHECK_CACHE_H

#include <sys/stat.h>
#include <time.h>

/* 1 when the file at path, whose stat is sb, was found sound by this build's contract and has
 * not changed since; else 0. */
int wl_check_cache_hit(const char *path, const struct stat *sb);
/* Keeps the finding that the file at path is sound. before: its stat taken just before the
 * census began, at CLOCK_REALTIME `began`; nothing is kept when the file changed since or had
 * changed less than a clock tick's margin (100 ms; 2 s where times are whole seconds) before. */
void wl_check_cache_store(const char *path, const struct stat *before, const struct timespec *began);

#endif
