/* The session reader of libwarplens (include/warplens/reader.h): the store's open check and
 * contract, and the kernel columns the CLI derives on read (occupancy, waves, backend), for
 * bindings that read the documented tables themselves. A thin layer over src/store and
 * src/analysis: nothing here decides anything the CLI does not decide the same way. */
#include "warplens/reader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_backend.h"
#include "analysis/kernel_occupancy.h"
#include "store/session.h"
#include "store/session_kernels.h"

#define MAX_DAMAGED_TABLES 64

struct warplens_reader {
    wl_session *s;
    wl_kernel_cursor *kernels; /* open while a walk of the kernels is under way */
    wl_occ_cache *occ;
    int kernels_ended;         /* the walk's last rows went out: the next call returns 0 */
    int census_read;           /* damage below is filled */
    int ndamaged;
    wl_damage_count damage[MAX_DAMAGED_TABLES];
    char error[512];
};

WARPLENS_API int warplens_reader_abi(void)
{
    return WARPLENS_READER_ABI;
}

WARPLENS_API size_t warplens_reader_kernel_size(void)
{
    return sizeof(warplens_kernel_derived);
}

WARPLENS_API warplens_reader *warplens_reader_open(const char *path, char *err, size_t err_size)
{
    char why[1024];
    if (!path) {
        snprintf(err, err_size, "no session path given");
        return NULL;
    }
    warplens_reader *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    r->s = wl_session_open(path, why, sizeof why);
    if (!r->s) {
        snprintf(err, err_size, "%s", why);
        free(r);
        return NULL;
    }
    return r;
}

WARPLENS_API void warplens_reader_close(warplens_reader *r)
{
    if (!r)
        return;
    wl_kernel_cursor_close(r->kernels);
    wl_occ_cache_free(r->occ);
    wl_session_close(r->s);
    free(r);
}

WARPLENS_API int warplens_reader_schema_version(const warplens_reader *r)
{
    return r ? wl_session_schema_version(r->s) : -1;
}

WARPLENS_API const char *warplens_reader_error(const warplens_reader *r)
{
    return r ? r->error : "no reader";
}

WARPLENS_API int64_t warplens_reader_rows_left_out(warplens_reader *r, const char *table)
{
    if (!r || !table)
        return -1;
    if (!r->census_read) {
        int n = wl_session_damage(r->s, 0, r->damage, MAX_DAMAGED_TABLES);
        if (n < 0) {
            wl_session_read_failure(r->s, r->error, sizeof r->error);
            return -1;
        }
        r->ndamaged = n < MAX_DAMAGED_TABLES ? n : MAX_DAMAGED_TABLES;
        r->census_read = 1;
    }
    for (int i = 0; i < r->ndamaged; i++)
        if (!strcmp(r->damage[i].table, table))
            return (int64_t)r->damage[i].rows;
    return 0;
}

WARPLENS_API int warplens_reader_row_fault(warplens_reader *r, const char *table, int64_t rowid, char *out,
                                           size_t out_size)
{
    if (!r || !table)
        return 0;
    return wl_session_row_fault(r->s, table, rowid, out, out_size);
}

static void derive(const wl_kernel_row *k, const wl_kernel_occ *o, warplens_kernel_derived *d)
{
    memset(d, 0, sizeof *d);
    d->id = k->id;
    d->launch_ns = k->api_duration_ns;
    d->app_thread_id = k->app_thread;
    d->occupancy_pct = d->waves = d->tail_pct = d->warp_fill_pct = d->sm_share_pct = NAN;
    d->active_blocks = d->active_warps = d->active_sms = -1;
    if (o->has_result) {
        d->occupancy_pct = o->occ.occupancy_pct;
        d->active_blocks = o->occ.active_blocks_per_sm;
        d->active_warps = o->occ.active_warps_per_sm;
        wl_occ_limiters_text(o->occ.limiters, 0, d->limiter, sizeof d->limiter);
    }
    if (o->has_waves) {
        d->waves = o->waves.waves_per_sm;
        d->tail_pct = o->waves.tail_pct;
        d->active_sms = o->waves.active_sms;
        d->warp_fill_pct = o->warp_fill * 100;
        d->sm_share_pct = o->sm_share * 100;
    }
    d->smem_optin_assumed = o->smem_optin_assumed;
    snprintf(d->backend, sizeof d->backend, "%s", wl_kernel_backend(k->short_name, k->name, k->mangled));
}

WARPLENS_API int warplens_reader_kernels(warplens_reader *r, warplens_kernel_derived *rows, int max)
{
    if (!r || !rows || max <= 0)
        return -1;
    if (r->kernels_ended) {
        r->kernels_ended = 0;
        return 0;
    }
    if (!r->kernels) {
        r->kernels = wl_kernel_cursor_open(r->s, NULL, r->error, sizeof r->error);
        if (!r->kernels)
            return -1;
    }
    if (!r->occ) {
        r->occ = wl_occ_cache_new(r->s);
        if (!r->occ) {
            snprintf(r->error, sizeof r->error, "out of memory");
            return -1;
        }
    }
    int n = 0;
    while (n < max) {
        wl_kernel_row k;
        int rc = wl_kernel_cursor_next(r->kernels, &k);
        if (rc < 0) {
            if (!wl_session_read_failure(r->s, r->error, sizeof r->error))
                snprintf(r->error, sizeof r->error, "reading the kernels failed");
            return -1;
        }
        if (rc == 0) { /* the end: 0 from the next call, a new walk from the one after */
            wl_kernel_cursor_close(r->kernels);
            r->kernels = NULL;
            r->kernels_ended = n > 0;
            break;
        }
        wl_kernel_occ o;
        wl_occ_cache_kernel(r->occ, &k, &o);
        derive(&k, &o, &rows[n++]);
    }
    return n;
}
