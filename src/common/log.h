/* Diagnostics for warplens: one prefix, one line per problem, and "report once" for failures
 * that could otherwise repeat for every record inside a profiled program. */
#ifndef WARPLENS_COMMON_LOG_H
#define WARPLENS_COMMON_LOG_H

#include <stdatomic.h>

#if defined(__GNUC__)
#define WL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WL_PRINTF(a, b)
#endif

/* Prints "warplens: <message>\n" to stderr. Never allocates; safe from any thread. */
void wl_log(const char *fmt, ...) WL_PRINTF(1, 2);

/* Prints the message only the first time `flag` is seen unset; later calls are silent. */
void wl_log_once(atomic_flag *flag, const char *fmt, ...) WL_PRINTF(2, 3);

/* Silences wl_log (the recorder's --quiet). */
void wl_log_set_quiet(int quiet);

#endif
