/* The block-size suggestion and the next occupancy step in the CLI (analysis/occupancy_suggest.h):
 * the text lines `warplens occupancy --suggest` and `warplens kernel --suggest` print, and the
 * fields `warplens occupancy --suggest --json` adds to its object. */
#ifndef WARPLENS_TOOLS_OCC_SUGGEST_PRINT_H
#define WARPLENS_TOOLS_OCC_SUGGEST_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/occupancy_suggest.h"

/* Everything one suggestion prints: the search, its answer and the launch's next step. */
typedef struct occ_advice {
    int block_size_limit;     /* the largest size searched (the device's maximum when none given) */
    wl_occ_smem_linear smem;  /* dynamic shared memory = fixed + per_thread x block size */
    wl_occ_suggestion s;
    wl_occ_kernel launch;     /* the launch the step is for */
    wl_occ_step step;
    wl_occ_result now;        /* the calculator's answer for that launch */
} occ_advice;

/* Runs the search (block_size_limit 0 = the device's maximum) and the next step of the launch
 * k at `block` threads (0 = at the suggested size, or at the smallest size searched when none
 * runs). Dynamic shared memory: smem->fixed + smem->per_thread x block size, or k->dynamic_smem
 * when smem is NULL. Returns the first invalid-input status, else WL_OCC_OK. */
wl_occ_status occ_advise(const wl_occ_device *d, const wl_occ_kernel *k, int block, int block_size_limit,
                         const wl_occ_smem_linear *smem, occ_advice *out);

/* Five lines, each starting with `indent`, at most 100 columns. */
void occ_advice_print(FILE *out, const wl_occ_device *d, const occ_advice *a, const char *indent);

/* ,"block_size_limit":..,"suggested_block_size":.. and the next-step fields (null = none). */
void occ_advice_json(FILE *out, const occ_advice *a);

#endif
