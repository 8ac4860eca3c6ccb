/* libFuzzer harness for PyTorch's NVTX range text (store/torch_range.c), which the importer reads
 * from any session's NVTX ranges: any byte string is either an operator range whose name and
 * shape lie inside the input (the shape a balanced bracket list) or not one - never a read past
 * the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "store/torch_range.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    wl_torch_range r;
    if (!wl_torch_range_parse(text, size, &r))
        return 0;
    if (r.name != text || r.name_len == 0 || r.name_len >= size)
        abort();
    if (r.shape) {
        if (r.shape < text || r.shape + r.shape_len > text + size || r.shape_len < 2)
            abort();
        if (r.shape[0] != '[' || r.shape[r.shape_len - 1] != ']')
            abort();
        int depth = 0;
        for (size_t i = 0; i < r.shape_len; i++) {
            depth += r.shape[i] == '[' ? 1 : r.shape[i] == ']' ? -1 : 0;
            if (depth < 0 || (depth == 0 && i + 1 < r.shape_len))
                abort();
        }
    }
    return 0;
}
