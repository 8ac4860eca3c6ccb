#!/usr/bin/env bash
# CPU test of python/warplens/inkernel.py: the pure-Python decoder on the hand-built vectors,
# cross-checked against `warplens decode` (the C decoder) on random buffers, and the Profiler's
# host backend end to end (decode, summary, trace through the CLI). numpy is used when present.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v python3 >/dev/null || ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 7))'; then
    echo "python_inkernel: SKIP: python3 >= 3.7 not found"
    echo "python_inkernel: 0 passed, 0 failed (skipped)"
    exit 0
fi
BUILD=${WARPLENS_BUILD_DIR:-$SRC/build}
PRE=""   # a sanitized libwarplens.so (decode_native) needs the sanitizer runtimes first in python3's list
grep -q '^WARPLENS_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null &&
    PRE="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
[ -f "$BUILD/lib/libwarplens.so" ] && export WARPLENS_LIB=${WARPLENS_LIB:-$BUILD/lib/libwarplens.so}
LD_PRELOAD="$PRE" ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    PYTHONPATH="$SRC/python${PYTHONPATH:+:$PYTHONPATH}" exec python3 - <<'PY'
import io, json, os, random, sys, tempfile
from warplens import inkernel as ik

passed = failed = 0
def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, file=sys.stderr)

def rec(ts, bg, ev, t):
    return ((ts & 0xFFFFFFFF) << 32) | (bg << 12) | (ev << 2) | t

# the two-group vector of the wire-format notes
notes = [0x200000001, 0x3e800000004, 0x44c00001004, 0x5dc00000005, 0x76c00001005,
         0x64000000003, 0x7d000001003, 0, 0]
r = ik.decode_words(notes, stride=2, max_records=4)
got = sorted((s.block, s.group, s.event, s.start_ns, s.dur_ns) for s in r.slices)
check(got == [(0, 0, 1, 1000, 500), (0, 1, 1, 1100, 800)], "notes vector: %r" % got)
check(r.counts["lanes_finalized"] == 2 and r.counts["empty"] == 2, "notes counts %r" % r.counts)

# wrap, lanes starting around a wrap
r = ik.decode_words([(2 << 32) | 1, rec(0xFFFFFF00, 0, 3, 0), rec(0x50, 1, 3, 0),
                     rec(0x100, 0, 3, 1), rec(0x90, 1, 3, 1)])
d = {(s.group): (s.start_ns, s.dur_ns) for s in r.slices}
check(d == {0: (0xFFFFFF00, 0x200), 1: (0x100000050, 0x40)}, "wrap %r" % d)
r = ik.decode_words([(2 << 32) | 1, rec(0x50, 0, 1, 0), rec(0xFFFFFF80, 1, 1, 0),
                     rec(0x70, 0, 1, 1), rec(0x10, 1, 1, 1)])
d = {(s.group): (s.start_ns, s.dur_ns) for s in r.slices}
check(d == {0: (0x100000050, 0x20), 1: (0xFFFFFF80, 0x90)}, "wrap before reference %r" % d)

# unmatched, after finalize, LIFO, crossed
r = ik.decode_words([(1 << 32) | 1, rec(100, 0, 4, 0), rec(200, 0, 4, 0), rec(300, 0, 4, 1),
                     rec(500, 0, 4, 1), rec(600, 0, 1, 0), rec(610, 0, 2, 0), rec(620, 0, 1, 1),
                     rec(630, 0, 2, 1), rec(640, 0, 9, 1), rec(650, 0, 7, 0), rec(660, 0, 0, 3),
                     rec(670, 0, 7, 1)])
got = [(s.event, s.start_ns, s.dur_ns, s.crossed) for s in r.slices]
check(got == [(4, 200, 100, False), (4, 100, 400, False), (1, 600, 20, True), (2, 610, 20, False)],
      "LIFO/crossed %r" % got)
check([(u.event, u.kind, u.word) for u in r.unmatched] == [(9, "end", 9), (7, "begin", 10)],
      "unmatched %r" % r.unmatched)
check(r.counts["after_finalize"] == 1 and r.counts["crossed"] == 1, "counts %r" % r.counts)

# errors name the word offset
for words, kw, word, needle in [
        ([], {}, 0, "empty"), ([0, 1], {}, 0, "zero"), ([4, 0], {}, 0, "num_groups 0"),
        ([(4 << 32) | 2, 0, 0], {}, 3, "truncated"), ([(2 << 32) | 1, rec(1, 2, 1, 0), 0], {}, 1, "lane 2"),
        ([(1 << 32) | 1, rec(1, 0, 5, 3)], {}, 1, "finalize"),
        ([(2 << 32) | 1, rec(1, 1, 1, 0), 0], {"stride": 2}, 1, "misplaced")]:
    try:
        ik.decode_words(words, **kw)
        check(False, "no error for %r" % words)
    except ik.DecodeError as e:
        check(e.word == word and needle in str(e), "error %r: word %d '%s'" % (words, e.word, e))

# summary statistics (nearest rank)
w = [(1 << 32) | 1]
for k in range(100):
    w += [rec(1000 * (k + 1), 0, 1, 0), rec(1000 * (k + 1) + k + 1, 0, 1, 1)]
st = ik.summarize(ik.decode_words(w))
check(len(st) == 1 and (st[0].count, st[0].min_ns, st[0].p50_ns, st[0].p99_ns, st[0].max_ns) ==
      (100, 1, 50, 99, 100) and abs(st[0].mean_ns - 50.5) < 1e-9, "summary %r" % (st,))
check(ik.buffer_words(132, 4, 100) == 1 + 528 * 100, "buffer_words")
for bad in [(0, 4, 10), (1 << 20, 2, 1), (4, 4, 0)]:
    try:
        ik.buffer_words(*bad)
        check(False, "buffer_words%r accepted" % (bad,))
    except ValueError:
        check(True, "")

def random_buffer(rng, nb, ng, per):
    lanes = nb * ng
    w = [0] * (1 + lanes * per)
    w[0] = (ng << 32) | nb
    for bg in range(lanes):
        t = rng.randrange(1 << 32)
        out, depth = [], []
        for _ in range(rng.randrange(per)):
            t = (t + rng.randrange(0, 3000)) & 0xFFFFFFFF
            r = rng.random()
            if r < 0.40:
                ev = rng.choice([0, 1, 2, 1023])
                out.append(rec(t, bg, ev, 0)); depth.append(ev)
            elif r < 0.80 and depth:
                out.append(rec(t, bg, depth.pop() if rng.random() < 0.9 else 2, 1))
            elif r < 0.90:
                out.append(rec(t, bg, rng.randrange(1024), 2 if rng.random() < 0.7 else 1))
            elif r < 0.93:
                out.append(rec(t, bg, 0, 3))
        for k, v in enumerate(out[:per]):
            w[1 + bg + k * lanes] = v
    return w

cli = ik.find_cli()
if cli:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(20):
            nb, ng, per = rng.randrange(1, 6), rng.randrange(1, 5), rng.randrange(1, 40)
            words = random_buffer(rng, nb, ng, per)
            py = ik.decode_words(words, stride=nb * ng, max_records=per)
            out = os.path.join(tmp, "t.json")
            ik.run_cli_decode(cli, words, "json", out, stride=nb * ng, max_records=per)
            j = json.load(open(out))
            base = j["otherData"]["base_ns"]
            cx = sorted((e["pid"], e["tid"] % ng, e["args"]["event"],
                         round(float(e["ts"]) * 1000) + base, round(float(e["dur"]) * 1000))
                        for e in j["traceEvents"] if e["ph"] == "X")
            pyx = sorted((s.block, s.group, s.event, s.start_ns, s.dur_ns) for s in py.slices)
            check(cx == pyx, "trial %d: slices differ between C and Python" % trial)
            for key in ("unmatched_begins", "unmatched_ends", "after_finalize", "crossed",
                        "lanes_finalized", "instants", "records"):
                check(j["otherData"][key] == py.counts[key],
                      "trial %d: %s C %s Python %s" % (trial, key, j["otherData"][key], py.counts[key]))
            check(base == py.min_ts or not py.slices, "trial %d: base" % trial)
else:
    print("python_inkernel: WARPLENS_BIN not set and no warplens on PATH: C cross-check skipped")

# decode_native (libwarplens through ctypes) against the reference decoder: every field, on the
# random buffers (stride known and not), on bytes, bytearray and array('Q') inputs, and errors
try:
    ik._native_lib()
    have_native = True
except OSError as e:
    have_native = False
    print("python_inkernel: libwarplens not found (%s): native decode check skipped" % e)
if have_native:
    import array as _array
    rng = random.Random(5)
    for trial in range(40):
        nb, ng, per = rng.randrange(1, 6), rng.randrange(1, 5), rng.randrange(1, 40)
        words = random_buffer(rng, nb, ng, per)
        kw = dict(stride=nb * ng, max_records=per) if trial % 2 else {}
        py = ik.decode_words(words, **kw)
        a = _array.array("Q", words)
        src = (a, bytearray(a.tobytes()), a.tobytes())[trial % 3]
        nat = ik.decode_native(src, **kw).to_result()
        check(nat.slices == py.slices and nat.instants == py.instants and nat.unmatched == py.unmatched,
              "native trial %d: records differ" % trial)
        check(nat.counts == py.counts and (nat.min_ts, nat.max_ts) == (py.min_ts, py.max_ts),
              "native trial %d: counts %r vs %r" % (trial, nat.counts, py.counts))
    try:
        ik.decode_native(_array.array("Q", [(2 << 32) | 1, rec(1, 0, 1, 0), rec(1, 5, 1, 0)]))
        check(False, "native: bad lane accepted")
    except ik.DecodeError as e:
        check(e.word == 2 and "lane 5" in str(e), "native error %r at %d" % (str(e), e.word))

# Profiler, host backend: the launch args and the whole path without a GPU
p = ik.Profiler(2, 2, max_records=8, events=["load", "mma"], groups=["producer", "consumer"],
                backend="host")
check(p.words == 1 + 4 * 8 and p.launch_args()[2:] == (2, 4, 8), "profiler args %r" % (p.launch_args(),))
check(p.counters_ptr() == p.data_ptr() + 8 * p.words, "counters follow the buffer")
buf = p.buffer
buf[0] = (2 << 32) | 2
for bg in range(4):
    buf[1 + bg] = rec(100 + bg, bg, 1, 0)
    buf[1 + bg + 4] = rec(300 + 10 * bg, bg, 1, 1)
    buf[1 + bg + 8] = rec(400, bg, 0, 3)
buf[p.words] = (1 << 32) | 3
check(p.counters() == (3, 1), "counters %r" % (p.counters(),))
res = p.decode()
check(len(res.slices) == 4 and res.counts["lanes_finalized"] == 4, "profiler decode")
s = io.StringIO()
p.print_summary(file=s)
check("mma" in s.getvalue() and "consumer" in s.getvalue(), "summary names: %s" % s.getvalue())
if cli:
    with tempfile.TemporaryDirectory() as tmp:
        p.write_trace(os.path.join(tmp, "p.json"), fmt="json")
        j = json.load(open(os.path.join(tmp, "p.json")))
        check(sum(e["ph"] == "X" and e["name"] == "mma" for e in j["traceEvents"]) == 4, "trace json")
        p.write_trace(os.path.join(tmp, "p.pftrace"))
        check(open(os.path.join(tmp, "p.pftrace"), "rb").read(1) == b"\x0a", "trace perfetto")
p.reset()
check(p.buffer[0] == 0 and p.counters() == (0, 0), "reset")

try:
    import numpy as np
    a = np.array(notes, dtype=np.uint64)
    check(len(ik.decode_words(a).slices) == 2, "numpy uint64")
    check(len(ik.decode_words(a.view(np.int64)).slices) == 2, "numpy int64 (torch's dtype)")
except ImportError:
    print("python_inkernel: numpy not installed: numpy input not tested")

print("python_inkernel: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
