/* Names and per-(event, group) statistics of decoded in-kernel slices (inkernel_decode.h). */
#include "analysis/inkernel_decode.h"

#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------------------------------ */

static int split_csv(const char *csv, char ***out, size_t *n, wl_ik_error *err, const char *what)
{
    *out = NULL;
    *n = 0;
    if (!csv)
        return 0;
    size_t count = 1;
    for (const char *q = csv; *q; q++)
        count += *q == ',';
    if (count > WL_IK_MAX_LANES) {
        if (err) {
            err->word = 0;
            snprintf(err->msg, sizeof err->msg, "too many %s names (%zu)", what, count);
        }
        return -1;
    }
    char **arr = calloc(count, sizeof *arr);
    if (!arr)
        goto oom;
    const char *start = csv;
    for (size_t i = 0; i < count; i++) {
        const char *end = strchr(start, ',');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        if (len) { /* an empty entry leaves that id unnamed */
            arr[i] = malloc(len + 1);
            if (!arr[i]) {
                *out = arr;
                *n = count;
                goto oom;
            }
            memcpy(arr[i], start, len);
            arr[i][len] = 0;
        }
        start = end ? end + 1 : start + len;
    }
    *out = arr;
    *n = count;
    return 0;
oom:
    if (err) {
        err->word = 0;
        snprintf(err->msg, sizeof err->msg, "out of memory for %s names", what);
    }
    return -1;
}

static void free_list(char **arr, size_t n)
{
    if (!arr)
        return;
    for (size_t i = 0; i < n; i++)
        free(arr[i]);
    free(arr);
}

int wl_ik_names_parse(wl_ik_names *names, const char *events_csv, const char *groups_csv,
                      wl_ik_error *err)
{
    memset(names, 0, sizeof *names);
    if (split_csv(events_csv, &names->events, &names->n_events, err, "event") ||
        split_csv(groups_csv, &names->groups, &names->n_groups, err, "group")) {
        wl_ik_names_free(names);
        return -1;
    }
    if (names->n_events > WL_IK_MAX_EVENTS) {
        if (err) {
            err->word = 0;
            snprintf(err->msg, sizeof err->msg, "%zu event names given, ids stop at %u",
                     names->n_events, WL_IK_MAX_EVENTS - 1);
        }
        wl_ik_names_free(names);
        return -1;
    }
    return 0;
}

void wl_ik_names_free(wl_ik_names *names)
{
    if (!names)
        return;
    free_list(names->events, names->n_events);
    free_list(names->groups, names->n_groups);
    memset(names, 0, sizeof *names);
}

const char *wl_ik_event_name(const wl_ik_names *names, uint32_t event, char *buf, size_t size)
{
    if (names && event < names->n_events && names->events[event])
        return names->events[event];
    snprintf(buf, size, "event_%u", event);
    return buf;
}

const char *wl_ik_group_name(const wl_ik_names *names, uint32_t group, char *buf, size_t size)
{
    if (names && group < names->n_groups && names->groups[group])
        return names->groups[group];
    snprintf(buf, size, "group_%u", group);
    return buf;
}

/* ---- statistics ------------------------------------------------------------------------------- */

typedef struct keyed {
    uint64_t key; /* event << 20 | group */
    uint64_t dur;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->dur > y->dur) - (x->dur < y->dur);
}

/* nearest rank: the smallest value with at least q of the samples at or below it */
static uint64_t rank(const keyed *v, size_t n, double q)
{
    double r = q * (double)n;
    size_t k = (size_t)r;
    if ((double)k < r)
        k++;
    if (k == 0)
        k = 1;
    return v[k - 1].dur;
}

int wl_ik_summarize(const wl_ik_result *r, wl_ik_stat **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (r->n_slices == 0)
        return 0;
    keyed *v = malloc(r->n_slices * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < r->n_slices; i++) {
        v[i].key = (uint64_t)r->slices[i].event << 20 | r->slices[i].group;
        v[i].dur = r->slices[i].dur_ns;
    }
    qsort(v, r->n_slices, sizeof *v, cmp_keyed);
    size_t groups = 0;
    for (size_t i = 0; i < r->n_slices; i++)
        groups += i == 0 || v[i].key != v[i - 1].key;
    wl_ik_stat *st = calloc(groups, sizeof *st);
    if (!st) {
        free(v);
        return -1;
    }
    size_t g = 0;
    for (size_t i = 0; i < r->n_slices;) {
        size_t j = i;
        uint64_t total = 0;
        while (j < r->n_slices && v[j].key == v[i].key)
            total += v[j++].dur;
        wl_ik_stat *s = &st[g++];
        s->event = (uint32_t)(v[i].key >> 20);
        s->group = (uint32_t)(v[i].key & 0xfffff);
        s->count = j - i;
        s->total_ns = total;
        s->mean_ns = (double)total / (double)s->count;
        s->min_ns = v[i].dur;
        s->max_ns = v[j - 1].dur;
        s->p50_ns = rank(v + i, j - i, 0.50);
        s->p99_ns = rank(v + i, j - i, 0.99);
        i = j;
    }
    free(v);
    *out = st;
    *n_out = groups;
    return 0;
}

static double us(uint64_t ns) { return (double)ns / 1000.0; }

int wl_ik_write_summary(FILE *fp, const wl_ik_result *r, const wl_ik_names *names)
{
    wl_ik_stat *st;
    size_t n;
    if (wl_ik_summarize(r, &st, &n))
        return -1;
    const wl_ik_counts *c = &r->counts;
    fprintf(fp, "in-kernel buffer: %u blocks x %u groups, %llu records in %llu words\n",
            r->num_blocks, r->num_groups, (unsigned long long)c->records,
            (unsigned long long)c->words);
    fprintf(fp, "%-24s %-16s %10s %12s %10s %10s %10s %10s %10s\n", "event", "group", "count",
            "total_us", "mean_us", "min_us", "p50_us", "p99_us", "max_us");
    char eb[32], gb[32];
    for (size_t i = 0; i < n; i++) {
        const wl_ik_stat *s = &st[i];
        fprintf(fp, "%-24s %-16s %10llu %12.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n",
                wl_ik_event_name(names, s->event, eb, sizeof eb),
                wl_ik_group_name(names, s->group, gb, sizeof gb), (unsigned long long)s->count,
                us(s->total_ns), s->mean_ns / 1000.0, us(s->min_ns), us(s->p50_ns), us(s->p99_ns),
                us(s->max_ns));
    }
    free(st);
    fprintf(fp,
            "slices %llu, instants %llu, lanes %llu seen / %llu finalized, unmatched begins %llu, "
            "unmatched ends %llu, after finalize %llu, over capacity %llu, crossed %llu, "
            "empty slots %llu\n",
            (unsigned long long)c->slices, (unsigned long long)c->instants,
            (unsigned long long)c->lanes_seen, (unsigned long long)c->lanes_finalized,
            (unsigned long long)c->unmatched_begins, (unsigned long long)c->unmatched_ends,
            (unsigned long long)c->after_finalize, (unsigned long long)c->over_capacity,
            (unsigned long long)c->crossed, (unsigned long long)c->empty);
    return ferror(fp) ? -1 : 0;
}
