#!/usr/bin/env bash
# The pip-installable Python package (python/): installed into a venv offline (--no-build-isolation
# --no-index, the venv seeing the system's packages so Debian's python3-pandas is there), then
# imported from outside the checkout: warplens.open on the real H100 sessions gives the rows the CLI
# shows (counts of `warplens info`, every launch of `warplens kernels --calls --json` with the same
# occupancy, limiter, active blocks, waves, backend, operation, shape, launch cost), the documented
# columns, DataFrames with pandas and lists of dicts without; a damaged session gives the CLI's rows;
# a file that is not a session, a truncated one, one of a newer schema raise SessionError with the
# reason; `python -m warplens` runs the CLI or says it was not found; timer and inkernel still load.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${WARPLENS_BUILD_DIR:-$SRC/build}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
W=${WARPLENS_BIN:-$BUILD/bin/warplens}
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
# Debian's interpreter is the one python3-pandas (scripts/deps.sh) is installed for
PY=${WARPLENS_PYTHON:-python3}
[ -z "${WARPLENS_PYTHON:-}" ] && [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if ! "$PY" -m venv --system-site-packages "$T/venv" > "$T/venv.log" 2>&1; then
    cat "$T/venv.log"; echo "python_pkg: 0 passed, 1 failed ($PY -m venv: install python3-venv)"; exit 1
fi
cp -r "$SRC/python" "$T/src"   # pip builds in the tree: keep the checkout clean
if ! "$T/venv/bin/pip" install -q --no-build-isolation --no-index --no-deps "$T/src" > "$T/pip.log" 2>&1; then
    cat "$T/pip.log"; echo "python_pkg: 0 passed, 1 failed (pip install)"; exit 1
fi
VPY=$T/venv/bin/python
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
check '[ "$("$VPY" -c "import importlib.metadata as m; print(m.version(\"warplens\"))")" = "$VERSION" ]' \
    "the package's version is the project's ($VERSION)"
check '"$VPY" -c "import pandas"' "pandas importable in the venv (scripts/deps.sh installs python3-pandas)"

PRE=""   # a sanitized libwarplens.so needs the sanitizer runtimes first in python's library list
grep -q '^WARPLENS_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null &&
    PRE="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
run_py() { (cd "$T" && LD_PRELOAD="$PRE" ASAN_OPTIONS=detect_leaks=0 WARPLENS_BIN="$W" WARPLENS_LIB="$BUILD/lib/libwarplens.so" \
            "$VPY" "$@"); }

# what the CLI says, per session: info's record counts and the launches with their derived columns
for s in demo-h100 torch-h100 metrics-h100 pm-sampling-h100 torch-ops-h100 stalls-torch-h100; do
    "$W" info "$DATA/$s.wlsession" > "$T/$s.info"
    "$W" kernels "$DATA/$s.wlsession" --calls --json > "$T/$s.calls.json"
done
cp "$DATA/demo-h100.wlsession" "$T/damaged.wlsession"
sqlite3 "$T/damaged.wlsession" "UPDATE api_call SET pid = '' WHERE id = (SELECT min(id) FROM api_call);
    UPDATE kernel SET duration_ns = -5 WHERE id = 3; UPDATE memcpy SET bytes = 'x' WHERE id = 2"
"$W" info "$T/damaged.wlsession" > "$T/damaged.info" 2>&1
"$W" kernels "$T/damaged.wlsession" --calls --json > "$T/damaged.calls.json" 2>/dev/null
cp "$DATA/demo-h100.wlsession" "$T/newer.wlsession"
sqlite3 "$T/newer.wlsession" "UPDATE meta SET value = '99' WHERE key = 'schema_version'"
head -c 20000 "$DATA/demo-h100.wlsession" > "$T/truncated.wlsession"
echo "not a session" > "$T/text.wlsession"

run_py - "$DATA" "$T" > "$T/py.out" 2>&1 <<'PY'
import json, math, re, sqlite3, sys, warnings
import pandas
import warplens
from warplens import inkernel, timer   # the existing modules load from the installed package
assert warplens.__file__.startswith(sys.argv[2]), warplens.__file__   # the venv's, not the checkout's
data, tmp = sys.argv[1], sys.argv[2]
ok = 0
def info_counts(path):
    line = [l for l in open(path) if l.startswith("records")][0]
    return {k: int(v) for v, k in re.findall(r"(\d+) (kernels|memcpy|API calls|NVTX ranges)", line)}
def same(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None
    return abs(a - b) < 1e-9 if isinstance(b, float) else a == b
def compare_calls(rows, calls, where):
    assert len(rows) == len(calls), (where, len(rows), len(calls))
    for r, c in zip(rows, calls):
        assert r["id"] == c["id"], (where, r["id"], c["id"])
        for col, key, digits in [("occupancy_pct", "occupancy_pct", 2), ("waves", "waves", 4),
                                 ("tail_pct", "tail_pct", 2), ("warp_fill_pct", "warp_fill_pct", 2),
                                 ("sm_share_pct", "sm_share_pct", 2)]:
            v = r[col]
            v = None if v is None or math.isnan(v) else round(v, digits)
            assert same(v, c.get(key)), (where, r["id"], col, v, c.get(key))
        for col, key in [("limiter", "limiter"), ("active_blocks", "active_blocks"), ("active_sms", "active_sms"),
                         ("backend", "backend"), ("operation", "operation"), ("shape", "shape"),
                         ("duration_ns", "duration_ns"), ("queue_delay_ns", "queue_delay_ns"),
                         ("grid_x", None), ("registers_per_thread", "registers"), ("tier", "tier")]:
            want = c[key] if key else c["grid"][0]
            got = r[col]
            if col == "shape" and got == "" and want is None:
                got = None   # the CLI prints an operation without shapes as null
            if col in ("duration_ns", "queue_delay_ns") and want == -1:
                want = None  # the CLI prints NULL (not recorded) as -1
            assert same(got, want), (where, r["id"], col, got, want)
        want = c["launch_ns"]
        assert same(r["launch_ns"], None if want < 0 else want), (where, r["id"], r["launch_ns"], want)

view_cols = None
for name in ["demo-h100", "torch-h100", "metrics-h100", "pm-sampling-h100", "torch-ops-h100", "stalls-torch-h100"]:
    path = "%s/%s.wlsession" % (data, name)
    counts = info_counts("%s/%s.info" % (tmp, name))
    calls = json.load(open("%s/%s.calls.json" % (tmp, name)))
    with warplens.open(path) as s:
        k = s.kernels()
        assert isinstance(k, pandas.DataFrame), type(k)
        db = sqlite3.connect(path)
        view_cols = [r[1] for r in db.execute("PRAGMA table_info(kernels)")]
        want_cols = view_cols + ([] if "tier" in view_cols else ["tier"]) + list(warplens.DERIVED_COLUMNS)
        assert list(k.columns) == want_cols, (name, list(k.columns))
        assert len(k) == counts["kernels"], (name, len(k), counts)
        rows = s.kernels(as_frame=False)
        assert isinstance(rows, list) and isinstance(rows[0], dict), name
        compare_calls(rows, calls, name)
        # the DataFrame holds the same values as the dicts
        assert list(k["id"]) == [r["id"] for r in rows] and list(k["backend"]) == [r["backend"] for r in rows]
        for meth, key, cols in [("api_calls", "API calls", ["name", "category", "duration_ns", "correlation_id"]),
                                ("memcpys", "memcpy", ["kind", "bytes", "bandwidth_gbps", "stream_id"]),
                                ("nvtx_ranges", "NVTX ranges", ["name", "start_ns", "duration_ns", "domain"])]:
            df, lst = getattr(s, meth)(), getattr(s, meth)(as_frame=False)
            assert len(df) == len(lst) == counts.get(key, 0), (name, meth, len(df), len(lst), counts)
            assert all(c in df.columns for c in cols), (name, meth, list(df.columns))
            assert not any(c.startswith("__") for c in df.columns), (name, meth, list(df.columns))
            if lst:
                assert set(lst[0]) == set(df.columns), (name, meth)
        m, pm = s.metrics(), s.pm_samples(as_frame=False)
        nm = db.execute("SELECT count(*) FROM kernel_metric").fetchone()[0] if s.has("kernel_metric") else 0
        npm = db.execute("SELECT count(*) FROM pm_sample").fetchone()[0] if s.has("pm_sample") else 0
        assert len(m) == nm and len(pm) == npm, (name, len(m), nm, len(pm), npm)
        if nm:
            assert {"metric", "unit", "value", "kernel_id"} <= set(m.columns), list(m.columns)
            assert (m.groupby("kernel_id").size() > 0).all()
        if npm:
            assert {"metric", "start_ns", "end_ns", "value", "sample_index"} <= set(pm[0]), pm[0]
        ok += 1
    print("%s: %d kernels, checks ok" % (name, len(k)))
assert ok == 6

# a damaged session: the rows the CLI leaves out are left out here
counts = info_counts(tmp + "/damaged.info")
calls = json.load(open(tmp + "/damaged.calls.json"))
with warnings.catch_warnings():
    warnings.simplefilter("error")
    with warplens.open(tmp + "/damaged.wlsession") as s:
        rows = s.kernels(as_frame=False)
        compare_calls(rows, calls, "damaged")
        assert len(rows) == counts["kernels"] == 62, (len(rows), counts)
        assert len(s.api_calls()) == counts["API calls"] == 122, counts
        assert len(s.memcpys(as_frame=False)) == counts["memcpy"] == 33, counts
print("damaged: ok")

for f, why in [("text", "not a warplens session"), ("truncated", ""), ("newer", "newer"),
               ("missing", "no such file")]:
    try:
        warplens.open("%s/%s.wlsession" % (tmp, f))
        raise SystemExit("%s opened" % f)
    except warplens.SessionError as e:
        assert why in str(e), (f, str(e))
        print("%s: SessionError: %s" % (f, e))

timer.set_verbosity(timer.DEFAULT)
with timer.host("py"):
    pass
assert [i["name"] for i in timer.intervals()] == ["py"]
assert inkernel.find_cli()
print("python_pkg ok")
PY
rc=$?
check '[ $rc = 0 ] && grep -q "^python_pkg ok$" "$T/py.out"' "session package: $(tail -5 "$T/py.out")"
grep -E "kernels, checks ok|SessionError|damaged: ok" "$T/py.out"

# without pandas: lists of dicts
run_py - "$DATA" > "$T/nopd.out" 2>&1 <<'PY'
import sys
sys.modules["pandas"] = None   # as if not installed
import warplens
s = warplens.open(sys.argv[1] + "/torch-h100.wlsession")
k = s.kernels()
assert isinstance(k, list) and len(k) == 126 and k[0]["occupancy_pct"] > 0, (type(k), len(k))
assert isinstance(s.memcpys(), list)
try:
    s.kernels(as_frame=True)
    raise SystemExit("as_frame=True without pandas")
except ImportError:
    pass
print("lists ok")
PY
check 'grep -q "^lists ok$" "$T/nopd.out"' "without pandas: $(tail -3 "$T/nopd.out")"

# python -m warplens: the CLI, its exit status; a clear error without one
out=$(run_py -m warplens --version 2>&1)
check '[ "$out" = "warplens $VERSION" ]' "python -m warplens --version: $out"
run_py -m warplens stats > /dev/null 2>&1
check '[ $? = 2 ]' "python -m warplens passes the CLI's usage status on"
out=$(cd "$T" && env -u WARPLENS_BIN PATH=/usr/bin:/bin "$VPY" -m warplens --version 2>&1)
check '[ $? = 127 ] && echo "$out" | grep -q "CLI was not found.*WARPLENS_BIN"' "no CLI: $out"
echo "python_pkg: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
