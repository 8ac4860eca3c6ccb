/* UTF-8 validity, shared by the writers whose formats require it (JSON strings, protobuf string
 * fields): session text is user data and may hold any bytes. */
#ifndef WARPLENS_EXPORT_UTF8_H
#define WARPLENS_EXPORT_UTF8_H

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if the bytes there are not one (a NUL
 * ends any sequence, so p may end at its terminator). */
static inline int wl_utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

#endif
