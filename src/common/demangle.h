/* C++ kernel names: demangled form and a short form for tables. */
#ifndef WARPLENS_COMMON_DEMANGLE_H
#define WARPLENS_COMMON_DEMANGLE_H

#include <stddef.h>

/* Writes the demangled name (or the input unchanged when it is not a mangled C++ name). */
void wl_demangle(const char *mangled, char *out, size_t out_size);
/* The function name without return type, namespaces' template arguments and parameter list,
 * e.g. "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" ->
 * "at::native::vectorized_elementwise_kernel". */
void wl_short_kernel_name(const char *demangled, char *out, size_t out_size);

#endif
