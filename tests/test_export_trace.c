/* Structural checks of the session exporters on a synthetic session with the awkward shapes
 * (graph launch, NVTX/API partial overlap, overlapping kernels on a stream, unterminated range,
 * work without API call, clock-skewed copy): the Perfetto file is decoded here with a minimal
 * protobuf reader and checked for framing, interning, track references, BEGIN/END balance and
 * nesting per track, counters only on counter tracks, each flow started and ended once with
 * source ts <= destination ts, no pid 0; slice and flow counts must match what the generator
 * wrote, and the JSON export must report the same counts. A copy of the session without
 * api_call.flow_id (as imported before that column) must export the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <unistd.h>

#include <sqlite3.h>

#include "export/session_export.h"
#include "pb_reader.h"
#include "store/session_synth.h"
#include "test.h"
#include "test_files.h"

#define MAXT 256
typedef struct track {
    uint64_t uuid, parent;
    int is_counter, depth, nvml; /* nvml: a counter track named "NVML ..." */
    uint64_t stack[600], last_ts;
} track;

#define MAXF 100000
typedef struct checker {
    track t[MAXT];
    int nt;
    uint64_t flow_src[MAXF], flow_src_ts[MAXF];
    uint64_t flow_dst[MAXF], flow_dst_ts[MAXF];
    int nsrc, ndst;
    char cats[16][32];
    int ncats;
    uint64_t per_cat[16];
    uint64_t begins, ends, counters, errors;
    uint64_t nvml_tracks, nvml_counters;
    int names_interned; /* highest event-name iid seen */
} checker;

static track *find(checker *c, uint64_t uuid)
{
    for (int i = 0; i < c->nt; i++)
        if (c->t[i].uuid == uuid)
            return &c->t[i];
    return NULL;
}

static void bad(checker *c, const char *what, uint64_t v)
{
    if (c->errors++ < 10)
        fprintf(stderr, "trace check: %s (%llu)\n", what, (unsigned long long)v);
}

static void descriptor(checker *c, rd d)
{
    uint32_t f; int wt; uint64_t v = 0; rd s;
    track t = {0};
    while (field(&d, &f, &wt, &v, &s)) {
        if (f == 1) t.uuid = v;
        if (f == 5) t.parent = v;
        if (f == 8) t.is_counter = 1;
        if (f == 2 && wt == 2 && s.end - s.p >= 5 && !memcmp(s.p, "NVML ", 5)) t.nvml = 1;
        if (f == 3 || f == 4) {
            uint32_t g; int w; uint64_t x = 0; rd q;
            while (field(&s, &g, &w, &x, &q))
                if (g == 1 && x == 0)
                    bad(c, "pid 0", 0);
        }
    }
    if (!t.uuid || find(c, t.uuid))
        bad(c, "track uuid zero or repeated", t.uuid);
    else if (c->nt < MAXT)
        c->t[c->nt++] = t, c->nvml_tracks += t.nvml && t.is_counter;
}

static void event(checker *c, rd e, uint64_t ts)
{
    uint32_t f; int wt; uint64_t v = 0; rd s;
    uint64_t type = 0, uuid = 0, cat = 0;
    while (field(&e, &f, &wt, &v, &s)) {
        if (f == 9) type = v;
        if (f == 11) uuid = v;
        if (f == 3) cat = v;
        if ((f == 47 || f == 48 || f == 44) && wt != 1)
            bad(c, "flow ids / double counter not fixed64", f);
        if (f == 47 && c->nsrc < MAXF)
            c->flow_src[c->nsrc] = v, c->flow_src_ts[c->nsrc++] = ts;
        if (f == 48 && c->ndst < MAXF)
            c->flow_dst[c->ndst] = v, c->flow_dst_ts[c->ndst++] = ts;
        if (f == 10 && (int)v > c->names_interned)
            bad(c, "name iid used before it was interned", v);
    }
    track *t = find(c, uuid);
    if (!t) {
        bad(c, "event on an undeclared track", uuid);
        return;
    }
    if (ts < t->last_ts)
        bad(c, "events of a track out of time order", uuid);
    t->last_ts = ts;
    if (type == 4) {
        c->counters++;
        c->nvml_counters += t->nvml;
        if (!t->is_counter)
            bad(c, "counter event on a slice track", uuid);
        return;
    }
    if (t->is_counter)
        bad(c, "slice event on a counter track", uuid);
    if (type == 1) {
        c->begins++;
        if (t->depth >= 600)
            bad(c, "too deep", uuid);
        else
            t->stack[t->depth++] = ts;
        if (cat >= 1 && cat <= 16)
            c->per_cat[cat - 1]++;
    } else if (type == 2) {
        c->ends++;
        if (t->depth == 0)
            bad(c, "END without BEGIN", uuid);
        else
            t->depth--;
    }
}

static void interned(checker *c, rd d)
{
    uint32_t f; int wt; uint64_t v = 0; rd s;
    while (field(&d, &f, &wt, &v, &s)) {
        uint32_t g; int w; uint64_t x = 0, iid = 0; rd q = {0}, name = {0};
        while (field(&s, &g, &w, &x, &q)) {
            if (g == 1) iid = x;
            if (g == 2) name = q;
        }
        if (f == 2 && (int)iid == c->names_interned + 1)
            c->names_interned = (int)iid;
        if (f == 1 && iid >= 1 && iid <= 16) {
            size_t n = (size_t)(name.end - name.p);
            snprintf(c->cats[iid - 1], sizeof c->cats[0], "%.*s", (int)n, (const char *)name.p);
            if ((int)iid > c->ncats)
                c->ncats = (int)iid;
        }
    }
}

static void check_trace(checker *c, const uint8_t *buf, size_t n)
{
    rd r = {buf, buf + n, 0};
    if (n == 0 || buf[0] != 0x0A)
        bad(c, "trace does not start with 0x0A", n);
    uint32_t f; int wt; uint64_t v = 0; rd pkt;
    int first = 1;
    while (field(&r, &f, &wt, &v, &pkt)) {
        if (f != 1 || wt != 2) {
            bad(c, "not a Trace.packet", f);
            break;
        }
        uint64_t ts = 0, seq = 0, flags = 0;
        rd te = {0}, td = {0}, id = {0}, s;
        uint32_t g; int w; uint64_t x = 0;
        while (field(&pkt, &g, &w, &x, &s)) {
            if (g == 8) ts = x;
            if (g == 10) seq = x;
            if (g == 13) flags = x;
            if (g == 11) te = s;
            if (g == 60) td = s;
            if (g == 12) id = s;
        }
        if (pkt.bad)
            bad(c, "malformed packet", 0);
        if (!seq)
            bad(c, "packet without sequence id", 0);
        if (first && !(flags & 1))
            bad(c, "first packet does not clear incremental state", flags);
        first = 0;
        if (id.p)
            interned(c, id);
        if (td.p)
            descriptor(c, td);
        if (te.p)
            event(c, te, ts);
    }
    if (r.bad || r.p != r.end)
        bad(c, "framing does not cover the file", (uint64_t)(r.end - r.p));
    for (int i = 0; i < c->nt; i++) {
        if (c->t[i].depth)
            bad(c, "unbalanced BEGIN on track", c->t[i].uuid);
        if (c->t[i].parent && !find(c, c->t[i].parent))
            bad(c, "parent track missing", c->t[i].parent);
    }
    /* each flow id starts once and ends once, source no later than destination */
    for (int i = 0; i < c->nsrc; i++) {
        int dst = -1, dup = 0;
        for (int j = 0; j < c->ndst; j++)
            if (c->flow_dst[j] == c->flow_src[i])
                dup += dst >= 0, dst = j;
        for (int j = i + 1; j < c->nsrc; j++)
            if (c->flow_src[j] == c->flow_src[i])
                dup++;
        if (dst < 0 || dup)
            bad(c, "flow not ended exactly once", c->flow_src[i]);
        else if (c->flow_src_ts[i] > c->flow_dst_ts[dst])
            bad(c, "flow goes back in time", c->flow_src[i]);
    }
    if (c->nsrc != c->ndst)
        bad(c, "flow starts and ends differ", (uint64_t)c->ndst);
}

static uint64_t cat_count(const checker *c, const char *name)
{
    for (int i = 0; i < c->ncats; i++)
        if (!strcmp(c->cats[i], name))
            return c->per_cat[i];
    return 0;
}

static long long count_rows(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* NVML samples as `warplens run --nvml-interval` would leave them: NSAMPLES on the first kernel's
 * device, spread over the kernels' span, one without a power reading. */
#define NSAMPLES 20
static int add_device_samples(const char *path)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    char sql[1024];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE span(lo, hi, dev) AS (SELECT min(start_ns), max(end_ns), (SELECT device_id FROM kernel"
             " ORDER BY id LIMIT 1) FROM kernel), i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < %d)"
             " INSERT INTO device_sample SELECT (SELECT pid FROM process LIMIT 1), dev, lo + (hi - lo) * n / %d,"
             " lo + (hi - lo) * (n - 1) / %d, 50 + n, 20, 1980, 2619, CASE WHEN n = 7 THEN NULL ELSE 300000 + n END,"
             " 40, 1073741824, 1000 * n FROM span, i",
             NSAMPLES, NSAMPLES, NSAMPLES);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    sqlite3_close(db);
    return rc;
}

int main(void)
{
    char dir[] = "/tmp/wl_export_test_XXXXXX", session[256], pf[256], js[256], err[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(session, sizeof session, "%s/s.wlsession", dir);
    snprintf(pf, sizeof pf, "%s/t.pftrace", dir);
    snprintf(js, sizeof js, "%s/t.json", dir);
    wl_synth_options o;
    wl_synth_defaults(&o);
    o.kernels = 3000;
    o.threads = 3;
    o.streams = 4;
    wl_synth_counts want;
    CHECK_EQ_INT(wl_synth_session(session, &o, &want, err, sizeof err), 0);
    CHECK_EQ_INT(add_device_samples(session), 0);

    wl_session *s = wl_session_open(session, err, sizeof err);
    CHECK(s != NULL);
    if (!s)
        return test_report("test_export_trace");
    wl_export_stats sp, sj;
    FILE *f = fopen(pf, "wb");
    CHECK_EQ_INT(wl_export_perfetto(s, f, NULL, &sp, err, sizeof err), 0);
    fclose(f);
    f = fopen(js, "wb");
    CHECK_EQ_INT(wl_export_chrome_json(s, f, NULL, &sj, err, sizeof err), 0);
    fclose(f);

    size_t n = 0;
    uint8_t *buf = slurp(pf, &n);
    checker *c = calloc(1, sizeof *c);
    check_trace(c, buf, n);
    CHECK_EQ_INT(c->errors, 0);
    CHECK_EQ_INT(c->begins, c->ends);
    CHECK_EQ_INT(cat_count(c, "kernel"), want.kernels);
    CHECK_EQ_INT(cat_count(c, "memcpy"), want.memcpys);
    CHECK_EQ_INT(cat_count(c, "memset"), want.memsets);
    CHECK_EQ_INT(cat_count(c, "cuda_api"), want.api_calls);
    CHECK_EQ_INT(cat_count(c, "nvtx"), want.nvtx_ranges);
    CHECK_EQ_INT(cat_count(c, "scope"), want.scopes);
    CHECK_EQ_INT(c->nsrc, want.flows);
    CHECK(c->counters > 0);
    /* one counter track per NVML series on the device; every value read, in time order per track */
    CHECK_EQ_INT(c->nvml_tracks, 7);
    CHECK_EQ_INT(c->nvml_counters, NSAMPLES * 7 - 1);
    CHECK_EQ_INT(sp.tl.slices_dropped, 0);
    CHECK(sp.tl.lanes_added >= 2); /* the NVTX/API overlap and the overlapping kernels */
    /* both formats carry the same model */
    CHECK_EQ_INT(sj.tl.slices, sp.tl.slices);
    CHECK_EQ_INT(sj.tl.flows, sp.tl.flows);
    CHECK_EQ_INT(sj.tl.counter_events, sp.tl.counter_events);
    CHECK(sp.bytes * 3 <= sj.bytes);
    free(c);
    free(buf);
    buf = slurp(js, &n);
    CHECK_EQ_INT(count_str(buf, n, "\"ph\":\"C\",\"name\":\"NVML GPU utilization\""), NSAMPLES);
    CHECK_EQ_INT(count_str(buf, n, "\"ph\":\"C\",\"name\":\"NVML power\""), NSAMPLES - 1);
    free(buf);

    /* with one lane allowed, overlapping slices are dropped together with their flows */
    wl_tl_options one = {.max_lanes = 1};
    f = fopen(pf, "wb");
    CHECK_EQ_INT(wl_export_perfetto(s, f, &one, &sp, err, sizeof err), 0);
    fclose(f);
    buf = slurp(pf, &n);
    c = calloc(1, sizeof *c);
    check_trace(c, buf, n);
    CHECK_EQ_INT(c->errors, 0);
    CHECK(sp.tl.slices_dropped >= 2);
    free(c);
    free(buf);
    wl_session_close(s);

    /* a session imported before api_call.flow_id (the column dropped from a copy) exports the same
     * bytes: the cursor then looks every flow up; the synthetic session has calls of each kind
     * (one flow, none: a copy that starts before its call, several: a graph launch) */
    char old[256];
    snprintf(old, sizeof old, "%s/old.wlsession", dir);
    sqlite3 *db = NULL;
    CHECK_EQ_INT(sqlite3_open(session, &db), SQLITE_OK);
    CHECK_EQ_INT(count_rows(db, "SELECT count(*) FROM api_call WHERE flow_id > 0"), want.flows - 3);
    CHECK_EQ_INT(count_rows(db, "SELECT count(*) FROM api_call WHERE flow_id IS NULL"), 1);
    CHECK(count_rows(db, "SELECT count(*) FROM api_call WHERE flow_id = 0") >= 2);
    char sql[512];
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", old);
    CHECK_EQ_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    CHECK_EQ_INT(sqlite3_open(old, &db), SQLITE_OK);
    CHECK_EQ_INT(sqlite3_exec(db, "ALTER TABLE api_call DROP COLUMN flow_id", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    for (int fmt = 0; fmt < 2; fmt++) {
        char *out[2] = {NULL, NULL};
        size_t len[2] = {0, 0};
        for (int i = 0; i < 2; i++) {
            wl_session *x = wl_session_open(i ? old : session, err, sizeof err);
            CHECK(x != NULL);
            FILE *m = open_memstream(&out[i], &len[i]);
            if (x && m) {
                wl_export_stats st;
                CHECK_EQ_INT(fmt ? wl_export_chrome_json(x, m, NULL, &st, err, sizeof err)
                                 : wl_export_perfetto(x, m, NULL, &st, err, sizeof err), 0);
                CHECK_EQ_INT(st.tl.flows, want.flows);
            }
            if (m)
                fclose(m);
            wl_session_close(x);
        }
        CHECK(len[0] > 0 && len[0] == len[1] && memcmp(out[0], out[1], len[0]) == 0);
        free(out[0]);
        free(out[1]);
    }
    unlink(old);
    unlink(session);
    unlink(pf);
    unlink(js);
    rmdir(dir);
    return test_report("test_export_trace");
}
