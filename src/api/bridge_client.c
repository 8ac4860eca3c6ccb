/* libwarplens.so's link to the recorder. The first call looks for the recorder once: the path
 * `warplens run` exports as WARPLENS_RECORDER is opened (the same file the CUDA driver loads as its
 * injection library, so both get the one instance). Without it every later call is a single
 * acquire load of a null pointer. */
#include "api/bridge_client.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "common/log.h"

static const wl_recorder_bridge *_Atomic g_bridge;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    const char *path = getenv("WARPLENS_RECORDER");
    if (!path || !*path)
        return;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        wl_log("cannot load the recorder %s (%s); scopes and thread names are not recorded", path, dlerror());
        return;
    }
    wl_recorder_bridge_fn fn = (wl_recorder_bridge_fn)dlsym(h, WL_BRIDGE_SYMBOL);
    const wl_recorder_bridge *b = fn ? fn() : NULL;
    if (!b || b->abi != WL_BRIDGE_ABI || b->size < sizeof(wl_recorder_bridge)) {
        wl_log("the recorder at %s does not match this libwarplens (ABI); scopes are not recorded", path);
        return;
    }
    atomic_store_explicit(&g_bridge, b, memory_order_release);
}

const wl_recorder_bridge *wl_bridge(void)
{
    const wl_recorder_bridge *b = atomic_load_explicit(&g_bridge, memory_order_acquire);
    if (b)
        return b;
    pthread_once(&g_once, resolve);
    return atomic_load_explicit(&g_bridge, memory_order_acquire);
}
