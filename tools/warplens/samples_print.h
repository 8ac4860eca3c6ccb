/* NVML device samples in the terminal: one line per attributed sample (`warplens samples`, the
 * `warplens kernel` panel) and the per-device summary of `warplens stats`. */
#ifndef WARPLENS_TOOLS_SAMPLES_PRINT_H
#define WARPLENS_TOOLS_SAMPLES_PRINT_H

#include <stdint.h>

#include "analysis/device_samples.h"
#include "stats_print.h"

void samples_print_header(int csv);
/* origin_ns: times are printed relative to it (ms) */
void samples_print_row(const wl_sample_attribution *a, uint64_t origin_ns, int csv);
/* The device-sample table of `warplens stats`; prints nothing without samples. Returns the rows. */
int print_device_sample_table(wl_session *s, const stats_options *o);
/* The samples overlapping one kernel, for its panel; prints nothing without samples. */
void print_kernel_samples(wl_session *s, int64_t kernel_id);

#endif
