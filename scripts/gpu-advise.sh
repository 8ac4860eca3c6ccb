#!/usr/bin/env bash
# The planted problems of `warplens advise`, recorded on the GPU machine (GPU suite step "advise",
# or by hand): for each mode of tests/gpu/gpu_advise_planted.cu, the planted program and its fixed
# variant both run under `warplens run` (the same tracing overhead on both), alternating, for
# WARPLENS_ADVISE_ROUNDS rounds (default 3; rounds after the first are skipped once the script has run
# WARPLENS_ADVISE_BUDGET_S seconds, default 150). The first round's planted session is kept as
# OUTDIR/advise-MODE.wlsession; every other session goes to a scratch folder and is deleted.
#
# Writes OUTDIR/advise-gains.json:
#   {"device", "date", "rounds", "modes": {MODE: {
#      "status": "ok" | "failed", "error" (when failed),
#      "session", "session_bytes",
#      "planted": {"steps", "step_ns_median": [per round], "total_ns": [per round], "total_ns_median"},
#      "fixed":   (the same),
#      "gain_ns", "gain_pct":                 median planted total - median fixed total (% of the former),
#      "gain_ns_session", "gain_pct_session": the kept session's total - median fixed total (% of the former),
#      "notes": [the program's "# " lines of the kept run: blocks per wave, block sizes, occupancy]}}}
# and one line per mode on stdout. A failing mode is recorded and the others still run.
# usage: scripts/gpu-advise.sh BUILD_DIR OUTDIR     (exit status 1 when any mode failed)
set -u
B=${1:?usage: gpu-advise.sh BUILD_DIR OUTDIR}
O=${2:?usage: gpu-advise.sh BUILD_DIR OUTDIR}
WL=$B/bin/warplens
PROG=$B/bin/gpu_advise_planted
ROUNDS=${WARPLENS_ADVISE_ROUNDS:-3}
BUDGET=${WARPLENS_ADVISE_BUDGET_S:-150}
MODES=${WARPLENS_ADVISE_MODES:-"control launch_bound sync pageable small_copies tail tail_long tail_half tail_short occupancy serial_streams"}
mkdir -p "$O"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wl-advise.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
start=$SECONDS
failed=0

# json_str TEXT: TEXT as a JSON string (quotes, backslashes and control characters dropped)
json_str() { printf '"%s"' "$(printf '%s' "$1" | tr -d '\042\134' | tr '\000-\037' ' ')"; }
# median of the numbers given (mean of the two middle ones for an even count); empty for none
median() { [ $# -gt 0 ] || return 0; printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {if (NR) printf "%d", NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
# field NAME LINE: the number after NAME= in the program's result line
field() { printf '%s\n' "$2" | sed -n "s/.* $1=\([0-9][0-9]*\).*/\1/p"; }
join() { local IFS=,; printf '%s' "$*"; }

# run_one MODE VARIANT SESSION: the program under warplens; sets $line (its result line) or $err
run_one() {
    local mode=$1 variant=$2 session=$3 log=$TMP/$1-$2.log
    local args=("$mode"); [ "$variant" = fixed ] && args+=(--fixed)
    rm -f "$session"
    timeout 120 "$WL" run -q -o "$session" -- "$PROG" "${args[@]}" >"$log" 2>&1
    local rc=$?
    line=$(grep -m1 "^$mode fixed=" "$log")
    err=
    if [ $rc -ne 0 ] || [ -z "$line" ]; then
        err="$variant run: exit status $rc: $(grep -v '^#' "$log" | tail -3 | tr '\n' ' ')"
        line=
    fi
    notes_log=$log
}

entries=()
for m in $MODES; do
    declare -a pt=() ps=() ft=() fs=()
    p_steps='' f_steps='' error='' notes=()
    kept=$O/advise-$m.wlsession
    for r in $(seq 1 "$ROUNDS"); do
        if [ "$r" -gt 1 ] && [ $((SECONDS - start)) -ge "$BUDGET" ]; then
            echo "[advise] $m: round $r skipped (${BUDGET} s budget spent)"
            break
        fi
        session=$TMP/planted.wlsession; [ "$r" = 1 ] && session=$kept
        run_one "$m" planted "$session"
        if [ -n "$err" ]; then error=$err; break; fi
        [ "$r" = 1 ] && while IFS= read -r n; do notes+=("$(json_str "${n#\# }")"); done < <(grep '^# ' "$notes_log")
        pt+=("$(field total_ns "$line")"); ps+=("$(field step_ns_median "$line")"); p_steps=$(field steps "$line")
        [ "$r" -gt 1 ] && rm -f "$session"
        run_one "$m" fixed "$TMP/fixed.wlsession"
        rm -f "$TMP/fixed.wlsession"
        if [ -n "$err" ]; then error=$err; break; fi
        [ "$r" = 1 ] && while IFS= read -r n; do notes+=("$(json_str "fixed: ${n#\# }")"); done < <(grep '^# ' "$notes_log")
        ft+=("$(field total_ns "$line")"); fs+=("$(field step_ns_median "$line")"); f_steps=$(field steps "$line")
    done
    bytes=$(stat -c %s "$kept" 2>/dev/null || echo 0)
    e="$(json_str "$m"): {"
    if [ -n "$error" ]; then
        failed=$((failed + 1))
        e+="\"status\": \"failed\", \"error\": $(json_str "$error"), "
        echo "[advise] $m: FAILED: $error"
    else
        e+="\"status\": \"ok\", "
    fi
    e+="\"session\": $(json_str "$(basename "$kept")"), \"session_bytes\": $bytes, "
    pm=$(median "${pt[@]}"); fm=$(median "${ft[@]}")
    e+="\"planted\": {\"steps\": ${p_steps:-null}, \"step_ns_median\": [$(join "${ps[@]}")], \"total_ns\": [$(join "${pt[@]}")], \"total_ns_median\": ${pm:-null}}, "
    e+="\"fixed\": {\"steps\": ${f_steps:-null}, \"step_ns_median\": [$(join "${fs[@]}")], \"total_ns\": [$(join "${ft[@]}")], \"total_ns_median\": ${fm:-null}}, "
    if [ -n "$pm" ] && [ -n "$fm" ]; then # also after a later round failed
        g=$((pm - fm)); gs=$((pt[0] - fm))
        gp=$(awk -v g="$g" -v t="$pm" 'BEGIN {printf "%.2f", (t > 0 ? 100 * g / t : 0)}')
        gsp=$(awk -v g="$gs" -v t="${pt[0]}" 'BEGIN {printf "%.2f", (t > 0 ? 100 * g / t : 0)}')
        e+="\"gain_ns\": $g, \"gain_pct\": $gp, \"gain_ns_session\": $gs, \"gain_pct_session\": $gsp, "
        printf '[advise] %-14s planted %9.3f ms  fixed %9.3f ms  gain %9.3f ms (%6.2f %%)  rounds %d  session %d KiB\n' \
            "$m" "$(awk -v v="$pm" 'BEGIN {print v / 1e6}')" "$(awk -v v="$fm" 'BEGIN {print v / 1e6}')" \
            "$(awk -v v="$g" 'BEGIN {print v / 1e6}')" "$gp" "${#pt[@]}" $((bytes / 1024))
    else
        e+="\"gain_ns\": null, \"gain_pct\": null, \"gain_ns_session\": null, \"gain_pct_session\": null, "
    fi
    e+="\"notes\": [$(join "${notes[@]}")]}"
    entries+=("$e")
    unset pt ps ft fs
done

dev=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
{
    printf '{"device": %s, "date": %s, "rounds": %s, "modes": {\n' "$(json_str "${dev:-unknown}")" \
        "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$ROUNDS"
    for i in "${!entries[@]}"; do
        printf '  %s%s\n' "${entries[$i]}" "$([ "$i" -lt $((${#entries[@]} - 1)) ] && echo ,)"
    done
    printf '}}\n'
} >"$O/advise-gains.json.tmp" && mv "$O/advise-gains.json.tmp" "$O/advise-gains.json"
echo "[advise] $O/advise-gains.json: ${#entries[@]} modes, $failed failed, $((SECONDS - start)) s"
exit $((failed > 0))
