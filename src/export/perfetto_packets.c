/* Perfetto TracePacket writer with per-sequence interning (see perfetto_packets.h). */
#include "export/perfetto_packets.h"

#include <stdlib.h>
#include <string.h>

/* TracePacket fields */
#define TP_TIMESTAMP 8
#define TP_SEQ_ID 10
#define TP_TRACK_EVENT 11
#define TP_INTERNED_DATA 12
#define TP_SEQ_FLAGS 13
#define TP_CLOCK_SNAPSHOT 6
#define TP_DEFAULTS 59
#define TP_TRACK_DESCRIPTOR 60
#define TP_FIRST_ON_SEQUENCE 87
#define DEFAULTS_CLOCK_ID 58
#define SEQ_CLEARED 1u
#define SEQ_NEEDS_STATE 2u
/* InternedData */
#define ID_CATEGORIES 1
#define ID_EVENT_NAMES 2
#define ID_ANNOTATION_NAMES 3

/* ---- interning: string -> iid, open addressing ----------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void intern_free(wl_pf_intern *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->iids);
    memset(t, 0, sizeof *t);
}

static int intern_rehash(wl_pf_intern *t, size_t ncap)
{
    char **keys = calloc(ncap, sizeof *keys);
    uint64_t *iids = calloc(ncap, sizeof *iids);
    if (!keys || !iids) {
        free(keys);
        free(iids);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->keys[i])
            continue;
        size_t j = fnv1a(t->keys[i]) & (ncap - 1);
        while (keys[j])
            j = (j + 1) & (ncap - 1);
        keys[j] = t->keys[i];
        iids[j] = t->iids[i];
    }
    free(t->keys);
    free(t->iids);
    t->keys = keys;
    t->iids = iids;
    t->cap = ncap;
    return 0;
}

/* Returns the iid of s (1, 2, ...); *is_new tells whether it must be emitted. 0 on failure. */
static uint64_t intern(wl_pf_intern *t, const char *s, int *is_new)
{
    *is_new = 0;
    if ((t->n + 1) * 2 > t->cap && intern_rehash(t, t->cap ? t->cap * 2 : 64))
        return 0;
    size_t j = fnv1a(s) & (t->cap - 1);
    while (t->keys[j]) {
        if (!strcmp(t->keys[j], s))
            return t->iids[j];
        j = (j + 1) & (t->cap - 1);
    }
    size_t len = strlen(s);
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, len + 1);
    t->keys[j] = copy;
    t->iids[j] = ++t->n;
    *is_new = 1;
    return t->iids[j];
}

/* ---- packets ---------------------------------------------------------------------------------- */

int wl_pf_init(wl_pf_writer *w, FILE *fp, uint32_t sequence_id, uint32_t clock_id)
{
    memset(w, 0, sizeof *w);
    if (!fp || sequence_id == 0)
        return -1;
    w->fp = fp;
    w->seq_id = sequence_id;
    w->clock_id = clock_id;
    wl_pb_init(&w->pkt);
    return 0;
}

/* Starts a packet: sequence id, and on the first packet of the sequence the flags that clear
 * incremental state plus the declared default clock. */
static void packet_begin(wl_pf_writer *w, int uses_interning)
{
    wl_pb_buf *b = &w->pkt;
    wl_pb_reset(b);
    wl_pb_uint64(b, TP_SEQ_ID, w->seq_id);
    if (!w->started) {
        wl_pb_uint64(b, TP_SEQ_FLAGS, SEQ_CLEARED | SEQ_NEEDS_STATE);
        wl_pb_bool(b, TP_FIRST_ON_SEQUENCE, 1);
        if (w->clock_id) {
            size_t m = wl_pb_begin(b, TP_DEFAULTS);
            wl_pb_uint64(b, DEFAULTS_CLOCK_ID, w->clock_id);
            wl_pb_end(b, m);
        }
        w->started = 1;
    } else if (uses_interning || w->clock_id) {
        /* packets relying on interned names or on the sequence's default clock */
        wl_pb_uint64(b, TP_SEQ_FLAGS, SEQ_NEEDS_STATE);
    }
}

static int packet_end(wl_pf_writer *w)
{
    if (w->failed || !wl_pb_ok(&w->pkt) || wl_pb_write_delimited(w->fp, 1, &w->pkt)) {
        w->failed = 1;
        return -1;
    }
    w->packets++;
    return 0;
}

int wl_pf_finish(wl_pf_writer *w)
{
    int rc = w->failed || (w->fp && (fflush(w->fp) != 0 || ferror(w->fp))) ? -1 : 0;
    intern_free(&w->names);
    intern_free(&w->cats);
    intern_free(&w->ann_names);
    wl_pb_free(&w->pkt);
    w->fp = NULL;
    return rc;
}

int wl_pf_write_track(wl_pf_writer *w, const wl_pf_track *t)
{
    if (w->failed || t->uuid == 0)
        return -1;
    wl_pb_buf *b = &w->pkt;
    packet_begin(w, 0);
    size_t td = wl_pb_begin(b, TP_TRACK_DESCRIPTOR);
    wl_pb_uint64(b, 1, t->uuid);
    if (t->name)
        wl_pb_string(b, 2, t->name);
    if (t->has_process) {
        size_t m = wl_pb_begin(b, 3);
        wl_pb_int64(b, 1, t->pid);
        if (t->process_name)
            wl_pb_string(b, 6, t->process_name);
        wl_pb_end(b, m);
    }
    if (t->has_thread) {
        size_t m = wl_pb_begin(b, 4);
        wl_pb_int64(b, 1, t->pid);
        wl_pb_int64(b, 2, t->tid);
        if (t->thread_name)
            wl_pb_string(b, 5, t->thread_name);
        wl_pb_end(b, m);
    }
    if (t->parent_uuid)
        wl_pb_uint64(b, 5, t->parent_uuid);
    if (t->is_counter) {
        size_t m = wl_pb_begin(b, 8);
        if (t->counter_unit)
            wl_pb_uint64(b, 3, (uint64_t)t->counter_unit);
        if (t->counter_unit_name)
            wl_pb_string(b, 6, t->counter_unit_name);
        wl_pb_end(b, m);
    }
    if (t->child_ordering)
        wl_pb_uint64(b, 11, (uint64_t)t->child_ordering);
    if (t->has_rank)
        wl_pb_int64(b, 12, t->sibling_order_rank);
    if (t->description)
        wl_pb_string(b, 14, t->description);
    if (t->merge_none)
        wl_pb_uint64(b, 15, 2);
    wl_pb_end(b, td);
    return packet_end(w);
}

/* Interns s in table t; a new entry is appended to the packet's InternedData (list `field`). */
static uint64_t intern_into(wl_pf_writer *w, wl_pf_intern *t, const char *s, wl_pb_buf *interned,
                            uint32_t field)
{
    int is_new;
    uint64_t iid = intern(t, s, &is_new);
    if (!iid) {
        w->failed = 1;
        return 0;
    }
    if (is_new) {
        size_t m = wl_pb_begin(interned, field);
        wl_pb_uint64(interned, 1, iid);
        wl_pb_string(interned, 2, s);
        wl_pb_end(interned, m);
    }
    return iid;
}

int wl_pf_write_event(wl_pf_writer *w, const wl_pf_event *e)
{
    if (w->failed || e->track_uuid == 0)
        return -1;
    /* Interned entries go into this packet's InternedData, built apart and copied in. */
    wl_pb_buf interned;
    wl_pb_init(&interned);
    uint64_t name_iid = e->name ? intern_into(w, &w->names, e->name, &interned, ID_EVENT_NAMES) : 0;
    uint64_t cat_iid =
        e->category ? intern_into(w, &w->cats, e->category, &interned, ID_CATEGORIES) : 0;
    uint64_t stack_iids[16], *arg_iids = stack_iids;
    if (e->n_args > 16 && !(arg_iids = malloc(e->n_args * sizeof *arg_iids)))
        w->failed = 1;
    for (size_t i = 0; !w->failed && i < e->n_args; i++)
        arg_iids[i] = intern_into(w, &w->ann_names, e->args[i].name ? e->args[i].name : "",
                                  &interned, ID_ANNOTATION_NAMES);
    if (w->failed || !wl_pb_ok(&interned)) {
        w->failed = 1;
        wl_pb_free(&interned);
        if (arg_iids != stack_iids)
            free(arg_iids);
        return -1;
    }

    wl_pb_buf *b = &w->pkt;
    packet_begin(w, name_iid || cat_iid || e->n_args);
    wl_pb_uint64(b, TP_TIMESTAMP, e->ts);
    if (interned.len)
        wl_pb_bytes(b, TP_INTERNED_DATA, interned.data, interned.len);
    size_t te = wl_pb_begin(b, TP_TRACK_EVENT);
    if (cat_iid)
        wl_pb_uint64(b, 3, cat_iid);
    for (size_t i = 0; i < e->n_args; i++) {
        const wl_pf_arg *a = &e->args[i];
        size_t m = wl_pb_begin(b, 4);
        wl_pb_uint64(b, 1, arg_iids[i]);
        switch (a->kind) {
        case WL_PF_ARG_BOOL: wl_pb_bool(b, 2, a->u != 0); break;
        case WL_PF_ARG_UINT: wl_pb_uint64(b, 3, a->u); break;
        case WL_PF_ARG_INT: wl_pb_int64(b, 4, a->i); break;
        case WL_PF_ARG_DOUBLE: wl_pb_double(b, 5, a->d); break;
        default: wl_pb_string(b, 6, a->s); break;
        }
        wl_pb_end(b, m);
    }
    wl_pb_uint64(b, 9, (uint64_t)e->type);
    if (name_iid)
        wl_pb_uint64(b, 10, name_iid);
    wl_pb_uint64(b, 11, e->track_uuid);
    if (e->type == WL_PF_COUNTER) {
        if (e->has_double_value)
            wl_pb_double(b, 44, e->double_value);
        else
            wl_pb_int64(b, 30, e->int_value);
    }
    for (size_t i = 0; i < e->n_flow_ids; i++)
        wl_pb_fixed64(b, 47, e->flow_ids[i]);
    for (size_t i = 0; i < e->n_terminating_flow_ids; i++)
        wl_pb_fixed64(b, 48, e->terminating_flow_ids[i]);
    wl_pb_end(b, te);
    wl_pb_free(&interned);
    if (arg_iids != stack_iids)
        free(arg_iids);
    return packet_end(w);
}

int wl_pf_write_clock_snapshot(wl_pf_writer *w, uint64_t packet_ts, const wl_pf_clock *clocks,
                               size_t n, uint32_t primary_clock_id)
{
    if (w->failed)
        return -1;
    wl_pb_buf *b = &w->pkt;
    packet_begin(w, 0);
    wl_pb_uint64(b, TP_TIMESTAMP, packet_ts);
    size_t cs = wl_pb_begin(b, TP_CLOCK_SNAPSHOT);
    for (size_t i = 0; i < n; i++) {
        size_t m = wl_pb_begin(b, 1);
        wl_pb_uint64(b, 1, clocks[i].clock_id);
        wl_pb_uint64(b, 2, clocks[i].timestamp);
        wl_pb_end(b, m);
    }
    if (primary_clock_id)
        wl_pb_uint64(b, 2, primary_clock_id);
    wl_pb_end(b, cs);
    return packet_end(w);
}
