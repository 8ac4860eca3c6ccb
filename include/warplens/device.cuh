/* warplens in-kernel tracing: device side. One leader thread per (block, group) lane records
 * begin / end / instant / finalize events into a zeroed global buffer in wire format v1
 * (docs/inkernel.md); `warplens decode` or the C decoder turns it into slices.
 *
 * Self-contained and NVRTC-safe: no includes, only builtins and inline PTX. Compile with
 * -DWARPLENS_INKERNEL=0 to remove every trace of it: the functions become empty (the SASS then has
 * no timer read, no store, no fence; tests/gpu/check_sass_disabled.sh checks it) and the macros
 * expand to nothing (their arguments are not evaluated).
 *
 *   __global__ void k(..., warplens_ik_args ik) {
 *       warplens_ik_lane lane;
 *       unsigned group = threadIdx.x / 128;                        // e.g. one warp group each
 *       warplens_ik_init(&lane, ik, group, threadIdx.x % 128 == 0); // leader: one thread per group
 *       WARPLENS_IK_BEGIN(lane, 1); ... WARPLENS_IK_END(lane, 1);  // or, in C++:
 *       { WARPLENS_IK_SCOPE(lane, 2); ... }
 *       WARPLENS_IK_FINALIZE(lane);
 *   }
 *
 * Device-side limits: a lane writes at most max_records records; one slot is kept for the
 * finalize and a begin is only written when its end (and the ends of the begins still open) will
 * fit, so a full lane still decodes as complete, finalized regions. Records that do not fit are
 * dropped and counted in counters[0]; event ids >= 1024, ends without an open begin and invalid
 * lanes are counted in counters[1]. A lane's counts are kept in registers and added to the
 * counters by its finalize (invalid lanes: at init). Nothing is ever written outside the lane's
 * slots. */
#ifndef WARPLENS_DEVICE_CUH
#define WARPLENS_DEVICE_CUH

#ifndef WARPLENS_INKERNEL
#define WARPLENS_INKERNEL 1
#endif

#define WARPLENS_IK_MAX_LANES (1u << 20)
#define WARPLENS_IK_MAX_EVENTS 1024u
#define WARPLENS_IK_TYPE_BEGIN 0u
#define WARPLENS_IK_TYPE_END 1u
#define WARPLENS_IK_TYPE_INSTANT 2u
#define WARPLENS_IK_TYPE_FINALIZE 3u
#define WARPLENS_IK_COUNTER_DROPPED 0 /* counters[0]: records that did not fit */
#define WARPLENS_IK_COUNTER_INVALID 1 /* counters[1]: bad event ids, lanes past 2^20 or stride */

#define WARPLENS_IK_D __device__ __forceinline__
#define WARPLENS_IK_HD __host__ __device__ __forceinline__

/* Launch arguments: pass by value to the kernel. */
typedef struct warplens_ik_args {
    unsigned long long *buf;   /* zeroed, warplens_ik_buffer_words() words; NULL disables */
    unsigned int *counters;    /* 2 zeroed counters (see above), or NULL */
    unsigned int num_groups;   /* groups per block */
    unsigned int stride;       /* slot stride; 0 = all lanes (blocks * num_groups) */
    unsigned int max_records;  /* per lane, finalize included */
} warplens_ik_args;

/* Per-thread state; lives in registers (plain scalars; the functions are force-inlined).
 * Slot accounting: `budget` counts the slots still free for new records once the ends of the
 * written, still open begins and the finalize have their slots reserved, so a begin needs 2 (itself
 * and its end), an instant 1, a matched end and the finalize none; it is kept in words (slots
 * times the stride). Open regions form a stack of `depth` levels: the bottom `wdepth` were written,
 * the ones above were dropped (once a begin is dropped the budget stays < 2 slots, so every later
 * begin is dropped too: written levels always sit below dropped ones). Misuse is counted in
 * registers; drops are not counted per event but derived by the finalize from `wanted` (a plain
 * add per event, independent of whether it was written) and the budget; both counts are added to
 * the global counters once, by the finalize. `warp` is non-zero in every thread of a warp that
 * holds a recording thread: the only branch on the hot path tests it, and it is warp-uniform, so
 * warps without a recorder skip the whole event (no fence) and the recorder's warp never
 * diverges. */
typedef struct warplens_ik_lane {
    unsigned long long *slot; /* next slot (global-space address); NULL when not recording */
    unsigned int *counters;
    unsigned int stride;      /* in words */
    unsigned int budget;      /* free slots times the stride (words) */
    unsigned int depth;       /* open begins, written or dropped */
    unsigned int wdepth;      /* of which written: levels 0 .. wdepth-1 */
    unsigned int tag;         /* lane << 12 */
    unsigned int wanted;      /* slots asked for minus the lane's capacity (mod 2^32): +2 per
                                 begin (it and its end), +1 per instant, written or not */
    unsigned int invalid;     /* bad event ids, ends without an open begin */
    unsigned int warp;        /* some thread of this warp records (warp-uniform) */
} warplens_ik_lane;

/* Words of buffer for a launch (1 header + stride * max_records). stride 0 = blocks * groups.
 * Returns 0, or -1 when the launch cannot be encoded (no lanes, more than 2^20 lanes, stride
 * smaller than the lanes, no records, size overflow). Callable from host and device code. */
WARPLENS_IK_HD int warplens_ik_buffer_words(unsigned long long num_blocks,
                                            unsigned long long num_groups,
                                            unsigned long long stride,
                                            unsigned long long max_records,
                                            unsigned long long *words)
{
    if (num_blocks == 0 || num_groups == 0 || max_records == 0)
        return -1;
    if (num_blocks > WARPLENS_IK_MAX_LANES || num_groups > WARPLENS_IK_MAX_LANES)
        return -1;
    unsigned long long lanes = num_blocks * num_groups;
    if (lanes > WARPLENS_IK_MAX_LANES)
        return -1;
    if (stride == 0)
        stride = lanes;
    if (stride < lanes || stride > 0xffffffffull || max_records > 0xffffffffull)
        return -1;
    unsigned long long body = stride * max_records;
    if (body > (~0ull) / 8 - 1)
        return -1;
    *words = 1 + body;
    return 0;
}

#if WARPLENS_INKERNEL

/* Low 32 bits of the global nanosecond timer. volatile + memory clobber: never merged, hoisted
 * or moved across the region's memory accesses. */
WARPLENS_IK_D unsigned int warplens_ik_timer(void)
{
    unsigned int t;
    asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(t) : : "memory");
    return t;
}

/* Fence of the wire format (membar.cta). SASS MEMBAR cannot be predicated, which is why the
 * record functions branch once, warp-uniformly, on `warp` instead of on the thread's own state. */
WARPLENS_IK_D void warplens_ik_fence_(void) { asm volatile("membar.cta;" : : : "memory"); }

/* Timer read and 64-bit record store {tag word, %globaltimer_lo} (little-endian: the timer in the
 * high half); the store is predicated on w (0/1). The read is not predicated: inside this block,
 * feeding the store, ptxas emits it as a per-thread CS2R (fixed latency) written straight into the
 * high register of the store's pair. (A predicated read costs a SEL after it, since PTX keeps the
 * old value where the predicate is false; an unpredicated read whose value looks warp-uniform to
 * ptxas, e.g. warplens_ik_timer() into a computed 64-bit word, becomes S2UR + MOV, which is
 * variable latency and was ~2x slower per event in bench_inkernel_cost.) A thread that does not
 * record only reads the timer. */
WARPLENS_IK_D void warplens_ik_put_(unsigned long long *slot, unsigned int low, unsigned int w)
{
    asm volatile("{\n\t.reg .pred p;\n\t.reg .b32 t;\n\t"
                 "setp.ne.b32 p, %2, 0;\n\t"
                 "mov.u32 t, %%globaltimer_lo;\n\t"
                 "@p st.global.v2.u32 [%0], {%1, t};\n\t}"
                 :
                 : "l"(slot), "r"(low), "r"(w)
                 : "memory");
}

WARPLENS_IK_D int warplens_ik_init_lane_(warplens_ik_lane *l, warplens_ik_args a,
                                         unsigned int group, int leader);

/* Every thread of the block may call it; only `leader` threads record afterwards. The leader of
 * lane 0 writes the header word. */
WARPLENS_IK_D void warplens_ik_init(warplens_ik_lane *l, warplens_ik_args a, unsigned int group,
                                    int leader)
{
    l->slot = 0;
    l->counters = a.counters;
    l->stride = 0;
    l->budget = 0;
    l->depth = 0;
    l->wdepth = 0;
    l->tag = 0;
    l->wanted = 0;
    l->invalid = 0;
    l->warp = 0;
    const int rec = warplens_ik_init_lane_(l, a, group, leader);
    /* warp-uniform "a thread of this warp records": threads that are not active here but call the
     * record functions later only cost themselves a skipped (or an extra) fence, never a record */
    l->warp = __any_sync(__activemask(), rec);
}

/* (the leader's part of warplens_ik_init) */
WARPLENS_IK_D int warplens_ik_init_lane_(warplens_ik_lane *l, warplens_ik_args a,
                                         unsigned int group, int leader)
{
    if (!leader || a.buf == 0)
        return 0;
    const unsigned int nblocks = gridDim.x * gridDim.y * gridDim.z;
    const unsigned int block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const unsigned long long lanes = (unsigned long long)nblocks * a.num_groups;
    const unsigned long long bg = (unsigned long long)block * a.num_groups + group;
    const unsigned long long stride = a.stride ? a.stride : lanes;
    if (group >= a.num_groups || lanes > WARPLENS_IK_MAX_LANES || stride < lanes ||
        a.max_records == 0) {
        if (a.counters)
            atomicAdd(a.counters + WARPLENS_IK_COUNTER_INVALID, 1u);
        return 0;
    }
    if (bg == 0)
        a.buf[0] = ((unsigned long long)a.num_groups << 32) | nblocks;
    unsigned long long *first = a.buf + 1 + bg, *g; /* st.global wants a global-space address */
    asm("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(first));
    l->slot = g;
    l->stride = (unsigned int)stride;
    /* The finalize's slot is reserved from the start. The budget is kept in words (slots times
     * the stride, so the slot step and the budget step share one select); a lane's slots are
     * therefore also limited to 2^32 words of its column: at most (2^32 - 1) / stride records. */
    unsigned int cap = a.max_records - 1;
    const unsigned int most = 0xffffffffu / (unsigned int)stride;
    if (cap > most)
        cap = most;
    l->budget = cap * (unsigned int)stride;
    l->wanted = 0u - cap;
    l->tag = (unsigned int)bg << 12;
    return 1;
}

/* The hot path, per event, in a warp that records: one warp-uniform branch on `warp` (not
 * taken; its predicate is loop-invariant), a predicate `w` from one compare, a CS2R timer read,
 * one predicated 64-bit STG, the MEMBAR (begin and end only), and register updates done as
 * arithmetic: one SEL (w ? stride : 0) feeds the slot (IMAD.WIDE) and the budget (IMAD), the
 * depths, and one add to `wanted` that does not wait for w. No atomics, no local memory, no
 * BSSY/BSYNC, no other branch. sm_90 SASS (nvcc 13.0, constant ids): a begin/end pair back to
 * back is 13 instructions in bench_inkernel_cost's loop (14 where ptxas copies the tag word to
 * another register pair), 27.88 cycles an event net on the H200
 * (the H100's SM); counting the budget in slots (a second SEL) and the drops per event (an add
 * behind the SEL) cost 29.38 (bench/results/inkernel_cost-h200.txt). Threads of a recording warp
 * that do not record (budget 0, wdepth 0) run the same instructions with the store predicated
 * off. */

/* begin: timestamp, then the store, then a block fence so the region's work comes after.
 * Written when the budget has room for it and its end; otherwise dropped (with its end). */
WARPLENS_IK_D void warplens_ik_begin(warplens_ik_lane *l, unsigned int event)
{
    if (!l->warp)
        return;
    if (event >= WARPLENS_IK_MAX_EVENTS) { /* folds away for a constant id */
        l->invalid++;
        return;
    }
    const unsigned int w = l->budget > l->stride; /* >= 2 slots: the budget is a multiple */
    const unsigned int ws = w ? l->stride : 0u;   /* one SEL for the slot and the budget */
    warplens_ik_put_(l->slot, l->tag | (event << 2) | WARPLENS_IK_TYPE_BEGIN, w);
    warplens_ik_fence_();
    l->slot += ws;
    l->budget -= 2u * ws;
    l->wdepth += w;
    l->wanted += 2u; /* unconditional: no dependency on w (the drops are derived at finalize) */
    l->depth++;
}

/* end: a block fence so the region's work comes first, then the timestamp and the store.
 * Written when the innermost open begin was written (its slot is reserved); the end of a dropped
 * begin is dropped; an end with no open begin is not written and counted as invalid. */
WARPLENS_IK_D void warplens_ik_end(warplens_ik_lane *l, unsigned int event)
{
    if (!l->warp)
        return;
    if (event >= WARPLENS_IK_MAX_EVENTS) {
        l->invalid++;
        return;
    }
    const unsigned int level = l->depth - 1u; /* 0xffffffff when nothing is open */
    const unsigned int w = level < l->wdepth;
    warplens_ik_fence_();
    warplens_ik_put_(l->slot, l->tag | (event << 2) | WARPLENS_IK_TYPE_END, w);
    l->slot += w * l->stride;
    l->invalid += level >> 31;                       /* an end without an open begin */
    l->depth = level < l->depth ? level : l->depth;  /* min: stays 0 when nothing was open */
    l->wdepth = l->wdepth < l->depth ? l->wdepth : l->depth;
}

/* instant: timestamp and store, no fence. */
WARPLENS_IK_D void warplens_ik_instant(warplens_ik_lane *l, unsigned int event)
{
    if (!l->warp)
        return;
    if (event >= WARPLENS_IK_MAX_EVENTS) {
        l->invalid++;
        return;
    }
    const unsigned int w = l->budget != 0u;
    const unsigned int ws = w ? l->stride : 0u;
    warplens_ik_put_(l->slot, l->tag | (event << 2) | WARPLENS_IK_TYPE_INSTANT, w);
    l->slot += ws;
    l->budget -= ws;
    l->wanted += 1u;
}

/* Marks the lane complete (its slot was reserved at init) and adds the lane's drop / misuse
 * counts to the global counters (one atomic each, only when non-zero); later records are dropped
 * and not counted. The counts of a lane that never finalizes are lost (its trace is incomplete
 * anyway: the decoder reports the lane as not finalized). */
WARPLENS_IK_D void warplens_ik_finalize(warplens_ik_lane *l)
{
    if (!l->slot)
        return;
    warplens_ik_fence_();
    warplens_ik_put_(l->slot, l->tag | WARPLENS_IK_TYPE_FINALIZE, 1u);
    /* Slots asked for but not used: wanted + capacity - (capacity - budget / stride), less the
     * ends the open begins never had (depth - wdepth of them were dropped begins counted with
     * their end): 2 per dropped begin and 1 per dropped instant, less dropped begins still open */
    const unsigned int dropped = l->wanted + l->budget / l->stride - (l->depth - l->wdepth);
    if (l->counters) {
        if (dropped)
            atomicAdd(l->counters + WARPLENS_IK_COUNTER_DROPPED, dropped);
        if (l->invalid)
            atomicAdd(l->counters + WARPLENS_IK_COUNTER_INVALID, l->invalid);
    }
    l->slot = 0;
    l->budget = 0;
    l->depth = 0;
    l->wdepth = 0;
    l->wanted = 0;
    l->invalid = 0;
}

#define WARPLENS_IK_INIT(lane, args, group, leader) warplens_ik_init(&(lane), (args), (group), (leader))
#define WARPLENS_IK_BEGIN(lane, event) warplens_ik_begin(&(lane), (event))
#define WARPLENS_IK_END(lane, event) warplens_ik_end(&(lane), (event))
#define WARPLENS_IK_INSTANT(lane, event) warplens_ik_instant(&(lane), (event))
#define WARPLENS_IK_FINALIZE(lane) warplens_ik_finalize(&(lane))

#else /* WARPLENS_INKERNEL == 0: compiled out */

WARPLENS_IK_D unsigned int warplens_ik_timer(void) { return 0; }
WARPLENS_IK_D void warplens_ik_init(warplens_ik_lane *l, warplens_ik_args a, unsigned int group,
                                    int leader)
{
    (void)l;
    (void)a;
    (void)group;
    (void)leader;
}
WARPLENS_IK_D void warplens_ik_begin(warplens_ik_lane *l, unsigned int e) { (void)l; (void)e; }
WARPLENS_IK_D void warplens_ik_end(warplens_ik_lane *l, unsigned int e) { (void)l; (void)e; }
WARPLENS_IK_D void warplens_ik_instant(warplens_ik_lane *l, unsigned int e) { (void)l; (void)e; }
WARPLENS_IK_D void warplens_ik_finalize(warplens_ik_lane *l) { (void)l; }

#define WARPLENS_IK_INIT(lane, args, group, leader) ((void)0)
#define WARPLENS_IK_BEGIN(lane, event) ((void)0)
#define WARPLENS_IK_END(lane, event) ((void)0)
#define WARPLENS_IK_INSTANT(lane, event) ((void)0)
#define WARPLENS_IK_FINALIZE(lane) ((void)0)

#endif /* WARPLENS_INKERNEL */

#ifdef __cplusplus
/* RAII region: begin in the constructor, end in the destructor (every exit of the scope). */
struct warplens_ik_scope {
    warplens_ik_lane *lane_;
    unsigned int event_;
    WARPLENS_IK_D warplens_ik_scope(warplens_ik_lane &lane, unsigned int event)
        : lane_(&lane), event_(event)
    {
        warplens_ik_begin(lane_, event_);
    }
    WARPLENS_IK_D ~warplens_ik_scope() { warplens_ik_end(lane_, event_); }
    warplens_ik_scope(const warplens_ik_scope &) = delete;
    warplens_ik_scope &operator=(const warplens_ik_scope &) = delete;
};
#define WARPLENS_IK_CAT2_(a, b) a##b
#define WARPLENS_IK_CAT_(a, b) WARPLENS_IK_CAT2_(a, b)
#if WARPLENS_INKERNEL
#define WARPLENS_IK_SCOPE(lane, event)                                                             \
    warplens_ik_scope WARPLENS_IK_CAT_(warplens_ik_scope_, __LINE__)((lane), (event))
#else
#define WARPLENS_IK_SCOPE(lane, event) ((void)0)
#endif
#endif /* __cplusplus */

#endif /* WARPLENS_DEVICE_CUH */
