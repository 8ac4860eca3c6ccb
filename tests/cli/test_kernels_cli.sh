#!/usr/bin/env bash
# CLI test for `warplens kernels`, `warplens kernel` and `warplens concurrency` on the recorded
# H100 sessions in tests/data: sorting by every column, CSV/JSON parsed with jq, tables at most
# 100 columns wide, lookups by name and id, and clear errors (exit 2) for bad input.
set -u

BIN=${WARPLENS_BIN:?WARPLENS_BIN must point at the warplens binary}
DATA=${WARPLENS_TEST_DATA:?WARPLENS_TEST_DATA must point at tests/data}
JQ=${JQ:-jq}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# check "description" command...: must exit 0
check() {
    local what=$1
    shift
    if "$@" >"$TMP/out" 2>"$TMP/err"; then ok; else bad "$what: exit $? ($(head -c 300 "$TMP/err"))"; fi
}

# narrow "description": the last output is at most 100 columns wide
narrow() {
    local w
    w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$TMP/out")
    if [ "$w" -le 100 ]; then ok; else bad "$1: $w columns wide"; fi
}

# usage_error "description" "text stderr must contain" args...
usage_error() {
    local what=$1 needle=$2
    shift 2
    "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" != 2 ]; then bad "$what: exit $rc, wanted 2"; return; fi
    if [ -s "$TMP/out" ]; then bad "$what: wrote to stdout"; return; fi
    if grep -qi -- "$needle" "$TMP/err"; then ok; else bad "$what: stderr lacks '$needle': $(cat "$TMP/err")"; fi
}

jq_true() {
    if "$JQ" -e "$2" <"$TMP/out" >/dev/null 2>&1; then ok; else bad "$1: '$2' on $(head -c 400 "$TMP/out")"; fi
}

TORCH=$DATA/torch-h100.wlsession
DEMO=$DATA/demo-h100.wlsession
GEMM=sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas

# ---- kernels: table, sorting, machine-readable output ------------------------------------------
for s in "$TORCH" "$DEMO"; do
    check "kernels table $(basename "$s")" "$BIN" kernels "$s"
    narrow "kernels table $(basename "$s")"
done
grep -q "Occ%" "$TMP/out" && ok || bad "table has no Occ% column"

columns=$("$BIN" kernels --help | awk '/^columns:/ { on = 1; next } on && /^  [a-z0-9_]+ / { print $1 }')
[ "$(echo "$columns" | wc -l)" -ge 20 ] && ok || bad "--help lists too few columns: $columns"
for col in $columns; do
    check "--sort $col" "$BIN" kernels "$TORCH" --sort "$col"
    narrow "--sort $col"
    check "--sort $col --json" "$BIN" kernels "$TORCH" --sort "$col" --json
    key=$col
    case $col in
    name | limiter | backend) jq_true "sorted ascending by $col" "[.[].$key | select(. != null)] as \$v | \$v == (\$v | sort)" ;;
    grid | block) jq_true "sorted by $col" "[.[].$key | select(. != null) | .[0] * .[1] * .[2]] as \$v | \$v == (\$v | sort | reverse)" ;;
    *) jq_true "sorted descending by $col" "[.[].$key | select(. != null)] as \$v | \$v == (\$v | sort | reverse)" ;;
    esac
done
check "--sort calls --reverse" "$BIN" kernels "$TORCH" --sort calls --reverse --json
jq_true "--reverse ascends" '[.[].calls] as $v | $v == ($v | sort)'

check "kernels --json" "$BIN" kernels "$TORCH" --json
jq_true "11 names, occupancy columns" 'length == 11 and all(.[]; has("occupancy_pct") and has("limiter") and has("waves") and has("active_blocks"))'
jq_true "gemm: 12.5 % limited by registers" \
    ".[] | select(.name == \"$GEMM\") | .occupancy_pct == 12.5 and .limiter == \"registers\" and .active_blocks == 2 and .block_limit_shared_memory == 11"
jq_true "full names kept" '[.[].name | length] | max > 4000'
jq_true "percentiles ordered" 'all(.[]; .min_ns <= .p50_ns and .p50_ns <= .p99_ns and .p99_ns <= .max_ns)'
jq_true "occupancy is theoretical" 'all(.[]; .occupancy_kind == "theoretical")'

check "kernels --csv" "$BIN" kernels "$DEMO" --csv
head -1 "$TMP/out" | grep -q '^time_pct,total_ns,calls,mean_ns,min_ns,p50_ns,p99_ns,max_ns,grid,block,configs,registers,static_smem,dynamic_smem,occupancy_pct,limiter,active_blocks,waves,mean_queue_ns,mean_launch_ns,backend,name,short_name,name_id$' && ok || bad "csv header: $(head -1 "$TMP/out")"
[ "$(wc -l <"$TMP/out")" = 4 ] && ok || bad "demo csv has $(wc -l <"$TMP/out") lines"
# total and share from the session itself; the launch shape and occupancy are fixed by the demo
mm_total=$(sqlite3 "$DEMO" "SELECT sum(duration_ns) FROM kernels WHERE short_name = 'tiled_matmul'")
grep -q "^[0-9.]*,$mm_total,16,.*,100.00,registers+warps,8,0.9697,.*\"tiled_matmul(float const\*, float const\*, float\*, int)\",tiled_matmul,2\$" "$TMP/out" && ok || bad "tiled_matmul csv row: $(grep tiled "$TMP/out")"

check "kernels --top 3" "$BIN" kernels "$TORCH" --top 3 --json
jq_true "--top 3" 'length == 3'
check "kernels --columns" "$BIN" kernels "$TORCH" --columns calls,grid,block,registers,dynamic_smem,occupancy_pct,active_blocks
narrow "--columns"
check "kernels --calls --json" "$BIN" kernels "$TORCH" --calls --json
jq_true "one row per launch with occupancy" 'length == 126 and all(.[]; .occupancy_pct != null)'
jq_true "nvjet launch" '.[] | select(.id == 84) | .occupancy_pct == 18.75 and .limiter == "registers+shared_memory" and .waves > 0.96'
check "kernels --calls" "$BIN" kernels "$DEMO" --calls
narrow "--calls"

usage_error "bad sort column" "unknown sort column 'bogus'" kernels "$TORCH" --sort bogus
usage_error "bad --columns" "unknown column" kernels "$TORCH" --columns calls,bogus
usage_error "too many columns" "more than 100" kernels "$TORCH" --columns time_pct,total_ns,calls,mean_ns,min_ns,p50_ns,p99_ns,max_ns,grid,block
usage_error "bad --top" "positive number" kernels "$TORCH" --top 0
usage_error "csv and json" "exclude" kernels "$TORCH" --csv --json
usage_error "no session" "usage" kernels

# ---- kernel: the detailed panel --------------------------------------------------------------
check "kernel by name" "$BIN" kernel "$TORCH" "$GEMM"
narrow "kernel by name"
grep -q "12.5 %  8 / 64 warps per SM" "$TMP/out" && ok || bad "panel occupancy line"
grep -q "registers .* 2 < 28672 regs/block" "$TMP/out" && ok || bad "panel register limit"
grep -q "all 20 calls: min" "$TMP/out" && ok || bad "panel distribution"
grep -q "representative" "$TMP/out" && ok || bad "panel representative call"
check "kernel by id" "$BIN" kernel "$TORCH" 84
narrow "kernel by id"
grep -q "cluster 2x1x1" "$TMP/out" && ok || bad "panel cluster"
k84_tid=$(sqlite3 "$TORCH" "SELECT tid FROM kernel WHERE id = 84")
k84_stream=$(sqlite3 "$TORCH" "SELECT stream_id FROM kernel WHERE id = 84")
k84_launch=$(sqlite3 "$TORCH" "SELECT printf('%.2f', a.duration_ns / 1000.0) FROM kernel k JOIN api_call a ON a.id = k.api_id WHERE k.id = 84")
grep -q "thread $k84_tid (python3), stream $k84_stream" "$TMP/out" && ok || bad "panel host thread"
grep -q "launch call $k84_launch us" "$TMP/out" && ok || bad "panel launch cost ($k84_launch us)"
check "kernel by substring --call" "$BIN" kernel "$DEMO" tiled_matmul --call 3
grep -q "call 3 of 16" "$TMP/out" && ok || bad "--call 3"
# the panel's overlap count for this call equals the same count done in SQL
c3=$(sqlite3 "$DEMO" "SELECT id FROM kernels WHERE short_name = 'tiled_matmul' ORDER BY start_ns LIMIT 1 OFFSET 2")
c3_over=$(sqlite3 "$DEMO" "SELECT count(*) FROM kernel a JOIN kernel b ON a.id = $c3 AND b.device_id = a.device_id AND b.stream_id != a.stream_id AND b.start_ns < a.end_ns AND a.start_ns < b.end_ns")
grep -q "overlapped by $c3_over kernel" "$TMP/out" && ok || bad "demo matmul overlaps (want $c3_over)"
for id in 1 30 63; do
    check "kernel $id" "$BIN" kernel "$DEMO" $id
    narrow "kernel $id"
done
usage_error "unknown kernel name" "no kernel named 'nonesuch'" kernel "$TORCH" nonesuch
usage_error "unknown kernel id" "no kernel with id 99999" kernel "$TORCH" 99999
usage_error "ambiguous name" "matches 4 kernel names" kernel "$TORCH" vectorized_elementwise
usage_error "--call past the end" "has 16 calls" kernel "$DEMO" tiled_matmul --call 17

# ---- identity: backend, operation, --by op ----------------------------------------------------
check "kernels --json torch" "$BIN" kernels "$TORCH" --json
jq_true "backends of the torch session" '[.[].backend] | unique == ["PyTorch native", "cuBLAS", "cuBLASLt"]'
jq_true "cuBLAS gemm" "[.[] | select(.short_name | startswith(\"sm80_xmma_gemm\")) | .backend] | unique == [\"cuBLAS\"]"
check "kernels table demo" "$BIN" kernels "$DEMO"
grep -q "Backend" "$TMP/out" && grep -q "user code" "$TMP/out" && ok || bad "demo table lacks the backend column"
# a session made before identity: --by op says how to get it; an upgraded copy has it
"$BIN" kernels "$DEMO" --by op >"$TMP/out" 2>"$TMP/err"
[ $? = 1 ] && grep -q "import --upgrade" "$TMP/err" && ok || bad "--by op on an old session: $(cat "$TMP/err")"
cp "$DEMO" "$TMP/demo.wlsession"
check "import --upgrade" "$BIN" import --upgrade "$TMP/demo.wlsession"
check "kernels --by op" "$BIN" kernels "$TMP/demo.wlsession" --by op
narrow "kernels --by op"
grep -q "^batch  " "$TMP/out" && grep -q "63 kernels in 20 operations" "$TMP/out" && ok || bad "--by op table: $(head -8 "$TMP/out")"
check "kernels --by op --json" "$BIN" kernels "$TMP/demo.wlsession" --by op --json
jq_true "--by op: batch has the 48 batch kernels and 16 calls" \
    '.[] | select(.operation == "batch") | .kernels == 48 and .calls == 16 and .source == "nvtx" and .input_shapes == null'
jq_true "--by op: kernels add up to the session's" '[.[].kernels] | add == 63'
jq_true "--by op: GPU time of batch is its kernels'" \
    ".[] | select(.operation == \"batch\") | .gpu_ns == $(sqlite3 "$TMP/demo.wlsession" "SELECT sum(end_ns - start_ns) FROM kernel k JOIN op o ON o.id = k.op_id WHERE o.name = 'batch'")"
check "kernels --by op --csv" "$BIN" kernels "$TMP/demo.wlsession" --by op --csv --sort calls
head -1 "$TMP/out" | grep -qx 'source,operation,input_shapes,calls,cpu_ns,kernels,gpu_ns' && ok || bad "--by op csv header"
sed -n 2p "$TMP/out" | grep -q '^nvtx,batch,,16,' && ok || bad "--by op --sort calls: $(sed -n 2p "$TMP/out")"
usage_error "--by op with --calls" "do not apply" kernels "$TMP/demo.wlsession" --by op --calls
usage_error "--by op bad sort" "sorts by gpu, cpu" kernels "$TMP/demo.wlsession" --by op --sort grid
usage_error "--by bogus" "--by takes op or name" kernels "$TMP/demo.wlsession" --by bogus
check "kernel identity" "$BIN" kernel "$TMP/demo.wlsession" 3
grep -q "^identity operation batch (NVTX range)" "$TMP/out" && grep -q "backend user code, tier -" "$TMP/out" && ok \
    || bad "kernel identity lines: $(grep -A1 identity "$TMP/out")"
check "kernel identity, old session" "$BIN" kernel "$DEMO" 3
grep -q "import --upgrade" "$TMP/out" && ok || bad "old session: no hint to upgrade"

# ---- concurrency ------------------------------------------------------------------------------
check "concurrency demo" "$BIN" concurrency "$DEMO"
narrow "concurrency"
grep -q "max concurrent         2 kernels" "$TMP/out" && ok || bad "demo max concurrent"
grep -q "tiled_matmul | block_sum" "$TMP/out" && ok || bad "demo top pair"
check "concurrency torch" "$BIN" concurrency "$TORCH"
grep -q "no kernels overlapped" "$TMP/out" && ok || bad "torch: one stream at a time"
check "concurrency --series" "$BIN" concurrency "$DEMO" --series
head -1 "$TMP/out" | grep -q '^pid,device_id,ts_ns,running,warp_fill_pct,sm_fill_pct,oversubscribed$' && ok || bad "series header"
awk -F, 'NR > 1 && ($4 < 0 || $4 > 3 || ($7 == 1) != ($6 > 100)) { bad = 1 } NR > 2 && $3 <= prev { bad = 1 } NR > 1 { prev = $3 } END { exit bad }' "$TMP/out" && ok || bad "series rows inconsistent"
tail -1 "$TMP/out" | grep -q ',0,0.00,0.00,0$' && ok || bad "series ends idle"
usage_error "concurrency bad option" "unknown option" concurrency "$DEMO" --bogus

echo "test_kernels_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
