/* libFuzzer harness for the capture-file reader: any byte string is either read record by record
 * or rejected with an error naming an offset inside the input — never an out-of-bounds read. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wlcap_reader r;
    memset(&r, 0, sizeof r);
    if (wlcap_reader_open_memory(&r, data, size) != 0)
        return 0;
    uint16_t type;
    const uint8_t *payload;
    uint32_t len;
    int n;
    while ((n = wlcap_reader_next(&r, &type, &payload, &len)) == 1) {
        if (payload < data || payload + len > data + size)
            abort();
        if (type != WLCAP_STRING && len < wlcap_payload_size(type))
            abort();
        if (type == WLCAP_STRING) {
            wlcap_string s;
            memcpy(&s, payload, sizeof s);
            if (s.len > len - sizeof s)
                abort();
        }
    }
    if (r.pos > size)
        abort();
    return 0;
}
