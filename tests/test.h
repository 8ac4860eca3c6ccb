/* A minimal test harness: CHECK records a failure with its location and keeps going; each test
 * program ends with test_report(), which prints "N passed, N failed" and returns the exit code. */
#ifndef WARPLENS_TEST_H
#define WARPLENS_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int test_passed_, test_failed_;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            test_passed_++;                                                                        \
        } else {                                                                                   \
            test_failed_++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ == b_) {                                                                            \
            test_passed_++;                                                                        \
        } else {                                                                                   \
            test_failed_++;                                                                        \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, \
                    a_, b_);                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ && b_ && strcmp(a_, b_) == 0) {                                                     \
            test_passed_++;                                                                        \
        } else {                                                                                   \
            test_failed_++;                                                                        \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a,  \
                    #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                   \
        }                                                                                          \
    } while (0)

static inline int test_report(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_passed_, test_failed_);
    return test_failed_ ? 1 : 0;
}

/* A deterministic xorshift64 stream for tests that need many varied values (*state != 0). */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* Shuffles v (n elements of elem bytes, elem <= 64) within consecutive blocks of `block`: no
 * element moves by more than block - 1 places (input disordered by a bounded amount). */
static inline void test_shuffle_blocks(void *v, size_t n, size_t elem, size_t block, uint64_t *state)
{
    unsigned char *p = (unsigned char *)v, tmp[64];
    for (size_t b = 0; block > 1 && elem <= sizeof tmp && b < n; b += block) {
        size_t len = n - b < block ? n - b : block;
        for (size_t i = len - 1; i > 0; i--) {
            size_t j = (size_t)(test_rand(state) % (i + 1));
            memcpy(tmp, p + (b + i) * elem, elem);
            memcpy(p + (b + i) * elem, p + (b + j) * elem, elem);
            memcpy(p + (b + j) * elem, tmp, elem);
        }
    }
}

#endif
