/* The timeline's table of flows in flight (src/export/timeline_flows.c): ids added and taken
 * with up to a million in flight, in three shapes: consecutive row ids (a session's: each at its
 * own slot; also with the three kinds of work interleaved), ids spaced by 2^24 (a damaged session's: they collide until the table switches to a
 * hash) and scattered ids; every taken id gives back its value once, absent ids are not found,
 * and the table ends empty. */
#include <stdint.h>
#include <stdio.h>

#include "export/timeline_internal.h"
#include "test.h"

static uint64_t id_of(uint64_t i, int shape)
{
    if (shape == 3) /* the three kinds of work interleaved: each in its own table */
        return i * 4 + 1 + i % 3;
    return shape == 0 ? i * 4 + 1 : shape == 1 ? i * (4ull << 24) + 1 : (i * 0x9E3779B97F4A7C15ull) | 1;
}

static void run(uint64_t n, uint64_t in_flight, int shape)
{
    tl_flows f = {0};
    uint64_t v, missing = 0, wrong = 0, found_absent = 0, added = 0;
    for (uint64_t i = 1; i <= n + in_flight; i++) {
        if (i <= n) {
            added += tl_flows_add(&f, id_of(i, shape), i * 10) == 0;
            tl_flows_add(&f, id_of(i, shape), 7); /* a second add keeps the first value */
        }
        if (i > in_flight) {
            uint64_t k = i - in_flight;
            if (!tl_flows_take(&f, id_of(k, shape), &v))
                missing++;
            else
                wrong += v != k * 10;
        }
        if (i % 5 == 0) /* an id never added (odd: like a real one, 3 mod 4 is not a kind) */
            found_absent += tl_flows_take(&f, (n + 12345678) * 4 + 3, &v);
    }
    CHECK_EQ_INT(added, n);
    CHECK_EQ_INT(missing, 0);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(found_absent, 0);
    CHECK_EQ_INT(tl_flows_count(&f), 0);
    CHECK_EQ_INT(tl_flows_take(&f, id_of(1, shape), &v), 0); /* taken once only */
    if (shape == 1 && in_flight >= 1000)
        CHECK(tl_flows_hashed(&f)); /* the colliding ids made it switch to the hash */
    if (shape == 0 || shape == 3)
        CHECK(!tl_flows_hashed(&f));
    tl_flows_free(&f);
}

int main(void)
{
    for (int shape = 0; shape < 4; shape++) {
        run(200000, 1, shape);
        run(200000, 1000, shape);
        run(400000, 300000, shape);
    }
    return test_report("test_timeline_flows");
}
