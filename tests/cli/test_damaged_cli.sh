#!/usr/bin/env bash
# CLI test of damaged sessions: every read verb ends, with status 0 or 1 and at most one line on
# stderr, on sessions edited the way users edit them with sqlite3. The `timeout` only keeps a hang
# from stalling CI (it is a hang check, not a speed check: the verbs take milliseconds here).
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
. "$(dirname "$0")/checks.sh"

# run_verbs SESSION WHAT: every read verb ends (no hang), exit status 0 or 1, and a failure says
# why in one line.
run_verbs() {
    local s=$1 what=$2 v rc lines
    local verbs=("stats" "stats --csv" "info" "kernels" "kernels --json" "kernels --calls" "kernels --stalls"
        "kernel 1" "ranges" "ranges --instances --json" "samples" "samples --pm" "concurrency"
        "concurrency --series" "throughput" "occupancy-check" "export -o $tmp/t.pftrace"
        "export --format json -o $tmp/t.json" "report -o $tmp/t.html")
    for v in "${verbs[@]}"; do
        read -r -a args <<<"$v"
        timeout 120 "$BIN" "${args[0]}" "$s" "${args[@]:1}" >/dev/null 2>"$tmp/err"
        rc=$?
        check '[ $rc -ne 124 ]' "$what: warplens $v did not end"
        check '[ $rc -eq 0 ] || [ $rc -eq 1 ]' "$what: warplens $v exit status $rc: $(head -3 "$tmp/err")"
        lines=$(wc -l <"$tmp/err")
        check '[ $rc -eq 0 ] || [ "$lines" -eq 1 ]' "$what: warplens $v failed with $lines lines: $(head -3 "$tmp/err")"
    done
}

# The hang of issue 18: one text value where api_call.pid's integer belongs made every verb that
# walks API calls per thread seek the same row forever.
cp "$DATA/metrics-h100.wlsession" s.wlsession
sqlite3 s.wlsession "update api_call set pid='' where rowid=(select min(rowid) from api_call)"
run_verbs s.wlsession "text pid"

summary damaged_cli
