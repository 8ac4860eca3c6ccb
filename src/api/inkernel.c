/* warplens_inkernel_* (warplens.h): forwarded to the recorder, a no-op without one; and
 * warplens_ik_decode, the in-process decoder for bindings (python/warplens/inkernel.py). */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/inkernel_decode.h"

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

/* the public description of the arrays (warplens.h) is the decoder's layout */
static_assert(sizeof(wl_ik_slice) == 32 && sizeof(wl_ik_instant) == 24 && sizeof(wl_ik_unmatched) == 32,
              "decoded record sizes");
static_assert(offsetof(wl_ik_unmatched, type) == 30, "unmatched layout");
static_assert(sizeof(wl_ik_counts) == 12 * sizeof(uint64_t), "counts layout");

int warplens_ik_decode(const void *words, uint64_t n_words, uint64_t stride, uint32_t max_records,
                       warplens_ik_decoded *out, char *err, size_t err_size, uint64_t *err_word)
{
    memset(out, 0, sizeof *out);
    wl_ik_result *r = calloc(1, sizeof *r);
    wl_ik_error e = {0, ""};
    wl_ik_options opt = {stride, max_records};
    if (!r || n_words > SIZE_MAX / 8 || wl_ik_decode(words, (size_t)n_words, &opt, r, &e) != 0) {
        if (err && err_size)
            snprintf(err, err_size, "%s", r ? (n_words > SIZE_MAX / 8 ? "buffer too large" : e.msg) : "out of memory");
        if (err_word)
            *err_word = e.word;
        free(r);
        return -1;
    }
    out->num_blocks = r->num_blocks;
    out->num_groups = r->num_groups;
    out->slices = r->slices;
    out->instants = r->instants;
    out->unmatched = r->unmatched;
    out->n_slices = r->n_slices;
    out->n_instants = r->n_instants;
    out->n_unmatched = r->n_unmatched;
    memcpy(out->counts, &r->counts, sizeof out->counts);
    out->min_ts = r->min_ts;
    out->max_ts = r->max_ts;
    out->internal_ = r;
    return 0;
}

void warplens_ik_decoded_free(warplens_ik_decoded *d)
{
    if (!d)
        return;
    wl_ik_result *r = d->internal_;
    wl_ik_result_free(r);
    free(r);
    memset(d, 0, sizeof *d);
}
