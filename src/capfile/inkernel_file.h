/* In-kernel buffer side files (<pid>.<correlation id>.wlik): one device.cuh buffer that a program
 * registered with warplens_inkernel_next_launch() and collected with warplens_inkernel_collect(),
 * with what the importer needs to put its lanes under the kernel (docs/capture-format.md):
 *
 *   header (128 bytes, below) | event names (events_len bytes, comma-separated) |
 *   group names (groups_len bytes) | zero padding to a multiple of 8 | words (n_words x u64 LE)
 *
 * The recorder writes it from the collecting thread (an explicit, cold call) through a temporary
 * name, so a reader only ever sees whole files. The reader treats the file as hostile. */
#ifndef WARPLENS_CAPFILE_INKERNEL_FILE_H
#define WARPLENS_CAPFILE_INKERNEL_FILE_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WLIK_MAGIC "WLIKBUF1"
#define WLIK_MAGIC_LEN 8
#define WLIK_VERSION 1u
#define WLIK_MAX_NAMES_LEN 65536u            /* per list: far above 1024 names of 64 bytes */
#define WLIK_MAX_WORDS (1ull << 31)          /* 16 GiB of records: beyond any real buffer */

enum wlik_calibration_status {
    WLIK_CALIB_NONE = 0,    /* not attempted (no calibration asked for) */
    WLIK_CALIB_OK = 1,      /* realtime_minus_globaltimer_ns is measured */
    WLIK_CALIB_FAILED = 2,  /* attempted and failed: the importer falls back to the kernel window */
    WLIK_CALIB_CUPTI = 3,   /* measured against CUPTI's records of calibration kernels: the offset is
                             * CUPTI clock - %globaltimer (common/clock_fit.h) */
};

enum wlik_graph_flags {
    WLIK_GRAPH_LAUNCH = 1u,        /* the correlation id is a graph launch's */
    WLIK_GRAPH_NODE_ORIGINAL = 2u, /* no copy of the node was seen at instantiation: the original's id */
};

typedef struct wlik_header {
    char magic[WLIK_MAGIC_LEN];
    uint32_t version;
    uint32_t header_size;          /* sizeof(wlik_header) of the writer; >= ours */
    uint64_t pid;
    uint32_t correlation_id;       /* of the launch the buffer was registered for */
    uint32_t device_id;            /* CUDA device ordinal of the launch's context */
    uint64_t n_words;              /* words that follow (the whole device buffer) */
    uint64_t stride;               /* slot spacing the kernel used; 0 = unknown */
    uint32_t max_records;          /* per-lane record limit; 0 = unlimited */
    uint32_t calibration;          /* enum wlik_calibration_status */
    int64_t realtime_minus_globaltimer_ns;
    uint64_t calibration_uncertainty_ns;
    uint64_t collected_ns;         /* CLOCK_REALTIME when the buffer was copied */
    uint32_t counters_valid;       /* 1 when the device counters below were copied */
    uint32_t dropped_on_device;    /* counters[0] of device.cuh: records that did not fit */
    uint32_t invalid_on_device;    /* counters[1]: bad ids, lanes past the limits */
    uint32_t events_len, groups_len;
    /* added in place of reserved words (zero in older files: no drift, no graph node) */
    uint32_t calibration_samples;  /* CUPTI: calibration kernels whose records bound the offset */
    uint64_t calibration_at_ns;    /* the CUPTI time the offset was measured at (0: unknown) */
    int32_t drift_ppb;             /* offset change per second: between the early and main calibrations of
                                    * the collect (they bracket the kernel), else since the previous one */
    uint32_t graph_launch;         /* WLIK_GRAPH_*: registered for a graph launch (graph_node_id picks
                                    * the kernel among the launch's) */
    uint64_t graph_node_id;        /* CUPTI's id of the graph kernel node (cuptiGetGraphNodeId) */
} wlik_header;
static_assert(sizeof(wlik_header) == 128, "wlik header layout");

/* Byte offset of the first word for a header. */
uint64_t wlik_words_offset(const wlik_header *h);

/* Writing (the recorder): header and names, then the words in any number of chunks. */
int wlik_write_header(FILE *fp, const wlik_header *h, const char *events, const char *groups);

/* Reading: the whole file into memory, validated. On success *out owns `data` (free with
 * wlik_file_free) and words points into it (8-byte aligned). On failure err names the problem and
 * the byte offset where it was found. */
typedef struct wlik_file {
    wlik_header header;
    char *events;                  /* NUL-terminated copies (empty when absent) */
    char *groups;
    const uint64_t *words;
    size_t n_words;
    void *data;
} wlik_file;
int wlik_read(const char *path, wlik_file *out, char *err, size_t err_size);
/* The same over a memory image (fuzzing, tests); the image is copied. */
int wlik_parse(const void *bytes, size_t size, wlik_file *out, char *err, size_t err_size);
void wlik_file_free(wlik_file *f);

#endif
