/* Reading what a test wrote: a whole file into memory, and counting a string in it. */
#ifndef WARPLENS_TESTS_TEST_FILES_H
#define WARPLENS_TESTS_TEST_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file's bytes, malloc'd and NUL-terminated (text can be searched), *n their count; NULL when it
 * cannot be read. */
static inline uint8_t *slurp(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = len >= 0 ? malloc((size_t)len + 1) : NULL;
    *n = b ? fread(b, 1, (size_t)len, f) : 0;
    if (b)
        b[*n] = 0;
    fclose(f);
    return b;
}

/* Occurrences of needle in buf[0..n), overlapping ones included. */
static inline uint64_t count_str(const uint8_t *buf, size_t n, const char *needle)
{
    uint64_t k = 0;
    size_t l = strlen(needle);
    for (size_t i = 0; i + l <= n; i++)
        if (!memcmp(buf + i, needle, l))
            k++;
    return k;
}

#endif
