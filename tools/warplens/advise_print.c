/* Printing advise findings (advise_print.h). */
#include "advise_print.h"

#include <inttypes.h>

#include "export/json_out.h"

static void gain_text(const wl_finding *f, char *buf, size_t n)
{
    if (!wl_finding_estimated(f))
        snprintf(buf, n, "no estimate");
    else if (f->gain_ns >= 1e6)
        snprintf(buf, n, "est. %.2f ms, %.1f%%", f->gain_ns / 1e6, f->gain_pct);
    else
        snprintf(buf, n, "est. %.1f us, %.1f%%", f->gain_ns / 1e3, f->gain_pct);
}

void advise_print_text(FILE *out, const wl_advise_result *r, int top)
{
    fprintf(out, "%d finding%s over %.3f ms of GPU work (%" PRIu64 " items)", r->n, r->n == 1 ? "" : "s",
            r->end_ns > r->start_ns ? (double)(r->end_ns - r->start_ns) / 1e6 : 0.0, r->work_items);
    if (r->step_name[0])
        fprintf(out, "; steps: %" PRIu64 " ranges named '%s'", r->steps, r->step_name);
    fprintf(out, "\n");
    if (r->n == 0) {
        fprintf(out, "No rule fired: nothing above the thresholds (docs/advise.md).\n");
        return;
    }
    for (int i = 0; i < r->n && (top <= 0 || i < top); i++) {
        const wl_finding *f = &r->findings[i];
        char g[64];
        gain_text(f, g, sizeof g);
        fprintf(out, "\n%d. [%s, %s] %s\n   gain:      %s: %s\n   measured:  %s\n   threshold: %s\n", i + 1, f->rule,
                wl_severity_name(f->severity), f->title, g, f->estimate, f->measured, f->threshold);
        if (f->span_name[0])
            fprintf(out, "   where:     ranges named '%s'\n", f->span_name);
        for (int e = 0; e < f->n_evidence; e++)
            fprintf(out, "   %-10s %s: %s\n", e == 0 ? "evidence:" : "", f->evidence[e].key, f->evidence[e].value);
        fprintf(out, "   fix:       %s\n", f->fix);
    }
}

void advise_print_json(FILE *out, const wl_advise_result *r, int top)
{
    wl_json_out j;
    wl_json_init(&j, out);
    wl_json_lit(&j, "{\"findings\": [");
    for (int i = 0; i < r->n && (top <= 0 || i < top); i++) {
        const wl_finding *f = &r->findings[i];
        wl_json_lit(&j, i ? ",\n  {\"rule\": " : "\n  {\"rule\": ");
        wl_json_str(&j, f->rule);
        wl_json_lit(&j, ", \"title\": ");
        wl_json_str(&j, f->title);
        wl_json_lit(&j, ", \"severity\": ");
        wl_json_str(&j, wl_severity_name(f->severity));
        wl_json_lit(&j, ", \"estimated_gain_ns\": ");
        wl_json_u64(&j, f->gain_ns > 0 ? (uint64_t)(f->gain_ns + 0.5) : 0);
        wl_json_lit(&j, ", \"estimated_gain_pct\": ");
        wl_json_double(&j, f->gain_pct);
        wl_json_lit(&j, ", \"estimate\": ");
        wl_json_str(&j, f->estimate);
        wl_json_lit(&j, ", \"measured\": ");
        wl_json_str(&j, f->measured);
        wl_json_lit(&j, ", \"threshold\": ");
        wl_json_str(&j, f->threshold);
        wl_json_lit(&j, ", \"span\": {\"start_ns\": ");
        wl_json_u64(&j, f->start_ns);
        wl_json_lit(&j, ", \"end_ns\": ");
        wl_json_u64(&j, f->end_ns);
        wl_json_lit(&j, ", \"wall_ns\": ");
        wl_json_u64(&j, f->span_ns);
        if (f->span_name[0]) {
            wl_json_lit(&j, ", \"name\": ");
            wl_json_str(&j, f->span_name);
        }
        wl_json_lit(&j, "}, \"evidence\": {");
        for (int e = 0; e < f->n_evidence; e++) {
            wl_json_lit(&j, e ? ", " : "");
            wl_json_str(&j, f->evidence[e].key);
            wl_json_lit(&j, ": ");
            if (f->evidence[e].is_number)
                wl_json_lit(&j, f->evidence[e].value);
            else
                wl_json_str(&j, f->evidence[e].value);
        }
        wl_json_lit(&j, "}, \"fix\": ");
        wl_json_str(&j, f->fix);
        wl_json_lit(&j, "}");
    }
    wl_json_lit(&j, r->n ? "\n], \"steps\": " : "], \"steps\": ");
    wl_json_u64(&j, r->steps);
    wl_json_lit(&j, ", \"step_name\": ");
    wl_json_str(&j, r->step_name);
    wl_json_lit(&j, ", \"start_ns\": ");
    wl_json_u64(&j, r->start_ns);
    wl_json_lit(&j, ", \"end_ns\": ");
    wl_json_u64(&j, r->end_ns);
    wl_json_lit(&j, "}\n");
    wl_json_flush(&j);
}

void advise_print_oneline(FILE *out, const wl_advise_result *r, int top)
{
    int shown = 0;
    for (int i = 0; i < r->n && shown < top; i++) {
        const wl_finding *f = &r->findings[i];
        if (f->gain_ns <= 0)
            continue;
        char g[64];
        gain_text(f, g, sizeof g);
        if (!shown)
            fprintf(out, "advise (top %d; `warplens advise SESSION` for evidence and fixes):\n", top);
        fprintf(out, "  %d. [%s] %s (%s)\n", ++shown, f->rule, f->title, g);
    }
}
