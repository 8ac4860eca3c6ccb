/* Output helpers shared by `warplens kernels`, `kernel` and `concurrency`: JSON and CSV strings,
 * launch dimensions, limiter names, bars, and the name a kernel is shown under. */
#ifndef WARPLENS_TOOLS_KERNEL_FORMAT_H
#define WARPLENS_TOOLS_KERNEL_FORMAT_H

#include <stddef.h>
#include <stdio.h>

/* A JSON string literal with escapes. */
void kf_json_str(FILE *out, const char *s);
/* A CSV field, quoted when it holds a comma, quote or newline. */
void kf_csv_str(FILE *out, const char *s);
/* "8x16x4"; compact drops trailing 1s ("1024", "8x16"). */
const char *kf_dim3(const int d[3], int compact, char *buf, size_t n);
/* [####......] of `width` cells for a fraction 0..1. */
void kf_bar(FILE *out, double frac, int width);
/* The name shown in tables: the demangled name without a leading "void ". */
const char *kf_display_name(const char *demangled);
/* Shortens to `width` keeping more of the start than the end (kernel names say most up front). */
const char *kf_shorten(const char *s, size_t width, char *buf, size_t n);
/* A positive decimal (kernel id, --top, --call): 0 and the value, or -1. */
int kf_parse_count(const char *s, long long *out);

#endif
