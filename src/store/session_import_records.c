/* One handler per capture record type (session_import.c calls wl_imp_dispatch): fixed payloads
 * are copied out of the mapped file, checked, and bound into prepared statements; derived columns
 * (threads, warps, durations, delays, bandwidth) are computed here. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "store/cupti_enums.h"
#include "store/id_map.h"
#include "store/session.h"
#include "store/session_writer_internal.h"

static int check_string_ref(import_ctx *c, uint32_t id, size_t offset)
{
    if (id && (id >= c->nstrings || !c->strings[id]))
        return wl_store_set_err(c->err, c->err_size, "record at offset %zu refers to undefined string %u", offset, id);
    return 0;
}

/* ---- records -------------------------------------------------------------------------------- */

static int on_string(import_ctx *c, const uint8_t *p, size_t offset)
{
    wlcap_string h;
    memcpy(&h, p, sizeof h);
    if (h.id >= MAX_STRING_ID)
        return wl_store_set_err(c->err, c->err_size, "string record at offset %zu has id %u (limit %u)", offset, h.id,
                       MAX_STRING_ID);
    if (h.id >= c->nstrings) {
        uint32_t n = c->nstrings ? c->nstrings : 1024;
        while (n <= h.id)
            n *= 2;
        char **s = realloc(c->strings, n * sizeof *s);
        if (s)
            c->strings = s;
        uint32_t *l = realloc(c->string_len, n * sizeof *l);
        if (l)
            c->string_len = l;
        int64_t *k = realloc(c->kname_row, n * sizeof *k);
        if (k)
            c->kname_row = k;
        if (!s || !l || !k)
            return wl_store_set_err(c->err, c->err_size, "out of memory reading strings");
        memset(c->strings + c->nstrings, 0, (n - c->nstrings) * sizeof *s);
        memset(c->string_len + c->nstrings, 0, (n - c->nstrings) * sizeof *l);
        memset(c->kname_row + c->nstrings, 0, (n - c->nstrings) * sizeof *k);
        c->nstrings = n;
    }
    char *t = malloc((size_t)h.len + 1);
    if (!t)
        return wl_store_set_err(c->err, c->err_size, "out of memory reading strings");
    memcpy(t, p + sizeof h, h.len);
    t[h.len] = 0;
    free(c->strings[h.id]);
    c->strings[h.id] = t;
    c->string_len[h.id] = (uint32_t)strlen(t); /* an embedded NUL ends the text */
    c->kname_row[h.id] = 0;
    return 0;
}

static void mask_text(uint32_t mask, char *out, size_t n)
{
    static const char *const names[] = {"kernels", "memcpy", "api", "nvtx", "sync"};
    out[0] = 0;
    for (int i = 0; i < 5; i++)
        if (mask & (1u << i))
            snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? "," : "", names[i]);
}

static int on_process(import_ctx *c, const wlcap_process *p)
{
    c->pid = p->pid;
    char mask[64];
    mask_text(p->record_mask, mask, sizeof mask);
    sqlite3_stmt *s = wl_imp_begin(c, S_PROCESS);
    wl_imp_bind_u64(s, 1, p->pid);
    wl_imp_bind_u64(s, 2, p->ppid);
    wl_imp_bind_str(c, s, 3, p->hostname_str);
    wl_imp_bind_str(c, s, 4, p->cmdline_str);
    wl_imp_bind_str(c, s, 5, p->exe_str);
    wl_imp_bind_u64(s, 6, p->start_ns);
    sqlite3_bind_null(s, 7);
    int32_t ranks[5] = {p->rank, p->local_rank, p->world_size, p->ompi_rank, p->slurm_procid};
    for (int i = 0; i < 5; i++) {
        if (ranks[i] >= 0)
            sqlite3_bind_int(s, 8 + i, ranks[i]);
    }
    wl_imp_bind_u64(s, 13, p->cupti_version);
    sqlite3_bind_text(s, 14, mask, -1, SQLITE_TRANSIENT);
    wl_imp_bind_u64(s, 15, p->buffer_size);
    sqlite3_bind_int(s, 16, 0); /* complete once END is seen */
    sqlite3_bind_text(s, 17, "capture ended before the recorder finished", -1, SQLITE_STATIC);
    return wl_imp_step(c, s);
}

static int on_device(import_ctx *c, const wlcap_device *d)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_DEVICE);
    char uuid[40];
    for (int i = 0; i < 16; i++)
        snprintf(uuid + 2 * i, 3, "%02x", d->uuid[i]);
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, d->device_id);
    wl_imp_bind_str(c, s, 3, d->name_str);
    wl_imp_bind_str(c, s, 4, d->pci_str);
    sqlite3_bind_text(s, 5, uuid, -1, SQLITE_TRANSIENT);
    const int32_t v[] = {d->cc_major, d->cc_minor, d->sm_count, d->warp_size, d->max_threads_per_block,
                         d->max_threads_per_sm, d->max_blocks_per_sm, d->regs_per_sm, d->regs_per_block,
                         d->smem_per_sm, d->smem_per_block, d->smem_per_block_optin,
                         d->reserved_smem_per_block, d->l2_bytes, d->core_clock_khz, d->mem_clock_khz,
                         d->mem_bus_width_bits};
    for (int i = 0; i < (int)(sizeof v / sizeof v[0]); i++)
        sqlite3_bind_int(s, 6 + i, v[i]);
    wl_imp_bind_u64(s, 23, d->total_mem_bytes);
    sqlite3_bind_int(s, 24, d->async_engines);
    sqlite3_bind_int(s, 25, d->ecc_enabled);
    sqlite3_bind_int(s, 26, d->concurrent_kernels);
    return wl_imp_step(c, s);
}

static int on_thread(import_ctx *c, const wlcap_thread *t)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_THREAD);
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, t->tid);
    wl_imp_bind_str(c, s, 3, t->name_str);
    sqlite3_bind_text(s, 4, t->source == WLCAP_THREAD_API ? "api" : "os", -1, SQLITE_STATIC);
    c->stats->threads++;
    return wl_imp_step(c, s);
}

static int64_t kernel_name_row(import_ctx *c, uint32_t id)
{
    if (id && id < c->nstrings && c->kname_row[id])
        return c->kname_row[id];
    const char *mangled = wl_imp_str(c, id);
    if (!mangled)
        mangled = "(unnamed kernel)";
    sqlite3_stmt *f = wl_imp_begin(c, S_KNAME_FIND);
    sqlite3_bind_text(f, 1, mangled, -1, SQLITE_STATIC);
    int64_t row = 0;
    if (sqlite3_step(f) == SQLITE_ROW)
        row = sqlite3_column_int64(f, 0);
    sqlite3_reset(f);
    if (!row) {
        char demangled[4096], shortn[1024];
        wl_demangle(mangled, demangled, sizeof demangled);
        wl_short_kernel_name(demangled, shortn, sizeof shortn);
        sqlite3_stmt *a = wl_imp_begin(c, S_KNAME_ADD);
        sqlite3_bind_text(a, 1, mangled, -1, SQLITE_STATIC);
        sqlite3_bind_text(a, 2, demangled, -1, SQLITE_STATIC);
        sqlite3_bind_text(a, 3, shortn, -1, SQLITE_STATIC);
        if (wl_imp_step(c, a))
            return -1;
        row = sqlite3_last_insert_rowid(c->w->db);
    }
    if (id && id < c->nstrings)
        c->kname_row[id] = row;
    return row;
}

static int on_kernel(import_ctx *c, const wlcap_kernel *k)
{
    int64_t name = kernel_name_row(c, k->name_str);
    if (name < 0)
        return -1;
    sqlite3_stmt *s = wl_imp_begin(c, S_KERNEL);
    int i = 1;
    wl_imp_bind_u64(s, i++, c->pid);
    wl_imp_bind_u64(s, i++, k->device_id);
    wl_imp_bind_u64(s, i++, k->context_id);
    wl_imp_bind_u64(s, i++, k->stream_id);
    wl_imp_bind_u64(s, i++, k->correlation_id);
    sqlite3_bind_int64(s, i++, name);
    const int64_t dims[] = {k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z,
                            k->cluster_x, k->cluster_y, k->cluster_z, k->cluster_sched_policy,
                            k->max_potential_cluster_size, k->max_active_clusters, k->registers_per_thread,
                            k->static_smem, k->dynamic_smem, k->smem_executed, k->smem_limit_config,
                            k->local_mem_per_thread, (int64_t)k->local_mem_total, k->cache_config_requested,
                            k->cache_config_executed};
    for (size_t j = 0; j < sizeof dims / sizeof dims[0]; j++)
        sqlite3_bind_int64(s, i++, dims[j]);
    if (k->carveout_requested != 0xff)
        sqlite3_bind_int(s, i, k->carveout_requested);
    i++;
    sqlite3_bind_text(s, i++, wl_launch_type_name(k->launch_type), -1, SQLITE_STATIC);
    sqlite3_bind_int(s, i++, k->is_device_launched);
    if (k->graph_id) {
        wl_imp_bind_u64(s, i, k->graph_id);
        wl_imp_bind_u64(s, i + 1, k->graph_node_id);
    }
    i += 2;
    sqlite3_bind_int64(s, i++, k->grid_id);
    wl_imp_bind_ts(s, i++, k->queued);
    wl_imp_bind_ts(s, i++, k->submitted);
    wl_imp_bind_ts(s, i++, k->start);
    wl_imp_bind_ts(s, i++, k->end);
    wl_imp_bind_ts(s, i++, k->completed);
    int has_ts = k->start && k->end && k->end >= k->start;
    sqlite3_bind_int(s, i++, has_ts);
    /* Derived: sizes from the launch configuration; delays from the latency timestamps. */
    int64_t blocks = (int64_t)k->grid_x * k->grid_y * k->grid_z;
    int64_t threads_per_block = (int64_t)k->block_x * k->block_y * k->block_z;
    int64_t warps_per_block = (threads_per_block + 31) / 32;
    sqlite3_bind_int64(s, i++, blocks * threads_per_block);
    sqlite3_bind_int64(s, i++, blocks);
    sqlite3_bind_int64(s, i++, blocks * warps_per_block);
    if (has_ts)
        wl_imp_bind_u64(s, i, k->end - k->start);
    i++;
    if (k->queued && k->submitted >= k->queued)
        wl_imp_bind_u64(s, i, k->submitted - k->queued);
    i++;
    if (k->submitted && k->start >= k->submitted)
        wl_imp_bind_u64(s, i, k->start - k->submitted);
    c->stats->kernels++;
    return wl_imp_step(c, s);
}

static double bandwidth_gbps(uint64_t bytes, uint64_t start, uint64_t end)
{
    return end > start ? (double)bytes / (double)(end - start) : 0.0; /* bytes/ns = GB/s */
}

static int on_memcpy(import_ctx *c, const wlcap_memcpy *m)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_MEMCPY);
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, m->device_id);
    wl_imp_bind_u64(s, 3, m->context_id);
    wl_imp_bind_u64(s, 4, m->stream_id);
    wl_imp_bind_u64(s, 5, m->correlation_id);
    sqlite3_bind_text(s, 6, wl_copy_kind_name(m->copy_kind, m->is_peer), -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 7, wl_memory_kind_name(m->src_kind), -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 8, wl_memory_kind_name(m->dst_kind), -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 9, m->bytes);
    sqlite3_bind_int(s, 10, (m->flags & 1) ? 1 : 0); /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC */
    wl_imp_bind_u64(s, 11, m->src_device);
    wl_imp_bind_u64(s, 12, m->dst_device);
    if (m->graph_id) {
        wl_imp_bind_u64(s, 13, m->graph_id);
        wl_imp_bind_u64(s, 14, m->graph_node_id);
    }
    wl_imp_bind_ts(s, 15, m->start);
    wl_imp_bind_ts(s, 16, m->end);
    if (m->start && m->end >= m->start) {
        wl_imp_bind_u64(s, 17, m->end - m->start);
        sqlite3_bind_double(s, 18, bandwidth_gbps(m->bytes, m->start, m->end));
    }
    c->stats->memcpys++;
    return wl_imp_step(c, s);
}

static int on_memset(import_ctx *c, const wlcap_memset *m)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_MEMSET);
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, m->device_id);
    wl_imp_bind_u64(s, 3, m->context_id);
    wl_imp_bind_u64(s, 4, m->stream_id);
    wl_imp_bind_u64(s, 5, m->correlation_id);
    sqlite3_bind_text(s, 6, wl_memory_kind_name(m->memory_kind), -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 7, m->bytes);
    wl_imp_bind_u64(s, 8, m->value);
    sqlite3_bind_int(s, 9, (m->flags & 1) ? 1 : 0); /* CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC */
    if (m->graph_id) {
        wl_imp_bind_u64(s, 10, m->graph_id);
        wl_imp_bind_u64(s, 11, m->graph_node_id);
    }
    wl_imp_bind_ts(s, 12, m->start);
    wl_imp_bind_ts(s, 13, m->end);
    if (m->start && m->end >= m->start) {
        wl_imp_bind_u64(s, 14, m->end - m->start);
        sqlite3_bind_double(s, 15, bandwidth_gbps(m->bytes, m->start, m->end));
    }
    c->stats->memsets++;
    return wl_imp_step(c, s);
}

static int on_api_name(import_ctx *c, const wlcap_api_name *a)
{
    if (a->domain > 2 || a->cbid >= 1024 || !wl_imp_str(c, a->name_str))
        return 0; /* names we cannot place are shown as cbid numbers */
    if (wl_imp_api_flush(c)) /* the calls held so far keep the name they had */
        return -1;
    free(c->api_names[a->domain][a->cbid]);
    c->api_names[a->domain][a->cbid] = strdup(wl_imp_str(c, a->name_str));
    return 0;
}

static int on_api(import_ctx *c, const wlcap_api *a)
{
    c->stats->api_calls++;
    return wl_imp_api_call(c, a);
}

static int on_sync(import_ctx *c, const wlcap_sync *y)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_SYNC);
    wl_imp_bind_u64(s, 1, c->pid);
    sqlite3_bind_text(s, 2, wl_sync_type_name(y->type), -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 3, y->context_id);
    if (y->stream_id != 0xffffffffu)
        wl_imp_bind_u64(s, 4, y->stream_id);
    if (y->event_id != 0xffffffffu)
        wl_imp_bind_u64(s, 5, y->event_id);
    wl_imp_bind_u64(s, 6, y->correlation_id);
    wl_imp_bind_u64(s, 7, y->start);
    wl_imp_bind_u64(s, 8, y->end);
    wl_imp_bind_u64(s, 9, y->end >= y->start ? y->end - y->start : 0);
    c->stats->syncs++;
    return wl_imp_step(c, s);
}

/* NVTX: a START row is inserted at once and completed when its END arrives (matched by id). */
static int on_marker(import_ctx *c, const wlcap_marker *m)
{
    const char *domain = wl_imp_str(c, m->domain_str);
    if (m->kind == WLCAP_MARK_INSTANT) {
        sqlite3_stmt *s = wl_imp_begin(c, S_NVTX_MARK);
        wl_imp_bind_u64(s, 1, c->pid);
        wl_imp_bind_u64(s, 2, m->tid);
        if (domain)
            sqlite3_bind_text(s, 3, domain, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, wl_imp_str(c, m->name_str) ? wl_imp_str(c, m->name_str) : "", -1, SQLITE_STATIC);
        wl_imp_bind_u64(s, 5, m->timestamp);
        c->stats->nvtx_marks++;
        return wl_imp_step(c, s);
    }
    if (m->kind == WLCAP_MARK_START) {
        sqlite3_stmt *s = wl_imp_begin(c, S_NVTX_START);
        wl_imp_bind_u64(s, 1, c->pid);
        wl_imp_bind_u64(s, 2, m->tid);
        if (domain)
            sqlite3_bind_text(s, 3, domain, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, wl_imp_str(c, m->name_str) ? wl_imp_str(c, m->name_str) : "", -1, SQLITE_STATIC);
        wl_imp_bind_u64(s, 5, m->timestamp);
        if (wl_imp_step(c, s))
            return -1;
        c->stats->nvtx_ranges++;
        if (wl_id_map_put(&c->nvtx, m->id, sqlite3_last_insert_rowid(c->w->db)) != 0)
            return wl_store_set_err(c->err, c->err_size, "out of memory pairing NVTX ranges");
        return 0;
    }
    if (m->kind == WLCAP_MARK_END) {
        int64_t row = wl_id_map_take(&c->nvtx, m->id);
        if (!row)
            return 0; /* an end whose start was not recorded (e.g. before the recorder started) */
        sqlite3_stmt *s = wl_imp_begin(c, S_NVTX_END);
        wl_imp_bind_u64(s, 1, m->timestamp);
        wl_imp_bind_u64(s, 2, m->tid);
        sqlite3_bind_int64(s, 3, row);
        return wl_imp_step(c, s);
    }
    return 0;
}

static int on_scope(import_ctx *c, const wlcap_scope *sc)
{
    if (sc->kind == WLCAP_SCOPE_BEGIN) {
        sqlite3_stmt *s = wl_imp_begin(c, S_SCOPE_BEGIN);
        wl_imp_bind_u64(s, 1, c->pid);
        wl_imp_bind_u64(s, 2, sc->scope_id);
        if (sc->parent_id)
            wl_imp_bind_u64(s, 3, sc->parent_id);
        wl_imp_bind_u64(s, 4, sc->tid);
        sqlite3_bind_text(s, 5, wl_imp_str(c, sc->name_str) ? wl_imp_str(c, sc->name_str) : "", -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 6, sc->truncated ? 1 : 0);
        wl_imp_bind_u64(s, 7, sc->timestamp);
        c->stats->scopes++;
        return wl_imp_step(c, s);
    }
    sqlite3_stmt *s = wl_imp_begin(c, S_SCOPE_END);
    wl_imp_bind_u64(s, 1, sc->timestamp);
    wl_imp_bind_u64(s, 2, c->pid);
    wl_imp_bind_u64(s, 3, sc->scope_id);
    return wl_imp_step(c, s);
}

static int on_extcorr(import_ctx *c, const wlcap_extcorr *e)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_EXTCORR);
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, e->correlation_id);
    wl_imp_bind_u64(s, 3, e->external_id);
    wl_imp_bind_u64(s, 4, e->kind);
    return wl_imp_step(c, s);
}

static int add_lost(import_ctx *c, const char *source, uint64_t count, const char *detail)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_LOST);
    wl_imp_bind_u64(s, 1, c->pid);
    sqlite3_bind_text(s, 2, source, -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 3, count);
    if (detail)
        sqlite3_bind_text(s, 4, detail, -1, SQLITE_TRANSIENT);
    if (wl_lost_counts_records(source))
        c->stats->lost += count;
    return wl_imp_step(c, s);
}

static int on_dropped(import_ctx *c, const wlcap_dropped *d)
{
    switch (d->source) {
    case WLCAP_DROP_CUPTI: return add_lost(c, "cupti_dropped", d->count, "CUPTI activity records dropped");
    case WLCAP_DROP_BUFFER:
        /* recorders before the pool mapped buffers on demand: refusals, whose records CUPTI
         * counted as cupti_dropped (newer ones report refusals as a STAT) */
        return add_lost(c, "buffer_refused", d->count,
                        "CUPTI buffer requests refused (their records are counted in cupti_dropped)");
    case WLCAP_DROP_EVENTS: return add_lost(c, "scope_events", d->count, "scope/thread events lost: the event ring and its spill were full");
    case WLCAP_DROP_API: return add_lost(c, "api_calls", d->count, "API call records lost: the API ring and its spill were full");
    case WLCAP_DROP_INKERNEL:
        return add_lost(c, "inkernel_buffers", d->count, "in-kernel buffers not collected or not copied");
    case WLCAP_DROP_METRICS:
        return d->stream_id == WLCAP_METRIC_UNTIED
                   ? add_lost(c, "metric_unattributed", d->count,
                              "metric ranges kept without an activity: not tied to one kernel, copy or set for certain")
               : d->stream_id == WLCAP_METRIC_NO_RANGE
                   ? add_lost(c, "metric_no_range", d->count,
                              "profiled kernel launches without a range of their own (their ranges could not be told"
                              " apart, or CUPTI made none)")
                   : add_lost(c, "metric_ranges", d->count,
                              "metric ranges lost: dropped by CUPTI or the metric ring was full");
    case WLCAP_DROP_SAMPLES: return add_lost(c, "device_samples", d->count, "NVML device samples lost: sample ring full");
    case WLCAP_DROP_PMSAMPLING: {
        char detail[160];
        snprintf(detail, sizeof detail, "GPU %u: %s", d->context_id,
                 d->stream_id == 1 ? "PM samples missing from the hardware sequence (gaps between windows: hardware"
                                     " buffer overflow or decode too late)"
                                   : "PM samples lost: the sample ring was full");
        return add_lost(c, "pm_samples", d->count, detail);
    }
    case WLCAP_DROP_PCSAMPLING:
        return d->stream_id == WLCAP_PCS_LOST_RECORDS
                   ? add_lost(c, "stall_records", d->count, "warp stall records lost: the recorder's stall ring was full")
               : d->stream_id == WLCAP_PCS_LOST_OVERFLOWS
                   ? add_lost(c, "pc_buffer_overflows", d->count,
                              "times CUPTI's PC-sampling hardware buffer filled up (samples lost, count unknown)")
                   : add_lost(c, "pc_samples_dropped", d->count,
                              "warp samples dropped by the hardware or CUPTI, or with a reason CUPTI did not name");
    default: return add_lost(c, "other", d->count, NULL);
    }
}

static int on_occ_check(import_ctx *c, const wlcap_occ_check *o)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_OCC_CHECK);
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, o->correlation_id);
    wl_imp_bind_u64(s, 3, o->block_size);
    wl_imp_bind_u64(s, 4, o->dynamic_smem);
    sqlite3_bind_int(s, 5, o->driver_active_blocks);
    if (o->function_registers >= 0)
        sqlite3_bind_int(s, 6, o->function_registers);
    wl_imp_bind_u64(s, 7, o->status);
    return wl_imp_step(c, s);
}

static int on_annotation(import_ctx *c, const wlcap_annotation *a)
{
    static const char *const precision[] = {"fp32", "fp64", "fp16_tensor", "bf16_tensor"};
    if (a->target != WLCAP_ANNOTATE_KERNEL && a->target != WLCAP_ANNOTATE_SCOPE)
        return 0;
    sqlite3_stmt *s = wl_imp_begin(c, S_ANNOTATION);
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, a->tid);
    int kernel = a->target == WLCAP_ANNOTATE_KERNEL;
    sqlite3_bind_text(s, 3, kernel ? "kernel" : "scope", -1, SQLITE_STATIC);
    if (kernel)
        wl_imp_bind_u64(s, 4, a->correlation_id);
    else
        wl_imp_bind_u64(s, 5, a->scope_id);
    /* NaN or negative counts from a program are stored as unknown (0) */
    sqlite3_bind_double(s, 6, a->flops > 0 ? a->flops : 0);
    sqlite3_bind_double(s, 7, a->bytes > 0 ? a->bytes : 0);
    sqlite3_bind_text(s, 8, precision[a->precision < 4 ? a->precision : 0], -1, SQLITE_STATIC);
    return wl_imp_step(c, s);
}

/* A value the recorder could not read (its valid bit clear) is stored as NULL. A window that does
 * not precede its sample (clock stepped back) is clamped to an empty one at the sample. */
static int on_device_sample(import_ctx *c, const wlcap_device_sample *d)
{
    sqlite3_stmt *s = wl_imp_begin(c, S_DEVICE_SAMPLE);
    wl_imp_bind_u64(s, 1, c->pid);
    wl_imp_bind_u64(s, 2, d->device_id);
    wl_imp_bind_u64(s, 3, d->timestamp);
    wl_imp_bind_u64(s, 4, d->window_start && d->window_start <= d->timestamp ? d->window_start : d->timestamp);
    const struct { uint32_t bit; int col; uint64_t v; } f[] = {
        {WLCAP_SAMPLE_UTIL, 5, d->gpu_util_pct},        {WLCAP_SAMPLE_UTIL, 6, d->mem_util_pct},
        {WLCAP_SAMPLE_SM_CLOCK, 7, d->sm_clock_mhz},    {WLCAP_SAMPLE_MEM_CLOCK, 8, d->mem_clock_mhz},
        {WLCAP_SAMPLE_POWER, 9, d->power_mw},           {WLCAP_SAMPLE_TEMP, 10, d->temperature_c},
        {WLCAP_SAMPLE_MEM_USED, 11, d->memory_used_bytes}, {WLCAP_SAMPLE_ENERGY, 12, d->energy_mj},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if ((d->valid & f[i].bit) && f[i].v <= INT64_MAX)
            wl_imp_bind_u64(s, f[i].col, f[i].v);
    return wl_imp_step(c, s);
}

static int on_stat(import_ctx *c, const wlcap_stat *r, size_t offset)
{
    if (!r->name_str)
        return wl_store_set_err(c->err, c->err_size, "stat record at offset %zu has no name", offset);
    if (check_string_ref(c, r->name_str, offset))
        return -1;
    sqlite3_stmt *s = wl_imp_begin(c, S_STAT);
    wl_imp_bind_u64(s, 1, c->pid);
    sqlite3_bind_text(s, 2, c->strings[r->name_str], -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 3, r->value);
    return wl_imp_step(c, s);
}

static int on_end(import_ctx *c, const wlcap_end *e, const char *path)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->w->db,
                           "UPDATE process SET complete = 1, incomplete_reason = NULL, end_ns = ?, capture_file = ?,"
                           " capture_bytes = ?, buffers_completed = ?, peak_buffers_in_use = ? WHERE pid = ?",
                           -1, &s, NULL) != SQLITE_OK)
        return wl_store_set_err(c->err, c->err_size, "SQLite: %s", sqlite3_errmsg(c->w->db));
    wl_imp_bind_u64(s, 1, e->end_ns);
    sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
    wl_imp_bind_u64(s, 3, e->bytes_written);
    wl_imp_bind_u64(s, 4, e->buffers_completed);
    wl_imp_bind_u64(s, 5, e->peak_buffers_in_use);
    wl_imp_bind_u64(s, 6, c->pid);
    int rc = wl_imp_step(c, s);
    sqlite3_finalize(s);
    c->stats->complete = 1;
    return rc;
}

/* --capture-range: MODE once, then START/STOP pairs; a range still open at the end is closed by
 * the process's end (session_writer.c). */
static int on_capture_range(import_ctx *c, const wlcap_capture_range *r, size_t offset)
{
    if (r->kind == WLCAP_CAPTURE_MODE) {
        if (c->capture_mode)
            return wl_store_set_err(c->err, c->err_size, "capture_range record at offset %zu: a second mode record",
                                    offset);
        c->capture_mode = 1;
        sqlite3_stmt *s = wl_imp_begin(c, S_CAPTURE_MODE);
        wl_imp_bind_u64(s, 1, c->pid);
        return wl_imp_step(c, s);
    }
    if (r->kind != WLCAP_CAPTURE_START && r->kind != WLCAP_CAPTURE_STOP)
        return wl_store_set_err(c->err, c->err_size, "capture_range record at offset %zu: unknown kind %u", offset,
                                r->kind);
    if (!c->capture_mode)
        return wl_store_set_err(c->err, c->err_size,
                                "capture_range record at offset %zu comes before the capture-range mode record", offset);
    int start = r->kind == WLCAP_CAPTURE_START;
    if (start == (c->capture_open != 0))
        return wl_store_set_err(c->err, c->err_size, "capture_range record at offset %zu: %s", offset,
                                start ? "a range starts while one is open" : "a range ends that never started");
    sqlite3_stmt *s = wl_imp_begin(c, start ? S_CAPTURE_START : S_CAPTURE_STOP);
    if (start) {
        wl_imp_bind_u64(s, 1, c->pid);
        wl_imp_bind_u64(s, 2, r->timestamp);
        wl_imp_bind_u64(s, 3, r->tid);
    } else {
        wl_imp_bind_u64(s, 1, r->timestamp);
        wl_imp_bind_u64(s, 2, r->tid);
        sqlite3_bind_int64(s, 3, c->capture_open);
    }
    if (wl_imp_step(c, s) != 0)
        return -1;
    c->capture_open = start ? sqlite3_last_insert_rowid(c->w->db) : 0;
    return 0;
}

int wl_imp_dispatch(import_ctx *c, uint16_t type, const uint8_t *p, size_t offset, const char *path)
{
    /* Fixed payloads are copied out so the mapped file needs no alignment. */
    union {
        wlcap_process process;
        wlcap_device device;
        wlcap_kernel kernel;
        wlcap_memcpy memcpy_;
        wlcap_memset memset_;
        wlcap_api api;
        wlcap_sync sync;
        wlcap_marker marker;
        wlcap_extcorr extcorr;
        wlcap_scope scope;
        wlcap_thread thread;
        wlcap_dropped dropped;
        wlcap_end end;
        wlcap_api_name api_name;
        wlcap_occ_check occ_check;
        wlcap_annotation annotation;
        wlcap_metric_def metric_def;
        wlcap_metric_range metric_range;
        wlcap_metric_owner metric_owner;
        wlcap_device_sample device_sample;
        wlcap_pm_metric_def pm_metric_def;
        wlcap_pm_sample pm_sample;
        wlcap_stall_reason stall_reason;
        wlcap_kernel_stall kernel_stall;
        wlcap_capture_range capture_range;
        wlcap_stat stat;
        wlcap_attr attr;
    } u;
    if (type == WLCAP_STRING)
        return on_string(c, p, offset);
    memcpy(&u, p, wlcap_payload_size(type));
    switch (type) {
    case WLCAP_PROCESS:
        if (check_string_ref(c, u.process.hostname_str, offset) || check_string_ref(c, u.process.cmdline_str, offset) ||
            check_string_ref(c, u.process.exe_str, offset))
            return -1;
        return on_process(c, &u.process);
    case WLCAP_DEVICE:
        if (check_string_ref(c, u.device.name_str, offset) || check_string_ref(c, u.device.pci_str, offset))
            return -1;
        return on_device(c, &u.device);
    case WLCAP_KERNEL:
        return check_string_ref(c, u.kernel.name_str, offset) ? -1 : on_kernel(c, &u.kernel);
    case WLCAP_MEMCPY: return on_memcpy(c, &u.memcpy_);
    case WLCAP_MEMSET: return on_memset(c, &u.memset_);
    case WLCAP_API: return on_api(c, &u.api);
    case WLCAP_API_NAME: return check_string_ref(c, u.api_name.name_str, offset) ? -1 : on_api_name(c, &u.api_name);
    case WLCAP_SYNC: return on_sync(c, &u.sync);
    case WLCAP_MARKER:
        if (check_string_ref(c, u.marker.name_str, offset) || check_string_ref(c, u.marker.domain_str, offset))
            return -1;
        return on_marker(c, &u.marker);
    case WLCAP_EXTCORR: return on_extcorr(c, &u.extcorr);
    case WLCAP_SCOPE: return check_string_ref(c, u.scope.name_str, offset) ? -1 : on_scope(c, &u.scope);
    case WLCAP_THREAD: return check_string_ref(c, u.thread.name_str, offset) ? -1 : on_thread(c, &u.thread);
    case WLCAP_DROPPED: return on_dropped(c, &u.dropped);
    case WLCAP_END: return on_end(c, &u.end, path);
    case WLCAP_OCC_CHECK: return on_occ_check(c, &u.occ_check);
    case WLCAP_ANNOTATION: return on_annotation(c, &u.annotation);
    case WLCAP_METRIC_DEF: return wl_imp_metric_def(c, &u.metric_def, offset);
    case WLCAP_METRIC_RANGE: return wl_imp_metric_range(c, &u.metric_range, offset);
    case WLCAP_METRIC_OWNER: return wl_imp_metric_owner(c, &u.metric_owner, offset);
    case WLCAP_DEVICE_SAMPLE: return on_device_sample(c, &u.device_sample);
    case WLCAP_PM_METRIC_DEF: return wl_imp_pm_metric_def(c, &u.pm_metric_def, offset);
    case WLCAP_PM_SAMPLE: return wl_imp_pm_sample(c, &u.pm_sample, offset);
    case WLCAP_STALL_REASON: return wl_imp_stall_reason(c, &u.stall_reason, offset);
    case WLCAP_KERNEL_STALL: return wl_imp_kernel_stall(c, &u.kernel_stall, offset);
    case WLCAP_CAPTURE_RANGE: return on_capture_range(c, &u.capture_range, offset);
    case WLCAP_STAT: return on_stat(c, &u.stat, offset);
    case WLCAP_ATTR: return check_string_ref(c, u.attr.str, offset) ? -1 : wl_imp_attr(c, &u.attr, offset);
    default: return 0;
    }
}


void wl_imp_free_ctx(import_ctx *c)
{
    for (uint32_t i = 0; i < c->nstrings; i++)
        free(c->strings[i]);
    free(c->strings);
    free(c->string_len);
    free(c->kname_row);
    wl_id_map_free(&c->nvtx);
    wl_imp_metric_free(c);
    wl_imp_pm_free(c);
    wl_imp_stall_free(c);
    wl_imp_api_free(c);
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < 1024; i++)
            free(c->api_names[d][i]);
}
