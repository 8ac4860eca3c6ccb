/* warplens public C API: name the work your program does so the profile shows it.
 *
 * Link with -lwarplens. Every call is safe without the profiler: when the program does not run
 * under `warplens run` (no recorder loaded) each call returns at once after one branch.
 *
 *   warplens_thread_name("loader");
 *   warplens_scope_begin("inference-batch-12");   // kernels launched until the matching end,
 *   ...launch kernels...                          // on this thread, are tagged with the scope
 *   warplens_scope_end();
 *
 * Scopes nest per thread (up to 64 deep); names longer than 96 bytes are truncated and marked so. */
#ifndef WARPLENS_H
#define WARPLENS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WARPLENS_API __attribute__((visibility("default")))
#define WARPLENS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WARPLENS_API
#define WARPLENS_PRINTF(a, b)
#endif

/* Opens a named scope on the calling thread. Returns the scope id, 0 when nothing is recording. */
WARPLENS_API uint64_t warplens_scope_begin(const char *name);
/* The same with a printf-style name, e.g. warplens_scope_beginf("batch-%d", i). */
WARPLENS_API uint64_t warplens_scope_beginf(const char *fmt, ...) WARPLENS_PRINTF(1, 2);
/* Closes the innermost open scope of the calling thread; returns its id, or 0. */
WARPLENS_API uint64_t warplens_scope_end(void);
/* Names the calling thread in the profile (overrides the OS thread name). */
WARPLENS_API void warplens_thread_name(const char *name);
/* 1 when the recorder is loaded and recording this process, else 0. */
WARPLENS_API int warplens_is_recording(void);

/* Attaches an application-level thread id (a Java virtual thread id, a coroutine or task id) to
 * the innermost scope open on the calling thread: the kernels launched in it, and in the scopes it
 * contains that carry none of their own, show it (virtualThreadId in the JFR export). */
WARPLENS_API void warplens_scope_thread_id(uint64_t app_thread_id);
/* The tier (a label such as "PRODUCTION") of the kernels the calling thread launches from now on;
 * NULL or "" goes back to the process's tier (WARPLENS_TIER in the environment; none by default). */
WARPLENS_API void warplens_set_tier(const char *tier);

/* Work counts for throughput (TFLOP/s, GB/s, % of the device's peak, roofline), shown by
 * `warplens throughput` and `warplens kernel`. `precision` picks the compute peak to compare with. */
enum warplens_precision { WARPLENS_FP32 = 0, WARPLENS_FP64 = 1, WARPLENS_FP16_TENSOR = 2, WARPLENS_BF16_TENSOR = 3 };
/* The next kernel this thread launches did `flops` floating-point operations and moved `bytes`
 * bytes of device memory (0 = unknown). */
WARPLENS_API void warplens_annotate_next_launch(double flops, double bytes, int precision);
/* Adds to the innermost open scope of this thread (a scope may hold many kernels: its throughput
 * is the summed counts over its kernels' summed GPU time). */
WARPLENS_API void warplens_annotate_scope(double flops, double bytes, int precision);

/* In-kernel tracing on the session timeline (include/warplens/device.cuh, docs/inkernel.md): the
 * lanes a kernel records with device.cuh appear nested under that kernel's slice in the session
 * and its exports, placed with a measured %globaltimer -> session clock offset.
 *
 *   warplens_inkernel_buffer ik = {d_buf, words, d_counters, 0, max_records, "load,mma", "producer,consumer"};
 *   warplens_inkernel_next_launch(&ik);   // the next kernel this thread launches writes d_buf
 *   kernel<<<grid, block>>>(..., args);
 *   cudaDeviceSynchronize();
 *   warplens_inkernel_collect();          // copies it; decoded into the session at the end
 */
typedef struct warplens_inkernel_buffer {
    const void *buffer;       /* device pointer to the zeroed record buffer the kernel writes */
    uint64_t words;           /* its size in 64-bit words (warplens_ik_buffer_words) */
    const void *counters;     /* device pointer to device.cuh's two counters, or NULL */
    uint64_t stride;          /* the stride the kernel was given; 0 = blocks x groups */
    uint32_t max_records;     /* the per-lane limit the kernel was given; 0 = none */
    const char *event_names;  /* "load,mma,store" (event ids 0, 1, 2...) or NULL */
    const char *group_names;  /* "producer,consumer" or NULL */
} warplens_inkernel_buffer;
/* The next kernel the calling thread launches records into b->buffer. Returns 0, or -1 when
 * nothing is recording or the registration was refused (a note says why). */
WARPLENS_API int warplens_inkernel_next_launch(const warplens_inkernel_buffer *b);
/* The same for a kernel inside a CUDA graph: the next graph launch (cuGraphLaunch /
 * cudaGraphLaunch) of the calling thread records into b->buffer from the kernel node graph_node,
 * a CUgraphNode (cudaGraphNode_t) of the graph the launched executable graph was instantiated from.
 * Register before each launch whose lanes you want (zero the buffer for each, e.g. with a memset
 * node); collect after it finished. Its lanes nest under that node's kernel of that launch. */
WARPLENS_API int warplens_inkernel_next_graph_launch(const warplens_inkernel_buffer *b, void *graph_node);
/* Call after the registered kernels finished (after a synchronisation): copies every registered
 * buffer whose kernel was launched, with a fresh clock calibration, for the session. The buffers
 * may be reused or freed afterwards. Returns how many were collected, or -1 when not recording. */
WARPLENS_API int warplens_inkernel_collect(void);

/* Decoding a device.cuh buffer in-process (what python/warplens/inkernel.py calls through ctypes;
 * the CLI's `warplens decode` does the same). The arrays are the decoder's own, little-endian:
 *   slice     32 bytes: u64 start_ns, u64 dur_ns, u32 begin_seq, u32 end_seq, u64 bits with
 *             block (bits 0-19), depth (20-27), flags (28-31, 1 = crossed), group (32-51),
 *             event (52-61)
 *   instant   24 bytes: u64 ts_ns, u32 block, u32 group, u32 seq, u16 event, u16 0
 *   unmatched 32 bytes: u64 ts_ns, u64 word, u32 block, u32 group, u32 seq, u16 event, u8 type
 *             (0 begin, 1 end), u8 0
 * counts: words, empty, records, slices, instants, unmatched_begins, unmatched_ends,
 * after_finalize, over_capacity, crossed, lanes_seen, lanes_finalized. */
typedef struct warplens_ik_decoded {
    uint32_t num_blocks, num_groups;
    const void *slices, *instants, *unmatched;
    uint64_t n_slices, n_instants, n_unmatched;
    uint64_t counts[12];
    uint64_t min_ts, max_ts;
    void *internal_;
} warplens_ik_decoded;
/* Decodes n_words words (wire format v1; stride and max_records as given to the kernel, 0 =
 * unknown / none). Returns 0 with *out filled (release with warplens_ik_decoded_free), or -1 with
 * err (NUL-terminated) and *err_word (the offending word's offset) set. */
WARPLENS_API int warplens_ik_decode(const void *words, uint64_t n_words, uint64_t stride, uint32_t max_records,
                                    warplens_ik_decoded *out, char *err, size_t err_size, uint64_t *err_word);
WARPLENS_API void warplens_ik_decoded_free(warplens_ik_decoded *d);

#ifdef __cplusplus
}
#endif

#endif
