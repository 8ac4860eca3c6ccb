/* Sessions already found sound (see check_cache.h): one line per slot file,
 *   warplens-checked 1 <contract fingerprint> <dev> <ino> <size> <mtime> <ctime>
 * compared byte for byte with the line the file's current stat gives, so nothing read from the
 * cache is parsed. */
#include "store/check_cache.h"
#include "common/fnv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/schema.h"
#include "store/session_contract.h"

#define SLOTS 1024
#define LINE_MAX_BYTES 256
#define FRESH_NS 100000000ll          /* times this recent may still move within their tick */
#define COARSE_FRESH_NS 2000000000ll  /* file systems that keep whole seconds (or two) */

static uint64_t fnv_str(uint64_t h, const char *s) { return wl_fnv1a(h, s ? s : "", s ? strlen(s) + 1 : 1); }

/* What this build accepts: every table and column rule, every index, the revision of the checks'
 * logic and the schema version. */
static uint64_t contract_fingerprint(void)
{
    uint64_t h = WL_FNV_OFFSET;
    int64_t fixed[] = {WL_CONTRACT_REVISION, WL_SCHEMA_VERSION, WL_TIME_MAX};
    h = wl_fnv1a(h, fixed, sizeof fixed);
    for (int t = 0; t < WL_CONTRACT_TABLES; t++) {
        const wl_table_rule *r = &WL_CONTRACT[t];
        int64_t head[] = {r->required, r->rowid, r->ncols, r->relate != NULL};
        h = wl_fnv1a(fnv_str(h, r->name), head, sizeof head);
        for (int c = 0; c < r->ncols; c++) {
            const wl_col_rule *col = &r->cols[c];
            int64_t v[] = {col->kind, col->null_ok, col->optional, col->lo, col->hi};
            h = wl_fnv1a(fnv_str(h, col->name), v, sizeof v);
        }
    }
    for (int i = 0; i < WL_INDEX_COUNT; i++)
        h = fnv_str(fnv_str(fnv_str(h, WL_INDEXES[i].name), WL_INDEXES[i].table), WL_INDEXES[i].columns);
    return h;
}

/* The cache folder, or -1 when there is none (turned off, no home). */
static int cache_dir(char *out, size_t n)
{
    const char *d = getenv("WARPLENS_CACHE_DIR");
    int w;
    if (d && !strcmp(d, "off"))
        return -1;
    if (d && d[0])
        w = snprintf(out, n, "%s/checked", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && d[0] == '/')
        w = snprintf(out, n, "%s/warplens/checked", d);
    else if ((d = getenv("HOME")) && d[0] == '/')
        w = snprintf(out, n, "%s/.cache/warplens/checked", d);
    else
        return -1;
    return w > 0 && (size_t)w < n ? 0 : -1;
}

static int make_dirs(char *path) /* mkdir -p, 0700 */
{
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            int rc = mkdir(path, 0700);
            *p = '/';
            if (rc && errno != EEXIST)
                return -1;
        }
    return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

static int64_t ns_of(struct timespec t) { return (int64_t)t.tv_sec * 1000000000ll + t.tv_nsec; }

static void identity_line(const struct stat *sb, char *out, size_t n)
{
    snprintf(out, n, "warplens-checked 1 %016llx %llu %llu %lld %lld %lld\n", (unsigned long long)contract_fingerprint(),
             (unsigned long long)sb->st_dev, (unsigned long long)sb->st_ino, (long long)sb->st_size,
             (long long)ns_of(sb->st_mtim), (long long)ns_of(sb->st_ctim));
}

/* The slot file of the file sb names (its folder in dir). */
static int slot_path(const struct stat *sb, const char *dir, char *out, size_t n)
{
    uint64_t k[2] = {(uint64_t)sb->st_dev, (uint64_t)sb->st_ino};
    uint64_t h = wl_fnv1a(WL_FNV_OFFSET, k, sizeof k);
    int w = snprintf(out, n, "%s/%03x", dir, (unsigned)(h % SLOTS));
    return w > 0 && (size_t)w < n ? 0 : -1;
}

/* 1 when a journal or write-ahead log beside the file may change what a reader of it sees. */
static int has_side_files(const char *path)
{
    static const char *const SUFFIX[] = {"-wal", "-journal"};
    for (size_t i = 0; i < sizeof SUFFIX / sizeof SUFFIX[0]; i++) {
        char p[4200];
        struct stat sb;
        int w = snprintf(p, sizeof p, "%s%s", path, SUFFIX[i]);
        if (w < 0 || (size_t)w >= sizeof p || (stat(p, &sb) == 0 && sb.st_size > 0))
            return 1;
    }
    return 0;
}

int wl_check_cache_hit(const char *path, const struct stat *sb)
{
    char dir[4096], slot[4200], want[LINE_MAX_BYTES], got[LINE_MAX_BYTES + 1];
    if (cache_dir(dir, sizeof dir) || slot_path(sb, dir, slot, sizeof slot) || has_side_files(path))
        return 0;
    int fd = open(slot, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, got, LINE_MAX_BYTES);
    close(fd);
    if (r <= 0)
        return 0;
    got[r] = 0;
    identity_line(sb, want, sizeof want);
    return (size_t)r == strlen(want) && !memcmp(got, want, (size_t)r);
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           ns_of(a->st_mtim) == ns_of(b->st_mtim) && ns_of(a->st_ctim) == ns_of(b->st_ctim);
}

void wl_check_cache_store(const char *path, const struct stat *before, const struct timespec *began)
{
    struct stat now_sb;
    if (stat(path, &now_sb) || !same_file(before, &now_sb) || has_side_files(path))
        return;
    /* A write after the census began moves the times past `began` less a clock tick, so it
     * shows unless the times were already that recent: then nothing is kept. */
    int64_t changed = ns_of(now_sb.st_mtim) > ns_of(now_sb.st_ctim) ? ns_of(now_sb.st_mtim) : ns_of(now_sb.st_ctim);
    int coarse = now_sb.st_mtim.tv_nsec == 0 && now_sb.st_ctim.tv_nsec == 0;
    if (ns_of(*began) - changed < (coarse ? COARSE_FRESH_NS : FRESH_NS))
        return;
    char dir[4096], slot[4200], tmp[4300], line[LINE_MAX_BYTES];
    if (cache_dir(dir, sizeof dir) || slot_path(&now_sb, dir, slot, sizeof slot) || make_dirs(dir))
        return;
    int w = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", slot, (long)getpid());
    if (w < 0 || (size_t)w >= sizeof tmp)
        return;
    identity_line(&now_sb, line, sizeof line);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    size_t len = strlen(line);
    int ok = write(fd, line, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, slot))
        unlink(tmp);
}
