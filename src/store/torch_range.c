/* Parser of PyTorch's NVTX operator ranges (see torch_range.h). */
#include "store/torch_range.h"

#include <string.h>

enum { K_SEQ, K_STASHED, K_OP_ID, K_SIZES, K_INPUTS, N_KEYS };
static const char *const KEY[N_KEYS] = {", seq = ", ", stashed seq = ", ", op_id = ", ", sizes = ",
                                        ", input_op_ids = "};

static int key_at(const char *p, const char *end)
{
    for (int k = 0; k < N_KEYS; k++) {
        size_t n = strlen(KEY[k]);
        if ((size_t)(end - p) >= n && !memcmp(p, KEY[k], n))
            return k;
    }
    return -1;
}

/* A decimal integer (seq may be -1); returns the end, or NULL. */
static const char *number(const char *p, const char *end, int64_t *v)
{
    int neg = p < end && *p == '-';
    p += neg;
    const char *start = p;
    uint64_t x = 0;
    while (p < end && *p >= '0' && *p <= '9' && p - start < 19)
        x = x * 10 + (uint64_t)(*p++ - '0');
    if (p == start || (p < end && *p >= '0' && *p <= '9'))
        return NULL;
    *v = neg ? -(int64_t)x : (int64_t)x;
    return p;
}

/* A bracketed list of numbers, ", ", "(" ")" and nested lists: returns its end, or NULL. */
static const char *list(const char *p, const char *end)
{
    if (p >= end || *p != '[')
        return NULL;
    int depth = 0;
    for (; p < end; p++) {
        char c = *p;
        if (c == '[' && ++depth > 64)
            return NULL;
        if (c == ']' && --depth == 0)
            return p + 1;
        if (!(c == '[' || c == ']' || c == '(' || c == ')' || c == ',' || c == ' ' || c == '-' ||
              (c >= '0' && c <= '9')))
            return NULL;
    }
    return NULL;
}

int wl_torch_range_parse(const char *text, size_t len, wl_torch_range *out)
{
    if (!text)
        return 0;
    const char *end = text + len, *p = text;
    while (p < end && key_at(p, end) < 0)
        p++;
    if (p == end || p == text)
        return 0;
    wl_torch_range r = {text, (size_t)(p - text), NULL, 0, -1, -1};
    int seen = 0;
    while (p < end) {
        int k = key_at(p, end);
        if (k < 0 || (seen & (1 << k)))
            return 0;
        seen |= 1 << k;
        p += strlen(KEY[k]);
        const char *q;
        if (k == K_SIZES || k == K_INPUTS) {
            q = list(p, end);
            if (q && k == K_SIZES)
                r.shape = p, r.shape_len = (size_t)(q - p);
        } else {
            q = number(p, end, k == K_OP_ID ? &r.op_id : &r.seq);
        }
        if (!q)
            return 0;
        p = q;
    }
    *out = r;
    return 1;
}
