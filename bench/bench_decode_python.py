"""Python decode path vs the C decoder it wraps (issue 21: "no slower than the C path's decode plus
one copy"). Decodes bench_decode's synthetic buffer (64 Mi words by default, written by
`bench_decode WORDS 1 --write FILE`) three ways, interleaved, median of N rounds, in one process:
  c_decode   warplens_ik_decode + free through ctypes, nothing copied (fresh output, as in the CLI)
  copy       allocating bytearrays of the result's sizes and memmove-ing a C result into them
  python     warplens.inkernel.decode_native: the C decode plus that one copy, as a user calls it
and prints python / (c_decode + copy).
usage: python3 bench/bench_decode_python.py [--build BUILD_DIR] [--words N] [--rounds N]"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(here, "..", "build"))
    ap.add_argument("--words", type=int, default=64 << 20)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    os.environ.setdefault("WARPLENS_BUILD_DIR", os.path.abspath(a.build))
    from warplens import inkernel as ik
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "buf.bin")
        subprocess.run([os.path.join(a.build, "bin", "bench_decode"), str(a.words), "1", "--write", path], check=True)
        with open(path, "rb") as f:
            words = bytearray(f.read())
    lanes = 132 * 4  # bench_decode's grid
    stride, max_records = lanes, (a.words - 1) // lanes
    lib = ik._native_lib()
    ptr, n, keep = ik._words_pointer(words)
    err = ctypes.create_string_buffer(256)
    word = ctypes.c_uint64()
    t = {"c_decode": [], "copy": [], "python": []}
    records = 0
    for _ in range(a.rounds):
        d = ik._Decoded()
        t0 = time.perf_counter()
        if lib.warplens_ik_decode(ptr, n, stride, max_records, ctypes.byref(d), err, len(err), ctypes.byref(word)):
            sys.exit("decode failed: %s" % err.value)
        t["c_decode"].append(time.perf_counter() - t0)
        records = d.counts[2]
        sizes = [(d.slices, d.n_slices * ik.SLICE_BYTES), (d.instants, d.n_instants * ik.INSTANT_BYTES),
                 (d.unmatched, d.n_unmatched * ik.UNMATCHED_BYTES)]
        t0 = time.perf_counter()
        out = []
        for p, size in sizes:
            b = bytearray(size)
            if size:
                ctypes.memmove((ctypes.c_char * size).from_buffer(b), p, size)
            out.append(b)
        t["copy"].append(time.perf_counter() - t0)
        del out
        lib.warplens_ik_decoded_free(ctypes.byref(d))
        t0 = time.perf_counter()
        r = ik.decode_native(words, stride=stride, max_records=max_records)
        t["python"].append(time.perf_counter() - t0)
        assert r.counts["records"] == records
        del r
    m = {k: median(v) for k, v in t.items()}
    print("bench_decode_python: %d words, %d records, median of %d interleaved rounds" % (a.words, records, a.rounds))
    for k in ("c_decode", "copy", "python"):
        print("  %-9s %.3f s  (%.1f M records/s)  runs %s" % (k, m[k], records / m[k] / 1e6,
                                                           " ".join("%.3f" % x for x in t[k])))
    ratio = m["python"] / (m["c_decode"] + m["copy"])
    print("  python / (c_decode + copy) = %.3f  (target <= 1: %s)" % (ratio, "met" if ratio <= 1.05 else "NOT met"))


if __name__ == "__main__":
    main()
