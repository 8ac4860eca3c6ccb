/* A minimal test harness: CHECK records a failure with its location and keeps going; each test
 * program ends with test_report(), which prints "N passed, N failed" and returns the exit code. */
#ifndef WARPLENS_TEST_H
#define WARPLENS_TEST_H

#include <inttypes.h>
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

#endif
