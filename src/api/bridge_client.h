/* Finds the recorder's bridge table for the public API (NULL when not profiled). */
#ifndef WARPLENS_API_BRIDGE_CLIENT_H
#define WARPLENS_API_BRIDGE_CLIENT_H

#include <stdatomic.h>

#include "common/recorder_bridge.h"

const wl_recorder_bridge *wl_bridge(void);

#endif
