#!/usr/bin/env bash
# CLI test of `warplens stats`: every table (overview, kernels, memcpy/memset by kind, API calls,
# NVTX ranges, scopes, synchronisation waits, records lost) on the recorded sessions and on a
# synthetic one with API calls; lines fit 100 columns; --csv sections have a header and rows with
# the header's number of fields (checked with Python's csv module); --only and --top; errors.
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
BUILD=${WARPLENS_BUILD_DIR:-$(dirname "$(dirname "$BIN")")}
. "$(dirname "$0")/checks.sh"
TMP=$tmp

sessions=("$DATA"/*.wlsession)
if [ -x "$BUILD/bin/test_synth_session" ]; then
    "$BUILD/bin/test_synth_session" --make-session "$TMP/syn.wlsession" --kernels 300 >/dev/null
    check '[ $? -eq 0 ]' "synthetic session"
    sessions+=("$TMP/syn.wlsession")
fi

for s in "${sessions[@]}"; do
    name=$(basename "$s")
    out=$("$BIN" stats "$s")
    check '[ $? -eq 0 ]' "$name: stats exit status"
    long=$(awk 'length($0) > 100' <<<"$out")
    check '[ -z "$long" ]' "$name: lines over 100 columns: $long"
    for title in "^program " "^records " "^lost " "^GPU kernels" "^Memory copies and sets" "^CUDA API calls" \
        "^NVTX ranges" "^warplens scopes" "^Synchronisation waits" "^Records lost"; do
        check 'grep -q "$title" <<<"$out"' "$name: no '$title' in stats"
    done
    csv=$("$BIN" stats "$s" --csv)
    check '[ $? -eq 0 ]' "$name: --csv exit status"
    for t in kernels copies api nvtx scopes sync lost; do
        check 'grep -q "^# $t$" <<<"$csv"' "$name: csv section $t"
    done
    if command -v python3 >/dev/null; then
        problems=$(python3 -c '
import csv, sys
sections, cur = {}, None
for line in sys.stdin.read().splitlines():
    if line.startswith("# "):
        cur = line[2:]; sections[cur] = []
    elif line and cur:
        sections[cur].append(line)
for name, lines in sections.items():
    rows = list(csv.reader(lines))
    if not rows:
        print(name, "no header"); continue
    for r in rows[1:]:
        if len(r) != len(rows[0]):
            print(name, "row has", len(r), "fields, header", len(rows[0]))
' <<<"$csv")
        check '[ -z "$problems" ]' "$name: csv: $problems"
    fi
    # --only prints one table; with --csv, just that table without the section comment
    only=$("$BIN" stats "$s" --only copies --csv)
    check '[ "$(head -1 <<<"$only")" = "kind,memory,count,bytes,total_ns,gbps" ]' "$name: --only copies --csv: $only"
    check '! grep -q "^GPU kernels" <<<"$("$BIN" stats "$s" --only lost)"' "$name: --only lost shows one table"
done

# counts on the synthetic session: 300 launches + copies + sets + graph + sync + late copy
if [ -f "$TMP/syn.wlsession" ]; then
    csv=$("$BIN" stats "$TMP/syn.wlsession" --csv --only api)
    check 'grep -q "^\"cudaLaunchKernel\",launch,300," <<<"$csv"' "synthetic: 300 launches: $csv"
    check 'grep -q "^\"cudaGraphLaunch\",graph_launch,1," <<<"$csv"' "synthetic: graph launch"
    top=$("$BIN" stats "$TMP/syn.wlsession" --only kernels --top 2)
    check 'grep -q "more kernel name" <<<"$top"' "--top 2 says more names exist: $top"
    check '[ "$("$BIN" stats "$TMP/syn.wlsession" --only sync --csv | wc -l)" = 2 ]' "one sync wait row"
fi

out=$("$BIN" stats "$TMP/none.wlsession" 2>&1)
check '[ $? -eq 1 ] && [ "$(wc -l <<<"$out")" = 1 ]' "missing session: $out"
out=$("$BIN" stats "${sessions[0]}" --only bogus 2>&1)
check '[ $? -eq 2 ]' "unknown table: $out"
out=$("$BIN" stats "${sessions[0]}" --top 0 2>&1)
check '[ $? -eq 2 ]' "bad --top: $out"
out=$("$BIN" stats "${sessions[0]}" --frobnicate 2>&1)
check '[ $? -eq 2 ]' "unknown option: $out"

summary test_stats_cli
