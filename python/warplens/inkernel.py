"""In-kernel warp-group tracing from Python (wire format v1, see docs/inkernel.md).

`Profiler` allocates and zeroes the trace buffer on the GPU (torch or cupy; or "host" for tests),
hands out the launch arguments a kernel built with warplens/device.cuh needs, copies the buffer
back, decodes it, prints durations and writes traces.

Two decoders. `decode_native` calls the C decoder in libwarplens.so (warplens_ik_decode) through
ctypes: the words are passed without a copy (any buffer-protocol object: bytes, bytearray,
array('Q'), a NumPy array) and the decoded arrays are copied once into Python-owned bytearrays
(`NativeResult`; `.slice_array()` etc. view them as NumPy structured arrays without another copy),
so it costs the C decode plus one copy (bench/bench_decode_python.py). `decode_words` is a small
pure-Python reference decoder with exactly the C decoder's semantics (tests/cli/
test_python_inkernel.sh cross-checks the two on random buffers), used when libwarplens is not
installed; it runs at a few million records per second. Trace files go through the CLI
(`warplens decode`), which `Profiler.write_trace` calls on a temporary file.
"""

import array
import ctypes
import os
import subprocess
import sys
import tempfile
from collections import namedtuple

from ._find import find_cli  # noqa: F401 (part of this module's API)

MAX_LANES = 1 << 20
MAX_EVENTS = 1 << 10
BEGIN, END, INSTANT, FINALIZE = 0, 1, 2, 3

Slice = namedtuple("Slice", "block group event start_ns dur_ns depth crossed begin_seq end_seq")
Instant = namedtuple("Instant", "block group event ts_ns seq")
Unmatched = namedtuple("Unmatched", "block group event ts_ns word kind")  # kind "begin" / "end"
Stat = namedtuple("Stat", "event group count total_ns mean_ns min_ns p50_ns p99_ns max_ns")


class DecodeError(ValueError):
    """A buffer the decoder rejects; `word` is the offset of the offending word."""

    def __init__(self, word, message):
        super().__init__(message)
        self.word = word


def buffer_words(num_blocks, num_groups, max_records, stride=0):
    """Words (uint64) of buffer for a launch: 1 header + stride * max_records.

    Raises ValueError for a launch the format cannot encode (no lanes, > 2^20 lanes, stride below
    the lane count, no records)."""
    if num_blocks <= 0 or num_groups <= 0 or max_records <= 0:
        raise ValueError("num_blocks, num_groups and max_records must be positive")
    lanes = num_blocks * num_groups
    if lanes > MAX_LANES:
        raise ValueError("%d lanes exceed the 2^20 a tag can address" % lanes)
    stride = stride or lanes
    if stride < lanes or stride >= 1 << 32 or max_records >= 1 << 32:
        raise ValueError("stride must be >= %d lanes and both below 2^32" % lanes)
    return 1 + stride * max_records


class DecodeResult:
    """Slices, instants and unmatched records of one buffer, plus counts of everything skipped."""

    def __init__(self, num_blocks, num_groups):
        self.num_blocks, self.num_groups = num_blocks, num_groups
        self.slices, self.instants, self.unmatched = [], [], []
        self.counts = dict(words=0, empty=0, records=0, slices=0, instants=0, unmatched_begins=0,
                           unmatched_ends=0, after_finalize=0, over_capacity=0, crossed=0,
                           lanes_seen=0, lanes_finalized=0)
        self.min_ts = self.max_ts = 0


def decode_words(words, stride=0, max_records=0):
    """Decodes a sequence of uint64 words (list, array('Q'), numpy uint64/int64 array).

    Same rules as the C decoder: begin/end paired last-in-first-out per (lane, event), durations
    by modular arithmetic, each lane unwrapped, records after a lane's finalize ignored, unmatched
    records reported. Raises DecodeError(word, message)."""
    n = len(words)
    if n == 0:
        raise DecodeError(0, "empty buffer: no header word (word 0)")
    hdr = int(words[0]) & 0xFFFFFFFFFFFFFFFF
    ng, nb = hdr >> 32, hdr & 0xFFFFFFFF
    if hdr == 0:
        raise DecodeError(0, "header (word 0) is zero: the kernel did not write the buffer")
    if ng == 0 or nb == 0:
        raise DecodeError(0, "invalid header (word 0): num_groups %d, num_blocks %d" % (ng, nb))
    lanes = nb * ng
    if lanes > MAX_LANES:
        raise DecodeError(0, "invalid header (word 0): %d lanes exceed 2^20" % lanes)
    if n < 1 + lanes:
        raise DecodeError(n, "truncated buffer at word %d: the header declares %d lanes" % (n, lanes))
    if stride and stride < lanes:
        raise DecodeError(0, "stride %d is smaller than the %d lanes" % (stride, lanes))
    res = DecodeResult(nb, ng)
    c = res.counts
    c["words"] = n
    # per lane: [seen, finalized, nrec, first_ts, last_ts, last_raw, open list]
    state = {}
    ref = None
    for i in range(1, n):
        w = int(words[i]) & 0xFFFFFFFFFFFFFFFF
        if w == 0:
            c["empty"] += 1
            continue
        tag, raw = w & 0xFFFFFFFF, w >> 32
        bg, ev, typ = tag >> 12, (tag >> 2) & 0x3FF, tag & 3
        if stride and (i - 1) % stride != bg:
            raise DecodeError(i, "misplaced record at word %d: it carries lane %d but that slot "
                                 "belongs to lane %d" % (i, bg, (i - 1) % stride))
        c["records"] += 1
        if bg >= lanes:
            raise DecodeError(i, "invalid tag at word %d (0x%08x): lane %d is outside the %d "
                                 "lanes of the header" % (i, tag, bg, lanes))
        if typ == FINALIZE and ev != 0:
            raise DecodeError(i, "invalid tag at word %d (0x%08x): finalize with event bits %d"
                              % (i, tag, ev))
        L = state.get(bg)
        if L is None:
            L = state[bg] = [False, False, 0, 0, 0, 0, []]
        if L[1]:
            c["after_finalize"] += 1
            continue
        if max_records and ((i - 1) // stride if stride else L[2]) >= max_records:
            c["over_capacity"] += 1
            continue
        if not L[0]:
            if ref is None:
                ref = raw
            d = (raw - ref) & 0xFFFFFFFF
            ts = ref + (d - (1 << 32) if d >= 1 << 31 else d)  # signed offset from the reference
            L[0], L[3] = True, ts
            c["lanes_seen"] += 1
        else:
            ts = L[4] + ((raw - L[5]) & 0xFFFFFFFF)
        L[4], L[5] = ts, raw
        seq = L[2]
        L[2] += 1
        block, group = bg // ng, bg % ng
        if typ == BEGIN:
            L[6].append((ts, i, seq, ev, min(len(L[6]), 255)))
        elif typ == END:
            opened = L[6]
            k = len(opened)
            while k > 0 and opened[k - 1][3] != ev:
                k -= 1
            if k == 0:
                c["unmatched_ends"] += 1
                res.unmatched.append(Unmatched(block, group, ev, ts, i, "end"))
                continue
            t0, _, seq0, _, depth = opened.pop(k - 1)
            crossed = k != len(opened) + 1
            c["crossed"] += crossed
            res.slices.append(Slice(block, group, ev, t0, ts - t0, depth, crossed, seq0, seq))
        elif typ == INSTANT:
            res.instants.append(Instant(block, group, ev, ts, seq))
        else:
            L[1] = True
            c["lanes_finalized"] += 1
    for bg in sorted(state):
        for t0, word, _, ev, _ in state[bg][6]:
            c["unmatched_begins"] += 1
            res.unmatched.append(Unmatched(bg // ng, bg % ng, ev, t0, word, "begin"))
    c["slices"], c["instants"] = len(res.slices), len(res.instants)
    seen = [L for L in state.values() if L[0]]
    if seen:
        lo = min(L[3] for L in seen)
        hi = max(L[4] for L in seen)
        fix = (1 << 32) if lo < 0 else 0  # a lane began before the reference's wrap
        if fix:
            res.slices = [s._replace(start_ns=s.start_ns + fix) for s in res.slices]
            res.instants = [x._replace(ts_ns=x.ts_ns + fix) for x in res.instants]
            res.unmatched = [u._replace(ts_ns=u.ts_ns + fix) for u in res.unmatched]
        res.min_ts, res.max_ts = lo + fix, hi + fix
    return res


class _Decoded(ctypes.Structure):
    """warplens_ik_decoded (warplens.h)."""
    _fields_ = [("num_blocks", ctypes.c_uint32), ("num_groups", ctypes.c_uint32),
                ("slices", ctypes.c_void_p), ("instants", ctypes.c_void_p), ("unmatched", ctypes.c_void_p),
                ("n_slices", ctypes.c_uint64), ("n_instants", ctypes.c_uint64), ("n_unmatched", ctypes.c_uint64),
                ("counts", ctypes.c_uint64 * 12), ("min_ts", ctypes.c_uint64), ("max_ts", ctypes.c_uint64),
                ("internal_", ctypes.c_void_p)]


_COUNT_NAMES = ("words", "empty", "records", "slices", "instants", "unmatched_begins", "unmatched_ends",
                "after_finalize", "over_capacity", "crossed", "lanes_seen", "lanes_finalized")
SLICE_BYTES, INSTANT_BYTES, UNMATCHED_BYTES = 32, 24, 32
_native = None


def _native_lib():
    global _native
    if _native is None:
        from ._find import load_library
        lib = load_library()
        lib.warplens_ik_decode.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32,
                                           ctypes.POINTER(_Decoded), ctypes.c_char_p, ctypes.c_size_t,
                                           ctypes.POINTER(ctypes.c_uint64)]
        lib.warplens_ik_decode.restype = ctypes.c_int
        lib.warplens_ik_decoded_free.argtypes = [ctypes.POINTER(_Decoded)]
        lib.warplens_ik_decoded_free.restype = None
        _native = lib
    return _native


def _words_pointer(words):
    """(address, n_words, keep-alive) of a buffer of little-endian uint64 words, without a copy."""
    if hasattr(words, "__array_interface__") and hasattr(words, "ctypes"):  # NumPy
        if not words.flags["C_CONTIGUOUS"] or words.dtype.itemsize != 8:
            raise ValueError("words must be a C-contiguous array of 64-bit integers")
        return words.ctypes.data, words.size, words
    m = memoryview(words).cast("B")
    if m.nbytes % 8:
        raise ValueError("the buffer is not a whole number of 64-bit words")
    if m.readonly:  # bytes: CPython's object keeps its storage; c_char_p points at it
        ref = ctypes.c_char_p(m.obj if isinstance(m.obj, bytes) else bytes(m))
        return ctypes.cast(ref, ctypes.c_void_p).value, m.nbytes // 8, ref
    arr = (ctypes.c_char * m.nbytes).from_buffer(m)
    return ctypes.addressof(arr), m.nbytes // 8, (arr, m)


class NativeResult:
    """What decode_native returns: the decoded arrays as bytearrays in the layout of warplens.h
    (slice 32 bytes, instant 24, unmatched 32), the counts, and the extent of the timestamps."""

    def __init__(self, d, slices, instants, unmatched):
        self.num_blocks, self.num_groups = d.num_blocks, d.num_groups
        self.n_slices, self.n_instants, self.n_unmatched = d.n_slices, d.n_instants, d.n_unmatched
        self.slices_bytes, self.instants_bytes, self.unmatched_bytes = slices, instants, unmatched
        self.counts = dict(zip(_COUNT_NAMES, list(d.counts)))
        self.min_ts, self.max_ts = d.min_ts, d.max_ts

    def slice_array(self):
        """NumPy structured array over the slices (no copy); bits: block 0-19, depth 20-27,
        flags 28-31, group 32-51, event 52-61 (see slice_fields)."""
        import numpy as np
        dt = np.dtype([("start_ns", "<u8"), ("dur_ns", "<u8"), ("begin_seq", "<u4"), ("end_seq", "<u4"),
                       ("bits", "<u8")])
        return np.frombuffer(self.slices_bytes, dtype=dt, count=self.n_slices)

    def instant_array(self):
        import numpy as np
        dt = np.dtype([("ts_ns", "<u8"), ("block", "<u4"), ("group", "<u4"), ("seq", "<u4"), ("event", "<u2"),
                       ("pad", "<u2")])
        return np.frombuffer(self.instants_bytes, dtype=dt, count=self.n_instants)

    @staticmethod
    def slice_fields(bits):
        """(block, group, event, depth, crossed) of a slice's bits word (int or NumPy array)."""
        return (bits & 0xFFFFF, (bits >> 32) & 0xFFFFF, (bits >> 52) & 0x3FF, (bits >> 20) & 0xFF,
                (bits >> 28) & 1)

    def to_result(self):
        """The same as decode_words' DecodeResult (namedtuples: for small buffers)."""
        import struct
        res = DecodeResult(self.num_blocks, self.num_groups)
        for start, dur, bseq, eseq, bits in struct.iter_unpack("<QQIIQ", self.slices_bytes):
            block, group, event, depth, crossed = self.slice_fields(bits)
            res.slices.append(Slice(block, group, event, start, dur, depth, bool(crossed), bseq, eseq))
        for ts, block, group, seq, event, _ in struct.iter_unpack("<QIIIHH", self.instants_bytes):
            res.instants.append(Instant(block, group, event, ts, seq))
        for ts, word, block, group, seq, event, typ, _ in struct.iter_unpack("<QQIIIHBB", self.unmatched_bytes):
            res.unmatched.append(Unmatched(block, group, event, ts, word, "begin" if typ == BEGIN else "end"))
        res.counts = dict(self.counts)
        res.min_ts, res.max_ts = self.min_ts, self.max_ts
        return res


def decode_native(words, stride=0, max_records=0):
    """Decodes with the C decoder of libwarplens.so; returns a NativeResult. Raises DecodeError like
    decode_words, OSError when libwarplens cannot be loaded."""
    lib = _native_lib()
    ptr, n, keep = _words_pointer(words)
    d = _Decoded()
    err = ctypes.create_string_buffer(256)
    word = ctypes.c_uint64(0)
    if lib.warplens_ik_decode(ptr, n, stride, max_records, ctypes.byref(d), err, len(err), ctypes.byref(word)):
        raise DecodeError(word.value, err.value.decode("utf-8", "replace"))
    del keep
    try:  # the one copy: into memory Python owns, so the C result can be released now
        out = []
        for p, count, size in ((d.slices, d.n_slices, SLICE_BYTES), (d.instants, d.n_instants, INSTANT_BYTES),
                               (d.unmatched, d.n_unmatched, UNMATCHED_BYTES)):
            b = bytearray(count * size)
            if count:
                ctypes.memmove((ctypes.c_char * len(b)).from_buffer(b), p, len(b))
            out.append(b)
        return NativeResult(d, *out)
    finally:
        lib.warplens_ik_decoded_free(ctypes.byref(d))


def _rank(sorted_values, q):
    k = -(-q * len(sorted_values) // 1)  # ceil, nearest-rank percentile
    return sorted_values[max(int(k), 1) - 1]


def summarize(result):
    """Per (event, group): count, total, mean, min, p50, p99, max (ns), sorted by event, group."""
    by_key = {}
    for s in result.slices:
        by_key.setdefault((s.event, s.group), []).append(s.dur_ns)
    out = []
    for (ev, g), durs in sorted(by_key.items()):
        durs.sort()
        out.append(Stat(ev, g, len(durs), sum(durs), sum(durs) / len(durs), durs[0],
                        _rank(durs, 0.50), _rank(durs, 0.99), durs[-1]))
    return out


def event_name(names, event):
    return names[event] if names and event < len(names) and names[event] else "event_%d" % event


def group_name(names, group):
    return names[group] if names and group < len(names) and names[group] else "group_%d" % group


def format_summary(result, events=None, groups=None):
    lines = ["%-24s %-16s %10s %12s %10s %10s %10s %10s %10s" % (
        "event", "group", "count", "total_us", "mean_us", "min_us", "p50_us", "p99_us", "max_us")]
    for s in summarize(result):
        lines.append("%-24s %-16s %10d %12.3f %10.3f %10.3f %10.3f %10.3f %10.3f" % (
            event_name(events, s.event), group_name(groups, s.group), s.count, s.total_ns / 1e3,
            s.mean_ns / 1e3, s.min_ns / 1e3, s.p50_ns / 1e3, s.p99_ns / 1e3, s.max_ns / 1e3))
    c = result.counts
    lines.append("slices %d, instants %d, lanes %d seen / %d finalized, unmatched begins %d, "
                 "unmatched ends %d, after finalize %d, over capacity %d, crossed %d" % (
                     c["slices"], c["instants"], c["lanes_seen"], c["lanes_finalized"],
                     c["unmatched_begins"], c["unmatched_ends"], c["after_finalize"],
                     c["over_capacity"], c["crossed"]))
    return "\n".join(lines)


def write_words(path, words):
    """Writes words as the raw little-endian uint64 file `warplens decode` reads."""
    a = array.array("Q", (int(w) & 0xFFFFFFFFFFFFFFFF for w in words))
    if sys.byteorder != "little":
        a.byteswap()
    with open(path, "wb") as f:
        a.tofile(f)


class Profiler:
    """Owns one trace buffer for launches of `num_blocks` blocks x `num_groups` groups.

    backend: "torch", "cupy", "host" (a Python array, for tests without a GPU) or "auto".
    Pass `launch_args()` (buf, counters, num_groups, stride, max_records: the fields of
    warplens_ik_args in order) to the kernel; call `reset()` before each traced launch."""

    def __init__(self, num_blocks, num_groups, max_records=256, stride=0, events=None,
                 groups=None, backend="auto", device=None):
        self.num_blocks, self.num_groups = int(num_blocks), int(num_groups)
        self.max_records = int(max_records)
        self.stride = int(stride) or self.num_blocks * self.num_groups
        self.words = buffer_words(self.num_blocks, self.num_groups, self.max_records, self.stride)
        self.events = list(events) if events else []
        self.groups = list(groups) if groups else []
        self.backend = self._pick(backend)
        total = self.words + 1  # one more word: the two uint32 device counters
        if self.backend == "torch":
            import torch
            self._buf = torch.zeros(total, dtype=torch.int64, device=device or "cuda")
        elif self.backend == "cupy":
            import cupy
            self._buf = cupy.zeros(total, dtype=cupy.uint64)
        else:
            self._buf = array.array("Q", bytes(8 * total))

    @staticmethod
    def _pick(backend):
        if backend != "auto":
            return backend
        for name in ("torch", "cupy"):
            try:
                __import__(name)
                return name
            except ImportError:
                pass
        raise RuntimeError("warplens.inkernel: neither torch nor cupy is importable")

    @property
    def buffer(self):
        return self._buf

    def data_ptr(self):
        if self.backend == "torch":
            return self._buf.data_ptr()
        if self.backend == "cupy":
            return self._buf.data.ptr
        return self._buf.buffer_info()[0]

    def counters_ptr(self):
        return self.data_ptr() + 8 * self.words

    def launch_args(self):
        """(buf, counters, num_groups, stride, max_records), the order of warplens_ik_args."""
        return (self.data_ptr(), self.counters_ptr(), self.num_groups, self.stride,
                self.max_records)

    def reset(self):
        if self.backend == "host":
            for i in range(len(self._buf)):
                self._buf[i] = 0
        else:
            self._buf.zero_() if self.backend == "torch" else self._buf.fill(0)

    def host_words(self):
        """The buffer (without the counters word) as a list of Python ints (uint64)."""
        if self.backend == "torch":
            raw = self._buf[: self.words].cpu().numpy().tobytes()
        elif self.backend == "cupy":
            raw = self._buf[: self.words].get().tobytes()
        else:
            return list(self._buf[: self.words])
        a = array.array("Q")
        a.frombytes(raw)
        if sys.byteorder != "little":
            a.byteswap()
        return a.tolist()

    def counters(self):
        """(dropped, invalid): records the device could not write, bad event ids / lanes."""
        if self.backend == "host":
            v = self._buf[self.words]
        else:
            w = self._buf[self.words: self.words + 1]
            v = int((w.cpu().numpy() if self.backend == "torch" else w.get())[0])
        v &= 0xFFFFFFFFFFFFFFFF
        return v & 0xFFFFFFFF, v >> 32

    def decode(self):
        return decode_words(self.host_words(), stride=self.stride, max_records=self.max_records)

    def print_summary(self, file=None):
        res = self.decode()
        dropped, invalid = self.counters()
        print(format_summary(res, self.events, self.groups), file=file or sys.stdout)
        print("device counters: dropped %d, invalid %d" % (dropped, invalid), file=file or sys.stdout)
        return res

    def write_trace(self, path, fmt="perfetto"):
        """Writes a Perfetto (.pftrace) or Chrome JSON trace through `warplens decode`."""
        cli = find_cli()
        if not cli:
            raise RuntimeError("warplens CLI not found: install warplens and put its bin/ on PATH, or set WARPLENS_BIN")
        return run_cli_decode(cli, self.host_words(), fmt, path, self.events, self.groups,
                              stride=self.stride, max_records=self.max_records)


def run_cli_decode(cli, words, fmt, out_path, events=None, groups=None, stride=0, max_records=0):
    """Runs `warplens decode` on `words` (via a temporary file); returns its stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "buffer.bin")
        write_words(src, words)
        cmd = [cli, "decode", src, "--format", fmt, "-o", out_path]
        if events:
            cmd += ["--events", ",".join(events)]
        if groups:
            cmd += ["--groups", ",".join(groups)]
        if stride:
            cmd += ["--stride", str(stride)]
        if max_records:
            cmd += ["--max-records", str(max_records)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip() or "warplens decode failed")
        return p.stdout
