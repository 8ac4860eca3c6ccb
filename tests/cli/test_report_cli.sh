#!/usr/bin/env bash
# CLI test of `warplens report`: the page is self-contained (no http(s) references, no external
# scripts, styles or images), embeds its data as JSON, caps the timeline on a large session and
# says so; loaded in headless Chromium it runs without console errors, its script builds the
# timeline, fill chart and tables (checked in the dumped DOM), and a screenshot is non-trivial.
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
BUILD=${WARPLENS_BUILD_DIR:-$(dirname "$(dirname "$BIN")")}
. "$(dirname "$0")/checks.sh"
TMP=$tmp

pages=()
for s in "$DATA"/*.wlsession; do
    [ -e "$s" ] || continue
    n=$(basename "$s" .wlsession)
    out=$("$BIN" report "$s" -o "$TMP/$n.html" 2>&1)
    check '[ $? -eq 0 ] && [ -s "$TMP/$n.html" ]' "$n: report: $out"
    pages+=("$TMP/$n.html")
done
if [ -x "$BUILD/bin/test_synth_session" ]; then
    "$BUILD/bin/test_synth_session" --make-session "$TMP/syn.wlsession" --kernels 3000 >/dev/null
    out=$("$BIN" report "$TMP/syn.wlsession" -o "$TMP/syn.html" 2>&1)
    check '[ $? -eq 0 ]' "synthetic report: $out"
    pages+=("$TMP/syn.html")
    # a capped page: fewer intervals than the session has, and the page says so
    out=$("$BIN" report "$TMP/syn.wlsession" --max-slices 1000 -o "$TMP/capped.html" 2>&1)
    check '[ $? -eq 0 ] && grep -q "leading time window" <<<"$out"' "capped report: $out"
    check 'grep -q "\"capped\":true" "$TMP/capped.html"' "capped flag embedded"
    pages+=("$TMP/capped.html")
fi

# capture ranges (--capture-range): the spans drawn on their own track at the top of the process
if [ -x "$BUILD/bin/test_capture_range" ]; then
    "$BUILD/bin/test_capture_range" --make-session "$TMP/ranges.wlsession" >/dev/null
    out=$("$BIN" report "$TMP/ranges.wlsession" -o "$TMP/ranges.html" 2>&1)
    check '[ $? -eq 0 ]' "capture-range report: $out"
    pages+=("$TMP/ranges.html")
fi

# a merged job of several ranks (bench_merge --make, straggler rank 2): the ranks table and the
# per-step imbalance chart
if [ -x "$BUILD/bin/bench_merge" ]; then
    "$BUILD/bin/bench_merge" --make "$TMP/job" --ranks 4 --hosts 2 --kernels 800 --straggler 2 >/dev/null &&
        "$BIN" merge -q -o "$TMP/job.wlsession" "$TMP/job" &&
        out=$("$BIN" report "$TMP/job.wlsession" -o "$TMP/ranks.html" 2>&1)
    check '[ $? -eq 0 ]' "ranked report: $out"
    pages+=("$TMP/ranks.html")
fi

for p in "${pages[@]}"; do
    n=$(basename "$p")
    check '! grep -qiE "(src|href)=\"?(https?:)?//" "$p"' "$n: references an external resource"
    check '! grep -qiE "<link |<img |<iframe " "$p"' "$n: external asset tags"
    check 'grep -q "<script type=\"application/json\" id=\"wl-data\">" "$p"' "$n: embedded data"
    if command -v python3 >/dev/null; then
        check 'python3 -c "
import json, re, sys
t = open(sys.argv[1], encoding=\"utf-8\").read()
m = re.search(r\"<script type=.application/json. id=.wl-data.>(.*?)</script>\", t, re.S)
d = json.loads(m.group(1))
assert d[\"overview\"] and isinstance(d[\"slices\"], list) and isinstance(d[\"kernels\"], list)
for s in d[\"slices\"]:
    assert len(s) == 6 and s[2] >= 0
" "$p"' "$n: embedded JSON parses with the expected shape"
    fi
done

# --- headless Chromium ----------------------------------------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
    echo "SKIP browser checks: chromium is not installed (apt-get install -y chromium)"
else
    flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
        --disable-sync --no-first-run --window-size=1400,1000)
    for p in "${pages[@]}"; do
        n=$(basename "$p" .html)
        rm -rf "$TMP/profile"
        timeout 120 "$CHROME" "${flags[@]}" --user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 \
            --virtual-time-budget=5000 --dump-dom "file://$p" >"$TMP/$n.dom" 2>"$TMP/$n.log"
        check '[ -s "$TMP/$n.dom" ]' "$n: chromium --dump-dom produced nothing: $(tail -3 "$TMP/$n.log")"
        errs=$(grep -E "Uncaught|CONSOLE\(.*(Error|error)|SyntaxError|TypeError|ReferenceError" "$TMP/$n.log" | head -3)
        check '[ -z "$errs" ]' "$n: console errors: $errs"
        check 'grep -q "id=\"wl-status\" data-ok=\"1\"" "$TMP/$n.dom"' "$n: the script did not finish"
        check 'grep -q "<svg id=\"timeline-svg\"" "$TMP/$n.dom" && grep -q "class=\"slice\"" "$TMP/$n.dom"' \
            "$n: timeline has no slices"
        check 'grep -q "<svg id=\"fill-svg\"" "$TMP/$n.dom" && grep -q "class=\"fill-line\"" "$TMP/$n.dom"' \
            "$n: GPU fill chart has no line"
        check '[ "$(grep -o "<table id=\"kernels-table\"" "$TMP/$n.dom" | wc -l)" = 1 ]' "$n: kernels table"
        check 'grep -q "id=\"copies-table\"" "$TMP/$n.dom" && grep -q "id=\"nvtx-table\"" "$TMP/$n.dom" && grep -q "id=\"scopes-table\"" "$TMP/$n.dom"' \
            "$n: summary tables"
        # the page opens with the findings: their section comes before the timeline
        fpos=$(grep -bo 'id="findings"' "$TMP/$n.dom" | head -1 | cut -d: -f1)
        tpos=$(grep -bo 'id="timeline"' "$TMP/$n.dom" | head -1 | cut -d: -f1)
        check '[ -n "$fpos" ] && [ -n "$tpos" ] && [ "$fpos" -lt "$tpos" ]' "$n: findings section before the timeline"
    done
    if [ -f "$TMP/torch-h100.dom" ]; then
        check 'grep -q "class=\"finding sev-high\"" "$TMP/torch-h100.dom" && grep -q "show on timeline" "$TMP/torch-h100.dom"' \
            "torch-h100: its findings drawn with a link to the timeline"
    fi
    syn_dom=$TMP/syn.dom
    if [ -f "$syn_dom" ]; then
        check 'grep -q "class=\"flow\"" "$syn_dom"' "synthetic: flows drawn"
        check 'grep -q "class=\"over\"" "$syn_dom"' "synthetic: oversubscribed intervals shaded"
        check 'grep -q "overlap 1" "$syn_dom"' "synthetic: overlap lane shown"
    fi
    if [ -f "$TMP/ranges.dom" ]; then
        check 'grep -q "capture ranges (cudaProfilerStart .. Stop)" "$TMP/ranges.dom"' "capture ranges: their track is drawn"
        check 'grep -q "traced (capture range)" "$TMP/ranges.dom"' "capture ranges: in the legend"
    fi
    if [ -f "$TMP/ranks.dom" ]; then
        check '[ "$(grep -oE "<tr><td class=\"l \"( title=\"\")?>[0-3]</td><td class=\"l \"( title=\"\")?>host[01]</td>" "$TMP/ranks.dom" | wc -l)" = 4 ]' \
            "ranks: the table has a row per rank"
        check '[ "$(grep -o "data-straggler=\"2\"" "$TMP/ranks.dom" | wc -l)" = 8 ]' "ranks: a bar per step, each naming rank 2"
    fi
    [ -f "$TMP/capped.dom" ] && check 'grep -q "id=\"cap-note\"" "$TMP/capped.dom"' "capped page shows its note"
    shot_page=${pages[-1]}
    [ -f "$TMP/syn.html" ] && shot_page=$TMP/syn.html
    rm -rf "$TMP/profile"
    timeout 120 "$CHROME" "${flags[@]}" --user-data-dir="$TMP/profile" --virtual-time-budget=5000 \
        --screenshot="$TMP/shot.png" "file://$shot_page" >/dev/null 2>&1
    size=$(stat -c %s "$TMP/shot.png" 2>/dev/null || echo 0)
    check '[ "$size" -gt 40000 ]' "screenshot missing or nearly blank ($size bytes)"
    if [ -n "${WARPLENS_REPORT_SHOT:-}" ]; then cp "$TMP/shot.png" "$WARPLENS_REPORT_SHOT"; fi
fi

out=$("$BIN" report "$TMP/none.wlsession" -o "$TMP/none.html" 2>&1)
check '[ $? -eq 1 ] && [ ! -e "$TMP/none.html" ]' "missing session: $out"
out=$("$BIN" report "$DATA/demo-h100.wlsession" 2>&1)
check '[ $? -eq 2 ]' "no -o: $out"
out=$("$BIN" report "$DATA/demo-h100.wlsession" --max-slices 5 -o "$TMP/x.html" 2>&1)
check '[ $? -eq 2 ] && [ ! -e "$TMP/x.html" ]' "bad --max-slices: $out"

summary test_report_cli
