/* Ranges of a decoded batch -> the activities they measured (see metric_match.h). */
#include "capture/metric_match.h"

#include <math.h>
#include <string.h>

static void set(wl_mm_range *r, uint32_t corr, uint32_t kind, uint32_t match, uint32_t part, uint32_t parts)
{
    r->correlation_id = corr;
    r->kind = kind;
    r->match = match;
    r->part = part;
    r->parts = parts;
}

/* A range's CTA count against a launch's grid size; an unknown on either side matches anything
 * (it can neither confirm nor refute a place). */
static int ctas_agree(const double *ctas, size_t range, uint64_t grid)
{
    if (!ctas || !grid || isnan(ctas[range]))
        return 1;
    return fabs(ctas[range] - (double)grid) < 0.5;
}

static void count(const wl_mm_range *out, size_t n, wl_mm_result *res)
{
    for (size_t i = 0; i < n; i++) {
        if (out[i].kind == WL_MM_DISCARD)
            res->discarded++;
        else if (out[i].kind == WLCAP_OWNER_UNKNOWN)
            res->unknown++;
        else
            res->tied++;
    }
}

/* One call, a batch of its own: every range is that call's. */
static void isolated(const wl_mm_call *c, const double *ctas, size_t n, wl_mm_range *out, wl_mm_result *res)
{
    uint32_t parts = (uint32_t)n;
    if (c->kind != WLCAP_OWNER_KERNEL) {
        for (size_t i = 0; i < n; i++)
            set(&out[i], c->correlation_id, c->kind, WLCAP_MATCH_ISOLATED, (uint32_t)i, parts);
        return;
    }
    if (n == 0) {
        res->calls_without++;
        return;
    }
    if (n == 1) {
        set(&out[0], c->correlation_id, WLCAP_OWNER_KERNEL, WLCAP_MATCH_ISOLATED, 0, 1);
        if (!ctas_agree(ctas, 0, c->ctas))
            res->cta_disagree++;
        return;
    }
    /* several ranges for one launch: the kernel is the one range with its grid's CTA count */
    size_t hits = 0, at = 0;
    for (size_t i = 0; ctas && c->ctas && i < n; i++)
        if (!isnan(ctas[i]) && fabs(ctas[i] - (double)c->ctas) < 0.5)
            hits++, at = i;
    for (size_t i = 0; i < n; i++) {
        if (hits != 1)
            set(&out[i], c->correlation_id, WLCAP_OWNER_UNKNOWN, WLCAP_MATCH_NONE, (uint32_t)i, parts);
        else if (i == at)
            set(&out[i], c->correlation_id, WLCAP_OWNER_KERNEL, WLCAP_MATCH_SIGNATURE, 0, 1);
        else
            set(&out[i], c->correlation_id, WLCAP_OWNER_INTERNAL, WLCAP_MATCH_ISOLATED, (uint32_t)i, parts);
    }
    if (hits != 1)
        res->calls_without++;
}

/* Kernel launches placed by CTA count where every placement agrees. pos: scratch for 2 * ncalls. */
static int forced(const wl_mm_call *calls, size_t ncalls, const double *ctas, size_t nranges, wl_mm_range *out,
                  size_t *pos, wl_mm_result *res)
{
    size_t *early = pos, *late = pos + ncalls;
    size_t j = 0;
    for (size_t i = 0; i < nranges && j < ncalls; i++)
        if (ctas_agree(ctas, i, calls[j].ctas))
            early[j++] = i;
    if (j < ncalls)
        return -1; /* the launches do not fit the ranges in order: nothing is certain */
    size_t k = ncalls;
    for (size_t i = nranges; i-- > 0 && k > 0;)
        if (ctas_agree(ctas, i, calls[k - 1].ctas))
            late[--k] = i;
    for (j = 0; j < ncalls; j++) {
        if (early[j] == late[j])
            set(&out[early[j]], calls[j].correlation_id, WLCAP_OWNER_KERNEL, WLCAP_MATCH_SIGNATURE, 0, 1);
        else
            res->calls_without++;
    }
    return 0;
}

void wl_metric_match(const wl_mm_call *calls, size_t ncalls, const double *ctas, size_t nranges, wl_mm_range *out,
                     size_t *scratch, wl_mm_result *res)
{
    memset(res, 0, sizeof *res);
    for (size_t i = 0; i < nranges; i++)
        set(&out[i], 0, WLCAP_OWNER_UNKNOWN, WLCAP_MATCH_NONE, 0, 1);
    if (ncalls == 1) {
        if (calls[0].kind == WL_MM_DISCARD)
            for (size_t i = 0; i < nranges; i++)
                set(&out[i], calls[0].correlation_id, WL_MM_DISCARD, WLCAP_MATCH_ISOLATED, (uint32_t)i,
                    (uint32_t)nranges);
        else
            isolated(&calls[0], ctas, nranges, out, res);
        count(out, nranges, res);
        return;
    }
    int all_kernels = 1, agree = nranges == ncalls;
    for (size_t j = 0; j < ncalls; j++) {
        all_kernels &= calls[j].kind == WLCAP_OWNER_KERNEL;
        if (agree && calls[j].kind == WLCAP_OWNER_KERNEL)
            agree = ctas_agree(ctas, j, calls[j].ctas);
    }
    if (agree) {
        for (size_t j = 0; j < ncalls; j++)
            set(&out[j], calls[j].correlation_id, calls[j].kind == WL_MM_DISCARD ? WL_MM_DISCARD : calls[j].kind,
                WLCAP_MATCH_ORDER, 0, 1);
    } else {
        res->mismatch = 1;
        if (!ctas || !all_kernels || forced(calls, ncalls, ctas, nranges, out, scratch, res) != 0) {
            for (size_t j = 0; j < ncalls; j++)
                res->calls_without += calls[j].kind == WLCAP_OWNER_KERNEL;
        }
    }
    count(out, nranges, res);
}
