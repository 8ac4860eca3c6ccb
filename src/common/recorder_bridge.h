/* The private contract between the public API library (libwarplens.so, what programs link) and
 * the injected recorder (libwarplens_recorder.so). The API library finds the recorder through the
 * WARPLENS_RECORDER path that `warplens run` sets, asks it for this table once, and forwards calls;
 * with no recorder every call is one branch on a null pointer. */
#ifndef WARPLENS_RECORDER_BRIDGE_H
#define WARPLENS_RECORDER_BRIDGE_H

#include <stdint.h>

#define WL_BRIDGE_ABI 5u
#define WL_BRIDGE_SYMBOL "warplens_recorder_bridge"

/* The fields of warplens_inkernel_buffer (warplens.h), repeated so the recorder needs no public
 * header. */
typedef struct wl_bridge_inkernel_buffer {
    const void *buffer;
    uint64_t words;
    const void *counters;
    uint64_t stride;
    uint32_t max_records;
    const char *event_names, *group_names;
} wl_bridge_inkernel_buffer;

typedef struct wl_recorder_bridge {
    uint32_t abi;          /* WL_BRIDGE_ABI */
    uint32_t size;         /* sizeof(wl_recorder_bridge) of the recorder's build */
    /* Opens a named scope on the calling thread; returns its id (0 when not recording). */
    uint64_t (*scope_begin)(const char *name);
    /* Closes the innermost scope of the calling thread; returns its id or 0 if none was open. */
    uint64_t (*scope_end)(void);
    void (*thread_name)(const char *name);
    int (*is_recording)(void);
    void (*annotate_next_launch)(double flops, double bytes, int precision);
    void (*annotate_scope)(double flops, double bytes, int precision);
    int (*inkernel_next_launch)(const wl_bridge_inkernel_buffer *b);
    int (*inkernel_collect)(void);
    /* ABI 4: an application thread id for the innermost scope of the calling thread; the calling
     * thread's tier from now on (NULL or "": back to the process default). */
    void (*scope_thread_id)(uint64_t id);
    void (*set_tier)(const char *tier);
    /* ABI 5: the next graph launch of the calling thread records into b from its kernel node
     * graph_node (a CUgraphNode of the graph the executable graph was instantiated from). */
    int (*inkernel_next_graph_launch)(const wl_bridge_inkernel_buffer *b, void *graph_node);
} wl_recorder_bridge;

typedef const wl_recorder_bridge *(*wl_recorder_bridge_fn)(void);

#endif
