/* `warplens kernels <session> --calls`: one row per launch, in launch order, with the launch's
 * theoretical occupancy, waves and fill share (streams the session: constant memory); --json adds
 * its identity (backend, operation, shape, tier, application thread). */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/kernel_backend.h"
#include "cli_session.h"
#include "analysis/kernel_occupancy.h"
#include "format.h"
#include "kernel_format.h"
#include "store/session_kernels.h"

int kernels_calls(wl_session *s, int csv, int json, long long top);

static void print_one(const wl_kernel_row *r, const wl_kernel_occ *o, int csv, int json, int first)
{
    char g[48], b[48], lim[96];
    int occ = o->has_result;
    wl_occ_limiters_text(o->occ.limiters, 0, lim, sizeof lim);
    if (json) {
        printf("%s\n{\"id\":%lld,\"name_id\":%lld,\"pid\":%u,\"device_id\":%u,\"stream_id\":%u,\"start_ns\":%" PRIu64
               ",\"duration_ns\":",
               first ? "" : ",", (long long)r->id, (long long)r->name_id, r->pid, r->device_id, r->stream_id,
               r->start_ns);
        if (r->duration_ns >= 0)
            printf("%lld", (long long)r->duration_ns);
        else
            printf("null");
        printf(",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"registers\":%d,\"static_smem\":%lld,"
               "\"dynamic_smem\":%lld,\"smem_executed\":%lld",
               r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->registers_per_thread,
               (long long)r->static_smem, (long long)r->dynamic_smem, (long long)r->smem_executed);
        if (occ) {
            printf(",\"occupancy_pct\":%.2f,\"limiter\":", o->occ.occupancy_pct);
            kf_json_str(stdout, lim);
            printf(",\"active_blocks\":%d", o->occ.active_blocks_per_sm);
        } else {
            printf(",\"occupancy_pct\":null,\"limiter\":null,\"active_blocks\":null");
        }
        if (o->has_waves)
            printf(",\"waves\":%.4f,\"tail_pct\":%.2f,\"active_sms\":%d,\"warp_fill_pct\":%.2f,\"sm_share_pct\":%.2f",
                   o->waves.waves_per_sm, o->waves.tail_pct, o->waves.active_sms, o->warp_fill * 100,
                   o->sm_share * 100);
        else
            printf(",\"waves\":null");
        printf(",\"queue_delay_ns\":%lld,\"submit_delay_ns\":%lld,\"launch_ns\":%lld,\"backend\":",
               (long long)r->queue_delay_ns, (long long)r->submit_delay_ns, (long long)r->api_duration_ns);
        kf_json_str(stdout, wl_kernel_backend(r->short_name, r->name, r->mangled));
        const char *ident[][2] = {{"operation", r->operation}, {"shape", r->shape}, {"tier", r->tier}};
        for (int i = 0; i < 3; i++) { /* identity, null when none */
            printf(",\"%s\":", ident[i][0]);
            if (ident[i][1][0])
                kf_json_str(stdout, ident[i][1]);
            else
                printf("null");
        }
        printf(",\"app_thread_id\":%lld,\"name\":", (long long)r->app_thread);
        kf_json_str(stdout, r->name);
        printf("}");
        return;
    }
    if (csv) {
        printf("%lld,%lld,%u,%u,%u,%" PRIu64 ",%lld,%s,%s,%d,%lld,%lld,%lld,", (long long)r->id, (long long)r->name_id,
               r->pid, r->device_id, r->stream_id, r->start_ns, (long long)r->duration_ns,
               kf_dim3(r->grid, 0, g, sizeof g), kf_dim3(r->block, 0, b, sizeof b), r->registers_per_thread,
               (long long)r->static_smem, (long long)r->dynamic_smem, (long long)r->smem_executed);
        if (occ)
            printf("%.2f,%s,%d,", o->occ.occupancy_pct, lim, o->occ.active_blocks_per_sm);
        else
            printf(",,,");
        if (o->has_waves)
            printf("%.4f,%.2f,%d,%.2f,%.2f,", o->waves.waves_per_sm, o->waves.tail_pct, o->waves.active_sms,
                   o->warp_fill * 100, o->sm_share * 100);
        else
            printf(",,,,,");
        printf("%lld,%lld,%lld,", (long long)r->queue_delay_ns, (long long)r->submit_delay_ns,
               (long long)r->api_duration_ns);
        kf_csv_str(stdout, r->name);
        putchar('\n');
        return;
    }
    char d[32], occs[16], wv[16], nm[40];
    snprintf(occs, sizeof occs, occ ? "%.1f" : "-", o->occ.occupancy_pct);
    snprintf(wv, sizeof wv, o->has_waves ? "%.2f" : "-", o->waves.waves_per_sm);
    printf("%7lld %6u %9s %9s %8s %4d %5s %-11.11s %6s  %s\n", (long long)r->id, r->stream_id,
           r->duration_ns >= 0 ? fmt_ns((double)r->duration_ns, d, sizeof d) : "-", kf_dim3(r->grid, 1, g, sizeof g),
           kf_dim3(r->block, 1, b, sizeof b), r->registers_per_thread, occs,
           occ ? wl_occ_limiters_text(o->occ.limiters, 1, lim, sizeof lim) : "-", wv,
           kf_shorten(kf_display_name(r->name), 24, nm, sizeof nm));
}

int kernels_calls(wl_session *s, int csv, int json, long long top)
{
    char err[256];
    wl_kernel_cursor *c = wl_kernel_cursor_open(s, NULL, err, sizeof err);
    wl_occ_cache *cache = wl_occ_cache_new(s);
    if (!c || !cache) {
        cli_read_error(s, "warplens kernels: %s\n", c ? "out of memory" : err);
        wl_kernel_cursor_close(c);
        wl_occ_cache_free(cache);
        return 1;
    }
    if (csv)
        printf("id,name_id,pid,device_id,stream_id,start_ns,duration_ns,grid,block,registers,static_smem,"
               "dynamic_smem,smem_executed,occupancy_pct,limiter,active_blocks,waves,tail_pct,active_sms,"
               "warp_fill_pct,sm_share_pct,queue_delay_ns,submit_delay_ns,launch_ns,name\n");
    else if (json)
        printf("[");
    else
        printf("%7s %6s %9s %9s %8s %4s %5s %-11s %6s  %s\n", "Id", "Stream", "Duration", "Grid", "Block", "Regs",
               "Occ%", "Limiter", "Waves", "Name (theoretical occ.)");
    wl_kernel_row r;
    long long n = 0;
    int rc;
    while ((top <= 0 || n < top) && (rc = wl_kernel_cursor_next(c, &r)) == 1) {
        wl_kernel_occ o;
        wl_occ_cache_kernel(cache, &r, &o);
        print_one(&r, &o, csv, json, n == 0);
        n++;
    }
    if (json)
        printf("\n]\n");
    wl_kernel_cursor_close(c);
    wl_occ_cache_free(cache);
    return 0;
}
