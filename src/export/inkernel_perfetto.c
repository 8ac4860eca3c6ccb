/* Perfetto tracks and events for decoded in-kernel lanes (see inkernel_export.h). Slices on one
 * Perfetto track must nest strictly, so each lane gets its own track and events are written in
 * the lane's record order (begin_seq / end_seq), which is the order the leader thread wrote them:
 * nesting is then exact even when timestamps tie at the 32 ns timer step. */
#include "export/inkernel_export.h"

#include <stdlib.h>
#include <string.h>

enum { K_BEGIN, K_END, K_INSTANT, K_UNMATCHED };

typedef struct item {
    uint32_t lane;
    uint32_t seq;
    uint32_t kind;
    uint32_t idx;
} item;

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->lane != y->lane)
        return x->lane < y->lane ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

#define LANE_UUID_OFFSET (UINT64_C(1) << 21)

static uint64_t lane_uuid(const wl_ik_perfetto_opts *o, uint64_t bg, int crossed)
{
    return o->uuid_base + LANE_UUID_OFFSET + 2 * bg + (crossed ? 1 : 0);
}

int wl_ik_emit_perfetto(wl_pf_writer *w, const wl_ik_result *r, const wl_ik_names *names,
                        const wl_ik_perfetto_opts *o, uint64_t *lanes_omitted)
{
    const uint64_t ng = r->num_groups ? r->num_groups : 1, lanes = (uint64_t)r->num_blocks * ng;
    const uint32_t cap = o->max_lanes ? o->max_lanes : 1024;
    if (lanes_omitted)
        *lanes_omitted = 0;
    size_t n_items = 2 * r->n_slices + r->n_instants + r->n_unmatched;
    if (n_items > UINT32_MAX || o->uuid_base == 0)
        return -1;
    /* per lane: 0 no events, 1 shown, 2 omitted; bit 4: has crossed slices */
    uint8_t *state = calloc(lanes + 1, 1);
    item *items = malloc((n_items ? n_items : 1) * sizeof *items);
    if (!state || !items) {
        free(state);
        free(items);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n_slices; i++) {
        const wl_ik_slice *s = &r->slices[i];
        uint32_t lane = (uint32_t)(s->block * ng + s->group);
        items[k++] = (item){lane, s->begin_seq, K_BEGIN, (uint32_t)i};
        items[k++] = (item){lane, s->end_seq, K_END, (uint32_t)i};
        state[lane] |= 1 | (s->flags & WL_IK_SLICE_CROSSED ? 4 : 0);
    }
    for (size_t i = 0; i < r->n_instants; i++) {
        uint32_t lane = (uint32_t)(r->instants[i].block * ng + r->instants[i].group);
        items[k++] = (item){lane, r->instants[i].seq, K_INSTANT, (uint32_t)i};
        state[lane] |= 1;
    }
    for (size_t i = 0; i < r->n_unmatched; i++) {
        uint32_t lane = (uint32_t)(r->unmatched[i].block * ng + r->unmatched[i].group);
        items[k++] = (item){lane, r->unmatched[i].seq, K_UNMATCHED, (uint32_t)i};
        state[lane] |= 1;
    }
    qsort(items, n_items, sizeof *items, cmp_item);

    char title[96], nb[48], gb[48], label[128];
    int rc = 0;
    if (!o->title)
        snprintf(title, sizeof title, "in-kernel (%u blocks x %u groups)", r->num_blocks,
                 r->num_groups);
    wl_pf_track t = {.uuid = o->uuid_base,
                     .parent_uuid = o->parent_uuid,
                     .name = o->title ? o->title : title,
                     .child_ordering = WL_PF_ORDER_EXPLICIT,
                     .merge_none = 1};
    rc |= wl_pf_write_track(w, &t);
    uint32_t shown = 0;
    int64_t last_block = -1;
    for (uint64_t bg = 0; bg < lanes && rc == 0; bg++) {
        if (!(state[bg] & 1))
            continue;
        if (shown == cap) {
            state[bg] = (uint8_t)((state[bg] & ~3u) | 2);
            if (lanes_omitted)
                (*lanes_omitted)++;
            continue;
        }
        shown++;
        uint64_t block = bg / ng, g = bg % ng;
        if ((int64_t)block != last_block) {
            snprintf(label, sizeof label, "block %llu", (unsigned long long)block);
            t = (wl_pf_track){.uuid = o->uuid_base + 1 + block,
                              .parent_uuid = o->uuid_base,
                              .name = label,
                              .child_ordering = WL_PF_ORDER_EXPLICIT,
                              .has_rank = 1,
                              .sibling_order_rank = (int32_t)block,
                              .merge_none = 1};
            rc |= wl_pf_write_track(w, &t);
            last_block = (int64_t)block;
        }
        for (int crossed = 0; crossed < 2; crossed++) {
            if (crossed && !(state[bg] & 4))
                continue;
            snprintf(label, sizeof label, "%s%s", wl_ik_group_name(names, (uint32_t)g, gb, sizeof gb),
                     crossed ? " (overlapping)" : "");
            t = (wl_pf_track){.uuid = lane_uuid(o, bg, crossed),
                              .parent_uuid = o->uuid_base + 1 + block,
                              .name = label,
                              .has_rank = 1,
                              .sibling_order_rank = (int32_t)(2 * g + (uint64_t)crossed),
                              .merge_none = 1};
            rc |= wl_pf_write_track(w, &t);
        }
    }

    for (size_t i = 0; i < n_items && rc == 0; i++) {
        if ((i & 0xffff) == 0xffff) /* (items: a slice's begin and end count as two) */
            wl_progress_note(o->progress, i + 1, n_items);
        const item *it = &items[i];
        if ((state[it->lane] & 3) != 1)
            continue;
        wl_pf_event e = {.category = "inkernel"};
        uint64_t ts;
        if (it->kind == K_BEGIN || it->kind == K_END) {
            const wl_ik_slice *s = &r->slices[it->idx];
            e.track_uuid = lane_uuid(o, it->lane, s->flags & WL_IK_SLICE_CROSSED);
            if (it->kind == K_BEGIN) {
                e.type = WL_PF_SLICE_BEGIN;
                e.name = wl_ik_event_name(names, s->event, nb, sizeof nb);
                ts = s->start_ns;
            } else {
                e.type = WL_PF_SLICE_END;
                ts = s->start_ns + s->dur_ns;
            }
        } else if (it->kind == K_INSTANT) {
            const wl_ik_instant *in = &r->instants[it->idx];
            e.track_uuid = lane_uuid(o, it->lane, 0);
            e.type = WL_PF_INSTANT;
            e.name = wl_ik_event_name(names, in->event, nb, sizeof nb);
            ts = in->ts_ns;
        } else {
            const wl_ik_unmatched *u = &r->unmatched[it->idx];
            e.track_uuid = lane_uuid(o, it->lane, 0);
            e.type = WL_PF_INSTANT;
            e.category = "inkernel.unmatched";
            snprintf(label, sizeof label, "%s (unmatched %s)",
                     wl_ik_event_name(names, u->event, nb, sizeof nb),
                     u->type == WL_IK_BEGIN ? "begin" : "end");
            e.name = label;
            ts = u->ts_ns;
        }
        int64_t v = (int64_t)ts + o->ts_add_ns;
        e.ts = v < 0 ? 0 : (uint64_t)v;
        rc |= wl_pf_write_event(w, &e);
    }
    if (rc == 0)
        wl_progress_note(o->progress, n_items, n_items);
    free(items);
    free(state);
    return rc ? -1 : 0;
}
