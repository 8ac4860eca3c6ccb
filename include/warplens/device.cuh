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
 * dropped and counted in counters[0]; event ids >= 1024 and invalid lanes are counted in
 * counters[1]. Nothing is ever written outside the lane's slots. */
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

/* Per-leader state; lives in registers. Slot accounting: `budget` counts the slots still free
 * for new records once the ends of the open begins and the finalize have their slots reserved,
 * so a begin needs 2 (itself and its end), an instant 1, a matched end and the finalize none. */
typedef struct warplens_ik_lane {
    unsigned long long *slot;  /* next slot, NULL when this thread does not record */
    unsigned int *counters;
    unsigned int stride;
    unsigned int budget;
    unsigned int open;         /* begins written whose end is not */
    unsigned int dropped_open; /* begins dropped: their ends are dropped too (LIFO) */
    unsigned int tag;          /* lane << 12 */
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

/* Slow path of every record that is not written: counted when this thread is a recorder. */
WARPLENS_IK_D void warplens_ik_count_(const warplens_ik_lane *l, int which)
{
    if (l->slot && l->counters)
        atomicAdd(l->counters + which, 1u);
}

WARPLENS_IK_D void warplens_ik_put_(warplens_ik_lane *l, unsigned int t, unsigned int low)
{
    *l->slot = ((unsigned long long)t << 32) | (unsigned long long)(l->tag | low);
    l->slot += l->stride;
}

/* Every thread of the block may call it; only `leader` threads record afterwards. The leader of
 * lane 0 writes the header word. */
WARPLENS_IK_D void warplens_ik_init(warplens_ik_lane *l, warplens_ik_args a, unsigned int group,
                                    int leader)
{
    l->slot = 0;
    l->counters = a.counters;
    l->stride = 0;
    l->budget = 0;
    l->open = 0;
    l->dropped_open = 0;
    l->tag = 0;
    if (!leader || a.buf == 0)
        return;
    const unsigned int nblocks = gridDim.x * gridDim.y * gridDim.z;
    const unsigned int block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const unsigned long long lanes = (unsigned long long)nblocks * a.num_groups;
    const unsigned long long bg = (unsigned long long)block * a.num_groups + group;
    const unsigned long long stride = a.stride ? a.stride : lanes;
    if (group >= a.num_groups || lanes > WARPLENS_IK_MAX_LANES || stride < lanes ||
        a.max_records == 0) {
        if (a.counters)
            atomicAdd(a.counters + WARPLENS_IK_COUNTER_INVALID, 1u);
        return;
    }
    if (bg == 0)
        a.buf[0] = ((unsigned long long)a.num_groups << 32) | nblocks;
    l->slot = a.buf + 1 + bg;
    l->stride = (unsigned int)stride;
    l->budget = a.max_records - 1; /* the finalize's slot is reserved from the start */
    l->tag = (unsigned int)bg << 12;
}

/* begin: timestamp, then the store, then a block fence so the region's work comes after. */
WARPLENS_IK_D void warplens_ik_begin(warplens_ik_lane *l, unsigned int event)
{
    if (event < WARPLENS_IK_MAX_EVENTS && l->budget >= 2u) {
        unsigned int t = warplens_ik_timer();
        warplens_ik_put_(l, t, (event << 2) | WARPLENS_IK_TYPE_BEGIN);
        l->budget -= 2u;
        l->open++;
        __threadfence_block();
    } else if (event >= WARPLENS_IK_MAX_EVENTS) {
        warplens_ik_count_(l, WARPLENS_IK_COUNTER_INVALID);
    } else if (l->slot) {
        /* the budget never grows back, so every begin until this one's end is dropped too */
        l->dropped_open++;
        warplens_ik_count_(l, WARPLENS_IK_COUNTER_DROPPED);
    }
}

/* end: a block fence so the region's work comes first, then the timestamp and the store. */
WARPLENS_IK_D void warplens_ik_end(warplens_ik_lane *l, unsigned int event)
{
    if (event >= WARPLENS_IK_MAX_EVENTS) {
        warplens_ik_count_(l, WARPLENS_IK_COUNTER_INVALID);
        return;
    }
    if (l->dropped_open == 0 && l->open != 0) { /* its slot was reserved by the begin */
        l->open--;
    } else if (l->dropped_open) {
        l->dropped_open--;
        warplens_ik_count_(l, WARPLENS_IK_COUNTER_DROPPED);
        return;
    } else if (l->budget >= 1u) { /* an end without a begin: written, the decoder reports it */
        l->budget--;
    } else {
        warplens_ik_count_(l, WARPLENS_IK_COUNTER_DROPPED);
        return;
    }
    /* (open or budget > 0 only ever happens on a recording thread: slot is set) */
    __threadfence_block();
    unsigned int t = warplens_ik_timer();
    warplens_ik_put_(l, t, (event << 2) | WARPLENS_IK_TYPE_END);
}

WARPLENS_IK_D void warplens_ik_instant(warplens_ik_lane *l, unsigned int event)
{
    if (event < WARPLENS_IK_MAX_EVENTS && l->budget >= 1u) {
        unsigned int t = warplens_ik_timer();
        warplens_ik_put_(l, t, (event << 2) | WARPLENS_IK_TYPE_INSTANT);
        l->budget--;
    } else {
        warplens_ik_count_(l, event >= WARPLENS_IK_MAX_EVENTS ? WARPLENS_IK_COUNTER_INVALID
                                                              : WARPLENS_IK_COUNTER_DROPPED);
    }
}

/* Marks the lane complete (its slot was reserved at init); later records are dropped. */
WARPLENS_IK_D void warplens_ik_finalize(warplens_ik_lane *l)
{
    if (!l->slot)
        return;
    __threadfence_block();
    unsigned int t = warplens_ik_timer();
    warplens_ik_put_(l, t, WARPLENS_IK_TYPE_FINALIZE);
    l->slot = 0;
    l->budget = 0;
    l->open = 0;
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
