/* The CPUs this process may use (see cpus.h). */
#include "common/cpus.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

int wl_cpus_usable(void)
{
    const char *e = getenv("WARPLENS_CPUS");
    if (e && *e) {
        char *end;
        long n = strtol(e, &end, 10);
        if (*end == 0 && n >= 1 && n <= 4096)
            return (int)n;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n >= 1)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (n > 4096 ? 4096 : (int)n) : 1;
}
