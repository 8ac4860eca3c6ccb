/* NVML device samples of a session (`warplens run --nvml-interval`, table device_sample) and the
 * kernels that ran during a sample's window. Sessions recorded before the table existed simply
 * have no samples: every function here checks for the table first. */
#ifndef WARPLENS_STORE_SESSION_SAMPLES_H
#define WARPLENS_STORE_SESSION_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "store/session.h"

typedef struct wl_device_sample_row {
    uint32_t pid, device_id;
    uint64_t ts_ns, window_start_ns;   /* the window is [window_start_ns, ts_ns] */
    /* -1 when NVML could not read the value */
    int64_t gpu_util_pct, mem_util_pct, sm_clock_mhz, mem_clock_mhz, power_mw, temperature_c;
    int64_t memory_used_bytes, energy_mj;
} wl_device_sample_row;

/* 1 when the session has the device_sample table and at least one row in it. */
int wl_session_has_device_samples(wl_session *s);

/* Samples ordered by (pid, device_id, ts_ns); fn returns non-zero to stop. Returns the number of
 * rows visited (0 without the table), or -1 on a read error. */
int wl_session_each_device_sample(wl_session *s, int (*fn)(const wl_device_sample_row *, void *), void *arg);

/* Samples ordered by (device_id, ts_ns, pid): one time-ordered series per device for the timeline
 * (processes sharing a device sample the same hardware). */
int wl_session_each_device_sample_by_time(wl_session *s, int (*fn)(const wl_device_sample_row *, void *), void *arg);

/* Samples of (pid, device) whose window overlaps [start_ns, end_ns), in time order. */
int wl_session_device_samples_between(wl_session *s, uint32_t pid, uint32_t device_id, uint64_t start_ns,
                                      uint64_t end_ns, int (*fn)(const wl_device_sample_row *, void *), void *arg);

typedef struct wl_window_kernel {
    int64_t id;
    uint32_t pid, device_id;
    uint64_t start_ns, end_ns;
    const char *short_name;            /* valid during the callback */
} wl_window_kernel;

/* Kernels with timestamps that overlap [start_ns, end_ns) on the physical device of (pid, device):
 * the same PCI bus id in any process of the session (the same (pid, device) when the bus id is
 * unknown), in start order. fn returns non-zero to stop. Returns the count visited or -1. */
int wl_session_kernels_in_window(wl_session *s, uint32_t pid, uint32_t device_id, uint64_t start_ns,
                                 uint64_t end_ns, int (*fn)(const wl_window_kernel *, void *), void *arg);

/* The kernel's pid, device and interval; 0, or -1 when there is no such kernel with timestamps. */
int wl_session_kernel_interval(wl_session *s, int64_t kernel_id, uint32_t *pid, uint32_t *device_id,
                               uint64_t *start_ns, uint64_t *end_ns);

#endif
