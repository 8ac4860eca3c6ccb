/* Printing `warplens advise` findings: the full text form, JSON, and the one-line form that
 * `warplens run`'s summary ends with. */
#ifndef WARPLENS_TOOLS_ADVISE_PRINT_H
#define WARPLENS_TOOLS_ADVISE_PRINT_H

#include <stdio.h>

#include "analysis/advise.h"

void advise_print_text(FILE *out, const wl_advise_result *r, int top);
void advise_print_json(FILE *out, const wl_advise_result *r, int top);
/* "  1. [gpu-idle-launch] GPU idle 41% ... (est. 12.3 ms, 38%)" for the first `top` findings that
 * have an estimated gain; nothing when there are none. */
void advise_print_oneline(FILE *out, const wl_advise_result *r, int top);

#endif
