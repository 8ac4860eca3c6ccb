/* Decodes an in-kernel side file under its kernel (inkernel_session.h). */
#include "analysis/inkernel_session.h"

#include <stdio.h>
#include <string.h>

#include "analysis/inkernel_decode.h"
#include "capfile/inkernel_file.h"
#include "common/clock_fit.h"

static const char *placement_name(int method)
{
    switch (method) {
    case WL_IK_PLACE_CALIBRATED: return "calibrated";
    case WL_IK_PLACE_CLAMPED: return "clamped";
    case WL_IK_PLACE_WINDOW: return "window";
    default: return "none";
    }
}

static int store_names(wl_session_writer *w, const char *kind, char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && wl_session_writer_inkernel_name(w, kind, (uint32_t)i, names[i]) != 0)
            return -1;
    return 0;
}

static int store_events(wl_session_writer *w, const wl_ik_result *r)
{
    for (size_t i = 0; i < r->n_slices; i++) {
        const wl_ik_slice *s = &r->slices[i];
        wl_iks_event e = {s->start_ns, s->dur_ns, s->block, s->group, (uint16_t)s->event, WL_IKS_SLICE,
                          (uint8_t)s->depth, (uint8_t)((s->flags & WL_IK_SLICE_CROSSED) != 0)};
        if (wl_session_writer_inkernel_event(w, &e) != 0)
            return -1;
    }
    for (size_t i = 0; i < r->n_instants; i++) {
        const wl_ik_instant *s = &r->instants[i];
        wl_iks_event e = {s->ts_ns, 0, s->block, s->group, s->event, WL_IKS_INSTANT, 0, 0};
        if (wl_session_writer_inkernel_event(w, &e) != 0)
            return -1;
    }
    for (size_t i = 0; i < r->n_unmatched; i++) {
        const wl_ik_unmatched *s = &r->unmatched[i];
        wl_iks_event e = {s->ts_ns, 0, s->block, s->group, s->event,
                          s->type == WL_IK_BEGIN ? WL_IKS_UNMATCHED_BEGIN : WL_IKS_UNMATCHED_END, 0, 0};
        if (wl_session_writer_inkernel_event(w, &e) != 0)
            return -1;
    }
    return 0;
}

int wl_inkernel_import_file(wl_session_writer *w, const char *path, wl_iks_buffer *row, char *err, size_t err_size)
{
    memset(row, 0, sizeof *row);
    wlik_file f;
    if (wlik_read(path, &f, err, err_size) != 0)
        return -1;
    const wlik_header *h = &f.header;
    row->pid = (uint32_t)h->pid;
    row->correlation_id = h->correlation_id;
    row->device_id = h->device_id;
    row->words = h->n_words;
    row->dropped_on_device = h->counters_valid ? (int64_t)h->dropped_on_device : -1;
    row->invalid_on_device = h->counters_valid ? (int64_t)h->invalid_on_device : -1;
    row->has_calibration = h->calibration == WLIK_CALIB_OK || h->calibration == WLIK_CALIB_CUPTI;
    row->calibration_offset_ns = h->realtime_minus_globaltimer_ns;
    row->calibration_uncertainty_ns = h->calibration_uncertainty_ns;
    snprintf(row->placement, sizeof row->placement, "none");

    wl_ik_result r;
    memset(&r, 0, sizeof r);
    wl_ik_names names;
    memset(&names, 0, sizeof names);
    wl_ik_error ikerr;
    uint64_t kstart = 0, kend = 0;
    /* a graph launch runs many kernels under one correlation id: the registered node picks one */
    const uint64_t node = (h->graph_launch & WLIK_GRAPH_LAUNCH) ? h->graph_node_id : 0;
    int found = wl_session_writer_graph_kernel_span(w, row->pid, row->correlation_id, node, &row->kernel_id, &kstart,
                                                    &kend);
    int decoded = 0;
    if (found < 0) {
        snprintf(err, err_size, "%s: looking up its kernel failed", path);
        wlik_file_free(&f);
        return -1;
    }
    wl_ik_options opt = {h->stride, h->max_records};
    if (wl_ik_names_parse(&names, f.events, f.groups, &ikerr) != 0) {
        snprintf(row->error, sizeof row->error, "bad name lists: %s", ikerr.msg);
    } else if (wl_ik_decode(f.words, f.n_words, &opt, &r, &ikerr) != 0) {
        snprintf(row->error, sizeof row->error, "undecodable buffer: %s (word %llu)", ikerr.msg,
                 (unsigned long long)ikerr.word);
    } else {
        decoded = 1;
        row->num_blocks = r.num_blocks;
        row->num_groups = r.num_groups;
        row->slices = r.counts.slices;
        row->instants = r.counts.instants;
        row->unmatched = r.counts.unmatched_begins + r.counts.unmatched_ends;
        row->after_finalize = r.counts.after_finalize;
        row->over_capacity = r.counts.over_capacity;
        row->crossed = r.counts.crossed;
        if (found == 0) {
            if (node)
                snprintf(row->error, sizeof row->error,
                         "no timed kernel of graph node %llu in the graph launch with correlation id %u in process "
                         "%u: lanes not placed",
                         (unsigned long long)node, row->correlation_id, row->pid);
            else
                snprintf(row->error, sizeof row->error,
                         "no timed kernel with correlation id %u in process %u: lanes not placed", row->correlation_id,
                         row->pid);
        } else if (r.n_slices + r.n_instants + r.n_unmatched == 0) {
            snprintf(row->error, sizeof row->error, "the buffer holds no records");
        } else {
            /* the offset at this kernel's time: interpolated with the drift since the previous calibration */
            const int64_t off = h->calibration_at_ns ? wl_clock_offset_at(h->realtime_minus_globaltimer_ns,
                                                                          h->calibration_at_ns, h->drift_ppb, kstart)
                                                     : h->realtime_minus_globaltimer_ns;
            row->calibration_offset_ns = off;
            wl_ik_calibration cal = {off, h->calibration_uncertainty_ns};
            wl_ik_placement pl;
            if (wl_ik_place(&r, kstart, kend, row->has_calibration ? &cal : NULL, &pl, &ikerr) != 0 ||
                wl_ik_shift(&r, pl.delta_ns) != 0) {
                snprintf(row->error, sizeof row->error, "cannot place the lanes: %s", ikerr.msg);
            } else {
                snprintf(row->placement, sizeof row->placement, "%s", placement_name(pl.method));
                row->delta_ns = pl.delta_ns;
                row->uncertainty_ns = pl.uncertainty_ns;
                row->clamp_ns = pl.clamp_ns;
            }
        }
    }
    int rc = wl_session_writer_inkernel_begin(w, row, err, err_size);
    int placed = decoded && strcmp(row->placement, "none") != 0;
    if (rc == 0 && decoded) {
        int bad = store_names(w, "event", names.events, names.n_events) ||
                  store_names(w, "group", names.groups, names.n_groups) || (placed && store_events(w, &r));
        (void)bad; /* the end call reports any failed insert */
    }
    if (rc == 0)
        rc = wl_session_writer_inkernel_end(w, err, err_size);
    wl_ik_result_free(&r);
    wl_ik_names_free(&names);
    wlik_file_free(&f);
    return rc;
}
