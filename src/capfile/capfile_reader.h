/* Reading capture files. The input is treated as hostile: every size is checked against the bytes
 * that are really there, and errors name the byte offset of the offending record. A record cut
 * off at the end of the file (the process died while writing) is not an error: the reader stops
 * there and reports it as a truncated tail. */
#ifndef WARPLENS_CAPFILE_READER_H
#define WARPLENS_CAPFILE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "capfile/capfile.h"

typedef struct wlcap_reader {
    const uint8_t *data;
    size_t size;
    size_t pos;
    int mapped;              /* data is an mmap of a file, unmapped by close */
    wlcap_file_header header;
    int truncated_tail;      /* the last record was cut off */
    uint64_t unknown_records;/* records of types this reader does not know (skipped) */
    char error[256];
} wlcap_reader;

/* Both return 0, or -1 with r->error set (not a capture file, unsupported version, I/O). */
int wlcap_reader_open_memory(wlcap_reader *r, const void *data, size_t size);
int wlcap_reader_open_file(wlcap_reader *r, const char *path);
void wlcap_reader_close(wlcap_reader *r);

/* Next known record: returns 1 and sets type, payload, size; 0 at the end (clean or truncated);
 * -1 on a malformed record with r->error naming its offset. STRING payloads are validated
 * (len fits). Fixed records are at least their documented size. */
int wlcap_reader_next(wlcap_reader *r, uint16_t *type, const uint8_t **payload, uint32_t *size);

#endif
