/* The store's reorder window (src/store/reorder.c): keys handed over in an order disturbed by up
 * to a given number of places come out sorted, equal keys in their arrival order, whether the
 * window stays a sorted run or turns into a heap; a key that arrives after a larger one left the
 * window is what the caller must detect as broken order. */
#include <stdio.h>
#include <stdlib.h>

#include "store/reorder.h"
#include "test.h"

static uint64_t rnd_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) { return test_rand(&rnd_state); }

/* admit's drain: pops the earliest into *out (as a walk passes it on) and gives its slot back */
typedef struct drained {
    wl_reorder *r;
    int calls, stop;
    wl_reorder_item last;
} drained;
static int drain(void *arg)
{
    drained *d = arg;
    d->calls++;
    if (wl_reorder_pop(d->r, &d->last))
        wl_reorder_release(d->r, (uint32_t)d->last.val);
    return d->stop;
}

/* n keys from a slowly rising clock with many ties, shuffled within blocks of `disorder`; the
 * window of `cap` must give them back sorted and stable. Returns 1 when it went to a heap. */
static int run(size_t n, size_t disorder, size_t cap)
{
    uint64_t *key = malloc((n ? n : 1) * sizeof *key);
    uint64_t t = 1000;
    for (size_t i = 0; i < n; i++) {
        t += rnd() % 4; /* a quarter of the keys equal their predecessor */
        key[i] = t;
    }
    test_shuffle_blocks(key, n, sizeof *key, disorder, &rnd_state);
    wl_reorder r;
    CHECK(wl_reorder_init(&r, cap) == 0); /* init */
    size_t out = 0, bad = 0;
    wl_reorder_item it, prev = {0, 0, 0};
    for (size_t i = 0; i <= n; i++) {
        while ((i == n && r.n) || (i < n && wl_reorder_full(&r))) {
            if (wl_reorder_pop(&r, &it) != 1) { /* a full window pops */
                bad++;
                break;
            }
            /* sorted by key, equal keys by arrival (val holds the arrival index) */
            if (out && (it.key < prev.key || (it.key == prev.key && it.val < prev.val)))
                bad++;
            bad += it.key != key[it.val]; /* each item carries its own key */
            prev = it;
            out++;
        }
        if (i < n)
            wl_reorder_push(&r, key[i], i);
    }
    CHECK(wl_reorder_pop(&r, &it) == 0); /* empty at the end */
    CHECK_EQ_INT(out, n);
    CHECK_EQ_INT(bad, 0); /* none out of order */
    int heap = r.is_heap;
    wl_reorder_free(&r);
    free(key);
    return heap;
}

int main(void)
{
    CHECK(run(0, 0, 8) == 0); /* empty: a sorted run */
    CHECK(run(1, 0, 8) == 0); /* one key: a sorted run */
    CHECK(run(100000, 0, 64) == 0); /* sorted keys: a sorted run */
    CHECK(run(100000, 16, 64) == 0); /* a little disorder: still a sorted run */
    CHECK(run(100000, 4096, 4096) == 1); /* disorder as large as the window: a heap */
    run(100000, 64, 64);
    run(3, 3, 2);

    /* order broken beyond the window: a key below the last popped, which the caller detects */
    wl_reorder r;
    CHECK(wl_reorder_init(&r, 4) == 0); /* init */
    wl_reorder_item it;
    uint64_t last = 0;
    int broken = 0;
    uint64_t keys[] = {10, 11, 12, 13, 14, 15, 5};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        CHECK_EQ_INT(wl_reorder_late(&r, keys[i]), keys[i] < last); /* the window's own check agrees */
        if (keys[i] < last)
            broken = 1;
        if (wl_reorder_full(&r) && wl_reorder_pop(&r, &it))
            last = it.key;
        wl_reorder_push(&r, keys[i], i);
    }
    CHECK(broken && last == 12); /* 5 after 10 and 11 left a window of 4: broken */
    wl_reorder_free(&r);
    CHECK(wl_reorder_init(&r, 0) == -1); /* a window of 0 is refused */

    /* the slot pool: each slot once while the window fills, given back ones come again */
    CHECK(wl_reorder_init_slots(&r, 3) == 0);
    uint32_t a = wl_reorder_slot(&r), b = wl_reorder_slot(&r), c = wl_reorder_slot(&r);
    CHECK(a != b && b != c && a != c && a < 3 && b < 3 && c < 3);
    wl_reorder_release(&r, b);
    CHECK_EQ_INT(wl_reorder_slot(&r), b);
    wl_reorder_free(&r);

    /* admit: the drain only when full, the late check after it (the pop moves the bound) */
    CHECK(wl_reorder_init_slots(&r, 2) == 0);
    drained d = {&r, 0, 0, {0, 0, 0}};
    uint32_t s1, s2, s3;
    CHECK_EQ_INT(wl_reorder_admit(&r, 20, drain, &d, &s1), 0);
    wl_reorder_push(&r, 20, s1);
    CHECK_EQ_INT(wl_reorder_admit(&r, 10, drain, &d, &s2), 0);
    wl_reorder_push(&r, 10, s2);
    CHECK_EQ_INT(d.calls, 0);
    CHECK_EQ_INT(wl_reorder_admit(&r, 15, drain, &d, &s3), 0); /* full: 10 leaves, 15 is not late */
    CHECK_EQ_INT(d.calls, 1);
    CHECK_EQ_INT((int)d.last.key, 10);
    CHECK_EQ_INT(s3, s2); /* the slot 10 gave back */
    wl_reorder_push(&r, 15, s3);
    CHECK_EQ_INT(wl_reorder_admit(&r, 12, drain, &d, &s3), -1); /* full: 15 leaves, 12 is too late */
    CHECK_EQ_INT(d.calls, 2);
    CHECK_EQ_INT(wl_reorder_admit(&r, 25, drain, &d, &s3), 0); /* 20 alone: room, no drain */
    CHECK_EQ_INT(d.calls, 2);
    wl_reorder_push(&r, 25, s3);
    d.stop = 1;
    CHECK_EQ_INT(wl_reorder_admit(&r, 30, drain, &d, &s3), 1); /* full, and the drain says stop */
    wl_reorder_free(&r);

    return test_report("test_reorder");
}
