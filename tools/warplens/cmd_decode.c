/* `warplens decode`: decodes an in-kernel timer buffer file (raw little-endian uint64 words, wire
 * format v1) into a summary table, Chrome JSON or a Perfetto trace. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/inkernel_decode.h"
#include "common/atomic_file.h"
#include "export/inkernel_export.h"
#include "export/perfetto_packets.h"
#include "progress.h"
#include "verbs.h"

enum { O_FORMAT = 1, O_OUT, O_EVENTS, O_GROUPS, O_STRIDE, O_MAX_RECORDS, O_MAX_LANES, O_QUIET };

static const cli_opt OPTS[] = {
    {O_FORMAT, 0, "format", CLI_ARG_REQUIRED, "F", "summary (default; a table), json (Chrome trace), perfetto (.pftrace)",
     "summary json perfetto", NULL},
    {O_OUT, 'o', "output", CLI_ARG_REQUIRED, "FILE", "output file, written atomically; '-' = stdout (summary default)",
     NULL, NULL},
    {O_EVENTS, 0, "events", CLI_ARG_REQUIRED, "a,b,...", "names of event ids 0,1,...; unnamed ids print as event_<id>",
     NULL, NULL},
    {O_GROUPS, 0, "groups", CLI_ARG_REQUIRED, "x,y,...", "names of groups 0,1,...; unnamed groups print as group_<g>",
     NULL, NULL},
    {O_STRIDE, 0, "stride", CLI_ARG_REQUIRED, "N", "slot stride the kernel used: checks every record's position", NULL,
     NULL},
    {O_MAX_RECORDS, 0, "max-records", CLI_ARG_REQUIRED, "N",
     "per-lane record limit of the launch: later records are counted", NULL, NULL},
    {O_MAX_LANES, 0, "max-lanes", CLI_ARG_REQUIRED, "N", "lanes drawn in a perfetto trace (default 1024)", NULL, NULL},
    {O_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, "no progress line", NULL, NULL},
    {0},
};
const cli_cmd CLI_DECODE = {
    "decode", "<buffer-file> [--format summary|json|perfetto] [-o FILE] [options]",
    "\nDecodes a buffer written by a kernel instrumented with warplens/device.cuh (raw\n"
    "little-endian 64-bit words, header first).\n",
    OPTS, "Errors print one line and exit with status 2.\n", NULL, 0, CLI_POS_FILE, NULL};

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("warplens decode: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* Reads the whole file; *n_bytes gets its size. NULL with a message in err on failure. */
static unsigned char *read_file(const char *path, size_t *n_bytes, char *err, size_t err_size)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, err_size, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, err_size, "%s is not a regular file", path);
        fclose(fp);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    unsigned char *data = malloc(size ? size : 1);
    if (!data) {
        snprintf(err, err_size, "out of memory reading %s (%zu bytes)", path, size);
        fclose(fp);
        return NULL;
    }
    if (size && fread(data, 1, size, fp) != size) {
        snprintf(err, err_size, "cannot read %s: %s", path, ferror(fp) ? strerror(errno) : "short read");
        free(data);
        fclose(fp);
        return NULL;
    }
    fclose(fp);
    *n_bytes = size;
    return data;
}

static int write_output(FILE *fp, const char *format, const wl_ik_result *r, const wl_ik_names *names,
                        uint32_t max_lanes, const wl_progress *progress, uint64_t *omitted)
{
    if (!strcmp(format, "summary"))
        return wl_ik_write_summary(fp, r, names);
    if (!strcmp(format, "json"))
        return wl_ik_write_chrome_json(fp, r, names, progress);
    wl_pf_writer w;
    if (wl_pf_init(&w, fp, 1, 0))
        return -1;
    wl_ik_perfetto_opts o = {.uuid_base = UINT64_C(0x49000000), /* arbitrary, away from small ids */
                             .ts_add_ns = -(int64_t)r->min_ts,
                             .max_lanes = max_lanes,
                             .progress = progress};
    int rc = wl_ik_emit_perfetto(&w, r, names, &o, omitted);
    return wl_pf_finish(&w) || rc ? -1 : 0;
}

int cmd_decode(int argc, char **argv)
{
    const char *input = NULL, *out_path = NULL, *format = "summary";
    const char *events = NULL, *groups = NULL;
    wl_ik_options opt = {0};
    uint64_t max_lanes = 0;
    int quiet = 0;
    cli_parser p;
    cli_init(&p, &CLI_DECODE, argc, argv);
    for (int id; (id = cli_next(&p)) != CLI_END;) {
        const char *v = p.arg;
        uint64_t n;
        switch (id) {
        case CLI_HELP: return 0;
        case CLI_ERROR: return 2;
        case O_FORMAT: format = v; continue;
        case O_OUT: out_path = v; continue;
        case O_EVENTS: events = v; continue;
        case O_GROUPS: groups = v; continue;
        case O_QUIET: quiet = 1; continue;
        case CLI_POSITIONAL:
            if (input)
                return fail("one buffer file only ('%s' and '%s' given)", input, v);
            input = v;
            continue;
        }
        if (parse_u64(v, &n))
            return fail("%s: '%s' is not a non-negative integer", p.opt_text, v);
        else if (id == O_STRIDE)
            opt.stride = n;
        else if (n > UINT32_MAX)
            return fail("%s: %s is too large", p.opt_text, v);
        else if (id == O_MAX_RECORDS)
            opt.max_records = (uint32_t)n;
        else
            max_lanes = n;
    }
    if (!input)
        return fail("no buffer file given (usage: warplens decode <buffer-file> --format "
                    "json|perfetto|summary -o FILE)");
    if (strcmp(format, "summary") && strcmp(format, "json") && strcmp(format, "perfetto"))
        return fail("unknown format '%s' (summary, json or perfetto)", format);
    if (!out_path) {
        if (strcmp(format, "summary"))
            return fail("--format %s needs -o FILE ('-' for stdout)", format);
        out_path = "-";
    }

    char msg[512];
    size_t n_bytes = 0;
    unsigned char *data = read_file(input, &n_bytes, msg, sizeof msg);
    if (!data)
        return fail("%s", msg);
    if (n_bytes % 8) {
        free(data);
        return fail("%s: size %zu bytes is not a whole number of 64-bit words", input, n_bytes);
    }
    wl_ik_names names;
    wl_ik_error err;
    if (wl_ik_names_parse(&names, events, groups, &err)) {
        free(data);
        return fail("%s", err.msg);
    }
    wl_ik_result r;
    if (wl_ik_decode(data, n_bytes / 8, &opt, &r, &err)) {
        free(data);
        wl_ik_names_free(&names);
        return fail("%s: %s", input, err.msg);
    }
    free(data);

    int rc = 0;
    uint64_t omitted = 0;
    cli_progress pl;
    cli_progress_init(&pl, "writing", "events", quiet);
    wl_progress sink = cli_progress_sink(&pl);
    if (!strcmp(out_path, "-")) {
        if (write_output(stdout, format, &r, &names, (uint32_t)max_lanes, &sink, &omitted) ||
            fflush(stdout))
            rc = fail("writing to stdout failed");
    } else {
        wl_atomic_file f;
        if (wl_atomic_file_open(&f, out_path))
            rc = fail("cannot create %s: %s", out_path, strerror(errno));
        else if (write_output(f.fp, format, &r, &names, (uint32_t)max_lanes, &sink, &omitted)) {
            wl_atomic_file_abort(&f);
            rc = fail("writing %s failed", out_path);
        } else if (wl_atomic_file_commit(&f))
            rc = fail("writing %s failed: %s", out_path, strerror(errno));
    }
    cli_progress_end(&pl);
    if (rc == 0 && omitted)
        fprintf(stderr, "warplens decode: note: %llu lanes over --max-lanes were left out\n",
                (unsigned long long)omitted);
    wl_ik_result_free(&r);
    wl_ik_names_free(&names);
    return rc;
}
