#!/usr/bin/env bash
# CLI test of `warplens advise` on real H100 sessions (tests/data):
#  - the demo: only the host work between its phases;
#  - a C program launching 1-us kernels one by one: gpu-idle-launch with its evidence;
#  - a PyTorch program with host work between steps, per-iteration syncs and pageable copies:
#    gpu-idle-host, gpu-idle-sync (the sync calls named), copy-pageable;
#  - a metrics run (kernel replay): data-quality says the timeline could not be read;
#  - --json: one object, findings best first with every documented field; --min-gain, --top,
#    --range; usage errors exit 2 with one line;
#  - the planted-problem sessions from the H100 (tests/data/advise/): each problem found with its
#    evidence, its estimated gain within 25 % of the gain measured by running the fixed program
#    (advise-gains.json), the control silent; the tail shapes' model gain without a profiler within
#    25 % of the same programs run alone, and the shape whose traced gain is ~2 % (one wave + 1 block
#    of SM-filling blocks: CUPTI's late starts absorb it) reported with its gain without a profiler.
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
. "$(dirname "$0")/checks.sh"
TMP=$tmp

if ! command -v jq >/dev/null; then
    echo "SKIP: jq is not installed (apt-get install jq)"
    echo "test_advise_cli: 0 passed, 0 failed (skipped: no jq)"
    exit 0
fi
rules() { "$BIN" advise "$1" --json | jq -r '.findings[].rule' | sort | tr '\n' ' '; }

# the demo's phases are separated by host work (gpu-idle-host); nothing else in it is a problem
check '[ "$(rules "$DATA/demo-h100.wlsession")" = "gpu-idle-host " ]' "demo: only its host gaps: $(rules "$DATA/demo-h100.wlsession")"

J=$TMP/capture.json
"$BIN" advise "$DATA/capture-h100.wlsession" --json >"$J"
check '[ "$(jq -r ".findings[0].rule" "$J")" = gpu-idle-launch ]' "capture: the launch-bound loop found: $(jq -c '[.findings[].rule]' "$J")"
check 'jq -e ".findings[0].evidence.gaps >= 100 and .findings[0].evidence.kernels_shorter_than_launch_call > 100" "$J" >/dev/null' \
    "capture: evidence counts the gaps and the kernels shorter than their launch call"
check 'jq -e ".findings[0].evidence.kernels_after_gaps | test(\"wl_test_saxpy\")" "$J" >/dev/null' "capture: the kernels named"
check 'jq -e ".findings[0].fix | test(\"CUDA graph\")" "$J" >/dev/null' "capture: the fix names CUDA graphs"

J=$TMP/torch.json
"$BIN" advise "$DATA/torch-h100.wlsession" --json >"$J"
check '[ "$(rules "$DATA/torch-h100.wlsession")" = "copy-pageable gpu-idle-host gpu-idle-sync " ]' \
    "torch: host gaps, syncs and pageable copies: $(jq -c '[.findings[].rule]' "$J")"
check 'jq -e "[.findings[] | has(\"rule\", \"title\", \"severity\", \"estimated_gain_ns\", \"estimated_gain_pct\", \"span\", \"evidence\", \"fix\")] | all" "$J" >/dev/null' \
    "every finding has the documented fields"
check 'jq -e "[.findings[].span | has(\"start_ns\", \"end_ns\")] | all" "$J" >/dev/null' "spans have start and end"
check 'jq -e "[.findings[].estimated_gain_ns] as \$g | \$g == (\$g | sort | reverse)" "$J" >/dev/null' "best first"
check 'jq -e ".findings[] | select(.rule == \"gpu-idle-sync\") | .evidence.calls | test(\"cuStreamSynchronize\")" "$J" >/dev/null' \
    "torch: the synchronising calls named"
check 'jq -e ".findings[] | select(.rule == \"copy-pageable\") | .evidence.memcpy_ids | length > 0" "$J" >/dev/null' \
    "torch: the pageable copies' ids"
n=$("$BIN" advise "$DATA/torch-h100.wlsession" --json --min-gain 50 | jq '.findings | length')
check '[ "$n" = 1 ]' "--min-gain 50 keeps the one finding above it (got $n)"
n=$("$BIN" advise "$DATA/torch-h100.wlsession" --json --top 2 | jq '.findings | length')
check '[ "$n" = 2 ]' "--top 2 (got $n)"
out=$("$BIN" advise "$DATA/torch-h100.wlsession" 2>&1)
check 'grep -q "^1\. \[gpu-idle-host, high\]" <<<"$out" && grep -q "   fix: " <<<"$out" && grep -q "   evidence: " <<<"$out"' \
    "text form: numbered findings with evidence and fix"

out=$("$BIN" advise "$DATA/metrics-h100.wlsession" --json)
check 'jq -e "[.findings[].rule] | index(\"data-quality\")" <<<"$out" >/dev/null' "metrics run: data quality says what is missing"
out=$("$BIN" advise "$DATA/killed-h100.wlsession" --json)
check 'jq -e "[.findings[] | select(.rule == \"data-quality\") | .title] | any(test(\"did not end\"))" <<<"$out" >/dev/null' \
    "killed run: the incomplete process said"

# --range: a name no range has is one clear line
out=$("$BIN" advise "$DATA/torch-h100.wlsession" --range no-such-range 2>&1)
rc=$?
check '[ $rc -eq 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "no-such-range" <<<"$out"' "unknown range: one line ($rc): $out"
top=$("$BIN" advise "$DATA/torch-ops-h100.wlsession" --json | jq -r '.step_name')
if [ -n "$top" ]; then
    out=$("$BIN" advise "$DATA/torch-ops-h100.wlsession" --range "$top" --json)
    check '[ $? -eq 0 ] && jq -e ".findings | type == \"array\"" <<<"$out" >/dev/null' "--range $top"
fi
for bad in "--min-gain" "--min-gain x" "--top 0" "--bogus" ""; do
    out=$("$BIN" advise $bad "$DATA/demo-h100.wlsession" 2>&1 >/dev/null)
    rc=$?
    [ -z "$bad" ] && { out=$("$BIN" advise 2>&1 >/dev/null); rc=$?; }
    check '[ $rc -eq 2 ] && grep -q "^warplens advise: " <<<"$out"' "usage error '$bad' exits 2 ($rc): $out"
done

# planted problems recorded on the H100 (scripts/gpu-advise.sh; tests/data/advise/, gzip'd). The
# estimate comes from the kept session, so it is compared with that session's own gain: its step
# time minus the fixed program's median (gain_ns_session). Four tail shapes check the dispatch model
# (docs/advise.md, "Tail effect"): SM-filling blocks at 1 wave + 1 block (measured ~2 % traced, 18 %
# without a profiler) and 1.1 waves of long blocks, half-SM blocks at 2.5 and 1.5 waves.
G=$DATA/advise/advise-gains.json
if [ -f "$G" ]; then
    declare -A RULE=([launch_bound]=gpu-idle-launch [sync]=gpu-idle-sync [pageable]=copy-pageable
        [small_copies]=copy-small [tail_long]=tail-effect [tail_half]=tail-effect [tail_short]=tail-effect
        [occupancy]=occupancy [serial_streams]=serial-streams)
    for mode in control tail "${!RULE[@]}"; do
        z=$DATA/advise/advise-$mode.wlsession.gz
        check '[ -f "$z" ]' "$mode: session kept"
        [ -f "$z" ] || continue
        s=$TMP/advise-$mode.wlsession
        gzip -dc "$z" >"$s"
        j=$("$BIN" advise "$s" --json --range step)
        if [ "$mode" = control ]; then
            check '[ "$(jq ".findings | length" <<<"$j")" = 0 ]' \
                "control: no finding: $(jq -c '[.findings[] | [.rule, .estimated_gain_pct]]' <<<"$j")"
            continue
        fi
        if [[ $mode == tail* ]]; then
            # the model's gain without a profiler against the same programs run alone
            alone=$(jq -r ".modes[\"$mode\"].gain_pct_unprofiled" "$G")
            model=$(jq -r '[.findings[] | select(.rule == "tail-effect")][0].evidence.model_gain_pct_untraced // empty' <<<"$j")
            check 'python3 -c "import sys; e, m = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (m > 0 and abs(e - m) <= 0.25 * m))" "$model" "$alone"' \
                "$mode: model gain without a profiler $model % within 25 % of the measured $alone %"
        fi
        if [ "$mode" = tail ]; then
            # one wave + 1 block of SM-filling blocks: the traced run absorbs the block (measured ~2 %),
            # the program run alone does not: the finding gives that gain and says so
            f=$(jq -c '[.findings[] | select(.rule == "tail-effect")][0] // empty' <<<"$j")
            check '[ -n "$f" ] && grep -q "without a profiler" <<<"$(jq -r .title <<<"$f")"' \
                "tail (1 wave + 1 block, SM-filling): found, titled with the gain without a profiler: $(jq -r .title <<<"$f")"
            est=$(jq -r '.estimated_gain_pct // empty' <<<"$f")
            check 'python3 -c "import sys; e, m = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (abs(e - m) <= 0.25 * m))" "$est" "$alone"' \
                "tail: estimated gain $est % within 25 % of the measured $alone % without a profiler"
            continue
        fi
        want=${RULE[$mode]}
        measured=$(jq -r ".modes[\"$mode\"].gain_ns_session" "$G")
        est=$(jq -r "[.findings[] | select(.rule == \"$want\") | .estimated_gain_ns][0] // empty" <<<"$j")
        check '[ -n "$est" ]' "$mode: $want found: $(jq -c '[.findings[].rule]' <<<"$j")"
        [ -n "$est" ] || continue
        ev=$(jq -c "[.findings[] | select(.rule == \"$want\")][0].evidence | length" <<<"$j")
        check '[ "$ev" -ge 2 ]' "$mode: $want carries evidence ($ev items)"
        check 'python3 -c "import sys; e, m = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (m > 0 and abs(e - m) <= 0.25 * m))" "$est" "$measured"' \
            "$mode: estimated gain $est ns within 25 % of the measured $measured ns"
    done
fi
summary test_advise_cli
