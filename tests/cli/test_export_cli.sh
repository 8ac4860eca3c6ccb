#!/usr/bin/env bash
# CLI test of `warplens export`: a synthetic session with API calls, flows and awkward overlaps
# (made by test_synth_session --make-session) and the recorded sessions in tests/data, exported as
# Perfetto and Chrome JSON.
#  - Perfetto: `protoc --decode` with tests/proto/warplens_trace.proto shows no unknown fields;
#  - JSON (jq): parses, every event has ph / numeric ts / dur >= 0, slices nest per pid+tid, each
#    flow id has one "s" and one "f" with bp "e" (s.ts <= f.ts), every pid and tid is named,
#    counters are numeric, GPU pids are 0x10000000 + device;
#  - both formats agree on slice, flow and counter counts;
#  - golden summaries (slices per category and name) of the tests/data sessions; a golden is
#    skipped, saying so, when the session's record counts changed (WARPLENS_UPDATE_GOLDEN=1
#    rewrites them);
#  - error paths: exit status, one-line message, no output file left behind.
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
BUILD=${WARPLENS_BUILD_DIR:-$(dirname "$(dirname "$BIN")")}
GOLDEN=$SRC/tests/cli/golden
. "$(dirname "$0")/checks.sh"
TMP=$tmp

for tool in protoc jq; do
    if ! command -v $tool >/dev/null; then
        echo "SKIP: $tool is not installed (apt-get install protobuf-compiler jq)"
        echo "test_export_cli: 0 passed, 0 failed (skipped: no $tool)"
        exit 0
    fi
done

PROTO_DIR=$SRC/tests/proto
decode() { protoc --decode=warplens_trace.Trace -I "$PROTO_DIR" "$PROTO_DIR/warplens_trace.proto" <"$1"; }

# JSON structure checks; prints nothing when all hold, else one line per problem.
JQ_CHECKS='
def problems:
  .traceEvents as $ev
  | ( [$ev[] | select(has("ph") | not)] | if length > 0 then "events without ph" else empty end ),
    ( [$ev[] | select(.ph != "M" and ((.ts | type) != "number"))] | if length > 0 then "non-numeric ts" else empty end ),
    ( [$ev[] | select(.ph == "X" and ((.dur | type) != "number" or .dur < 0))] | if length > 0 then "X without dur >= 0" else empty end ),
    ( [$ev[] | select(.pid == 0)] | if length > 0 then "pid 0" else empty end ),
    ( [$ev[] | select(.ph == "C") | .args[] | select(type != "number")] | if length > 0 then "non-numeric counter" else empty end ),
    # every pid and every (pid, tid) with slices or flows is named
    ( ([$ev[] | select(.ph == "M" and .name == "process_name") | .pid] | unique) as $pn
      | [$ev[] | select(.ph != "M") | .pid] | unique | map(select(. as $p | $pn | index($p) | not))
      | if length > 0 then "unnamed pids \(.)" else empty end ),
    ( ([$ev[] | select(.ph == "M" and .name == "thread_name") | [.pid, .tid]] | unique) as $tn
      | [$ev[] | select(.ph == "X" or .ph == "s" or .ph == "f") | [.pid, .tid]] | unique
      | map(select(. as $k | $tn | index([$k]) | not))
      | if length > 0 then "unnamed tids \(.)" else empty end ),
    # slices nest per thread: sorted by (ts, -dur), none may end after its enclosing slice
    ( [$ev[] | select(.ph == "X")] | group_by([.pid, .tid])[]
      | sort_by([.ts, -.dur])
      | reduce .[] as $e ({stack: [], bad: 0};
          .stack |= (until(length == 0 or .[-1] > $e.ts + 0.0005; .[:-1]))
          | if (.stack | length) > 0 and ($e.ts + $e.dur) > .stack[-1] + 0.0005 then .bad += 1 else . end
          | .stack += [$e.ts + $e.dur])
      | select(.bad > 0) | "bad nesting: \(.bad) slices" ),
    # flows: one s and one f (bp e) per id, s no later than f
    ( [$ev[] | select(.ph == "s" or .ph == "f")] | group_by(.id)[]
      | select((map(.ph) | sort) != ["f", "s"] or (map(select(.ph == "f") | .bp) != ["e"])
               or (map(select(.ph == "s") | .ts)[0] > map(select(.ph == "f") | .ts)[0] + 0.0005))
      | "bad flow \(.[0].id)" ),
    # GPU pseudo processes
    ( [$ev[] | select(.ph == "M" and .name == "process_name" and (.args.name | startswith("GPU ")))
       | select(.pid < 268435456 or .pid > 268435456 + 64)] | if length > 0 then "bad GPU pid" else empty end );
[problems] | .[:10][]'

# summary used for goldens and cross-checks: "category name count" per slice kind
summary_json() { jq -r '[.traceEvents[] | select(.ph == "X") | "\(.cat)\t\(.name[:100])"] | group_by(.) | map("\(.[0])\t\(length)")[]' "$1"; }

check_pair() { # NAME SESSION
    local name=$1 session=$2 out
    out=$("$BIN" export "$session" --format perfetto -o "$TMP/$name.pftrace" 2>&1)
    check '[ $? -eq 0 ] && [ -s "$TMP/$name.pftrace" ]' "$name: perfetto export: $out"
    out=$("$BIN" export "$session" --format json -o "$TMP/$name.json" 2>&1)
    check '[ $? -eq 0 ] && [ -s "$TMP/$name.json" ]' "$name: json export: $out"
    decode "$TMP/$name.pftrace" >"$TMP/$name.txt" 2>"$TMP/$name.err"
    check '[ $? -eq 0 ]' "$name: protoc --decode failed: $(head -3 "$TMP/$name.err")"
    check '! grep -qE "^ *[0-9]+( |:|\{)" "$TMP/$name.txt"' \
        "$name: unknown fields in the Perfetto trace: $(grep -E '^ *[0-9]+( |:|\{)' "$TMP/$name.txt" | head -3)"
    check '[ "$(head -c1 "$TMP/$name.pftrace" | od -An -tx1 | tr -d " ")" = 0a ]' "$name: trace starts with 0x0a"
    check 'jq -e . "$TMP/$name.json" >/dev/null' "$name: JSON parses"
    local problems
    problems=$(jq -r "$JQ_CHECKS" "$TMP/$name.json" 2>&1)
    check '[ -z "$problems" ]' "$name: JSON checks: $problems"
    # the two formats carry the same slices, flows and counter values
    local pb pf pc jx js jc
    pb=$(grep -c "type: TYPE_SLICE_BEGIN" "$TMP/$name.txt")
    pf=$(grep -c "^ *flow_ids:" "$TMP/$name.txt")
    pc=$(grep -c "type: TYPE_COUNTER" "$TMP/$name.txt")
    jx=$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$TMP/$name.json")
    js=$(jq '[.traceEvents[] | select(.ph == "s")] | length' "$TMP/$name.json")
    jc=$(jq '[.traceEvents[] | select(.ph == "C")] | length' "$TMP/$name.json")
    check '[ "$pb" = "$jx" ]' "$name: slices perfetto $pb vs json $jx"
    check '[ "$pf" = "$js" ]' "$name: flows perfetto $pf vs json $js"
    check '[ "$pc" = "$jc" ]' "$name: counter values perfetto $pc vs json $jc"
    check '[ "$(grep -c "^ *terminating_flow_ids:" "$TMP/$name.txt")" = "$pf" ]' "$name: flow ends = flow starts"
    # Perfetto names are interned: each event name string appears once in the file
    check '[ -z "$(grep -A1 "event_names {" "$TMP/$name.txt" | grep "name:" | sort | uniq -d)" ]' \
        "$name: an event name interned twice"
}

# --- synthetic session with API calls and flows ----------------------------------------------
MAKE=$BUILD/bin/test_synth_session
if [ -x "$MAKE" ]; then
    "$MAKE" --make-session "$TMP/syn.wlsession" --kernels 400 >"$TMP/syn.counts"
    check '[ $? -eq 0 ]' "synthetic session"
    check_pair syn "$TMP/syn.wlsession"
    flows=$(sed -n 's/.* \([0-9]*\) flows$/\1/p' "$TMP/syn.counts")
    kernels=$(sed -n 's/.*: \([0-9]*\) kernels.*/\1/p' "$TMP/syn.counts")
    check '[ "$(jq "[.traceEvents[] | select(.ph == \"s\")] | length" "$TMP/syn.json")" = "$flows" ]' \
        "synthetic: every launch/copy with GPU work has a flow ($flows expected)"
    check '[ "$(jq "[.traceEvents[] | select(.cat == \"kernel\")] | length" "$TMP/syn.json")" = "$kernels" ]' \
        "synthetic: all $kernels kernels present"
    # graph launch: one flow per kernel
    check '[ "$(jq "[.traceEvents[] | select(.name == \"cudaGraphLaunch\")] as \$g | [.traceEvents[] | select(.ph == \"s\" and .ts == \$g[0].ts and .tid == \$g[0].tid)] | length" "$TMP/syn.json")" = 3 ]' \
        "graph launch has one flow per kernel"
    # the NVTX range that partially overlaps an API call sits on its own lane
    check 'jq -e "[.traceEvents[] | select(.ph == \"M\" and .name == \"thread_name\" and (.args.name | test(\"overlap\")))] | length >= 2" "$TMP/syn.json" >/dev/null' \
        "overlap lanes named"
    check 'jq -e "[.traceEvents[] | select(.name == \"never-ended\") | .args.unterminated] == [true]" "$TMP/syn.json" >/dev/null' \
        "unterminated NVTX range kept and marked"
    check 'jq -e "[.traceEvents[] | select(.cat == \"kernel\") | .args | has(\"grid\") and has(\"block\") and has(\"registers_per_thread\") and has(\"static_smem\") and has(\"dynamic_smem\") and has(\"occupancy_pct\") and has(\"occupancy_limiter\") and has(\"correlation_id\")] | all" "$TMP/syn.json" >/dev/null' \
        "kernel annotations"
    check 'jq -e "[.traceEvents[] | select(.ph == \"C\" and .name == \"GPU fill (estimated %)\")] | length > 0" "$TMP/syn.json" >/dev/null' \
        "GPU fill counter"
    check 'grep -q "clock_id: 64" "$TMP/syn.txt" && grep -q "primary_trace_clock: 1" "$TMP/syn.txt" && grep -q "timestamp_clock_id: 64" "$TMP/syn.txt"' \
        "clock domain declared"
else
    bad "test_synth_session not built ($MAKE): cannot make the synthetic session"
fi

# --- recorded sessions, with golden summaries ---------------------------------------------------
for session in "$DATA"/*.wlsession; do
    [ -e "$session" ] || continue
    name=$(basename "$session" .wlsession)
    check_pair "$name" "$session"
    records=$("$BIN" info "$session" | grep '^records')
    {
        echo "# $records"
        summary_json "$TMP/$name.json"
        echo "flows	$(jq '[.traceEvents[] | select(.ph == "s")] | length' "$TMP/$name.json")"
    } >"$TMP/$name.golden"
    g=$GOLDEN/export_$name.txt
    if [ "${WARPLENS_UPDATE_GOLDEN:-0}" = 1 ]; then
        mkdir -p "$GOLDEN" && cp "$TMP/$name.golden" "$g" && echo "updated $g"
    elif [ ! -f "$g" ]; then
        echo "SKIP golden $name: no $g yet (new session; WARPLENS_UPDATE_GOLDEN=1 writes it)"
    elif [ "$(head -1 "$g")" != "# $records" ]; then
        echo "SKIP golden $name: the session's record counts changed ($records);" \
             "regenerate with WARPLENS_UPDATE_GOLDEN=1"
    else
        check 'diff -u "$g" "$TMP/$name.golden" >&2' "$name: summary differs from $g"
    fi
done

# --- errors -----------------------------------------------------------------------------------
out=$("$BIN" export "$TMP/missing.wlsession" -o "$TMP/m.pftrace" 2>&1)
check '[ $? -eq 1 ] && [ ! -e "$TMP/m.pftrace" ] && [ "$(wc -l <<<"$out")" = 1 ]' "missing session: $out"
out=$("$BIN" export "$DATA/demo-h100.wlsession" --format svg -o "$TMP/x.svg" 2>&1)
check '[ $? -eq 2 ] && [ ! -e "$TMP/x.svg" ]' "bad format: $out"
out=$("$BIN" export "$DATA/demo-h100.wlsession" 2>&1)
check '[ $? -eq 2 ]' "no -o: $out"
out=$("$BIN" export "$DATA/demo-h100.wlsession" -o "$TMP/nodir/x.pftrace" 2>&1)
check '[ $? -eq 1 ] && [ -z "$(ls "$TMP" | grep tmp)" ]' "unwritable output: $out"
echo "not a session" >"$TMP/bad.wlsession"
out=$("$BIN" export "$TMP/bad.wlsession" -o "$TMP/b.json" 2>&1)
check '[ $? -eq 1 ] && [ ! -e "$TMP/b.json" ]' "not a session: $out"
check '[ -z "$(ls "$TMP" | grep "\.tmp\.")" ]' "no temporary files left: $(ls "$TMP")"

summary test_export_cli
