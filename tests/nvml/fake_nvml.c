/* A fake libnvidia-ml for the CPU tests: the few NVML entry points the recorder's sampler loads,
 * with deterministic values, so the sampler runs for real without a GPU. Two devices exist, at
 * PCI buses 18 and 2A (any domain spelling); handle h (1 or 2) reads:
 *   utilisation gpu 40+10h / memory 20+h %, SM clock 1755+h MHz, memory clock 2619 MHz,
 *   power 100 W * h + 50 W, temperature 40+h C, memory used h GiB, energy +1000 mJ per read.
 * Environment: FAKE_NVML_INIT_ERROR=N makes nvmlInit_v2 return N; FAKE_NVML_POWER_DENIED=1 makes
 * power return NVML_ERROR_NO_PERMISSION; FAKE_NVML_SHUTDOWN_FILE=path is created by nvmlShutdown
 * (the test's proof of a clean stop). Built with -DFAKE_NVML_NO_ENERGY it lacks the energy entry
 * point (a library without a symbol). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EXPORT __attribute__((visibility("default")))
typedef struct dev *nvml_dev;
typedef struct { unsigned int gpu, memory; } nvml_util;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvml_memory_v2;
#define NVML_MEMORY_V2 ((unsigned int)(sizeof(nvml_memory_v2) | (2u << 24)))
enum { OK = 0, UNINIT = 1, INVALID = 2, NO_PERMISSION = 4, NOT_FOUND = 6 };

static int g_init;

static unsigned handle(nvml_dev d) { return (unsigned)(uintptr_t)d; }
static int valid(nvml_dev d) { return g_init && (handle(d) == 1 || handle(d) == 2); }

EXPORT int nvmlInit_v2(void)
{
    const char *e = getenv("FAKE_NVML_INIT_ERROR");
    if (e && *e)
        return atoi(e);
    g_init = 1;
    return OK;
}

EXPORT int nvmlShutdown(void)
{
    const char *f = getenv("FAKE_NVML_SHUTDOWN_FILE");
    if (f && *f) {
        FILE *fp = fopen(f, "w");
        if (fp)
            fclose(fp);
    }
    g_init = 0;
    return OK;
}

EXPORT const char *nvmlErrorString(int r)
{
    switch (r) {
    case OK: return "Success";
    case UNINIT: return "Uninitialized";
    case INVALID: return "Invalid Argument";
    case NO_PERMISSION: return "Insufficient Permissions";
    case NOT_FOUND: return "Not Found";
    default: return "Unknown Error";
    }
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, nvml_dev *d)
{
    if (!g_init)
        return UNINIT;
    const char *bus = pci ? strchr(pci, ':') : NULL; /* "dddd[dddd]:BB:00.0" -> ":BB:00.0" */
    if (!bus)
        return INVALID;
    unsigned h = !strcasecmp(bus, ":18:00.0") ? 1 : !strcasecmp(bus, ":2a:00.0") ? 2 : 0;
    if (!h)
        return NOT_FOUND;
    *d = (nvml_dev)(uintptr_t)h;
    return OK;
}

EXPORT int nvmlDeviceGetUtilizationRates(nvml_dev d, nvml_util *u)
{
    if (!valid(d))
        return INVALID;
    u->gpu = 40 + 10 * handle(d);
    u->memory = 20 + handle(d);
    return OK;
}

EXPORT int nvmlDeviceGetClockInfo(nvml_dev d, int type, unsigned *mhz)
{
    if (!valid(d) || (type != 1 && type != 2))
        return INVALID;
    *mhz = type == 1 ? 1755 + handle(d) : 2619;
    return OK;
}

EXPORT int nvmlDeviceGetPowerUsage(nvml_dev d, unsigned *mw)
{
    if (!valid(d))
        return INVALID;
    const char *e = getenv("FAKE_NVML_POWER_DENIED");
    if (e && *e == '1')
        return NO_PERMISSION;
    *mw = 100000 * handle(d) + 50000;
    return OK;
}

EXPORT int nvmlDeviceGetTemperature(nvml_dev d, int sensor, unsigned *c)
{
    if (!valid(d) || sensor != 0)
        return INVALID;
    *c = 40 + handle(d);
    return OK;
}

EXPORT int nvmlDeviceGetMemoryInfo_v2(nvml_dev d, nvml_memory_v2 *m)
{
    if (!valid(d) || m->version != NVML_MEMORY_V2) /* a wrong version is what the real library rejects */
        return INVALID;
    m->total = 80ull << 30;
    m->used = (unsigned long long)handle(d) << 30;
    m->reserved = 0;
    m->free = m->total - m->used;
    return OK;
}

#ifndef FAKE_NVML_NO_ENERGY
EXPORT int nvmlDeviceGetTotalEnergyConsumption(nvml_dev d, unsigned long long *mj)
{
    static unsigned long long energy[3];
    if (!valid(d))
        return INVALID;
    energy[handle(d)] += 1000;
    *mj = energy[handle(d)];
    return OK;
}
#endif
