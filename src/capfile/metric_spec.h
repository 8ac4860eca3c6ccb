/* Hardware metrics (`warplens run --metrics`): the named presets, the catalog of metrics warplens
 * knows how to aggregate, and the "close names" helper for misspelt names. Shared by the CLI (which
 * expands presets before the run), the recorder (which checks names against the GPU's own list)
 * and the analysis layer (which aggregates ranges from summed counters). Pure C, no CUDA. */
#ifndef WARPLENS_CAPFILE_METRIC_SPEC_H
#define WARPLENS_CAPFILE_METRIC_SPEC_H

#include <stddef.h>

#define WL_METRICS_MAX 64      /* metrics in one configuration */
#define WL_METRIC_NAME_MAX 128 /* bytes of one CUPTI metric name, terminator included */

/* The metric every configuration carries: the kernel's GPU time, the weight of last resort. */
#define WL_METRIC_GPU_TIME "gpu__time_duration.sum"

/* How a metric of many kernels is combined. SUM: a counter, added. RATIO: value = num/den per
 * kernel, combined as sum(value*den)/sum(den) = sum(num)/sum(den), the ratio of the summed raw
 * counters; den is the sum of the named denominator metrics (collected with it). */
typedef struct wl_metric_rule {
    const char *name;
    const char *label;   /* short column name */
    const char *den[2];  /* RATIO denominators (NULL: a counter) */
} wl_metric_rule;

/* The catalog entry for a name, NULL if warplens has none (such a metric, if not a .sum counter,
 * is combined weighted by GPU time). */
const wl_metric_rule *wl_metric_rule_find(const char *name);
const char *wl_metric_label(const char *name); /* catalog label, else the name itself */

/* Expands "default", "memory,compute", "dram__bytes_read.sum,occupancy" ... into CUPTI metric
 * names: presets expanded, gpu__time_duration.sum and the denominators of catalog ratios added,
 * duplicates removed. Words without "__" are presets. Returns the count, or -1 with a one-line
 * message in err (an unknown preset lists the close names and the presets). */
/* A metric name: letters, digits, '_' and '.', shorter than WL_METRIC_NAME_MAX. */
int wl_metric_name_valid(const char *s, size_t n);
/* Appends name[0..len) to names unless it is there already; with from_preset, marks where the name
 * came from (a name the user gave clears a preset's mark). -1 with "too many <what> (at most max)". */
int wl_metric_list_add(char names[][WL_METRIC_NAME_MAX], int *from_preset, int *n, int max, const char *name,
                       size_t len, int preset, const char *what, char *err, size_t err_size);
int wl_metrics_expand(const char *spec, char names[][WL_METRIC_NAME_MAX], int max, char *err, size_t err_size);

/* The preset names, NULL-terminated. */
extern const char *const WL_METRIC_PRESETS[];

/* Levenshtein distance, capped at `cap` (returns cap when it is at least cap). */
int wl_edit_distance(const char *a, const char *b, int cap);

/* Writes up to `max` candidates closest to `want` into out (indices into cands), best first: those
 * within an edit distance of max(2, len/4), or sharing its first part (before "__"). Returns how many. */
int wl_close_names(const char *want, const char *const *cands, size_t ncands, size_t *out, int max);

#endif
