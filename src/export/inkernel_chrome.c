/* Chrome Trace Event JSON for decoded in-kernel lanes (see inkernel_export.h). */
#include "export/inkernel_export.h"

#include <stdlib.h>
#include <string.h>

static void json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}

/* nanoseconds as exact microseconds with three decimals (no double rounding) */
static void json_us(FILE *fp, uint64_t ns)
{
    fprintf(fp, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

/* lane bitmaps: bit (bg) set when the lane has events; second half for crossed slices */
static void mark(uint8_t *bits, uint64_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }
static int marked(const uint8_t *bits, uint64_t i) { return bits[i >> 3] >> (i & 7) & 1; }

/* every 65,536 events written: the caller's progress line (events: slices, instants, unmatched) */
static void note(const wl_progress *p, uint64_t done, uint64_t total)
{
    if ((done & 0xffff) == 0)
        wl_progress_note(p, done, total);
}

int wl_ik_write_chrome_json(FILE *fp, const wl_ik_result *r, const wl_ik_names *names, const wl_progress *progress)
{
    const uint64_t total = (uint64_t)r->n_slices + r->n_instants + r->n_unmatched;
    uint64_t done = 0;
    const uint64_t ng = r->num_groups ? r->num_groups : 1, lanes = (uint64_t)r->num_blocks * ng;
    uint8_t *bits = calloc((2 * lanes + 7) / 8 + 1, 1);
    if (!bits)
        return -1;
    const uint64_t base = r->min_ts;
    char nb[48], gb[48];
    fprintf(fp, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    int first = 1;
#define SEP() (first ? (void)(first = 0) : (void)fputs(",\n", fp))

    for (size_t i = 0; i < r->n_slices; i++) {
        note(progress, ++done, total);
        const wl_ik_slice *s = &r->slices[i];
        int crossed = s->flags & WL_IK_SLICE_CROSSED;
        mark(bits, (crossed ? lanes : 0) + (uint64_t)s->block * ng + s->group);
        SEP();
        fputs("{\"ph\":\"X\",\"cat\":\"inkernel\",\"name\":", fp);
        json_str(fp, wl_ik_event_name(names, s->event, nb, sizeof nb));
        fprintf(fp, ",\"pid\":%u,\"tid\":%llu,\"ts\":", s->block,
                (unsigned long long)(crossed ? ng + s->group : s->group));
        json_us(fp, s->start_ns - base);
        fputs(",\"dur\":", fp);
        json_us(fp, s->dur_ns);
        fprintf(fp, ",\"args\":{\"event\":%u,\"depth\":%u%s}}", s->event, s->depth,
                crossed ? ",\"crossed\":true" : "");
    }
    for (size_t i = 0; i < r->n_instants; i++) {
        note(progress, ++done, total);
        const wl_ik_instant *in = &r->instants[i];
        mark(bits, (uint64_t)in->block * ng + in->group);
        SEP();
        fputs("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"inkernel\",\"name\":", fp);
        json_str(fp, wl_ik_event_name(names, in->event, nb, sizeof nb));
        fprintf(fp, ",\"pid\":%u,\"tid\":%u,\"ts\":", in->block, in->group);
        json_us(fp, in->ts_ns - base);
        fprintf(fp, ",\"args\":{\"event\":%u}}", in->event);
    }
    /* Unmatched records stay visible as instants, flagged by category and name. */
    for (size_t i = 0; i < r->n_unmatched; i++) {
        note(progress, ++done, total);
        const wl_ik_unmatched *u = &r->unmatched[i];
        mark(bits, (uint64_t)u->block * ng + u->group);
        char label[96];
        snprintf(label, sizeof label, "%s (unmatched %s)",
                 wl_ik_event_name(names, u->event, nb, sizeof nb),
                 u->type == WL_IK_BEGIN ? "begin" : "end");
        SEP();
        fputs("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"inkernel.unmatched\",\"name\":", fp);
        json_str(fp, label);
        fprintf(fp, ",\"pid\":%u,\"tid\":%u,\"ts\":", u->block, u->group);
        json_us(fp, u->ts_ns - base);
        fprintf(fp, ",\"args\":{\"event\":%u,\"word\":%llu}}", u->event,
                (unsigned long long)u->word);
    }
    wl_progress_note(progress, total, total);
    /* Names and order of every block (pid) and lane (tid) that has events. */
    for (uint64_t b = 0; b < r->num_blocks; b++) {
        int any = 0;
        for (uint64_t g = 0; g < ng && !any; g++)
            any = marked(bits, b * ng + g) || marked(bits, lanes + b * ng + g);
        if (!any)
            continue;
        SEP();
        fprintf(fp,
                "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%llu,\"args\":{\"name\":\"block "
                "%llu\"}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%llu,\"args\":{"
                "\"sort_index\":%llu}}",
                (unsigned long long)b, (unsigned long long)b, (unsigned long long)b,
                (unsigned long long)b);
        for (uint64_t k = 0; k < 2 * ng; k++) {
            uint64_t g = k % ng;
            if (!marked(bits, (k >= ng ? lanes : 0) + b * ng + g))
                continue;
            char tname[96];
            snprintf(tname, sizeof tname, "%s%s", wl_ik_group_name(names, (uint32_t)g, gb, sizeof gb),
                     k >= ng ? " (overlapping)" : "");
            fprintf(fp, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":",
                    (unsigned long long)b, (unsigned long long)k);
            json_str(fp, tname);
            fprintf(fp,
                    "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%llu,\"tid\":%llu,"
                    "\"args\":{\"sort_index\":%llu}}",
                    (unsigned long long)b, (unsigned long long)k, (unsigned long long)k);
        }
    }
#undef SEP
    const wl_ik_counts *c = &r->counts;
    fprintf(fp,
            "\n],\"otherData\":{\"source\":\"warplens decode\",\"num_blocks\":%u,\"num_groups\":%u,"
            "\"records\":%llu,\"slices\":%llu,\"instants\":%llu,\"unmatched_begins\":%llu,"
            "\"unmatched_ends\":%llu,\"after_finalize\":%llu,\"over_capacity\":%llu,\"crossed\":%llu,"
            "\"lanes_seen\":%llu,\"lanes_finalized\":%llu,\"base_ns\":%llu}}\n",
            r->num_blocks, r->num_groups, (unsigned long long)c->records,
            (unsigned long long)c->slices, (unsigned long long)c->instants,
            (unsigned long long)c->unmatched_begins, (unsigned long long)c->unmatched_ends,
            (unsigned long long)c->after_finalize, (unsigned long long)c->over_capacity,
            (unsigned long long)c->crossed, (unsigned long long)c->lanes_seen,
            (unsigned long long)c->lanes_finalized, (unsigned long long)base);
    free(bits);
    return ferror(fp) ? -1 : 0;
}
