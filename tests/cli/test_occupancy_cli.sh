#!/usr/bin/env bash
# CLI test for `warplens occupancy`: the JSON answer (checked with jq), the terminal panel, the
# device list, and that every bad value exits 2 with one line on stderr and nothing on stdout.
set -u

BIN=${WARPLENS_BIN:?WARPLENS_BIN must point at the warplens binary}
JQ=${JQ:-jq}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# expect_json "description" "jq filter that must be true" -- args...
expect_json() {
    local what=$1 filter=$2
    shift 3
    if ! "$BIN" occupancy "$@" --json >"$TMP/out" 2>"$TMP/err"; then
        bad "$what: exit $? ($(cat "$TMP/err"))"
        return
    fi
    if [ "$("$JQ" -s 'length' <"$TMP/out" 2>/dev/null)" != 1 ]; then
        bad "$what: output is not exactly one JSON object: $(head -c 300 "$TMP/out")"
        return
    fi
    if "$JQ" -e "$filter" <"$TMP/out" >/dev/null; then ok; else bad "$what: '$filter' on $(cat "$TMP/out")"; fi
}

# expect_usage_error "description" "text stderr must contain" args...
expect_usage_error() {
    local what=$1 needle=$2
    shift 2
    "$BIN" occupancy "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" != 2 ]; then bad "$what: exit $rc, wanted 2"; return; fi
    if [ -s "$TMP/out" ]; then bad "$what: wrote to stdout"; return; fi
    if [ "$(wc -l <"$TMP/err")" != 1 ]; then bad "$what: stderr is not one line: $(cat "$TMP/err")"; return; fi
    if grep -qi -- "$needle" "$TMP/err"; then ok; else bad "$what: stderr lacks '$needle': $(cat "$TMP/err")"; fi
}

H100=(--gpu sm_90 --block 256 --regs 32 --smem 49152)

# --- the sm_90 example of notes/cupti.md section 4 ------------------------------------------
expect_json "h100 blocks" '.active_blocks_per_sm == 4 and .active_warps_per_sm == 32' -- "${H100[@]}"
expect_json "h100 occupancy" '.occupancy_pct == 50' -- "${H100[@]}"
expect_json "h100 limiter" '.limiters == ["shared_memory"]' -- "${H100[@]}"
expect_json "h100 limits" '.block_limit_registers == 8 and .block_limit_shared_memory == 4 and
    .block_limit_warps == 8 and .block_limit_blocks == 32 and .block_limit_barriers == 64' -- "${H100[@]}"
expect_json "h100 allocations" '.allocated_registers_per_block == 8192 and
    .allocated_shared_memory_per_block == 50176' -- "${H100[@]}"
expect_json "no grid, no waves" 'has("waves_per_sm") | not' -- "${H100[@]}"
expect_json "waves" '(.waves_per_sm - 1.8939 | fabs) < 0.0001 and .tail_pct == 89.39 and
    .active_sms == 132 and .blocks_per_wave == 528' -- "${H100[@]}" --grid 1000
expect_json "small grid" '.active_sms == 100' -- "${H100[@]}" --grid 100
expect_json "aliases and --opt=value" '.gpu == "sm_90" and .active_blocks_per_sm == 4' -- \
    --gpu 9.0 --block=256 --regs=32 --smem=48K
expect_json "carveout 0" '.active_blocks_per_sm == 1 and .shared_memory_carveout_per_sm == 65536' -- \
    "${H100[@]}" --carveout 0
expect_json "cluster waves" '.blocks_per_wave == 128 and .full_waves == 2' -- \
    --gpu h100 --block 1024 --regs 64 --grid 256 --cluster 8
expect_json "barriers tie" '.limiters == ["blocks","barriers"] and .active_blocks_per_sm == 4' -- \
    --gpu sm_90 --block 32 --barriers 16
expect_json "unused registers are null" '.block_limit_registers == null' -- --gpu sm_80 --block 128

# --- launches that cannot run are answers, not errors ----------------------------------------
expect_json "smem over the default limit" '.active_blocks_per_sm == 0 and .launchable == false and
    .limiters == ["shared_memory"] and .block_limit_shared_memory == 0' -- \
    "${H100[@]}" --dyn-smem 1 --smem-config default
expect_json "smem fits with opt-in" '.active_blocks_per_sm == 4' -- "${H100[@]}" --dyn-smem 1
expect_json "smem over the opt-in limit" '.active_blocks_per_sm == 0 and .limiters == ["shared_memory"]' -- \
    --gpu sm_90 --block 128 --dyn-smem 232449
expect_json "too many registers per block" '.active_blocks_per_sm == 0 and .limiters == ["registers"]' -- \
    --gpu sm_90 --block 1024 --regs 255
expect_json "no waves when nothing fits" '.waves_per_sm == null and .active_sms == 0' -- \
    --gpu sm_90 --block 1024 --regs 255 --grid 10

# --- AMD -------------------------------------------------------------------------------------
expect_json "mi300x registers" '.vendor == "amd" and .active_blocks_per_sm == 4 and
    .limiters == ["registers"] and .occupancy_pct == 50' -- --gpu mi300x --block 256 --regs 128
expect_json "mi250x lds+sgpr" '.active_blocks_per_sm == 12 and .block_limit_registers == 14 and
    .occupancy_pct == 75' -- --gpu gfx90a --block 128 --regs 40 --sgprs 104 --smem 5000
expect_json "rdna3" '.active_blocks_per_sm == 4 and .max_warps_per_sm == 64' -- \
    --gpu gfx1100 --block 256 --regs 96 --smem 32768

# --- bad values: exit 2, one line on stderr ---------------------------------------------------
expect_usage_error "block 0" "block" --gpu sm_90 --block 0
expect_usage_error "block 1025" "1..1024" --gpu sm_90 --block 1025
expect_usage_error "negative block" "negative" --gpu sm_90 --block -5
expect_usage_error "non-number block" "not a number" --gpu sm_90 --block abc
expect_usage_error "trailing junk" "not a number" --gpu sm_90 --block 12x
expect_usage_error "negative regs" "negative" --gpu sm_90 --block 32 --regs -1
expect_usage_error "regs over max" "255" --gpu sm_90 --block 32 --regs 300
expect_usage_error "negative smem" "negative" --gpu sm_90 --block 32 --smem -1
expect_usage_error "negative dyn smem" "negative" --gpu sm_90 --block 32 --dyn-smem -1
expect_usage_error "huge number" "too large" --gpu sm_90 --block 32 --smem 99999999999999
expect_usage_error "unknown arch lists known" "sm_90" --gpu sm_99 --block 32
expect_usage_error "unknown arch lists amd" "gfx942" --gpu nope --block 32
expect_usage_error "missing gpu" "--gpu" --block 32
expect_usage_error "missing block" "--block" --gpu sm_90
expect_usage_error "missing value" "needs a value" --gpu sm_90 --block
expect_usage_error "unknown option" "unknown option" --gpu sm_90 --block 32 --frobnicate
expect_usage_error "carveout range" "carveout" --gpu sm_90 --block 32 --carveout 150
expect_usage_error "carveout negative" "carveout" --gpu sm_90 --block 32 --carveout -7
expect_usage_error "grid 0" "grid" --gpu sm_90 --block 32 --grid 0
expect_usage_error "grid not cluster multiple" "cluster" --gpu sm_90 --block 32 --grid 10 --cluster 4
expect_usage_error "cluster too big" "cluster" --gpu sm_90 --block 32 --cluster 32
expect_usage_error "cluster before hopper" "cluster" --gpu sm_80 --block 32 --cluster 2
expect_usage_error "bad smem config" "smem-config" --gpu sm_90 --block 32 --smem-config maybe

# --- the panel --------------------------------------------------------------------------------
if "$BIN" occupancy "${H100[@]}" --grid 1000 >"$TMP/panel" 2>"$TMP/err"; then ok; else bad "panel exit $?"; fi
grep -q "50.0 %" "$TMP/panel" && ok || bad "panel lacks 50.0 %"
grep -Eq '^  shared memory +\[#+\.+\] +4 <' "$TMP/panel" && ok || bad "panel lacks the marked smem limiter row"
grep -Eq '^  registers +\[#+\.+\] +8 ' "$TMP/panel" && ok || bad "panel lacks the registers row"
grep -q "1.89 waves" "$TMP/panel" && ok || bad "panel lacks the waves line"
grep -q "89.4 % full" "$TMP/panel" && ok || bad "panel lacks the tail"
[ "$(awk '{ if (length($0) > 100) n++ } END { print n + 0 }' "$TMP/panel")" = 0 ] && ok || bad "panel wider than 100 columns"
"$BIN" occupancy --gpu sm_90 --block 1024 --regs 255 >"$TMP/panel2" 2>&1
grep -q "cannot launch" "$TMP/panel2" && ok || bad "panel does not say the launch cannot run"

# --- help and device list ----------------------------------------------------------------------
"$BIN" occupancy --help >"$TMP/help" 2>&1 && ok || bad "--help exit status"
for opt in --gpu --block --regs --smem --dyn-smem --grid --cluster --barriers --json --list-gpus; do
    grep -q -- "$opt" "$TMP/help" && ok || bad "--help does not document $opt"
done
"$BIN" occupancy --list-gpus >"$TMP/list" 2>&1 && ok || bad "--list-gpus exit status"
for g in sm_70 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_120 gfx90a gfx942 gfx1100; do
    grep -q "^$g " "$TMP/list" && ok || bad "--list-gpus lacks $g"
done
[ "$(awk '{ if (length($0) > 100) n++ } END { print n + 0 }' "$TMP/list")" = 0 ] && ok || bad "--list-gpus wider than 100 columns"
if "$BIN" occupancy --list-gpus --json | "$JQ" -e 'length == 12 and (map(.name) | index("sm_90") != null)' >/dev/null; then
    ok
else
    bad "--list-gpus --json"
fi

# --- --suggest: the block size with the highest occupancy and the next step ------------------
# 128 regs on the H100: 16 warps per SM at most; 512 (1 block) ties 256 (2) and the larger wins.
# The launch at 256 has 2 blocks; 80 regs give 3 (6 warps x 2560 regs per sub-partition).
expect_json "suggest 128 regs" '.suggested_block_size == 512 and .suggested_active_blocks_per_sm == 1 and
    .suggested_occupancy_pct == 25 and .suggested_min_grid_size == 132 and .block_size_limit == 1024' -- \
    --gpu h100 --block 256 --regs 128 --suggest
expect_json "suggest keeps the launch" '.block_size == 256 and .active_blocks_per_sm == 2' -- \
    --gpu h100 --block 256 --regs 128 --suggest
expect_json "next step registers" '.next_step_registers_per_thread == 80 and
    .next_step_registers_active_blocks_per_sm == 3 and .next_step_registers_occupancy_pct == 37.5 and
    .next_step_shared_memory_per_block == null' -- --gpu h100 --block 256 --regs 128 --suggest
# 48 KiB static: 4 blocks; 5 need <= 46592 B allocated, less the 1 KiB reserved = 45568 B.
expect_json "next step shared memory" '.next_step_shared_memory_per_block == 45568 and
    .next_step_shared_memory_active_blocks_per_sm == 5 and .next_step_registers_per_thread == null' -- \
    "${H100[@]}" --suggest
expect_json "no --block: the launch is the suggestion" '.block_size == 1024 and .suggested_block_size == 1024 and
    .occupancy_pct == 100 and .suggested_min_grid_size == 264' -- --gpu h100 --regs 32 --smem 48K --suggest
expect_json "block-size limit not a warp multiple" '.suggested_block_size == 40 and
    .suggested_min_grid_size == 4224 and .block_size_limit == 40' -- --gpu h100 --regs 32 --max-block-size 40 --suggest
# 256 B per thread under the 48 KiB default limit: 96 threads (24 KiB + 1 KiB reserved, 9 blocks)
# hold the most threads per SM (864; 64 -> 832, 128 -> 768, 160 -> 800, 192 -> 768).
expect_json "smem per thread" '.suggested_block_size == 96 and .suggested_active_blocks_per_sm == 9 and
    .suggested_dynamic_shared_memory == 24576 and .dynamic_shared_memory == 24576 and .smem_per_thread == 256' -- \
    --gpu h100 --smem-per-thread 256 --smem-config default --suggest
expect_json "nothing runs" '.suggested_block_size == 0 and .suggested_min_grid_size == 0 and
    .suggested_dynamic_shared_memory == null and .launchable == false and
    .next_step_shared_memory_per_block == 232448' -- --gpu h100 --smem 300K --suggest
expect_json "suggest amd" '.suggested_block_size == 1024 and .suggested_occupancy_pct == 50 and
    .suggested_min_grid_size == 304 and .next_step_registers_per_thread == 96' -- \
    --gpu mi300x --block 256 --regs 128 --suggest
expect_json "no suggestion fields without --suggest" 'has("suggested_block_size") | not' -- "${H100[@]}"
expect_usage_error "max block size 0" "max-block-size" --gpu h100 --suggest --max-block-size 0
expect_usage_error "no block, no suggest" "--suggest" --gpu h100 --regs 32

"$BIN" occupancy --gpu h100 --block 256 --regs 128 --suggest >"$TMP/sugg" 2>"$TMP/err" && ok || bad "--suggest panel exit"
grep -q '^suggestion     block size 512: 1 block/SM, 25.0 % occupancy, min grid 132 (1 x 132 SMs)$' "$TMP/sugg" &&
    ok || bad "--suggest panel lacks the suggestion line: $(cat "$TMP/sugg")"
grep -q '^  registers    80/thread (now 128) -> 3 blocks/SM, 37.5 %$' "$TMP/sugg" && ok || bad "--suggest panel lacks the step"
grep -q '^  shared mem   not used' "$TMP/sugg" && ok || bad "--suggest panel lacks the smem step"
[ "$(awk '{ if (length($0) > 100) n++ } END { print n + 0 }' "$TMP/sugg")" = 0 ] && ok || bad "--suggest panel wider than 100"
"$BIN" occupancy --help | grep -q -- "--smem-per-thread" && ok || bad "--help lacks --smem-per-thread"
"$BIN" occupancy --help | grep -q -- "--max-block-size" && ok || bad "--help lacks --max-block-size"

# --- kernel --suggest on sessions recorded on the H100 -------------------------------------------
DATA=${WARPLENS_TEST_DATA:?}
# tiled_matmul: 16x16 blocks, 32 regs, 2 KiB static: full occupancy already; 1024 fills the SM too.
"$BIN" kernel "$DATA/demo-h100.wlsession" tiled_matmul --suggest >"$TMP/k1" 2>"$TMP/err" && ok || bad "kernel --suggest exit"
grep -q '^  suggestion     block size 1024: 2 blocks/SM, 100.0 % occupancy, min grid 264 (2 x 132 SMs)$' "$TMP/k1" &&
    ok || bad "kernel --suggest: $(grep -A4 suggestion "$TMP/k1")"
grep -q '^    registers    none needed: the launch already fills the SM$' "$TMP/k1" && ok || bad "kernel --suggest step"
[ "$(awk '{ if (length($0) > 100) n++ } END { print n + 0 }' "$TMP/k1")" = 0 ] && ok || bad "kernel --suggest wider than 100"
"$BIN" kernel "$DATA/demo-h100.wlsession" tiled_matmul >"$TMP/k0" 2>&1
grep -q 'suggestion' "$TMP/k0" && bad "kernel without --suggest suggests" || ok
# A cuBLAS GEMM with 80 regs and 64-thread blocks: 12 blocks, 72 regs give 14.
"$BIN" kernel "$DATA/torch-occ-h100.wlsession" 26 --suggest >"$TMP/k2" 2>"$TMP/err" && ok || bad "kernel 26 --suggest exit"
grep -q '^    registers    72/thread (now 80) -> 14 blocks/SM, 43.8 %$' "$TMP/k2" && ok || bad "kernel 26 step: $(cat "$TMP/k2")"
grep -q '^  suggestion     block size 768: 1 block/SM, 37.5 % occupancy' "$TMP/k2" && ok || bad "kernel 26 suggestion"
"$BIN" kernel "$DATA/torch-occ-h100.wlsession" 26 --suggest --max-block-size 64 >"$TMP/k3" 2>&1
grep -q '^  suggestion     block size 64: 12 blocks/SM' "$TMP/k3" && ok || bad "kernel --max-block-size: $(grep suggestion "$TMP/k3")"
"$BIN" kernel "$DATA/demo-h100.wlsession" tiled_matmul --max-block-size 64 >"$TMP/out" 2>"$TMP/err"
[ $? = 2 ] && grep -q 'goes with --suggest' "$TMP/err" && ok || bad "kernel --max-block-size without --suggest"

echo "occupancy_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
