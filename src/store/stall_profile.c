/* Stall profiles (see stall_profile.h): names classified, _not_issued counts attached to their
 * reason, shares of the total, sorted. */
#include "store/stall_profile.h"

#include <stdlib.h>
#include <string.h>

static const char NOT_ISSUED[] = "_not_issued";

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

enum wl_stall_kind wl_stall_kind(const char *name)
{
    if (ends_with(name, NOT_ISSUED))
        return WL_STALL_NOT_ISSUED;
    /* counters of all samples or of dropped ones are totals, not reasons */
    if (strstr(name, "sample_count") || strstr(name, "dropped"))
        return WL_STALL_TOTAL;
    return WL_STALL_REASON;
}

const char *wl_stall_short_name(const char *name)
{
    static const char *const prefixes[] = {"smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_", "smsp__"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(name, prefixes[i], n) == 0 && name[n])
            return name + n;
    }
    return name;
}

/* Does `ni` ("<x>_not_issued") belong to the reason `r` ("<x>")? */
static int is_not_issued_of(const char *ni, const char *r)
{
    size_t n = strlen(r);
    return strncmp(ni, r, n) == 0 && strcmp(ni + n, NOT_ISSUED) == 0;
}

static int by_samples(const void *pa, const void *pb)
{
    const wl_stall_share *a = pa, *b = pb;
    if (a->samples != b->samples)
        return a->samples < b->samples ? 1 : -1;
    return strcmp(a->name, b->name);
}

int wl_stall_profile_build(const char *const *names, const uint64_t *samples, int n, wl_stall_profile *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0)
        return 0;
    out->shares = calloc((size_t)n, sizeof *out->shares);
    if (!out->shares)
        return -1;
    for (int i = 0; i < n; i++) {
        if (wl_stall_kind(names[i]) != WL_STALL_REASON)
            continue;
        int j = 0;
        while (j < out->n && strcmp(out->shares[j].name, names[i]) != 0)
            j++;
        if (j == out->n)
            out->shares[out->n++] = (wl_stall_share){names[i], 0, 0, 0};
        out->shares[j].samples += samples[i];
        out->samples += samples[i];
    }
    for (int i = 0; i < n; i++) {
        if (wl_stall_kind(names[i]) != WL_STALL_NOT_ISSUED)
            continue;
        for (int j = 0; j < out->n; j++)
            if (is_not_issued_of(names[i], out->shares[j].name))
                out->shares[j].not_issued += samples[i];
    }
    int kept = 0;
    for (int j = 0; j < out->n; j++) /* reasons that only appeared with 0 samples are not shown */
        if (out->shares[j].samples)
            out->shares[kept++] = out->shares[j];
    out->n = kept;
    for (int j = 0; j < out->n; j++)
        out->shares[j].pct = 100.0 * (double)out->shares[j].samples / (double)out->samples;
    qsort(out->shares, (size_t)out->n, sizeof *out->shares, by_samples);
    return 0;
}

void wl_stall_profile_free(wl_stall_profile *p)
{
    free(p->shares);
    p->shares = NULL;
    p->n = 0;
}
