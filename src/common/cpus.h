/* How many CPUs this process may run on: the affinity mask's count (taskset, cpusets, a
 * container's CPU list), else the online count. What decides whether work is worth spreading over
 * threads: on one CPU, threads that hand rows to each other only add switches and evict each
 * other's caches. */
#ifndef WARPLENS_COMMON_CPUS_H
#define WARPLENS_COMMON_CPUS_H

/* At least 1. WARPLENS_CPUS=N (N >= 1) in the environment overrides it (tests run both ways). */
int wl_cpus_usable(void);

#endif
