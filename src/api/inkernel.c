/* warplens_inkernel_* (warplens.h): forwarded to the recorder, a no-op without one. */
#include <assert.h>
#include <stddef.h>

#include "api/bridge_client.h"
#include "warplens/warplens.h"

/* the recorder reads the public struct through its own copy of the layout */
static_assert(sizeof(warplens_inkernel_buffer) == sizeof(wl_bridge_inkernel_buffer), "inkernel buffer layout");
static_assert(offsetof(warplens_inkernel_buffer, group_names) == offsetof(wl_bridge_inkernel_buffer, group_names),
              "inkernel buffer layout");

int warplens_inkernel_next_launch(const warplens_inkernel_buffer *b)
{
    const wl_recorder_bridge *br = wl_bridge();
    return br ? br->inkernel_next_launch((const wl_bridge_inkernel_buffer *)(const void *)b) : -1;
}

int warplens_inkernel_next_graph_launch(const warplens_inkernel_buffer *b, void *graph_node)
{
    const wl_recorder_bridge *br = wl_bridge();
    return br ? br->inkernel_next_graph_launch((const wl_bridge_inkernel_buffer *)(const void *)b, graph_node) : -1;
}

int warplens_inkernel_collect(void)
{
    const wl_recorder_bridge *br = wl_bridge();
    return br ? br->inkernel_collect() : -1;
}
