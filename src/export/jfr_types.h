/* The event types warplens writes into a JFR recording, and the metadata event that describes
 * them to a reader. Each event type is a table of fields; every event starts with the three
 * fields the JDK's own events have (startTime and duration in ticks, eventThread from the thread
 * constant pool), then its own fields in table order. The exporter (jfr_export.c) fills one
 * value per field and wl_jfr_write_event encodes them, so a field's type, label and unit live in
 * one place: this table.
 *
 * Names, labels and units of warplens.GpuKernelEvent and warplens.GpuOccupancyEvent are those of
 * the design this product was planned from (its Java GpuKernelEvent / GpuOccupancyEvent), so a
 * JMC view or a RecordingFile reader written for those events reads these. docs/formats.md
 * ("JFR") says where each value comes from. */
#ifndef WARPLENS_EXPORT_JFR_TYPES_H
#define WARPLENS_EXPORT_JFR_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "export/pb_encode.h"

typedef enum wl_jfr_kind { WL_JFR_BOOLEAN, WL_JFR_INT, WL_JFR_LONG, WL_JFR_DOUBLE, WL_JFR_STRING } wl_jfr_kind;

typedef enum wl_jfr_unit {
    WL_JFR_NO_UNIT,
    WL_JFR_MICROS,   /* @Timespan(MICROSECONDS) */
    WL_JFR_NANOS,    /* @Timespan(NANOSECONDS) */
    WL_JFR_BYTES,    /* @DataAmount(BYTES) */
    WL_JFR_PERCENT,  /* @Percentage: a fraction, 1.0 = 100 % */
    WL_JFR_UNSIGNED, /* @Unsigned */
} wl_jfr_unit;

typedef struct wl_jfr_field {
    const char *name;
    wl_jfr_kind kind;
    wl_jfr_unit unit;
    const char *label, *description;
} wl_jfr_field;

/* Event types, in the order of the table. */
typedef enum wl_jfr_event_id {
    WL_JFR_KERNEL, WL_JFR_OCCUPANCY, WL_JFR_MEMCPY, WL_JFR_MEMSET, WL_JFR_NVTX, WL_JFR_SCOPE, WL_JFR_API,
    WL_JFR_TIMER, WL_JFR_EVENT_TYPES
} wl_jfr_event_id;

typedef struct wl_jfr_event_type {
    const char *name, *label, *description;
    const char *category[3]; /* NULL-terminated */
    const wl_jfr_field *fields;
    size_t n_fields;
} wl_jfr_event_type;

/* Field positions of the two GPU event types (the order of their tables in jfr_types.c). */
enum wl_jfr_kernel_field {
    WL_JK_OPERATION, WL_JK_SHAPE, WL_JK_GPU_TIME_US, WL_JK_LAUNCH_NS, WL_JK_QUEUE_NS, WL_JK_TFLOPS, WL_JK_BACKEND,
    WL_JK_TIER, WL_JK_DEVICE, WL_JK_BYTES, WL_JK_GBPS, WL_JK_GRID_X, WL_JK_GRID_Y, WL_JK_GRID_Z, WL_JK_BLOCK_X,
    WL_JK_BLOCK_Y, WL_JK_BLOCK_Z, WL_JK_THREADS, WL_JK_WARPS, WL_JK_BLOCKS, WL_JK_REGISTERS, WL_JK_STATIC_SMEM,
    WL_JK_DYNAMIC_SMEM, WL_JK_LOCAL_MEM, WL_JK_OCC_PCT, WL_JK_BLOCKS_PER_SM, WL_JK_ACTIVE_SMS, WL_JK_ACTIVE_WARPS,
    WL_JK_LIMITER, WL_JK_STREAM, WL_JK_STREAM_PRIORITY, WL_JK_CONCURRENT, WL_JK_VTHREAD, WL_JK_SCOPE_ID,
    WL_JK_SCOPE_NAME, WL_JK_NAME, WL_JK_CORRELATION, WL_JK_OCC_FRACTION, WL_JK_SUBMIT_NS, WL_JK_TIMED, WL_JK_PID,
    WL_JK_KERNEL_ID, WL_JK_COUNT
};
enum wl_jfr_occupancy_field {
    WL_JO_DEVICE, WL_JO_STREAMS, WL_JO_KERNELS, WL_JO_OCC_PCT, WL_JO_NVML_GPU, WL_JO_NVML_MEM, WL_JO_WARPS,
    WL_JO_SM_COUNT, WL_JO_MAX_WARPS, WL_JO_FILL, WL_JO_SOURCE, WL_JO_PID, WL_JO_COUNT
};

const wl_jfr_event_type *wl_jfr_event_type_get(wl_jfr_event_id id);
/* The type id an event of this type is written with (also the id in the metadata). */
uint64_t wl_jfr_type_id(wl_jfr_event_id id);
/* Type ids of the two constant-pool types the exporter fills. */
#define WL_JFR_TYPE_STRING 24u
#define WL_JFR_TYPE_THREAD 25u
#define WL_JFR_TYPE_THREAD_GROUP 26u

/* One value per field of a type, in table order: i for boolean/int/long, d for double, s (NULL =
 * null, else n bytes) for strings. All zero bytes read as 0, 0.0 and null. */
typedef struct wl_jfr_value {
    union {
        int64_t i;
        double d;
        const char *s;
    };
    size_t n;
} wl_jfr_value;

/* How the exporter writes a string field: inline or as a constant-pool reference. */
typedef void (*wl_jfr_string_fn)(void *ctx, wl_pb_buf *b, const char *s, size_t n);

/* Appends one event: start and duration in ticks, the thread's pool key (0: none), then the
 * values. Returns 0, or -1 when the buffer failed. */
int wl_jfr_write_event(wl_pb_buf *b, wl_jfr_event_id id, uint64_t start_ticks, uint64_t duration_ticks,
                       uint64_t thread_key, const wl_jfr_value *v, wl_jfr_string_fn str, void *str_ctx);

/* Appends the metadata event describing every type (start_ticks: the chunk's start). */
int wl_jfr_write_metadata(wl_pb_buf *b, uint64_t start_ticks);

#endif
