/* warplens' JFR event types and the metadata event (see jfr_types.h). The metadata is the tree
 * the JDK reads (jdk.jfr.internal.MetadataReader): a string table, then
 *   root -> metadata -> class* (attributes name, id, superType; children field* and annotation*)
 *        -> region (locale, gmtOffset, dst)
 * where a field names its type by id and carries its annotations (label, unit). Annotation types
 * are classes too, and those that give a unit carry jdk.jfr.ContentType, which is how readers
 * tell a timespan or an amount of data from a plain number. */
#include "export/jfr_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/jfr_encode.h"

/* ---- type ids (0 and 1 are the metadata and checkpoint records) ---------------------------- */
enum {
    T_BOOLEAN = 20, T_INT = 21, T_LONG = 22, T_DOUBLE = 23, T_STRING = WL_JFR_TYPE_STRING,
    T_THREAD = WL_JFR_TYPE_THREAD, T_THREAD_GROUP = WL_JFR_TYPE_THREAD_GROUP,
    A_LABEL = 30, A_DESCRIPTION, A_CATEGORY, A_TIMESTAMP, A_TIMESPAN, A_DATA_AMOUNT, A_PERCENTAGE, A_UNSIGNED,
    A_CONTENT_TYPE,
    T_EVENT_BASE = 100,
};

#define F(name, kind, unit, label, desc) {name, WL_JFR_##kind, WL_JFR_##unit, label, desc}

static const wl_jfr_field KERNEL[] = {
    F("operation", STRING, NO_UNIT, "Operation",
      "Framework operation that launched the kernel: the innermost PyTorch operator range (run --torch-ops), else the"
      " innermost warplens scope or NVTX range open on the launching thread; null when none"),
    F("shape", STRING, NO_UNIT, "Shape", "Input shapes of the PyTorch operator, as PyTorch prints them; null when unknown"),
    F("gpuTimeMicros", LONG, MICROS, "GPU Time", "Kernel execution on the GPU (CUPTI end - start), in microseconds"),
    F("launchLatencyNanos", LONG, NANOS, "Launch Latency", "CPU time of the launch call (cuLaunchKernel...); 0 when the call was not recorded"),
    F("queueDelayNanos", LONG, NANOS, "Queue Delay",
      "From the launch being queued to its submission to the GPU (CUPTI submitted - queued); 0 when unknown"),
    F("teraflops", DOUBLE, NO_UNIT, "Throughput (TFLOPS)",
      "Floating-point operations per second: the program's annotation (warplens_annotate_next_launch), else the"
      " hardware counters of --metrics; 0 when neither"),
    F("backend", STRING, NO_UNIT, "Backend", "Library the kernel comes from, from its name (cuBLAS, cuDNN, CUTLASS, NCCL, Triton, ...)"),
    F("tier", STRING, NO_UNIT, "Tier", "User attribute (warplens_set_tier, WARPLENS_TIER); null when not set"),
    F("deviceIndex", INT, NO_UNIT, "Device Index", "CUDA device ordinal in the launching process"),
    F("bytesTransferred", LONG, BYTES, "Bytes Transferred",
      "Device memory read and written: the program's annotation, else DRAM bytes of --metrics; 0 when neither"),
    F("memoryBandwidthGBps", DOUBLE, NO_UNIT, "Memory Bandwidth (GB/s)", "Bytes Transferred over GPU Time; 0 when unknown"),
    F("gridDimX", INT, NO_UNIT, "Grid Dim X", "Blocks in x"),
    F("gridDimY", INT, NO_UNIT, "Grid Dim Y", "Blocks in y"),
    F("gridDimZ", INT, NO_UNIT, "Grid Dim Z", "Blocks in z"),
    F("blockDimX", INT, NO_UNIT, "Block Dim X", "Threads per block in x"),
    F("blockDimY", INT, NO_UNIT, "Block Dim Y", "Threads per block in y"),
    F("blockDimZ", INT, NO_UNIT, "Block Dim Z", "Threads per block in z"),
    F("totalThreads", LONG, NO_UNIT, "Total Threads", "Blocks times threads per block"),
    F("totalWarps", LONG, NO_UNIT, "Total Warps", "Warps launched, each block's threads rounded up to whole warps"),
    F("totalBlocks", INT, NO_UNIT, "Total Blocks", "Grid x * y * z"),
    F("registersPerThread", INT, NO_UNIT, "Registers Per Thread", "As CUPTI reports it (at least 16 on sm_90)"),
    F("staticSharedMemoryBytes", INT, BYTES, "Static Shared Memory", "Per block, compiled into the kernel"),
    F("dynamicSharedMemoryBytes", INT, BYTES, "Dynamic Shared Memory", "Per block, given at launch"),
    F("localMemoryPerThread", INT, BYTES, "Local Memory Per Thread", "Register spills and local arrays"),
    F("theoreticalOccupancyPercent", INT, NO_UNIT, "Theoretical Occupancy %",
      "Resident warps per SM over the SM's maximum, in percent rounded to the nearest integer; 0 when the device is unknown"),
    F("maxActiveBlocksPerSM", INT, NO_UNIT, "Max Active Blocks Per SM", "Blocks of this launch one SM can hold"),
    F("estimatedActiveSMs", INT, NO_UNIT, "Estimated Active SMs", "min(blocks, SMs of the device)"),
    F("estimatedActiveWarps", LONG, NO_UNIT, "Estimated Active Warps",
      "Warps resident at once if the kernel ran alone: min(blocks, blocks per SM * SMs) * warps per block"),
    F("occupancyLimitingFactor", STRING, NO_UNIT, "Occupancy Limiting Factor",
      "What bounds the blocks per SM: registers, shared_memory, warps, blocks, barriers; null when unknown"),
    F("streamId", LONG, NO_UNIT, "Stream ID", "CUDA stream id (CUPTI's)"),
    F("streamPriority", INT, NO_UNIT, "Stream Priority", "Not recorded by warplens: always 0"),
    F("concurrentKernels", INT, NO_UNIT, "Concurrent Kernels",
      "Kernels of the same process on the same device and another stream whose execution overlaps this one's"),
    F("virtualThreadId", LONG, NO_UNIT, "Virtual Thread ID",
      "Application thread id attached to the kernel's scope (a Java virtual thread id, a task id); 0 when none"),
    F("scopeId", LONG, NO_UNIT, "Scope ID", "Innermost warplens scope open on the launching thread; 0 when none"),
    F("scopeName", STRING, NO_UNIT, "Scope Name", "Its name; null when none"),
    F("kernelName", STRING, NO_UNIT, "Kernel Name", "Demangled kernel name"),
    F("correlationId", LONG, UNSIGNED, "Correlation ID", "CUPTI correlation id linking the kernel to its launch call"),
    F("theoreticalOccupancy", DOUBLE, PERCENT, "Theoretical Occupancy", "Theoretical occupancy as a fraction"),
    F("submitDelayNanos", LONG, NANOS, "Submit Delay",
      "From submission to the GPU to the start of execution (CUPTI start - submitted); 0 when unknown"),
    F("gpuTimestamps", BOOLEAN, NO_UNIT, "GPU Timestamps",
      "false when CUPTI gave no GPU times (kernel replay): the event then sits at its launch call with no duration"),
    F("processId", INT, NO_UNIT, "Process ID", "Process that launched the kernel"),
    F("kernelId", LONG, NO_UNIT, "Kernel ID", "Row of the kernel in the session (warplens kernel SESSION ID)"),
};

static const wl_jfr_field OCCUPANCY[] = {
    F("deviceIndex", INT, NO_UNIT, "Device Index", "CUDA device ordinal"),
    F("activeStreams", INT, NO_UNIT, "Active Streams", "Streams with a kernel running"),
    F("activeKernels", INT, NO_UNIT, "Active Kernels", "Kernels running"),
    F("estimatedTotalOccupancyPercent", INT, NO_UNIT, "Estimated Total Occupancy %",
      "Sum over the running kernels of the share of the GPU's warp slots each can fill, in percent (above 100:"
      " oversubscribed)"),
    F("nvmlGpuUtilization", INT, NO_UNIT, "NVML GPU Utilization %", "NVML's GPU utilisation of the sample; 0 in kernel snapshots"),
    F("nvmlMemoryUtilization", INT, NO_UNIT, "NVML Memory Utilization %", "NVML's memory utilisation of the sample; 0 in kernel snapshots"),
    F("activeWarpsEstimate", LONG, NO_UNIT, "Active Warps Estimate", "Estimated resident warps of the running kernels"),
    F("smCount", INT, NO_UNIT, "SM Count", "Streaming multiprocessors of the device"),
    F("maxWarpsPerSM", INT, NO_UNIT, "Max Warps Per SM", "Resident warps one SM can hold"),
    F("estimatedFill", DOUBLE, PERCENT, "Estimated GPU Fill", "Estimated Total Occupancy as a fraction, unrounded"),
    F("source", STRING, NO_UNIT, "Snapshot Source",
      "kernels: the set of running kernels changed (at most one snapshot per 100 us); nvml: an NVML sample"),
    F("processId", INT, NO_UNIT, "Process ID", "Process whose device this is"),
};

static const wl_jfr_field MEMCPY[] = {
    F("direction", STRING, NO_UNIT, "Direction", "HtoD, DtoH, DtoD, HtoH, PtoP, ..."),
    F("bytes", LONG, BYTES, "Bytes", "Bytes copied"),
    F("bandwidthGBps", DOUBLE, NO_UNIT, "Bandwidth (GB/s)", "Bytes over the copy's GPU time"),
    F("sourceMemory", STRING, NO_UNIT, "Source Memory", "pageable, pinned, device, managed, ..."),
    F("destinationMemory", STRING, NO_UNIT, "Destination Memory", "pageable, pinned, device, managed, ..."),
    F("deviceIndex", INT, NO_UNIT, "Device Index", "CUDA device ordinal"),
    F("streamId", LONG, NO_UNIT, "Stream ID", "CUDA stream id"),
    F("correlationId", LONG, UNSIGNED, "Correlation ID", "Links the copy to its API call"),
    F("scopeId", LONG, NO_UNIT, "Scope ID", "Innermost warplens scope of the call; 0 when none"),
    F("scopeName", STRING, NO_UNIT, "Scope Name", "Its name; null when none"),
    F("processId", INT, NO_UNIT, "Process ID", "Process that issued the copy"),
};

static const wl_jfr_field MEMSET[] = {
    F("bytes", LONG, BYTES, "Bytes", "Bytes set"),
    F("bandwidthGBps", DOUBLE, NO_UNIT, "Bandwidth (GB/s)", "Bytes over the set's GPU time"),
    F("memory", STRING, NO_UNIT, "Memory", "device, managed, ..."),
    F("deviceIndex", INT, NO_UNIT, "Device Index", "CUDA device ordinal"),
    F("streamId", LONG, NO_UNIT, "Stream ID", "CUDA stream id"),
    F("correlationId", LONG, UNSIGNED, "Correlation ID", "Links the set to its API call"),
    F("scopeId", LONG, NO_UNIT, "Scope ID", "Innermost warplens scope of the call; 0 when none"),
    F("scopeName", STRING, NO_UNIT, "Scope Name", "Its name; null when none"),
    F("processId", INT, NO_UNIT, "Process ID", "Process that issued the set"),
};

static const wl_jfr_field NVTX[] = {
    F("name", STRING, NO_UNIT, "Name", "The range's message"),
    F("domain", STRING, NO_UNIT, "Domain", "NVTX domain; null for the default domain"),
    F("operation", STRING, NO_UNIT, "Operation", "The operation its kernels carry (the PyTorch operator for --torch-ops ranges)"),
    F("shape", STRING, NO_UNIT, "Shape", "PyTorch input shapes; null when none"),
    F("rangeId", LONG, NO_UNIT, "Range ID", "Row of the range in the session"),
    F("unterminated", BOOLEAN, NO_UNIT, "Unterminated", "Never closed: the event ends at the session's end"),
    F("processId", INT, NO_UNIT, "Process ID", "Process that opened the range"),
};

static const wl_jfr_field SCOPE[] = {
    F("scopeId", LONG, NO_UNIT, "Scope ID", "warplens scope id"),
    F("scopeName", STRING, NO_UNIT, "Scope Name", "Name given to warplens_scope_begin"),
    F("virtualThreadId", LONG, NO_UNIT, "Virtual Thread ID", "Application thread id attached to the scope; 0 when none"),
    F("unterminated", BOOLEAN, NO_UNIT, "Unterminated", "Never closed: the event ends at the session's end"),
    F("processId", INT, NO_UNIT, "Process ID", "Process of the scope"),
};

static const wl_jfr_field API[] = {
    F("function", STRING, NO_UNIT, "API Function", "CUDA driver function, e.g. cuLaunchKernel"),
    F("category", STRING, NO_UNIT, "Category", "launch, graph_launch, memcpy, memset, sync, alloc, other"),
    F("correlationId", LONG, UNSIGNED, "Correlation ID", "Links the call to the GPU work it started"),
    F("returnValue", LONG, NO_UNIT, "Return Value", "CUresult (0 = success)"),
    F("scopeName", STRING, NO_UNIT, "Scope Name", "Innermost warplens scope of the call; null when none"),
    F("processId", INT, NO_UNIT, "Process ID", "Process that made the call"),
};

static const wl_jfr_field TIMER[] = {
    F("name", STRING, NO_UNIT, "Name", "Interval name given to the timer API"),
    F("timer", STRING, NO_UNIT, "Timer", "Kind and category: gpu, span or host, then the category"),
    F("processId", INT, NO_UNIT, "Process ID", "Process that timed it"),
};

#define N(a) (sizeof a / sizeof a[0])
static const wl_jfr_event_type TYPES[WL_JFR_EVENT_TYPES] = {
    [WL_JFR_KERNEL] = {"warplens.GpuKernelEvent", "GPU Kernel Execution",
                       "One kernel execution: launch configuration, resources, occupancy, timing, stream and the"
                       " host thread that launched it", {"warplens", "GPU", NULL}, KERNEL, N(KERNEL)},
    [WL_JFR_OCCUPANCY] = {"warplens.GpuOccupancyEvent", "GPU Occupancy Snapshot",
                          "Running kernels and estimated occupancy of one device", {"warplens", "GPU", NULL},
                          OCCUPANCY, N(OCCUPANCY)},
    [WL_JFR_MEMCPY] = {"warplens.GpuMemcpyEvent", "GPU Memory Copy", "One memory copy on the GPU",
                       {"warplens", "GPU", NULL}, MEMCPY, N(MEMCPY)},
    [WL_JFR_MEMSET] = {"warplens.GpuMemsetEvent", "GPU Memory Set", "One memset on the GPU", {"warplens", "GPU", NULL},
                       MEMSET, N(MEMSET)},
    [WL_JFR_NVTX] = {"warplens.NvtxRangeEvent", "NVTX Range", "An NVTX range on a host thread",
                     {"warplens", "Host", NULL}, NVTX, N(NVTX)},
    [WL_JFR_SCOPE] = {"warplens.ScopeEvent", "warplens Scope", "A warplens scope (warplens.h, Warplens.scope)",
                      {"warplens", "Host", NULL}, SCOPE, N(SCOPE)},
    [WL_JFR_API] = {"warplens.CudaApiEvent", "CUDA API Call", "A CUDA driver call at the CPU-GPU boundary",
                    {"warplens", "Host", NULL}, API, N(API)},
    [WL_JFR_TIMER] = {"warplens.TimerEvent", "warplens Timer", "An interval of the timer API (timer.h)",
                      {"warplens", "Host", NULL}, TIMER, N(TIMER)},
};

_Static_assert(N(KERNEL) == WL_JK_COUNT, "kernel fields and their positions");
_Static_assert(N(OCCUPANCY) == WL_JO_COUNT, "occupancy fields and their positions");

const wl_jfr_event_type *wl_jfr_event_type_get(wl_jfr_event_id id) { return &TYPES[id]; }
uint64_t wl_jfr_type_id(wl_jfr_event_id id) { return T_EVENT_BASE + (uint64_t)id; }

int wl_jfr_write_event(wl_pb_buf *b, wl_jfr_event_id id, uint64_t start_ticks, uint64_t duration_ticks,
                       uint64_t thread_key, const wl_jfr_value *v, wl_jfr_string_fn str, void *str_ctx)
{
    const wl_jfr_event_type *t = &TYPES[id];
    size_t mark = wl_jfr_event_begin(b, wl_jfr_type_id(id));
    wl_jfr_long(b, start_ticks);
    wl_jfr_long(b, duration_ticks);
    wl_jfr_long(b, thread_key);
    for (size_t i = 0; i < t->n_fields; i++) {
        switch (t->fields[i].kind) {
        case WL_JFR_BOOLEAN:
            wl_jfr_byte(b, v[i].i != 0);
            break;
        case WL_JFR_INT:
            wl_jfr_int(b, (int32_t)v[i].i);
            break;
        case WL_JFR_LONG:
            wl_jfr_long(b, (uint64_t)v[i].i);
            break;
        case WL_JFR_DOUBLE:
            wl_jfr_double(b, v[i].d);
            break;
        case WL_JFR_STRING:
            str(str_ctx, b, v[i].s, v[i].n);
            break;
        }
    }
    return wl_jfr_event_end(b, mark);
}

/* ---- metadata ------------------------------------------------------------------------------ */

/* The metadata's string table: every name, attribute key and value, by first use. */
typedef struct strtab {
    const char **s;
    size_t n, cap;
    int failed;
} strtab;

static uint64_t intern(strtab *t, const char *s)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->s[i], s))
            return i;
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 256;
        const char **p = realloc(t->s, ncap * sizeof *p);
        if (!p) {
            t->failed = 1;
            return 0;
        }
        t->s = p;
        t->cap = ncap;
    }
    t->s[t->n] = s;
    return t->n++;
}

typedef struct meta {
    wl_pb_buf *body;
    strtab tab;
    char num[512][24]; /* attribute values that are numbers: ids */
    size_t n_num;
} meta;

static const char *num(meta *m, uint64_t v)
{
    if (m->n_num == sizeof m->num / sizeof m->num[0]) {
        m->tab.failed = 1;
        return "0";
    }
    snprintf(m->num[m->n_num], sizeof m->num[0], "%llu", (unsigned long long)v);
    return m->num[m->n_num++];
}

static void put_str(meta *m, const char *s) { wl_jfr_long(m->body, intern(&m->tab, s)); }

/* Opens an element: its name, then n_attr key/value pairs from attrs. The caller then writes the
 * child count and the children. */
static void element(meta *m, const char *name, const char *const *attrs, size_t n_attr)
{
    put_str(m, name);
    wl_jfr_long(m->body, n_attr);
    for (size_t i = 0; i < 2 * n_attr; i++)
        put_str(m, attrs[i]);
}

static void annotation(meta *m, uint64_t type, const char *value)
{
    const char *a[] = {"class", num(m, type), "value", value};
    element(m, "annotation", a, value ? 2 : 1);
    wl_jfr_long(m->body, 0);
}

static void category(meta *m, const char *const *cat)
{
    const char *a[8] = {"class", num(m, A_CATEGORY)};
    static const char *const keys[] = {"value-0", "value-1", "value-2"};
    size_t n = 1;
    for (size_t i = 0; cat[i] && i < 3; i++) {
        a[2 * n] = keys[i];
        a[2 * n + 1] = cat[i];
        n++;
    }
    element(m, "annotation", a, n);
    wl_jfr_long(m->body, 0);
}

/* A field with up to three annotations (label, description, unit). ticks: 'T' the start time
 * (@Timestamp(TICKS)), 'S' the duration (@Timespan(TICKS)), 0 otherwise. */
static void field(meta *m, const char *name, uint64_t type, int pool, const char *label, const char *desc,
                  wl_jfr_unit unit, char ticks)
{
    const char *a[] = {"name", name, "class", num(m, type), "constantPool", "true"};
    element(m, "field", a, pool ? 3 : 2);
    size_t n = (label != NULL) + (desc != NULL) + (unit != WL_JFR_NO_UNIT || ticks);
    wl_jfr_long(m->body, n);
    if (label)
        annotation(m, A_LABEL, label);
    if (desc)
        annotation(m, A_DESCRIPTION, desc);
    if (ticks) {
        annotation(m, ticks == 'T' ? A_TIMESTAMP : A_TIMESPAN, "TICKS");
        return;
    }
    switch (unit) {
    case WL_JFR_MICROS:
        annotation(m, A_TIMESPAN, "MICROSECONDS");
        break;
    case WL_JFR_NANOS:
        annotation(m, A_TIMESPAN, "NANOSECONDS");
        break;
    case WL_JFR_BYTES:
        annotation(m, A_DATA_AMOUNT, "BYTES");
        break;
    case WL_JFR_PERCENT:
        annotation(m, A_PERCENTAGE, NULL);
        break;
    case WL_JFR_UNSIGNED:
        annotation(m, A_UNSIGNED, NULL);
        break;
    case WL_JFR_NO_UNIT:
        break;
    }
}

/* A class with no fields: a primitive, or an annotation with no value. */
static void plain_class(meta *m, const char *name, uint64_t id, const char *super, const char *label,
                        int content_type)
{
    const char *a[] = {"name", name, "id", num(m, id), "superType", super};
    element(m, "class", a, super ? 3 : 2);
    wl_jfr_long(m->body, (label != NULL) + content_type);
    if (label)
        annotation(m, A_LABEL, label);
    if (content_type)
        annotation(m, A_CONTENT_TYPE, NULL);
}

/* An annotation type with one String value (an array of them for Category). */
static void value_annotation(meta *m, const char *name, uint64_t id, const char *label, int array, int content_type)
{
    const char *a[] = {"name", name, "id", num(m, id), "superType", "java.lang.annotation.Annotation"};
    element(m, "class", a, 3);
    wl_jfr_long(m->body, 1 + 1 + content_type);
    const char *f[] = {"name", "value", "class", num(m, T_STRING), "dimension", "1"};
    element(m, "field", f, array ? 3 : 2);
    wl_jfr_long(m->body, 0);
    annotation(m, A_LABEL, label);
    if (content_type)
        annotation(m, A_CONTENT_TYPE, NULL);
}

static uint64_t kind_type(wl_jfr_kind k)
{
    switch (k) {
    case WL_JFR_BOOLEAN: return T_BOOLEAN;
    case WL_JFR_INT: return T_INT;
    case WL_JFR_LONG: return T_LONG;
    case WL_JFR_DOUBLE: return T_DOUBLE;
    case WL_JFR_STRING: return T_STRING;
    }
    return T_LONG;
}

static void event_class(meta *m, wl_jfr_event_id id)
{
    const wl_jfr_event_type *t = &TYPES[id];
    const char *a[] = {"name", t->name, "id", num(m, wl_jfr_type_id(id)), "superType", "jdk.jfr.Event"};
    element(m, "class", a, 3);
    wl_jfr_long(m->body, 3 + t->n_fields + 3); /* fields, then label, description, category */
    field(m, "startTime", T_LONG, 0, "Start Time", NULL, WL_JFR_NO_UNIT, 'T');
    field(m, "duration", T_LONG, 0, "Duration", NULL, WL_JFR_NO_UNIT, 'S');
    field(m, "eventThread", T_THREAD, 1, "Event Thread", "Host thread the event belongs to", WL_JFR_NO_UNIT, 0);
    for (size_t i = 0; i < t->n_fields; i++) {
        const wl_jfr_field *f = &t->fields[i];
        field(m, f->name, kind_type(f->kind), 0, f->label, f->description, f->unit, 0);
    }
    annotation(m, A_LABEL, t->label);
    annotation(m, A_DESCRIPTION, t->description);
    category(m, t->category);
}

static void write_tree(meta *m)
{
    element(m, "root", NULL, 0);
    wl_jfr_long(m->body, 2);
    element(m, "metadata", NULL, 0);
    wl_jfr_long(m->body, 7 + 9 + WL_JFR_EVENT_TYPES); /* types, annotation types, events */
    plain_class(m, "boolean", T_BOOLEAN, NULL, NULL, 0);
    plain_class(m, "int", T_INT, NULL, NULL, 0);
    plain_class(m, "long", T_LONG, NULL, NULL, 0);
    plain_class(m, "double", T_DOUBLE, NULL, NULL, 0);
    plain_class(m, "java.lang.String", T_STRING, NULL, NULL, 0);
    /* java.lang.Thread and its group, as the JDK describes them */
    {
        const char *a[] = {"name", "java.lang.Thread", "id", num(m, T_THREAD)};
        element(m, "class", a, 2);
        wl_jfr_long(m->body, 6);
        field(m, "osName", T_STRING, 0, "OS Thread Name", NULL, WL_JFR_NO_UNIT, 0);
        field(m, "osThreadId", T_LONG, 0, "OS Thread Id", NULL, WL_JFR_NO_UNIT, 0);
        field(m, "javaName", T_STRING, 0, "Java Thread Name", NULL, WL_JFR_NO_UNIT, 0);
        field(m, "javaThreadId", T_LONG, 0, "Java Thread Id", NULL, WL_JFR_NO_UNIT, 0);
        field(m, "group", T_THREAD_GROUP, 1, "Java Thread Group", NULL, WL_JFR_NO_UNIT, 0);
        annotation(m, A_LABEL, "Thread");
    }
    {
        const char *a[] = {"name", "jdk.types.ThreadGroup", "id", num(m, T_THREAD_GROUP)};
        element(m, "class", a, 2);
        wl_jfr_long(m->body, 3);
        field(m, "parent", T_THREAD_GROUP, 1, "Parent", NULL, WL_JFR_NO_UNIT, 0);
        field(m, "name", T_STRING, 0, "Name", NULL, WL_JFR_NO_UNIT, 0);
        annotation(m, A_LABEL, "Thread Group");
    }
    /* annotation types */
    plain_class(m, "jdk.jfr.ContentType", A_CONTENT_TYPE, "java.lang.annotation.Annotation", NULL, 0);
    value_annotation(m, "jdk.jfr.Label", A_LABEL, "Label", 0, 0);
    value_annotation(m, "jdk.jfr.Description", A_DESCRIPTION, "Description", 0, 0);
    value_annotation(m, "jdk.jfr.Category", A_CATEGORY, "Category", 1, 0);
    value_annotation(m, "jdk.jfr.Timestamp", A_TIMESTAMP, "Timestamp", 0, 1);
    value_annotation(m, "jdk.jfr.Timespan", A_TIMESPAN, "Timespan", 0, 1);
    value_annotation(m, "jdk.jfr.DataAmount", A_DATA_AMOUNT, "Data Amount", 0, 1);
    plain_class(m, "jdk.jfr.Percentage", A_PERCENTAGE, "java.lang.annotation.Annotation", "Percentage", 1);
    plain_class(m, "jdk.jfr.Unsigned", A_UNSIGNED, "java.lang.annotation.Annotation", "Unsigned Value", 0);
    for (int i = 0; i < WL_JFR_EVENT_TYPES; i++)
        event_class(m, (wl_jfr_event_id)i);
    const char *r[] = {"locale", "en_US", "gmtOffset", "0", "dst", "0"};
    element(m, "region", r, 3);
    wl_jfr_long(m->body, 0);
}

int wl_jfr_write_metadata(wl_pb_buf *b, uint64_t start_ticks)
{
    meta *m = calloc(1, sizeof *m);
    wl_pb_buf body;
    wl_pb_init(&body);
    if (!m)
        return -1;
    m->body = &body;
    write_tree(m);
    int rc = -1;
    if (!m->tab.failed && wl_pb_ok(&body)) {
        size_t mark = wl_jfr_event_begin(b, WL_JFR_METADATA_TYPE);
        wl_jfr_long(b, start_ticks);
        wl_jfr_long(b, 0); /* duration */
        wl_jfr_long(b, 1); /* metadata id: one description for the whole file */
        wl_jfr_long(b, m->tab.n);
        for (size_t i = 0; i < m->tab.n; i++)
            wl_jfr_cstring(b, m->tab.s[i]);
        wl_pb_put_raw(b, body.data, body.len);
        rc = wl_jfr_event_end(b, mark);
    }
    free(m->tab.s);
    free(m);
    wl_pb_free(&body);
    return rc;
}
