/* `warplens advise` (advise.h): runs the timeline and kernel rules, adds what the data could not
 * show (data quality), drops findings below the minimum gain and ranks the rest by the time they
 * could win back. */
#include "analysis/advise.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise_kernels.h"
#include "analysis/advise_timeline.h"
#include "analysis/kernel_occupancy.h"
#include "common/grow.h"
#include "store/session_ranks.h"

const char *wl_severity_name(wl_severity s)
{
    switch (s) {
    case WL_SEV_HIGH: return "high";
    case WL_SEV_MEDIUM: return "medium";
    case WL_SEV_LOW: return "low";
    default: return "info";
    }
}

wl_finding *wl_advise_add(wl_advise_result *r, const char *rule, wl_severity sev)
{
    size_t cap = (size_t)r->cap;
    if (wl_grow((void **)&r->findings, &cap, (size_t)r->n, sizeof *r->findings, 8) != 0)
        return NULL;
    r->cap = (int)cap;
    wl_finding *f = &r->findings[r->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->rule, sizeof f->rule, "%s", rule);
    f->severity = sev;
    return f;
}

void wl_finding_evidence(wl_finding *f, const char *key, int is_number, const char *fmt, ...)
{
    if (f->n_evidence >= WL_ADVISE_MAX_EVIDENCE)
        return;
    wl_evidence *e = &f->evidence[f->n_evidence++];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->is_number = is_number;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->value, sizeof e->value, fmt, ap);
    va_end(ap);
}

static wl_finding *quality(wl_advise_result *r, wl_severity sev)
{
    wl_finding *f = wl_advise_add(r, "data-quality", sev);
    if (f) {
        f->start_ns = r->start_ns;
        f->end_ns = r->end_ns;
        snprintf(f->estimate, sizeof f->estimate, "not a time to win back: what the other findings could not see");
        snprintf(f->threshold, sizeof f->threshold, "any");
    }
    return f;
}

static void rule_data_quality(wl_session *s, wl_advise_result *r)
{
    wl_session_overview o;
    if (wl_session_get_counts(s, &o) != 0)
        return;
    if (o.lost_total) {
        wl_finding *f = quality(r, WL_SEV_HIGH);
        if (f) {
            snprintf(f->title, sizeof f->title, "%" PRIu64 " records were lost: the findings miss that work", o.lost_total);
            snprintf(f->measured, sizeof f->measured, "%" PRIu64 " records lost (warplens stats shows them by source)",
                     o.lost_total);
            wl_finding_evidence(f, "lost_records", 1, "%" PRIu64, o.lost_total);
            snprintf(f->fix, sizeof f->fix, "Record again with larger buffers (`warplens run --buffer-size 32M"
                                            " --max-buffers 256`), or fewer record kinds (`--record kernels,memcpy`).");
        }
    }
    if (o.incomplete_processes) {
        wl_finding *f = quality(r, WL_SEV_MEDIUM);
        if (f) {
            snprintf(f->title, sizeof f->title, "%d process(es) did not end normally: their last records may be missing",
                     o.incomplete_processes);
            snprintf(f->measured, sizeof f->measured, "%d of %d processes incomplete", o.incomplete_processes,
                     o.processes);
            wl_finding_evidence(f, "incomplete_processes", 1, "%d", o.incomplete_processes);
            snprintf(f->fix, sizeof f->fix, "`warplens info SESSION` says why; let the program exit normally (or"
                                            " stop it with SIGTERM/SIGINT, which the recorder handles).");
        }
    }
    if (o.kernels && o.kernels_no_timestamp * 2 > o.kernels) {
        wl_finding *f = quality(r, WL_SEV_MEDIUM);
        if (f) {
            snprintf(f->title, sizeof f->title,
                     "%" PRIu64 " of %" PRIu64 " kernels have no timestamps: the timeline rules could not run on them",
                     o.kernels_no_timestamp, o.kernels);
            snprintf(f->measured, sizeof f->measured, "%" PRIu64 " kernels without GPU start/end (kernel replay under"
                     " --metrics gives none)", o.kernels_no_timestamp);
            wl_finding_evidence(f, "untimed_kernels", 1, "%" PRIu64, o.kernels_no_timestamp);
            snprintf(f->fix, sizeof f->fix, "Record the timeline in a run without --metrics (or with a one-pass set)"
                                            " and advise on that session.");
        }
    }
    wl_capture_ranges cr;
    if (wl_session_capture_ranges(s, &cr) == 0 && cr.processes > 0) {
        wl_finding *f = quality(r, WL_SEV_INFO);
        if (f) {
            snprintf(f->title, sizeof f->title, "Only %" PRIu64 " capture range(s) were traced (%.1f%% of the run)",
                     cr.ranges, cr.run_ns ? 100.0 * (double)cr.traced_ns / (double)cr.run_ns : 0);
            snprintf(f->measured, sizeof f->measured, "%.3f ms traced of %.3f ms run", cr.traced_ns / 1e6,
                     cr.run_ns / 1e6);
            wl_finding_evidence(f, "capture_ranges", 1, "%" PRIu64, cr.ranges);
            snprintf(f->fix, sizeof f->fix, "The findings cover the traced spans only; record without"
                                            " --capture-range to see the whole run.");
        }
    }
    char note[240];
    if (wl_session_damage_note(s, note, sizeof note) == 1) {
        wl_finding *f = quality(r, WL_SEV_MEDIUM);
        if (f) {
            snprintf(f->title, sizeof f->title, "The session is damaged: some rows were left out");
            snprintf(f->measured, sizeof f->measured, "%s", note);
            snprintf(f->fix, sizeof f->fix, "`warplens info --check SESSION` lists them.");
        }
    }
}

static int by_gain(const void *a, const void *b)
{
    const wl_finding *x = a, *y = b;
    if (x->gain_ns != y->gain_ns)
        return x->gain_ns > y->gain_ns ? -1 : 1;
    if (x->severity != y->severity)
        return x->severity > y->severity ? -1 : 1;
    return strcmp(x->rule, y->rule);
}

int wl_finding_estimated(const wl_finding *f)
{
    return strcmp(f->rule, "data-quality") != 0 && strcmp(f->rule, "roofline") != 0;
}

int wl_advise(wl_session *s, const wl_advise_opts *o, wl_advise_result *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    wl_advise_spans filter, steps;
    memset(&filter, 0, sizeof filter);
    memset(&steps, 0, sizeof steps);
    int rc = -1;
    wl_occ_cache *cache = wl_occ_cache_new(s);
    if (!cache) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    wl_advise_calls calls; /* read beside the spans' reads below */
    wl_advise_calls_begin(s, &calls);
    if (o->range && o->range[0]) {
        if (wl_advise_spans_load(s, o->range, &filter) != 0) {
            snprintf(err, err_size, "reading the ranges named '%s' failed", o->range);
            goto done;
        }
        if (filter.n == 0) {
            snprintf(err, err_size, "no closed NVTX range or scope is named '%s' (`warplens ranges SESSION` lists them)",
                     o->range);
            goto done;
        }
    }
    /* steps: the most frequent top-level range (or the filter's own ranges) */
    const char *step_name = o->range && o->range[0] ? o->range : NULL;
    if (!step_name && wl_session_top_range_name(s, out->step_name, sizeof out->step_name) == 0)
        step_name = out->step_name;
    if (step_name) {
        snprintf(out->step_name, sizeof out->step_name, "%s", step_name);
        if (filter.n)
            steps = filter; /* the same spans: shared, freed once below */
        else if (wl_advise_spans_load(s, step_name, &steps) != 0)
            memset(&steps, 0, sizeof steps);
        out->steps = steps.n;
    }
    if (wl_advise_timeline(s, cache, &calls, filter.n ? &filter : NULL, &steps, out, err, err_size) != 0)
        goto done;
    if (wl_advise_kernels(s, cache, out, out->span_ns, err, err_size) != 0)
        goto done;
    if (out->step_name[0])
        for (int i = 0; i < out->n; i++)
            if (!out->findings[i].span_name[0] && filter.n)
                snprintf(out->findings[i].span_name, sizeof out->findings[i].span_name, "%s", out->step_name);
    rule_data_quality(s, out);
    int kept = 0;
    for (int i = 0; i < out->n; i++)
        if (!wl_finding_estimated(&out->findings[i]) || out->findings[i].gain_pct >= o->min_gain_pct)
            out->findings[kept++] = out->findings[i];
    out->n = kept;
    if (out->n > 1)
        qsort(out->findings, (size_t)out->n, sizeof *out->findings, by_gain);
    rc = 0;
done:
    wl_advise_calls_free(&calls);
    if (filter.n && steps.v == filter.v)
        memset(&steps, 0, sizeof steps);
    wl_advise_spans_free(&filter);
    wl_advise_spans_free(&steps);
    wl_occ_cache_free(cache);
    if (rc != 0)
        wl_advise_free(out);
    return rc;
}

void wl_advise_free(wl_advise_result *r)
{
    free(r->findings);
    r->findings = NULL;
    r->n = r->cap = 0;
}
