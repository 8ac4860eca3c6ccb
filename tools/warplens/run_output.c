/* Output name templates of `warplens run -o` (see run_output.h). */
#include "run_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VAR_MAX 255 /* longest %q{VAR} name */

static const char *env_get(wl_getenv_fn get, void *arg, const char *name)
{
    return get ? get(name, arg) : getenv(name);
}

static int in_list(const char *const *vars, const char *name)
{
    for (int i = 0; vars[i]; i++)
        if (!strcmp(vars[i], name))
            return 1;
    return 0;
}

/* The variable name of the %q{ at tmpl[i] (i at the 'q'): its length, the index after '}' in
 * *next; -1 when not closed, empty or too long, or the name has characters a variable's name
 * has not. */
static int var_name(const char *tmpl, size_t i, size_t *next)
{
    if (tmpl[i + 1] != '{')
        return -1;
    size_t s = i + 2, e = s;
    while (tmpl[e] && tmpl[e] != '}')
        e++;
    if (!tmpl[e] || e == s || e - s > VAR_MAX)
        return -1;
    for (size_t k = s; k < e; k++)
        if (tmpl[k] == '=' || (unsigned char)tmpl[k] < 0x21 || tmpl[k] == 0x7f)
            return -1;
    *next = e + 1;
    return (int)(e - s);
}

int run_output_scan(const char *tmpl, char *err, size_t err_size)
{
    int used = 0;
    if (!tmpl[0]) {
        snprintf(err, err_size, "the output name is empty");
        return -1;
    }
    for (size_t i = 0; tmpl[i]; i++) {
        if (tmpl[i] != '%')
            continue;
        char c = tmpl[++i];
        size_t next;
        int len;
        switch (c) {
        case '%':
            break;
        case 'p':
            used |= RUN_OUT_PID;
            break;
        case 'h':
            used |= RUN_OUT_HOST;
            break;
        case 'r':
            used |= RUN_OUT_RANK;
            break;
        case 'l':
            used |= RUN_OUT_LOCAL;
            break;
        case 'q':
            if ((len = var_name(tmpl, i, &next)) < 0) {
                snprintf(err, err_size, "%%q at byte %zu needs a variable name in braces, e.g. %%q{SLURM_JOB_ID}",
                         i - 1);
                return -1;
            }
            {
                char name[VAR_MAX + 1];
                snprintf(name, sizeof name, "%.*s", len, tmpl + i + 2);
                used |= RUN_OUT_VAR | (in_list(WL_RANK_VARS, name) ? RUN_OUT_RANK : 0) |
                        (in_list(WL_LOCAL_RANK_VARS, name) ? RUN_OUT_LOCAL : 0);
            }
            i = next - 1;
            break;
        case 0:
            snprintf(err, err_size, "the name ends in a lone %% (write %%%% for a percent sign)");
            return -1;
        default:
            snprintf(err, err_size, "unknown escape %%%c at byte %zu (use %%p pid, %%h host, %%r rank, %%l local rank,"
                     " %%q{VAR}, %%%%)", (unsigned char)c >= 0x20 && (unsigned char)c < 0x7f ? c : '?', i - 1);
            return -1;
        }
    }
    return used;
}

/* Appends a value as part of one file name. 0, or -1 when out is full. */
static int put_value(char *out, size_t n, size_t *at, const char *v)
{
    if (!strcmp(v, ".") || !strcmp(v, ".."))
        v = "_";
    for (; *v; v++) {
        if (*at + 1 >= n)
            return -1;
        unsigned char c = (unsigned char)*v;
        out[(*at)++] = c == '/' || c < 0x20 || c == 0x7f ? '_' : (char)c;
    }
    return 0;
}

int run_output_expand(const char *tmpl, const run_output_ids *ids, wl_getenv_fn get, void *arg, char *out,
                      size_t n, char *err, size_t err_size)
{
    if (run_output_scan(tmpl, err, err_size) < 0)
        return -1;
    size_t at = 0;
    for (size_t i = 0; tmpl[i]; i++) {
        char num[24];
        const char *v = NULL;
        if (tmpl[i] != '%') {
            if (at + 1 >= n)
                goto too_long;
            out[at++] = tmpl[i];
            continue;
        }
        switch (tmpl[++i]) {
        case '%':
            v = "%";
            break;
        case 'p':
            snprintf(num, sizeof num, "%ld", ids->pid);
            v = num;
            break;
        case 'h':
            v = ids->host && ids->host[0] ? ids->host : "localhost";
            break;
        case 'r':
        case 'l': {
            int32_t r = tmpl[i] == 'r' ? ids->rank : ids->local_rank;
            snprintf(num, sizeof num, "%d", (int)r);
            v = r >= 0 ? num : "norank";
            break;
        }
        default: { /* 'q', checked by the scan */
            size_t next;
            int len = var_name(tmpl, i, &next);
            char name[VAR_MAX + 1];
            snprintf(name, sizeof name, "%.*s", len, tmpl + i + 2);
            v = env_get(get, arg, name);
            if (!v || !*v) {
                snprintf(err, err_size, "%%q{%s}: the environment variable %s is %s", name, name, v ? "empty" : "not set");
                return -1;
            }
            i = next - 1;
        }
        }
        if (put_value(out, n, &at, v) != 0)
            goto too_long;
    }
    out[at] = 0;
    return 0;
too_long:
    snprintf(err, err_size, "the name expands to more than %zu bytes", n - 1);
    return -1;
}

int run_output_check_unique(const char *tmpl, unsigned escapes, wl_getenv_fn get, void *arg, char *err,
                            size_t err_size)
{
    const char *rank_var, *size_var;
    int32_t rank = wl_env_first_int(WL_RANK_VARS, get, arg, &rank_var);
    int32_t size = wl_env_first_int(WL_WORLD_SIZE_VARS, get, arg, &size_var);
    if (rank < 0 || size == 1)
        return 0; /* not one of several ranks */
    if (escapes & (RUN_OUT_RANK | RUN_OUT_PID))
        return 0;
    if ((escapes & RUN_OUT_LOCAL) && (escapes & RUN_OUT_HOST))
        return 0;
    char world[48] = "";
    if (size > 0)
        snprintf(world, sizeof world, " of %s=%d", size_var, (int)size);
    snprintf(err, err_size, "-o '%s' would be the same file for every rank (%s=%d%s is set): put %%r (rank) or %%p"
             " (pid) in the name, e.g. -o 'job_%%h_%%r.wlsession'", tmpl, rank_var, (int)rank, world);
    return -1;
}
