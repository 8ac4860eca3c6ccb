/* PyTorch's operator ranges: under torch.autograd.profiler.emit_nvtx(record_shapes=True) every
 * operator call (and every record_function block) pushes an NVTX range named
 *     NAME[, seq = N][, op_id = N][, sizes = [[d, d], [], ...]][, input_op_ids = [(op,out), ...]]
 * (torch/csrc/profiler/util.cpp, getNvtxStr: seq is autograd's sequence number, absent for -1;
 * older releases wrote "stashed seq = N" on backward functions; sizes lists each input's shape,
 * [] for a non-tensor input, as torch.profiler's key_averages prints them). This parser reads
 * that text; an ordinary NVTX range (torch.cuda.nvtx.range_push("step"), anything else) is not
 * an operator range. The text is untrusted (any bytes): every part is checked and the parts must
 * run to the end of the text. */
#ifndef WARPLENS_STORE_TORCH_RANGE_H
#define WARPLENS_STORE_TORCH_RANGE_H

#include <stddef.h>
#include <stdint.h>

typedef struct wl_torch_range {
    const char *name;   /* the operator: "aten::addmm", "AddmmBackward0", a record_function label */
    size_t name_len;
    const char *shape;  /* the sizes list "[[128, 256], [256]]" as written; NULL without one */
    size_t shape_len;
    int64_t seq, op_id; /* -1 when absent */
} wl_torch_range;

/* 1 when text (len bytes) is an operator range, with *out pointing into text; 0 otherwise. */
int wl_torch_range_parse(const char *text, size_t len, wl_torch_range *out);

#endif
