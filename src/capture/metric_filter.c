/* The --metrics filters (see metric_filter.h). */
#include "capture/metric_filter.h"

#include <cupti.h>
#include <dlfcn.h>
#include <generated_nvtx_meta.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#define NVTX_DEPTH 64
#define OPEN_RANGES 256
#define REGISTERED 4096

static int g_active, g_has_regex, g_nvtx_on;
static regex_t g_regex;
static uint64_t g_skip, g_count; /* g_count 0: no limit */
static _Atomic uint64_t g_taken, g_left_out;
static char g_nvtx[WL_MF_NVTX_NAMES][128];
static int g_nnvtx;

/* push/pop ranges: per thread, whether each open level matched */
static _Thread_local struct {
    int depth, matching;
    uint8_t match[NVTX_DEPTH];
} t_nvtx;
/* start/end ranges: process-wide, the ids of open matching ones */
static pthread_mutex_t g_open_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_open[OPEN_RANGES];
static int g_nopen;
static _Atomic int g_open_any;
/* registered strings (nvtxDomainRegisterString) that name a wanted range */
static _Atomic(const void *) g_registered[REGISTERED];

static uint64_t env_u64(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : 0;
}

int wl_mf_init(void)
{
    const char *re = getenv("WARPLENS_METRICS_KERNEL");
    if (re && *re) {
        int rc = regcomp(&g_regex, re, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[160];
            regerror(rc, &g_regex, msg, sizeof msg);
            wl_log("WARPLENS_METRICS_KERNEL '%s' is not a regular expression (%s); no kernel is profiled", re, msg);
            return -1;
        }
        g_has_regex = 1;
    }
    g_skip = env_u64("WARPLENS_METRICS_SKIP");
    g_count = env_u64("WARPLENS_METRICS_COUNT");
    const char *nv = getenv("WARPLENS_METRICS_NVTX");
    for (const char *p = nv ? nv : ""; *p && g_nnvtx < WL_MF_NVTX_NAMES;) {
        size_t n = strcspn(p, "\n");
        if (n && n < sizeof g_nvtx[0])
            memcpy(g_nvtx[g_nnvtx++], p, n);
        p += n;
        if (*p)
            p++;
    }
    g_nvtx_on = g_nnvtx > 0;
    g_active = g_has_regex || g_skip || g_count || g_nvtx_on;
    return 0;
}

int wl_mf_active(void) { return g_active; }
int wl_mf_has_name_filter(void) { return g_has_regex; }
int wl_mf_wants_nvtx(void) { return g_nvtx_on; }

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
static demangle_fn g_demangle;
static pthread_once_t g_demangle_once = PTHREAD_ONCE_INIT;

/* The C++ runtime's demangler: libcupti brings libstdc++ into the process; loaded (and kept) if not. */
static void find_demangler(void)
{
    g_demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    void *cxx = g_demangle ? NULL : dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (cxx)
        g_demangle = (demangle_fn)dlsym(cxx, "__cxa_demangle");
}

int wl_mf_name_passes(const char *symbol)
{
    if (!g_has_regex)
        return 1;
    if (!symbol)
        return 0;
    pthread_once(&g_demangle_once, find_demangler);
    int status = -1;
    char *d = (g_demangle && symbol[0] == '_' && symbol[1] == 'Z') ? g_demangle(symbol, NULL, NULL, &status) : NULL;
    int pass = regexec(&g_regex, status == 0 && d ? d : symbol, 0, NULL, 0) == 0;
    free(d);
    return pass;
}

int wl_mf_nvtx_passes(void)
{
    return !g_nvtx_on || t_nvtx.matching > 0 || atomic_load(&g_open_any) > 0;
}

int wl_mf_take_launch(void)
{
    uint64_t i = atomic_fetch_add(&g_taken, 1);
    if (i < g_skip || (g_count && i - g_skip >= g_count)) {
        atomic_fetch_add(&g_left_out, 1);
        return 0;
    }
    return 1;
}

int wl_mf_count_reached(void) { return g_count && atomic_load(&g_taken) >= g_skip + g_count; }

int wl_mf_in_window(void) { return atomic_load(&g_taken) >= g_skip && !wl_mf_count_reached(); }

uint64_t wl_mf_left_out(void) { return atomic_load(&g_left_out); }
void wl_mf_note_left_out(void) { atomic_fetch_add(&g_left_out, 1); }

static int wanted(const char *name)
{
    for (int i = 0; name && i < g_nnvtx; i++)
        if (strcmp(name, g_nvtx[i]) == 0)
            return 1;
    return 0;
}

static size_t reg_slot(const void *h) { return ((uintptr_t)h >> 3) * 2654435761u % REGISTERED; }

static int registered_wanted(const void *h)
{
    for (size_t i = reg_slot(h), n = 0; n < REGISTERED; i = (i + 1) % REGISTERED, n++) {
        const void *v = atomic_load(&g_registered[i]);
        if (!v)
            return 0;
        if (v == h)
            return 1;
    }
    return 0;
}

static void registered_add(const void *h)
{
    for (size_t i = reg_slot(h), n = 0; n < REGISTERED; i = (i + 1) % REGISTERED, n++) {
        const void *expect = NULL;
        if (atomic_compare_exchange_strong(&g_registered[i], &expect, h) || expect == h)
            return;
    }
    static atomic_flag once = ATOMIC_FLAG_INIT;
    wl_log_once(&once, "metrics: more than %d registered NVTX strings; later ones are not matched by --metrics-nvtx",
                REGISTERED);
}

/* The name an event's attributes carry (ASCII or registered; wide strings are not matched). */
static int attrs_wanted(const nvtxEventAttributes_t *a)
{
    if (!a)
        return 0;
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
        return wanted(a->message.ascii);
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
        return registered_wanted(a->message.registered);
    return 0;
}

static void push(int match)
{
    if (t_nvtx.depth < NVTX_DEPTH)
        t_nvtx.match[t_nvtx.depth] = (uint8_t)match;
    t_nvtx.depth++;
    t_nvtx.matching += match;
}

static void pop(void)
{
    if (t_nvtx.depth <= 0)
        return;
    t_nvtx.depth--;
    if (t_nvtx.depth < NVTX_DEPTH)
        t_nvtx.matching -= t_nvtx.match[t_nvtx.depth];
}

static void start(const void *ret, int match)
{
    if (!match || !ret)
        return; /* without the returned id its end cannot be found: not tracked */
    pthread_mutex_lock(&g_open_lock);
    if (g_nopen < OPEN_RANGES) {
        g_open[g_nopen++] = *(const nvtxRangeId_t *)ret;
        atomic_store(&g_open_any, g_nopen);
    }
    pthread_mutex_unlock(&g_open_lock);
}

static void end(nvtxRangeId_t id)
{
    if (!atomic_load(&g_open_any))
        return;
    pthread_mutex_lock(&g_open_lock);
    for (int i = 0; i < g_nopen; i++)
        if (g_open[i] == id) {
            g_open[i] = g_open[--g_nopen];
            break;
        }
    atomic_store(&g_open_any, g_nopen);
    pthread_mutex_unlock(&g_open_lock);
}

void wl_mf_nvtx_callback(uint32_t cbid, const void *nvtx_data)
{
    const CUpti_NvtxData *d = nvtx_data;
    if (!g_nvtx_on || !d || !d->functionParams)
        return;
    const void *p = d->functionParams;
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: push(wanted(((const nvtxRangePushA_params *)p)->message)); break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx: push(attrs_wanted(((const nvtxRangePushEx_params *)p)->eventAttrib)); break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
        push(attrs_wanted(((const nvtxDomainRangePushEx_params *)p)->core.eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePushW: push(0); break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop: pop(); break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
        start(d->functionReturnValue, wanted(((const nvtxRangeStartA_params *)p)->message));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        start(d->functionReturnValue, attrs_wanted(((const nvtxRangeStartEx_params *)p)->eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
        start(d->functionReturnValue, attrs_wanted(((const nvtxDomainRangeStartEx_params *)p)->core.eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd: end(((const nvtxRangeEnd_params *)p)->id); break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: end(((const nvtxDomainRangeEnd_params *)p)->core.id); break;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
        if (d->functionReturnValue && wanted(((const nvtxDomainRegisterStringA_params *)p)->string))
            registered_add(*(const void *const *)d->functionReturnValue);
        break;
    default: break;
    }
}
