/* Perfetto TracePacket writer with per-sequence interning (see perfetto_packets.h). */
#include "export/perfetto_packets.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

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

#define TAG(field, wire) (((uint64_t)(field) << 3) | (wire))
#define OUT_CHUNK (2u << 20) /* packets are handed over (to fwrite, or out_fn) about 2 MiB at a time */

/* ---- raw encoding (callers reserve the room first) -------------------------------------------- */

static inline size_t vsize(uint64_t v)
{
    /* 7 bits a byte: (bits used + 6) / 7, bits used counted as 1 for 0; as (9 * bits + 64) / 64,
     * which is exact for 1..64 bits and needs no division */
    unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
    return (9 * bits + 64) / 64;
}

static inline uint8_t *vput(uint8_t *p, uint64_t v)
{
    if (v < 0x80) { /* tags, ids, lengths: one or two bytes */
        *p = (uint8_t)v;
        return p + 1;
    }
    if (v < 0x4000) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)(v >> 7);
        return p + 2;
    }
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *fput(uint8_t *p, uint64_t v) /* fixed64, little endian */
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8); /* one store */
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
    return p + 8;
}

/* Room for n more bytes at the end of b (raw use of a wl_pb_buf); NULL when out of memory. */
static uint8_t *room(wl_pf_writer *w, wl_pb_buf *b, size_t n)
{
    if (b->cap - b->len < n && wl_reserve((void **)&b->data, &b->cap, b->len + n, 4096)) {
        w->failed = 1;
        return NULL;
    }
    return b->data + b->len;
}

static int flush_out(wl_pf_writer *w)
{
    if (w->out_fn) { /* out_fn may leave a few bytes in out (wl_pf_out_fn) */
        if (w->out.len && w->out_fn(w->out_ctx, &w->out, 0))
            w->failed = 1;
        return w->failed ? -1 : 0;
    }
    if (w->out.len && fwrite(w->out.data, 1, w->out.len, w->fp) != w->out.len)
        w->failed = 1;
    w->out.len = 0;
    return w->failed ? -1 : 0;
}

int wl_pf_set_output(wl_pf_writer *w, wl_pf_out_fn fn, void *ctx)
{
    if (!w->fp || w->failed)
        return -1;
    w->out_fn = fn; /* what is buffered goes to fn with the rest */
    w->out_ctx = ctx;
    return 0;
}

/* ---- packets ---------------------------------------------------------------------------------- */

/* The fields that start the sequence's first packet (at most 32 bytes): the sequence id, the flags
 * that clear incremental state, and the declared default clock. */
static uint8_t *first_prefix(const wl_pf_writer *w, uint8_t *p)
{
    p = vput(p, TAG(TP_SEQ_ID, WL_PB_VARINT));
    p = vput(p, w->seq_id);
    p = vput(p, TAG(TP_SEQ_FLAGS, WL_PB_VARINT));
    p = vput(p, SEQ_CLEARED | SEQ_NEEDS_STATE);
    p = vput(p, TAG(TP_FIRST_ON_SEQUENCE, WL_PB_VARINT));
    *p++ = 1;
    if (w->clock_id) {
        p = vput(p, TAG(TP_DEFAULTS, WL_PB_LEN));
        p = vput(p, vsize(TAG(DEFAULTS_CLOCK_ID, WL_PB_VARINT)) + vsize(w->clock_id));
        p = vput(p, TAG(DEFAULTS_CLOCK_ID, WL_PB_VARINT));
        p = vput(p, w->clock_id);
    }
    return p;
}

/* The fields that start every later packet (at most 8 bytes): the sequence id, and the flags when
 * the packet relies on interned names or on the sequence's default clock. Made once, at init. */
static uint8_t *later_prefix(const wl_pf_writer *w, uint8_t *p, int uses_interning)
{
    p = vput(p, TAG(TP_SEQ_ID, WL_PB_VARINT));
    p = vput(p, w->seq_id);
    if (uses_interning || w->clock_id) {
        p = vput(p, TAG(TP_SEQ_FLAGS, WL_PB_VARINT));
        p = vput(p, SEQ_NEEDS_STATE);
    }
    return p;
}

/* A packet's prefix into p: after the first packet, one of the two made at init, copied as one
 * 8-byte store (the caller's room covers it: a packet's prefix is followed by its timestamp). */
static inline uint8_t *packet_prefix(wl_pf_writer *w, uint8_t *p, int uses_interning)
{
    if (!w->started) {
        w->started = 1;
        return first_prefix(w, p);
    }
    int k = uses_interning || w->clock_id;
    memcpy(p, w->steady[k], sizeof w->steady[k]);
    return p + w->steady_len[k];
}

/* The size of what packet_prefix writes next (without writing it). */
static size_t prefix_size(const wl_pf_writer *w, int uses_interning)
{
    if (!w->started) {
        uint8_t pre[32];
        return (size_t)(first_prefix(w, pre) - pre);
    }
    return w->steady_len[uses_interning || w->clock_id];
}

int wl_pf_init(wl_pf_writer *w, FILE *fp, uint32_t sequence_id, uint32_t clock_id)
{
    memset(w, 0, sizeof *w);
    if (!fp || sequence_id == 0)
        return -1;
    w->fp = fp;
    w->seq_id = sequence_id;
    w->clock_id = clock_id;
    wl_pb_init(&w->pkt);
    wl_pb_init(&w->out);
    wl_pb_init(&w->interned);
    for (int k = 0; k < 2; k++)
        w->steady_len[k] = (uint8_t)(later_prefix(w, w->steady[k], k) - w->steady[k]);
    return 0;
}

static void packet_begin(wl_pf_writer *w, int uses_interning)
{
    wl_pb_reset(&w->pkt);
    uint8_t pre[32];
    size_t n = (size_t)(packet_prefix(w, pre, uses_interning) - pre);
    wl_pb_put_raw(&w->pkt, pre, n);
}

/* Appends `Trace.packet = body` to the output, handing full chunks to fwrite. */
static int emit_packet(wl_pf_writer *w, const uint8_t *body, size_t n)
{
    uint8_t *p = room(w, &w->out, n + 12);
    if (!p)
        return -1;
    *p++ = (uint8_t)TAG(1, WL_PB_LEN);
    p = vput(p, n);
    memcpy(p, body, n);
    w->out.len = (size_t)(p + n - w->out.data);
    w->packets++;
    return w->out.len >= OUT_CHUNK ? flush_out(w) : 0;
}

static int packet_end(wl_pf_writer *w)
{
    if (w->failed || !wl_pb_ok(&w->pkt) || w->pkt.depth != 0 || emit_packet(w, w->pkt.data, w->pkt.len)) {
        w->failed = 1;
        return -1;
    }
    return 0;
}

int wl_pf_finish(wl_pf_writer *w)
{
    if (w->out_fn) { /* all of it is written before fp is flushed, even after a failure */
        if (w->out_fn(w->out_ctx, &w->out, 1))
            w->failed = 1;
    } else if (w->fp && !w->failed)
        flush_out(w);
    w->out_fn = NULL;
    int rc = w->failed || (w->fp && (fflush(w->fp) != 0 || ferror(w->fp))) ? -1 : 0;
    wl_pf_intern_free(&w->names);
    wl_pf_intern_free(&w->cats);
    wl_pf_intern_free(&w->ann_names);
    wl_pb_free(&w->pkt);
    wl_pb_free(&w->out);
    wl_pb_free(&w->interned);
    free(w->scratch);
    w->scratch = NULL;
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
static uint64_t intern_into(wl_pf_writer *w, wl_pf_intern *t, const char *s, uint32_t field)
{
    int is_new;
    uint64_t iid = wl_pf_intern_find(t, s, &is_new);
    if (!iid) {
        w->failed = 1;
        return 0;
    }
    if (is_new) {
        wl_pb_buf *b = &w->interned;
        size_t m = wl_pb_begin(b, field);
        wl_pb_uint64(b, 1, iid);
        wl_pb_string(b, 2, s);
        wl_pb_end(b, m);
    }
    return iid;
}

/* The same for a string constant (static_names): by address, from a small cache (its slot
 * found here, past it intern_static_slow). */
static uint64_t intern_static_slow(wl_pf_writer *w, wl_pf_intern *t, wl_pf_static_slot *cache, const char *s,
                                   uint32_t field, size_t h)
{
    /* linear probing over a few slots: two constants sharing a slot would evict each other on
     * every event; past them (more constants than slots), plain interning */
    for (size_t k = 1; k < 8; k++) {
        wl_pf_static_slot *sl = &cache[(h + k) & (WL_PF_STATIC_SLOTS - 1)];
        if (sl->p == s)
            return sl->iid;
        if (!sl->p) {
            uint64_t iid = intern_into(w, t, s, field);
            if (iid)
                sl->p = s, sl->iid = iid;
            return iid;
        }
    }
    return intern_into(w, t, s, field);
}

static inline uint64_t intern_static(wl_pf_writer *w, wl_pf_intern *t, wl_pf_static_slot *cache, const char *s,
                                     uint32_t field)
{
    if (!w->static_names)
        return intern_into(w, t, s, field);
    size_t h = (size_t)(((uintptr_t)s * 0x9e3779b97f4a7c15u) >> 58);
    if (cache[h].p == s)
        return cache[h].iid;
    if (!cache[h].p) {
        uint64_t iid = intern_into(w, t, s, field);
        if (iid)
            cache[h].p = s, cache[h].iid = iid;
        return iid;
    }
    return intern_static_slow(w, t, cache, s, field, h);
}

/* A DebugAnnotation's start: its tag, the size of what follows, its name's field. */
static inline uint8_t *arg_head(uint8_t *p, size_t body, uint64_t iid)
{
    *p++ = (uint8_t)TAG(4, WL_PB_LEN);
    p = vput(p, body);
    *p++ = (uint8_t)TAG(1, WL_PB_VARINT);
    return vput(p, iid);
}

/* Room for n more bytes after p in the scratch buffer (which may move). */
static uint8_t *scratch_room(wl_pf_writer *w, uint8_t *p, size_t n)
{
    size_t used = p ? (size_t)(p - w->scratch) : 0;
    if (w->scratch_cap - used < n && wl_reserve((void **)&w->scratch, &w->scratch_cap, used + n, 1024)) {
        w->failed = 1;
        return NULL;
    }
    return w->scratch + used;
}

/* A TrackEvent packet, encoded straight into bytes: the TrackEvent body goes to the scratch
 * buffer (its nested annotation sizes are computed up front), then the packet, with its
 * InternedData for names seen for the first time, is appended to the output. */
int wl_pf_write_event(wl_pf_writer *w, const wl_pf_event *e)
{
    if (w->failed || e->track_uuid == 0)
        return -1;
    wl_pb_reset(&w->interned);
    uint64_t name_iid = 0;
    if (e->name && e->name_key) { /* long kernel names: by the caller's key, from a direct-mapped cache */
        wl_pf_key_slot *sl = &w->name_keys[(e->name_key * 0x9e3779b97f4a7c15u) >> 56 & (WL_PF_KEY_SLOTS - 1)];
        if (sl->key == e->name_key)
            name_iid = sl->iid;
        else if ((name_iid = intern_into(w, &w->names, e->name, ID_EVENT_NAMES)))
            sl->key = e->name_key, sl->iid = name_iid;
    } else if (e->name)
        name_iid = intern_into(w, &w->names, e->name, ID_EVENT_NAMES);
    uint64_t cat_iid = e->category ? intern_static(w, &w->cats, w->static_cats, e->category, ID_CATEGORIES) : 0;
    /* room for what follows the args, then for every arg but a string (a tag, its size, the name's
     * iid and a value: ARG_ROOM bytes at most); a string asks for its own */
    const size_t tail = 64 + 20 * (e->n_flow_ids + e->n_terminating_flow_ids);
    enum { ARG_ROOM = 24 };
    uint8_t *p = scratch_room(w, NULL, 11 + ARG_ROOM * e->n_args + tail);
    if (!p)
        return -1;
    if (cat_iid) {
        *p++ = (uint8_t)TAG(3, WL_PB_VARINT);
        p = vput(p, cat_iid);
    }
    /* events of one category mostly name the same args in the same places: the names last seen
     * at each place, per category, before the look-up by address */
    wl_pf_static_slot *memo = w->static_names && cat_iid ? w->arg_memo[cat_iid & (WL_PF_MEMO_KINDS - 1)] : NULL;
    for (size_t i = 0; i < e->n_args; i++) {
        const wl_pf_arg *a = &e->args[i];
        const char *an = a->name ? a->name : "";
        uint64_t iid;
        if (memo && i < WL_PF_MEMO_ARGS && memo[i].p == an)
            iid = memo[i].iid;
        else if ((iid = intern_static(w, &w->ann_names, w->static_anns, an, ID_ANNOTATION_NAMES)) && memo &&
                 i < WL_PF_MEMO_ARGS)
            memo[i].p = an, memo[i].iid = iid;
        if (!iid)
            return -1;
        size_t head = 1 + vsize(iid); /* the name's field */
        switch (a->kind) {
        case WL_PF_ARG_BOOL: case WL_PF_ARG_UINT: case WL_PF_ARG_INT: {
            uint64_t v = a->kind == WL_PF_ARG_INT ? (uint64_t)a->i : a->kind == WL_PF_ARG_BOOL ? (a->u != 0) : a->u;
            uint8_t tag = a->kind == WL_PF_ARG_BOOL ? (uint8_t)TAG(2, WL_PB_VARINT)
                          : a->kind == WL_PF_ARG_UINT ? (uint8_t)TAG(3, WL_PB_VARINT) : (uint8_t)TAG(4, WL_PB_VARINT);
            p = arg_head(p, head + 1 + vsize(v), iid);
            *p++ = tag;
            p = vput(p, v);
            break;
        }
        case WL_PF_ARG_DOUBLE: case WL_PF_ARG_DOUBLE_EXACT: {
            uint64_t bits;
            memcpy(&bits, &a->d, sizeof bits);
            p = arg_head(p, head + 9, iid);
            *p++ = (uint8_t)TAG(5, WL_PB_FIXED64);
            p = fput(p, bits);
            break;
        }
        default: { /* strings, and any other kind as its text */
            const char *str = a->s ? a->s : "";
            size_t slen = strlen(str), body = head + 1 + vsize(slen) + slen;
            if (!(p = scratch_room(w, p, 33 + slen + ARG_ROOM * (e->n_args - i - 1) + tail)))
                return -1;
            p = arg_head(p, body, iid);
            *p++ = (uint8_t)TAG(6, WL_PB_LEN);
            p = vput(p, slen);
            memcpy(p, str, slen);
            p += slen;
            break;
        }
        }
    }
    *p++ = (uint8_t)TAG(9, WL_PB_VARINT);
    p = vput(p, (uint64_t)e->type);
    if (name_iid) {
        *p++ = (uint8_t)TAG(10, WL_PB_VARINT);
        p = vput(p, name_iid);
    }
    *p++ = (uint8_t)TAG(11, WL_PB_VARINT);
    p = vput(p, e->track_uuid);
    if (e->type == WL_PF_COUNTER) {
        if (e->has_double_value) {
            uint64_t bits;
            memcpy(&bits, &e->double_value, sizeof bits);
            p = fput(vput(p, TAG(44, WL_PB_FIXED64)), bits);
        } else
            p = vput(vput(p, TAG(30, WL_PB_VARINT)), (uint64_t)e->int_value);
    }
    for (size_t i = 0; i < e->n_flow_ids; i++)
        p = fput(vput(p, TAG(47, WL_PB_FIXED64)), e->flow_ids[i]);
    for (size_t i = 0; i < e->n_terminating_flow_ids; i++)
        p = fput(vput(p, TAG(48, WL_PB_FIXED64)), e->terminating_flow_ids[i]);
    if (w->failed || !wl_pb_ok(&w->interned))
        return w->failed = 1, -1;
    size_t te = (size_t)(p - w->scratch), in = w->interned.len;

    int uses_interning = name_iid || cat_iid || e->n_args;
    size_t npre = prefix_size(w, uses_interning);
    size_t n = npre + 1 + vsize(e->ts) + (in ? 1 + vsize(in) + in : 0) + 1 + vsize(te) + te;
    uint8_t *o = room(w, &w->out, n + 12);
    if (!o)
        return -1;
    *o++ = (uint8_t)TAG(1, WL_PB_LEN);
    o = vput(o, n);
    o = packet_prefix(w, o, uses_interning);
    *o++ = (uint8_t)TAG(TP_TIMESTAMP, WL_PB_VARINT);
    o = vput(o, e->ts);
    if (in) {
        *o++ = (uint8_t)TAG(TP_INTERNED_DATA, WL_PB_LEN);
        o = vput(o, in);
        memcpy(o, w->interned.data, in);
        o += in;
    }
    *o++ = (uint8_t)TAG(TP_TRACK_EVENT, WL_PB_LEN);
    o = vput(o, te);
    memcpy(o, w->scratch, te);
    w->out.len = (size_t)(o + te - w->out.data);
    w->packets++;
    return w->out.len >= OUT_CHUNK ? flush_out(w) : 0;
}

/* SLICE_END and COUNTER events (half the events of a trace): no names, annotations or flows, so
 * the TrackEvent's size is known up front and the packet is encoded straight into the output,
 * with the same bytes wl_pf_write_event writes for them. */
static int write_plain(wl_pf_writer *w, int type, uint64_t ts, uint64_t track_uuid, const double *value)
{
    if (w->failed || track_uuid == 0)
        return -1;
    size_t npre = prefix_size(w, 0);
    size_t te = 2 + 1 + vsize(track_uuid) + (value ? vsize(TAG(44, WL_PB_FIXED64)) + 8 : 0);
    size_t n = npre + 1 + vsize(ts) + 1 + vsize(te) + te;
    uint8_t *o = room(w, &w->out, n + 12);
    if (!o)
        return -1;
    *o++ = (uint8_t)TAG(1, WL_PB_LEN);
    o = vput(o, n);
    o = packet_prefix(w, o, 0);
    *o++ = (uint8_t)TAG(TP_TIMESTAMP, WL_PB_VARINT);
    o = vput(o, ts);
    *o++ = (uint8_t)TAG(TP_TRACK_EVENT, WL_PB_LEN);
    o = vput(o, te);
    *o++ = (uint8_t)TAG(9, WL_PB_VARINT);
    *o++ = (uint8_t)type;
    *o++ = (uint8_t)TAG(11, WL_PB_VARINT);
    o = vput(o, track_uuid);
    if (value) {
        uint64_t bits;
        memcpy(&bits, value, sizeof bits);
        o = fput(vput(o, TAG(44, WL_PB_FIXED64)), bits);
    }
    w->out.len = (size_t)(o - w->out.data);
    w->packets++;
    return w->out.len >= OUT_CHUNK ? flush_out(w) : 0;
}

int wl_pf_write_end(wl_pf_writer *w, uint64_t ts, uint64_t track_uuid)
{
    return write_plain(w, WL_PF_SLICE_END, ts, track_uuid, NULL);
}

int wl_pf_write_counter(wl_pf_writer *w, uint64_t ts, uint64_t track_uuid, double value)
{
    return write_plain(w, WL_PF_COUNTER, ts, track_uuid, &value);
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
