/* Kernel name demangling through the C++ runtime's __cxa_demangle (the Itanium ABI's own
 * demangler, which handles everything nvcc emits), plus a short form for narrow tables. */
#include "common/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

void wl_demangle(const char *mangled, char *out, size_t out_size)
{
    if (!out_size)
        return;
    int status = -1;
    char *d = (mangled && mangled[0] == '_' && mangled[1] == 'Z') ? __cxa_demangle(mangled, NULL, NULL, &status)
                                                                  : NULL;
    snprintf(out, out_size, "%s", (status == 0 && d) ? d : (mangled ? mangled : ""));
    free(d);
}

void wl_short_kernel_name(const char *demangled, char *out, size_t out_size)
{
    if (!out_size)
        return;
    /* The name ends where the top-level parameter list starts: the first '(' outside <...>. */
    static const char anon[] = "(anonymous namespace)";
    size_t n = strlen(demangled), end = n, start = 0;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = demangled[i];
        if (c == '(' && strncmp(demangled + i, anon, sizeof anon - 1) == 0) {
            i += sizeof anon - 2;
            continue;
        }
        if (c == '<')
            depth++;
        else if (c == '>' && depth > 0)
            depth--;
        else if (c == '(' && depth == 0 && i > 0) {
            end = i;
            break;
        }
    }
    /* Drop the return type: the last space outside <...> and (...) before the name. */
    depth = 0;
    for (size_t i = 0; i < end; i++) {
        char c = demangled[i];
        if (c == '<' || c == '(')
            depth++;
        else if ((c == '>' || c == ')') && depth > 0)
            depth--;
        else if (c == ' ' && depth == 0)
            start = i + 1;
    }
    /* Drop the function's own template arguments: a trailing <...>. */
    size_t stop = end;
    if (stop > start && demangled[stop - 1] == '>') {
        depth = 0;
        for (size_t i = stop; i-- > start;) {
            if (demangled[i] == '>')
                depth++;
            else if (demangled[i] == '<' && --depth == 0) {
                stop = i;
                break;
            }
        }
    }
    if (stop <= start)
        stop = end;
    size_t len = stop - start;
    if (len >= out_size)
        len = out_size - 1;
    memcpy(out, demangled + start, len);
    out[len] = 0;
}
