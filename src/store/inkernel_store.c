/* In-kernel lanes: rows in and out of the session (inkernel_store.h). */
#include "store/inkernel_store.h"

#include <stdlib.h>
#include <string.h>

#include "store/session_internal.h"
#include "store/session_writer_internal.h"
#include "store/sql_util.h"

static const char *const KIND_NAMES[] = {"slice", "instant", "unmatched_begin", "unmatched_end"};

static void bind_i64_or_null(sqlite3_stmt *s, int i, int64_t v, int present)
{
    if (present)
        sqlite3_bind_int64(s, i, v);
    else
        sqlite3_bind_null(s, i);
}

int wl_session_writer_kernel_span(wl_session_writer *w, uint32_t pid, uint32_t correlation_id, int64_t *kernel_id,
                                  uint64_t *start_ns, uint64_t *end_ns)
{
    return wl_session_writer_graph_kernel_span(w, pid, correlation_id, 0, kernel_id, start_ns, end_ns);
}

int wl_session_writer_graph_kernel_span(wl_session_writer *w, uint32_t pid, uint32_t correlation_id,
                                        uint64_t graph_node_id, int64_t *kernel_id, uint64_t *start_ns,
                                        uint64_t *end_ns)
{
    sqlite3_stmt *s = wl_writer_stmt(w, graph_node_id ? S_IK_GRAPH_KERNEL_SPAN : S_IK_KERNEL_SPAN);
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_int64(s, 2, correlation_id);
    if (graph_node_id)
        sqlite3_bind_int64(s, 3, (int64_t)graph_node_id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return -1;
    *kernel_id = sqlite3_column_int64(s, 0);
    *start_ns = (uint64_t)sqlite3_column_int64(s, 1);
    *end_ns = (uint64_t)sqlite3_column_int64(s, 2);
    int found = sqlite3_column_type(s, 1) != SQLITE_NULL && sqlite3_column_type(s, 2) != SQLITE_NULL;
    sqlite3_reset(s);
    return found ? 1 : 0;
}

int wl_session_writer_inkernel_begin(wl_session_writer *w, wl_iks_buffer *b, char *err, size_t err_size)
{
    sqlite3_stmt *s = wl_writer_stmt(w, S_IK_BUFFER);
    int i = 1;
    sqlite3_bind_int64(s, i++, b->pid);
    sqlite3_bind_int64(s, i++, b->correlation_id);
    bind_i64_or_null(s, i++, b->kernel_id, b->kernel_id != 0);
    sqlite3_bind_int64(s, i++, b->device_id);
    sqlite3_bind_int64(s, i++, (int64_t)b->words);
    sqlite3_bind_int64(s, i++, b->num_blocks);
    sqlite3_bind_int64(s, i++, b->num_groups);
    sqlite3_bind_int64(s, i++, (int64_t)b->slices);
    sqlite3_bind_int64(s, i++, (int64_t)b->instants);
    sqlite3_bind_int64(s, i++, (int64_t)b->unmatched);
    sqlite3_bind_int64(s, i++, (int64_t)b->after_finalize);
    sqlite3_bind_int64(s, i++, (int64_t)b->over_capacity);
    sqlite3_bind_int64(s, i++, (int64_t)b->crossed);
    bind_i64_or_null(s, i++, b->dropped_on_device, b->dropped_on_device >= 0);
    bind_i64_or_null(s, i++, b->invalid_on_device, b->invalid_on_device >= 0);
    sqlite3_bind_text(s, i++, b->placement, -1, SQLITE_TRANSIENT);
    int placed = strcmp(b->placement, "none") != 0;
    bind_i64_or_null(s, i++, b->delta_ns, placed);
    bind_i64_or_null(s, i++, (int64_t)b->uncertainty_ns, placed);
    bind_i64_or_null(s, i++, b->clamp_ns, placed);
    bind_i64_or_null(s, i++, b->calibration_offset_ns, b->has_calibration);
    bind_i64_or_null(s, i++, (int64_t)b->calibration_uncertainty_ns, b->has_calibration);
    if (b->error[0])
        sqlite3_bind_text(s, i++, b->error, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i++);
    if (sqlite3_step(s) != SQLITE_DONE)
        return wl_store_set_err(err, err_size, "storing an in-kernel buffer failed: %s", sqlite3_errmsg(w->db));
    b->id = sqlite3_last_insert_rowid(w->db);
    w->ik_buffer = b->id;
    w->ik_failed = 0;
    return 0;
}

int wl_session_writer_inkernel_name(wl_session_writer *w, const char *kind, uint32_t id, const char *name)
{
    sqlite3_stmt *s = wl_writer_stmt(w, S_IK_NAME);
    sqlite3_bind_int64(s, 1, w->ik_buffer);
    sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, id);
    sqlite3_bind_text(s, 4, name, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) != SQLITE_DONE) {
        w->ik_failed = 1;
        return -1;
    }
    return 0;
}

int wl_session_writer_inkernel_event(wl_session_writer *w, const wl_iks_event *e)
{
    sqlite3_stmt *s = wl_writer_stmt(w, S_IK_EVENT);
    sqlite3_bind_int64(s, 1, w->ik_buffer);
    sqlite3_bind_text(s, 2, KIND_NAMES[e->kind & 3], -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, e->block);
    sqlite3_bind_int64(s, 4, e->group);
    sqlite3_bind_int64(s, 5, e->event);
    sqlite3_bind_int64(s, 6, e->depth);
    sqlite3_bind_int64(s, 7, e->crossed);
    sqlite3_bind_int64(s, 8, (int64_t)e->start_ns);
    bind_i64_or_null(s, 9, (int64_t)e->dur_ns, e->kind == WL_IKS_SLICE);
    if (sqlite3_step(s) != SQLITE_DONE) {
        w->ik_failed = 1;
        return -1;
    }
    return 0;
}

int wl_session_writer_inkernel_end(wl_session_writer *w, char *err, size_t err_size)
{
    int failed = w->ik_failed;
    w->ik_buffer = 0;
    w->ik_failed = 0;
    if (failed)
        return wl_store_set_err(err, err_size, "storing in-kernel events failed: %s", sqlite3_errmsg(w->db));
    return 0;
}

/* ---- reading ------------------------------------------------------------------------------- */

int wl_session_inkernel_buffers(wl_session *s, wl_iks_buffer **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!wl_sql_has_table(s->db, "inkernel_buffer"))
        return 0;
    static const char sql[] =
        "SELECT b.id, b.pid, b.correlation_id, b.device_id, coalesce(b.kernel_id, 0), b.words, b.num_blocks,"
        " b.num_groups, b.slices, b.instants, b.unmatched, b.after_finalize, b.over_capacity, b.crossed,"
        " coalesce(b.dropped_on_device, -1), coalesce(b.invalid_on_device, -1), b.placement,"
        " coalesce(b.delta_ns, 0), coalesce(b.clamp_ns, 0), coalesce(b.uncertainty_ns, 0),"
        " b.calibration_offset_ns IS NOT NULL, coalesce(b.calibration_offset_ns, 0),"
        " coalesce(b.calibration_uncertainty_ns, 0), coalesce(b.error, ''),"
        " coalesce(k.stream_id, 0), coalesce(k.start_ns, 0), coalesce(k.end_ns, 0), coalesce(n.short_name, n.demangled, '')"
        " FROM inkernel_buffer b LEFT JOIN kernel k ON k.id = b.kernel_id"
        " LEFT JOIN kernel_name n ON n.id = k.name_id ORDER BY k.start_ns, b.id";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t cap = 0;
    wl_iks_buffer *v = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            wl_iks_buffer *nv = realloc(v, nc * sizeof *nv);
            if (!nv) {
                rc = SQLITE_NOMEM;
                break;
            }
            v = nv;
            cap = nc;
        }
        wl_iks_buffer *b = &v[(*n)++];
        memset(b, 0, sizeof *b);
        int c = 0;
        b->id = sqlite3_column_int64(st, c++);
        b->pid = (uint32_t)sqlite3_column_int64(st, c++);
        b->correlation_id = (uint32_t)sqlite3_column_int64(st, c++);
        b->device_id = (uint32_t)sqlite3_column_int64(st, c++);
        b->kernel_id = sqlite3_column_int64(st, c++);
        b->words = (uint64_t)sqlite3_column_int64(st, c++);
        b->num_blocks = (uint32_t)sqlite3_column_int64(st, c++);
        b->num_groups = (uint32_t)sqlite3_column_int64(st, c++);
        b->slices = (uint64_t)sqlite3_column_int64(st, c++);
        b->instants = (uint64_t)sqlite3_column_int64(st, c++);
        b->unmatched = (uint64_t)sqlite3_column_int64(st, c++);
        b->after_finalize = (uint64_t)sqlite3_column_int64(st, c++);
        b->over_capacity = (uint64_t)sqlite3_column_int64(st, c++);
        b->crossed = (uint64_t)sqlite3_column_int64(st, c++);
        b->dropped_on_device = sqlite3_column_int64(st, c++);
        b->invalid_on_device = sqlite3_column_int64(st, c++);
        wl_sql_text_col(st, c++, b->placement, sizeof b->placement);
        b->delta_ns = sqlite3_column_int64(st, c++);
        b->clamp_ns = sqlite3_column_int64(st, c++);
        b->uncertainty_ns = (uint64_t)sqlite3_column_int64(st, c++);
        b->has_calibration = sqlite3_column_int(st, c++);
        b->calibration_offset_ns = sqlite3_column_int64(st, c++);
        b->calibration_uncertainty_ns = (uint64_t)sqlite3_column_int64(st, c++);
        wl_sql_text_col(st, c++, b->error, sizeof b->error);
        b->stream_id = (uint32_t)sqlite3_column_int64(st, c++);
        b->kernel_start_ns = (uint64_t)sqlite3_column_int64(st, c++);
        b->kernel_end_ns = (uint64_t)sqlite3_column_int64(st, c++);
        wl_sql_text_col(st, c++, b->kernel_name, sizeof b->kernel_name);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        *out = NULL;
        *n = 0;
        return -1;
    }
    *out = v;
    return 0;
}

int64_t wl_session_inkernel_each_event(wl_session *s, int64_t buffer_id,
                                       int (*fn)(const wl_iks_event *, void *), void *arg)
{
    if (!wl_sql_has_table(s->db, "inkernel_buffer"))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT kind, block, grp, event, depth, crossed, start_ns, coalesce(dur_ns, 0)"
                           " FROM inkernel_event WHERE buffer_id = ? ORDER BY block, grp, start_ns",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, buffer_id);
    int64_t count = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        wl_iks_event e;
        memset(&e, 0, sizeof e);
        const char *kind = (const char *)sqlite3_column_text(st, 0);
        e.kind = WL_IKS_SLICE;
        for (uint8_t k = 0; kind && k < 4; k++)
            if (strcmp(kind, KIND_NAMES[k]) == 0)
                e.kind = k;
        e.block = (uint32_t)sqlite3_column_int64(st, 1);
        e.group = (uint32_t)sqlite3_column_int64(st, 2);
        e.event = (uint16_t)sqlite3_column_int64(st, 3);
        e.depth = (uint8_t)sqlite3_column_int64(st, 4);
        e.crossed = (uint8_t)sqlite3_column_int64(st, 5);
        e.start_ns = (uint64_t)sqlite3_column_int64(st, 6);
        e.dur_ns = (uint64_t)sqlite3_column_int64(st, 7);
        count++;
        if (fn(&e, arg)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? count : -1;
}

int wl_session_inkernel_each_name(wl_session *s, int64_t buffer_id,
                                  void (*fn)(const char *kind, uint32_t id, const char *name, void *), void *arg)
{
    if (!wl_sql_has_table(s->db, "inkernel_buffer"))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT kind, id, name FROM inkernel_name WHERE buffer_id = ? ORDER BY kind, id",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, buffer_id);
    int count = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *kind = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 2);
        fn(kind ? kind : "", (uint32_t)sqlite3_column_int64(st, 1), name ? name : "", arg);
        count++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? count : -1;
}
