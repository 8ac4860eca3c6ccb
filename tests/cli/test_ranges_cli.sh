#!/usr/bin/env bash
# CLI test of hardware metrics per user range and in the exports, on the crafted session of
# test_range_metrics --make-session (nested scopes and NVTX ranges, a start/end range closed on
# another thread, five measured kernels, one without GPU timestamps):
#  - `warplens ranges` (table, --instances, --json, --csv, --kind, --sort) and `warplens stats`
#    show the combined metrics; the numbers are ratios of sums (step: 201 MB / 1.001 ms);
#  - the Chrome JSON export (jq): kernel slices carry their metrics as args, NVTX and scope
#    slices their kernels' combined metrics, the untimed kernel's launch call its metrics;
#  - the report embeds the metric tables and draws them (headless Chromium, when installed);
#  - a session without metrics (tests/data) shows no metric table, arg or report section;
#  - usage errors exit 2.
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
BUILD=${WARPLENS_BUILD_DIR:-$(dirname "$(dirname "$BIN")")}
. "$(dirname "$0")/checks.sh"
TMP=$tmp

if ! command -v jq >/dev/null; then
    echo "SKIP: jq is not installed (apt-get install jq)"
    echo "test_ranges_cli: 0 passed, 0 failed (skipped: no jq)"
    exit 0
fi
S=$TMP/m.wlsession
"$BUILD/bin/test_range_metrics" --make-session "$S"
check '[ -s "$S" ]' "test_range_metrics --make-session wrote no session"
PLAIN=$DATA/demo-h100.wlsession

# --- warplens ranges -------------------------------------------------------------------------------
out=$("$BIN" ranges "$S")
check '[ $? -eq 0 ]' "ranges: exit status"
check 'grep -q "^Hardware metrics per range name" <<<"$out"' "ranges: no metric table: $out"
check 'grep -Eq "^nvtx +1 .* 3 +3.00 us +step$" <<<"$out"' "ranges: step row (1 range, 3 kernels, 3 us timed)"
check 'grep -Eq "^nvtx +2 .*layer$" <<<"$out"' "ranges: two layer ranges in one row"
check 'grep -Eq "^ +2 +1.00 ms .* 200\.8 .*nvtx  step$" <<<"$out"' "ranges: step metrics (2 measured, 200.8 GB/s)"
json=$("$BIN" ranges "$S" --json)
check 'jq -e "length == 6" <<<"$json" >/dev/null' "ranges --json: 6 names"
# DRAM GB/s of step = (1 MB + 200 MB) / (1 us + 1 ms), not the mean of 1000 and 200 GB/s
check 'jq -e ".[] | select(.name == \"step\") | .metrics.dram_bytes_per_s | . > 200.79e9 and . < 200.80e9" <<<"$json" >/dev/null' \
    "ranges --json: step bandwidth is summed bytes / summed time"
check 'jq -e ".[] | select(.name == \"step\") | .metrics[\"lts__t_sector_hit_rate.pct\"] == 10" <<<"$json" >/dev/null' \
    "ranges --json: step L2 hit rate from summed hits and lookups"
check 'jq -e ".[] | select(.name == \"epoch\") | .kernels == 4 and .measured_kernels == 3" <<<"$json" >/dev/null' \
    "ranges --json: epoch (closed on another thread) holds the worker's kernel"
check 'jq -e ".[] | select(.name == \"layer\") | .count == 2 and .kernels == 2" <<<"$json" >/dev/null' \
    "ranges --json: nested ranges of one name count a kernel once"
check 'jq -e ".[] | select(.name == \"outer\") | .kind == \"scope\" and .kernels == 4 and .metrics.fp32_flop == 2097152" <<<"$json" >/dev/null' \
    "ranges --json: scope outer holds its nested scope's kernels"
inst=$("$BIN" ranges "$S" --instances --json --kind nvtx)
check 'jq -e "length == 5 and all(.[]; .kind == \"nvtx\")" <<<"$inst" >/dev/null' "ranges --instances --kind nvtx: 5 ranges"
check 'jq -e ".[] | select(.name == \"epoch\") | .thread_bound == false and .end_tid == 200" <<<"$inst" >/dev/null' \
    "ranges --instances: epoch is not thread-bound"
check 'jq -e "[.[] | select(.name == \"step\")][0] | .thread_bound and .duration_ns == 89500" <<<"$inst" >/dev/null' \
    "ranges --instances: step is thread-bound, 89.5 us"
first=$("$BIN" ranges "$S" --csv --sort dram_bytes_per_s | sed -n 2p)
check 'grep -q "^nvtx,,fwd,\|^nvtx,,layer,\|^scope,,inner," <<<"$first"' "ranges --sort dram_bytes_per_s: the 1000 GB/s ranges first: $first"
check '"$BIN" ranges "$S" --csv | head -1 | grep -q "^kind,domain,name,count,.*,dram_bytes_per_s,"' "ranges --csv header"
out=$("$BIN" ranges "$S" --kind scope --top 1)
check 'grep -Eq "^scope .*outer$" <<<"$out" && grep -q "1 more row" <<<"$out"' "ranges --kind scope --top 1: $out"

# a session without metrics: the ranges, no metric table or key
out=$("$BIN" ranges "$PLAIN")
check '[ $? -eq 0 ] && ! grep -q "Hardware metrics" <<<"$out"' "ranges without metrics: $out"
check '"$BIN" ranges "$PLAIN" --json | jq -e "length > 0 and all(.[]; has(\"metrics\") | not)" >/dev/null' \
    "ranges --json without metrics: no metrics objects"

# --- warplens stats --------------------------------------------------------------------------------
out=$("$BIN" stats "$S")
check 'grep -q "^Hardware metrics per NVTX range name" <<<"$out" && grep -q "^Hardware metrics per scope name" <<<"$out"' \
    "stats: metric tables after the NVTX and scope tables"
check '! "$BIN" stats "$PLAIN" | grep -q "Hardware metrics"' "stats without metrics: no metric table"
check '! "$BIN" stats "$S" --csv | grep -q "Hardware metrics"' "stats --csv: unchanged"

# --- the Chrome JSON export ------------------------------------------------------------------------
check '"$BIN" export "$S" --format json -o "$TMP/m.json" >/dev/null' "export json"
X='[.traceEvents[] | select(.ph == "X")]'
check 'jq -e "$X | map(select(.name == \"copy_kernel\" and .args.correlation_id == 11))[0].args | .[\"metrics.dram__bytes_read.sum\"] == 1000000 and .[\"metrics.dram_bytes_per_s\"] == 1000000000000" "$TMP/m.json" >/dev/null' \
    "export: kernel slice carries its own metrics"
check 'jq -e "$X | map(select(.name == \"plain_kernel\"))[0].args | keys | all(startswith(\"metrics.\") | not)" "$TMP/m.json" >/dev/null' \
    "export: a kernel without metrics carries none"
check 'jq -e "$X | map(select(.cat == \"scope\" and .name == \"outer\"))[0].args | .[\"metrics.kernels\"] == 3 and .[\"metrics.fp32_flop\"] == 2097152 and .[\"metrics.smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\"] == 1048576" "$TMP/m.json" >/dev/null' \
    "export: scope slice carries its kernels' combined metrics, counters exact"
check 'jq -e "$X | map(select(.cat == \"nvtx\" and .name == \"step\"))[0].args[\"metrics.dram_bytes_per_s\"] | . > 200.79e9 and . < 200.80e9" "$TMP/m.json" >/dev/null' \
    "export: NVTX slice bandwidth from summed counters"
check 'jq -e "$X | map(select(.name == \"cuLaunchKernel\" and (.args | has(\"metrics.kernel_id\")))) | length == 1 and .[0].args[\"metrics.dram__bytes_read.sum\"] == 200000000" "$TMP/m.json" >/dev/null' \
    "export: the untimed kernel's launch call carries its metrics"
check '"$BIN" export "$PLAIN" --format json -o "$TMP/plain.json" >/dev/null && ! grep -q "\"metrics\." "$TMP/plain.json"' \
    "export without metrics: no metric args"

# --- the report ------------------------------------------------------------------------------------
check '"$BIN" report "$S" -o "$TMP/m.html" >/dev/null && "$BIN" report "$PLAIN" -o "$TMP/plain.html" >/dev/null' "report"
embedded() { python3 -c "
import json, re, sys
t = open(sys.argv[1], encoding='utf-8').read()
d = json.loads(re.search(r'<script type=.application/json. id=.wl-data.>(.*?)</script>', t, re.S).group(1))
$2" "$1"; }
if command -v python3 >/dev/null; then
    check 'embedded "$TMP/m.html" "
k = {r[\"short\"]: r for r in d[\"kernels\"]}
assert k[\"copy_kernel\"][\"metrics\"][\"measured\"] == 3 and \"metrics\" not in k[\"plain_kernel\"]
r = {x[\"name\"]: x for x in d[\"range_metrics\"]}
assert abs(r[\"step\"][\"metrics\"][\"summary\"][\"dram_bytes_per_s\"] - 201e6 / 1.001e-3) < 1
assert r[\"outer\"][\"kind\"] == \"scope\" and r[\"outer\"][\"metrics\"][\"measured\"] == 3"' "report: embedded metric data"
    check 'embedded "$TMP/plain.html" "
assert \"range_metrics\" not in d and all(\"metrics\" not in k for k in d[\"kernels\"])"' \
        "report without metrics: no metric data"
fi
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
    echo "SKIP browser check: chromium is not installed"
else
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$TMP/profile" \
        --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "file://$TMP/m.html" >"$TMP/m.dom" 2>"$TMP/m.log"
    errs=$(grep -E "Uncaught|CONSOLE\(.*(Error|error)|SyntaxError|TypeError|ReferenceError" "$TMP/m.log" | head -3)
    check '[ -z "$errs" ] && grep -q "id=\"wl-status\" data-ok=\"1\"" "$TMP/m.dom"' "report: the script failed: $errs"
    check 'grep -q "<table id=\"kernel-metrics-table\"" "$TMP/m.dom" && grep -q "<table id=\"range-metrics-table\"" "$TMP/m.dom"' \
        "report: metric tables drawn"
    check 'grep -q ">200.8<" "$TMP/m.dom"' "report: step's DRAM GB/s in the range table"
fi

# --- the demo recorded on the H100 under --metrics default (tests/data/metrics-h100.wlsession) --------
H=$DATA/metrics-h100.wlsession
"$BIN" ranges "$H" --json > "$TMP/h100.json" 2>"$TMP/h100.err"
check '[ $? -eq 0 ]' "ranges on the H100 metrics session: exit 0 ($(cat "$TMP/h100.err"))"
# 16 NVTX "batch" ranges, each holding its worker's three kernels; every scope three kernels
check '[ "$(jq -r '"'"'[.. | objects | select(.name? == "batch") | .kernels][0]'"'"' "$TMP/h100.json")" = 48 ]' \
    "H100: the 16 NVTX batch ranges hold 48 kernels"
"$BIN" ranges "$H" --kind scope > "$TMP/h100-scope.txt" 2>&1
check '[ "$(grep -c "^scope .* 3 .*stream[01]-batch-" "$TMP/h100-scope.txt")" -ge 16 ]' \
    "H100: each batch scope holds 3 kernels (table and metrics table)"
check 'grep -q "Hardware metrics per range name" "$TMP/h100-scope.txt"' "H100: metrics table per range name"

# --- usage errors ----------------------------------------------------------------------------------
"$BIN" ranges "$S" --kind bogus >/dev/null 2>&1
check '[ $? -eq 2 ]' "ranges --kind bogus: exit 2"
"$BIN" ranges "$S" --sort nope >/dev/null 2>&1
check '[ $? -eq 2 ]' "ranges --sort nope: exit 2"
"$BIN" ranges "$S" --sort start_ns >/dev/null 2>&1
check '[ $? -eq 2 ]' "ranges --sort start_ns without --instances: exit 2"
"$BIN" ranges "$S" --csv --json >/dev/null 2>&1
check '[ $? -eq 2 ]' "ranges --csv --json: exit 2"
"$BIN" ranges "$TMP/none.wlsession" >/dev/null 2>&1
check '[ $? -eq 1 ]' "ranges on a missing session: exit 1"
check '"$BIN" ranges --help | grep -q "^usage: warplens ranges"' "ranges --help"

summary test_ranges_cli
