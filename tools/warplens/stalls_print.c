/* Warp stall reasons in the CLI (see stalls_print.h). Shares are of a group's samples with a
 * reason (store/stall_profile.h); reasons are shown without CUPTI's name prefix. */
#include "stalls_print.h"

#include <inttypes.h>
#include <string.h>

#include "format.h"
#include "kernel_format.h"

#define WIDTH 100
#define PANEL_REASONS 6
#define TABLE_REASONS 3
#define BAR 30

static const char *period_text(const wl_stall_set *m, char *b, size_t n)
{
    if (m->period_min <= 0)
        snprintf(b, n, "PC sampling");
    else if (m->period_min == m->period_max)
        snprintf(b, n, "PC sampling, one warp sample per SM every 2^%d cycles", m->period_min);
    else
        snprintf(b, n, "PC sampling, one warp sample per SM every 2^%d..2^%d cycles", m->period_min, m->period_max);
    return b;
}

/* "long_scoreboard 78.2%, selected 6.1%, ..." for the first `max` reasons. */
static const char *top_text(const wl_stall_profile *p, int max, char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < p->n && i < max; i++) {
        size_t used = strlen(b);
        snprintf(b + used, n - used, "%s%s %.1f%%", i ? ", " : "", wl_stall_short_name(p->shares[i].name),
                 p->shares[i].pct);
    }
    return b;
}

static void no_data_line(const wl_stall_set *m)
{
    if (m->status[0])
        printf("warp stall sampling was off: %s\n", m->status);
    else if (m->recorded)
        printf("no warp samples were recorded (kernels shorter than the sampling period get none: a smaller\n"
               "--pc-period samples more often)\n");
    else
        printf("no warp-stall samples in this session (record them with `warplens run --stalls`)\n");
}

void print_stall_table(const wl_stall_set *m, const int64_t *name_ids, char *const *names, const uint64_t *calls,
                       int shown)
{
    char pt[96];
    printf("Warp stall reasons per kernel name (%s;\n%% of each name's samples, summed over its sampled launches)\n",
           period_text(m, pt, sizeof pt));
    if (!m->samples) {
        no_data_line(m);
        return;
    }
    /* two lines per name: the counts and the name, then its top reasons under the name */
    const int wc = 6, ws = 7, wn = 10, indent = wc + ws + wn + 4;
    printf("%*s %*s %*s  %s\n", wc, "Calls", ws, "Sampled", wn, "Samples", "Name / top stall reasons");
    int rows = 0;
    for (int i = 0; i < shown; i++) {
        const wl_stall_profile *p = wl_stall_set_find(m, name_ids[i]);
        if (!p || !p->samples)
            continue;
        char top[512], tb[WIDTH + 1], nb[WIDTH + 1];
        printf("%*" PRIu64 " %*" PRIu64 " %*" PRIu64 "  %s\n", wc, calls[i], ws, p->kernels, wn, p->samples,
               kf_shorten(names[i], (size_t)(WIDTH - indent), nb, sizeof nb));
        printf("%*s%s\n", indent, "",
               kf_shorten(top_text(p, TABLE_REASONS, top, sizeof top), (size_t)(WIDTH - indent), tb, sizeof tb));
        rows++;
    }
    if (!rows)
        printf("(none of these kernel names has samples)\n");
    if (m->unlinked_samples)
        printf("(%" PRIu64 " samples could not be tied to one kernel, e.g. of graph launches, and are not in this"
               " table)\n", m->unlinked_samples);
    if (m->status[0])
        printf("warp stall sampling was off on some GPU: %s\n", m->status);
}

void print_stall_csv(const wl_stall_set *m, const int64_t *name_ids, char *const *names,
                     char *const *short_names, int shown)
{
    printf("name,short_name,name_id,launches_sampled,samples,reason,cupti_name,reason_samples,pct,not_issued\n");
    for (int i = 0; i < shown; i++) {
        const wl_stall_profile *p = wl_stall_set_find(m, name_ids[i]);
        for (int r = 0; p && r < p->n; r++) {
            const wl_stall_share *s = &p->shares[r];
            kf_csv_str(stdout, names[i]);
            putchar(',');
            kf_csv_str(stdout, short_names[i]);
            printf(",%lld,%" PRIu64 ",%" PRIu64 ",", (long long)name_ids[i], p->kernels, p->samples);
            kf_csv_str(stdout, wl_stall_short_name(s->name));
            putchar(',');
            kf_csv_str(stdout, s->name);
            printf(",%" PRIu64 ",%.2f,%" PRIu64 "\n", s->samples, s->pct, s->not_issued);
        }
    }
}

void print_stall_json(FILE *o, const wl_stall_set *m, int64_t key)
{
    const wl_stall_profile *p = m->ngroups ? wl_stall_set_find(m, key) : NULL;
    if (!p || !p->samples)
        return;
    fprintf(o, ",\"stalls\":{\"launches_sampled\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"period_log2\":", p->kernels,
            p->samples);
    if (m->period_min > 0 && m->period_min == m->period_max)
        fprintf(o, "%d", m->period_min);
    else
        fprintf(o, "null");
    fprintf(o, ",\"reasons\":[");
    for (int i = 0; i < p->n; i++) {
        const wl_stall_share *s = &p->shares[i];
        fprintf(o, "%s{\"reason\":", i ? "," : "");
        kf_json_str(o, wl_stall_short_name(s->name));
        fprintf(o, ",\"cupti_name\":");
        kf_json_str(o, s->name);
        fprintf(o, ",\"samples\":%" PRIu64 ",\"pct\":%.2f,\"not_issued\":%" PRIu64 "}", s->samples, s->pct,
                s->not_issued);
    }
    fprintf(o, "]}");
}

static void panel_lines(const char *title, const wl_stall_profile *p)
{
    printf("  %s: %" PRIu64 " samples%s\n", title, p->samples, p->samples ? "" : " (the launch was too short)");
    double rest = 0;
    for (int i = 0; i < p->n; i++) {
        const wl_stall_share *s = &p->shares[i];
        if (i >= PANEL_REASONS) {
            rest += s->pct;
            continue;
        }
        printf("    %-22s ", wl_stall_short_name(s->name));
        kf_bar(stdout, s->pct / 100.0, BAR);
        printf(" %5.1f %%", s->pct);
        if (s->not_issued)
            printf("  (not issued: %.1f %%)", 100.0 * (double)s->not_issued / (double)p->samples);
        printf("\n");
    }
    if (p->n > PANEL_REASONS)
        printf("    ... %d more reasons, %.1f %% together\n", p->n - PANEL_REASONS, rest);
}

void print_stall_panel(wl_session *s, int64_t kernel_id, int64_t name_id)
{
    wl_stall_set one, all;
    if (wl_session_stalls(s, WL_STALLS_BY_KERNEL, kernel_id, &one) != 0 || !one.recorded) {
        wl_stall_set_free(&one);
        return;
    }
    char pt[96];
    printf("\nwarp stall reasons (%s; %% of samples;\nkernels ran one at a time while sampled)\n",
           period_text(&one, pt, sizeof pt));
    const wl_stall_profile *p = wl_stall_set_find(&one, kernel_id);
    if (p && p->samples)
        panel_lines("this call", p);
    else
        printf("  this call: no samples (shorter than the sampling period, not tied to this kernel (graph\n"
               "  launches), or sampling was off on its GPU)\n");
    if (one.status[0])
        printf("  sampling was off on some GPU: %s\n", one.status);
    if (wl_session_stalls(s, WL_STALLS_BY_NAME, name_id, &all) == 0) {
        const wl_stall_profile *g = wl_stall_set_find(&all, name_id);
        if (g && g->kernels > 1) {
            char t[64];
            snprintf(t, sizeof t, "all %" PRIu64 " sampled calls", g->kernels);
            panel_lines(t, g);
        }
    }
    wl_stall_set_free(&all);
    wl_stall_set_free(&one);
}

void print_stall_run_note(wl_session *s, const char *path)
{
    wl_stall_set m;
    if (wl_session_stalls(s, WL_STALLS_BY_NAME, -1, &m) != 0 || !m.recorded) {
        wl_stall_set_free(&m);
        return;
    }
    char pt[96];
    if (m.samples)
        printf("\nWarp stalls: %" PRIu64 " samples from %" PRIu64 " kernel launches (%s).\nKernels ran one at a time"
               " while sampled: the timings of this run differ from an unprofiled run.\nPer kernel name:"
               " warplens kernels %s --stalls\n",
               m.samples, m.kernels, period_text(&m, pt, sizeof pt), path);
    else if (!m.status[0])
        printf("\nWarp stalls: no samples were recorded (kernels shorter than the sampling period get none; a\n"
               "smaller --pc-period samples more often).\n");
    if (m.unlinked_samples)
        printf("%" PRIu64 " warp samples could not be tied to one kernel (graph launches share a correlation id).\n",
               m.unlinked_samples);
    if (m.status[0])
        printf("Warp stall sampling was off on some GPU: %s (the recorder's message says why).\n", m.status);
    wl_stall_set_free(&m);
}
