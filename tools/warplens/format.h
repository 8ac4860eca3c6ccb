/* Terminal formatting shared by the CLI's verbs: durations, sizes, names shortened to a width. */
#ifndef WARPLENS_TOOLS_FORMAT_H
#define WARPLENS_TOOLS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* "812 ns", "10.3 us", "4.56 ms", "1.23 s" (ASCII so columns line up everywhere) */
const char *fmt_ns(double ns, char *buf, size_t n);
/* "512 B", "16.0 KiB", "1.50 GiB" */
const char *fmt_bytes(double bytes, char *buf, size_t n);
/* Exact: "48 KiB" for whole KiB, "45500 B (44.4 KiB)", "512 B" (a count the user types back) */
const char *fmt_bytes_exact(int64_t bytes, char *buf, size_t n);
/* Keeps the start and the end of a long name: "at::native::vect...kernel<float>" */
const char *fmt_middle(const char *s, size_t width, char *buf, size_t n);
/* Prints a title line and a rule of the given width. */
void print_title(const char *title, int width);

#endif
