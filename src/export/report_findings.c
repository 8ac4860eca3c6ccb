/* The report's findings, computed beside the report (see report_findings.h). */
#include "export/report_findings.h"

#include <pthread.h>
#include <stdlib.h>

#include "analysis/advise.h"

struct wl_report_findings {
    wl_session *own;           /* the second handle advise reads (NULL: advise runs on s at the end) */
    pthread_t thread;
    int started;
    wl_advise_result r;
    int rc;
};

static void run(wl_report_findings *f, wl_session *s)
{
    wl_advise_opts o = {NULL, 1.0};
    char err[256];
    f->rc = wl_advise(s, &o, &f->r, err, sizeof err);
}

static void *advise_thread(void *arg)
{
    wl_report_findings *f = arg;
    run(f, f->own);
    return NULL;
}

wl_report_findings *wl_report_findings_start(wl_session *s)
{
    wl_report_findings *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->rc = -1;
    char err[512];
    /* (the open is cheap: the file was checked by s's open, check_cache.h) */
    /* the two handles share their reads of the kernel table: advise's kernel summary comes from
     * the report's read, or the other way round, whichever needs it first */
    if ((f->own = wl_session_open(wl_session_path(s), err, sizeof err)) != NULL &&
        (wl_session_share_scan(s, f->own) != 0 ||
         !(f->started = pthread_create(&f->thread, NULL, advise_thread, f) == 0))) {
        wl_session_close(f->own);
        f->own = NULL;
    }
    if (f->started) /* advise's walk holds one core: the report's own reads keep to one thread */
        wl_session_set_read_threads(s, 1);
    return f;
}

void wl_report_findings_write(wl_report_findings *f, wl_json_out *j, wl_session *s, uint64_t origin)
{
    wl_report_findings local = {.rc = -1};
    if (!f)
        f = &local;
    if (f->started) {
        pthread_join(f->thread, NULL);
        wl_session_close(f->own);
    } else {
        run(f, s);
    }
    wl_json_lit(j, ",\"findings\":[");
    for (int i = 0; f->rc == 0 && i < f->r.n && i < 5; i++) {
        const wl_finding *x = &f->r.findings[i];
        wl_json_lit(j, i ? ",\n{\"rule\":" : "\n{\"rule\":");
        wl_json_str(j, x->rule);
        wl_json_key(j, "severity"), wl_json_str(j, wl_severity_name(x->severity));
        wl_json_key(j, "title"), wl_json_str(j, x->title);
        wl_json_key(j, "estimated"), wl_json_lit(j, wl_finding_estimated(x) ? "true" : "false");
        wl_json_key(j, "gain_ns"), wl_json_double(j, x->gain_ns);
        wl_json_key(j, "gain_pct"), wl_json_double(j, x->gain_pct);
        wl_json_key(j, "estimate"), wl_json_str(j, x->estimate);
        wl_json_key(j, "measured"), wl_json_str(j, x->measured);
        wl_json_key(j, "fix"), wl_json_str(j, x->fix);
        wl_json_key(j, "t0"), wl_json_i64(j, x->start_ns >= origin ? (int64_t)(x->start_ns - origin) : 0);
        wl_json_key(j, "t1"), wl_json_i64(j, x->end_ns >= origin ? (int64_t)(x->end_ns - origin) : 0);
        wl_json_key(j, "span"), wl_json_str(j, x->span_name);
        wl_json_key(j, "evidence"), wl_json_lit(j, "[");
        for (int e = 0; e < x->n_evidence; e++) {
            wl_json_lit(j, e ? ",[" : "[");
            wl_json_str(j, x->evidence[e].key);
            wl_json_lit(j, ",");
            wl_json_str(j, x->evidence[e].value);
            wl_json_lit(j, "]");
        }
        wl_json_lit(j, "]}");
    }
    if (f->rc == 0)
        wl_advise_free(&f->r);
    wl_json_lit(j, "]");
    if (f != &local)
        free(f);
}
