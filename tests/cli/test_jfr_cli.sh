#!/usr/bin/env bash
# `warplens export --format jfr` read back by OpenJDK's own tools: every tests/data session is
# exported, then `jfr summary`, `jfr metadata`, `jfr print`, `jfr print --json` and a Java reader on
# jdk.jfr.consumer.RecordingFile (tests/java/JfrCheck.java) must read it without error, with
#  - event counts equal to the session's kernels, copies, sets, API calls, NVTX ranges and scopes
#    (in the summary, the JSON and the Java reader);
#  - GpuKernelEvent / GpuOccupancyEvent typed as the classes of tests/java/SeedEvents.java;
#  - every kernel's fields equal to the session's rows (grid, block, registers, shared and local
#    memory, device, stream, correlation id, scope, process, threads, queue delay, launch-call
#    duration, GPU time, start, duration, thread name and id, scope and kernel name), through the
#    Java reader, and a projection of them through the JSON;
#  - theoreticalOccupancyPercent equal to `warplens occupancy` for each distinct configuration.
# Then hostile sessions (NULLs, huge and negative values, strings with control bytes, invalid
# UTF-8, quotes, 64 KiB names) must still give files every reader reads, with the same counts.
set -u
W=${WARPLENS_BIN:?}
SRC=${WARPLENS_SOURCE_DIR:?}
DATA=${WARPLENS_TEST_DATA:?}
. "$SRC/tests/cli/checks.sh"
for t in java javac jfr jq sqlite3; do
    command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (scripts/deps.sh installs openjdk-17-jdk-headless, jq, sqlite3)"; exit 1; }
done
mkdir -p jc
javac -d jc "$SRC/tests/java/JfrCheck.java" "$SRC/tests/java/SeedEvents.java" || { echo "FAIL: javac"; exit 1; }

# the session's expected kernel lines, in JfrCheck's format without its occupancy column (14)
ESC="replace(replace(replace(replace(X, '\\', '\\\\'), char(9), '\\t'), char(10), '\\n'), char(13), '\\r')"
esc() { local e=${ESC//X/$1}; echo "coalesce(nullif($e, ''), '-')"; }
expected_kernels() {
    local ident="'-', '-', '-', 0" join=""
    if [ "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_master WHERE name = 'op'")" = 1 ]; then
        ident="$(esc o.name), $(esc o.shape), $(esc k.tier), coalesce(sc.app_thread_id, 0)"
        join="LEFT JOIN op o ON o.id = k.op_id"
    fi
    sqlite3 -separator $'\t' "$1" "SELECT 'kernel', k.id, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
      k.registers_per_thread, k.static_smem, k.dynamic_smem, coalesce(k.local_mem_per_thread, 0), k.device_id,
      k.stream_id, k.correlation_id, coalesce(k.scope_id, 0), k.pid, k.threads,
      max(coalesce(k.queue_delay_ns, 0), 0),
      CASE WHEN a.id IS NULL THEN 0 WHEN NOT k.has_timestamps THEN a.duration_ns
           WHEN a.category IN ('launch', 'graph_launch') AND k.start_ns >= a.start_ns THEN a.duration_ns ELSE 0 END,
      CASE WHEN k.has_timestamps THEN (k.end_ns - k.start_ns) / 1000 * 1000 ELSE 0 END,
      CASE WHEN k.has_timestamps THEN k.start_ns WHEN a.id IS NOT NULL THEN a.start_ns
           ELSE (SELECT min(t) FROM (SELECT min(start_ns) t FROM process WHERE start_ns > 0 UNION ALL
                 SELECT min(start_ns) FROM api_call UNION ALL SELECT min(start_ns) FROM nvtx_range)) END,
      CASE WHEN k.has_timestamps THEN k.end_ns - k.start_ns ELSE 0 END,
      CASE WHEN k.has_timestamps THEN 'true' ELSE 'false' END,
      CASE WHEN k.tid IS NULL THEN '-' ELSE coalesce(nullif(t.name, ''), 'thread ' || k.tid) END,
      coalesce(k.tid, '-'), $(esc sc.name), $(esc "CASE WHEN n.demangled <> '' THEN n.demangled ELSE n.mangled END"),
      $ident
      FROM kernel k JOIN kernel_name n ON n.id = k.name_id LEFT JOIN api_call a ON a.id = k.api_id
      LEFT JOIN thread t ON t.pid = k.pid AND t.tid = k.tid LEFT JOIN scope sc ON sc.pid = k.pid AND sc.scope_id = k.scope_id
      $join ORDER BY k.id"
}
# JfrCheck's line without its occupancy (14) and backend (32) columns, checked on their own
drop_occ() { cut -f1-13,15-31,33-; }
short() { cut -c1-200; } # failure messages: kernel names can be kilobytes

# counts the session must give: type name, then its SQL
count_sql() {
    case $1 in
    warplens.GpuKernelEvent) echo "SELECT count(*) FROM kernel" ;;
    warplens.GpuMemcpyEvent) echo "SELECT count(*) FROM memcpy WHERE start_ns IS NOT NULL AND end_ns >= start_ns" ;;
    warplens.GpuMemsetEvent) echo "SELECT count(*) FROM memset WHERE start_ns IS NOT NULL AND end_ns >= start_ns" ;;
    warplens.CudaApiEvent) echo "SELECT count(*) FROM api_call" ;;
    warplens.NvtxRangeEvent) echo "SELECT count(*) FROM nvtx_range" ;;
    warplens.ScopeEvent) echo "SELECT count(*) FROM scope" ;;
    esac
}
TYPES="warplens.GpuKernelEvent warplens.GpuMemcpyEvent warplens.GpuMemsetEvent warplens.CudaApiEvent warplens.NvtxRangeEvent warplens.ScopeEvent"

# left_out SESSION TYPE: the rows of the event type's table that the store leaves out as damaged
# (here none of them is also without its times)
left_out() {
    local table
    case $2 in
    warplens.GpuKernelEvent) table=kernel ;; warplens.GpuMemcpyEvent) table=memcpy ;;
    warplens.GpuMemsetEvent) table=memset ;; warplens.CudaApiEvent) table=api_call ;;
    warplens.NvtxRangeEvent) table=nvtx_range ;; warplens.ScopeEvent) table=scope ;;
    esac
    "$W" info "$1" 2>/dev/null | sed -n "s/^damaged .*[:,] $table \([0-9]*\)[,;].*/\1/p" | grep . || echo 0
}

# read_all SESSION JFR NAME HOSTILE: every reader on one file
read_all() {
    local s=$1 f=$2 name=$3 hostile=$4 rc
    jfr summary "$f" >summary.txt 2>err.txt; rc=$?
    check "[ $rc = 0 ]" "$name: jfr summary failed: $(head -3 err.txt)"
    jfr metadata "$f" >metadata.txt 2>err.txt; rc=$?
    check "[ $rc = 0 ] && grep -q 'class GpuKernelEvent extends jdk.jfr.Event' metadata.txt" \
        "$name: jfr metadata failed or lacks GpuKernelEvent: $(head -3 err.txt)"
    jfr print "$f" >print.txt 2>err.txt; rc=$?
    check "[ $rc = 0 ]" "$name: jfr print failed: $(head -3 err.txt)"
    jfr print --json "$f" >print.json 2>err.txt; rc=$?
    check "[ $rc = 0 ] && jq -e . print.json >/dev/null" "$name: jfr print --json failed or is not JSON: $(head -3 err.txt)"
    java -cp jc JfrCheck "$f" --kernels >java.txt 2>err.txt; rc=$?
    check "[ $rc = 0 ]" "$name: the RecordingFile reader failed: $(grep -m3 -v '^kernel' java.txt; head -3 err.txt)"
    for t in $TYPES; do
        local want got_sum got_json got_java
        want=$(sqlite3 "$s" "$(count_sql "$t")")
        # damaged rows: every reader leaves them out (`warplens info` counts them per table)
        [ "$hostile" = 1 ] && want=$((want - $(left_out "$s" "$t")))
        got_sum=$(awk -v t="$t" '$1 == t {print $2}' summary.txt)
        got_json=$(jq --arg t "$t" '[.recording.events[] | select(.type == $t)] | length' print.json)
        got_java=$(awk -v t="$t" '$1 == "type" && $2 == t {print $3}' java.txt)
        check "[ '$want' = '${got_sum:-0}' ] && [ '$want' = '$got_json' ] && [ '$want' = '$got_java' ]" \
            "$name: $t: session $want, jfr summary ${got_sum:-0}, JSON $got_json, RecordingFile $got_java"
    done
    check "grep -qx 'contract warplens.GpuKernelEvent ok' java.txt && grep -qx 'contract warplens.GpuOccupancyEvent ok' java.txt" \
        "$name: $(grep contract java.txt | grep -v ' ok$')"
    [ "$hostile" = 1 ] && return
    # every kernel, field by field (the occupancy column is checked against the calculator below)
    expected_kernels "$s" >want.txt
    grep '^kernel' java.txt | drop_occ >got.txt
    check "[ -s want.txt ] && cmp -s want.txt got.txt" "$name: kernel fields differ from the session: $(diff want.txt got.txt | head -4 | short)"
    # the same through jfr print --json (durations as ISO-8601 seconds)
    jq -r 'def ns: ltrimstr("PT") | rtrimstr("S") | split(".") | ((.[0] | tonumber) * 1000000000) + (((.[1] // "") + "000000000")[0:9] | tonumber);
        [.recording.events[] | select(.type == "warplens.GpuKernelEvent") | .values] | sort_by(.kernelId)[] |
        [.kernelId, .gridDimX, .gridDimY, .gridDimZ, .blockDimX, .blockDimY, .blockDimZ, .registersPerThread,
         (.queueDelayNanos | ns), (.eventThread.osName // "-"), (.scopeName // "-")] | @tsv' print.json >got_json.txt
    cut -f2-9,19,25,27 want.txt >want_json.txt
    check "cmp -s want_json.txt got_json.txt" "$name: JSON kernel fields differ: $(diff want_json.txt got_json.txt | head -4)"
    # occupancy: each distinct launch configuration against the calculator (H100: sm_90)
    local bad=0 n=0
    while IFS=$'\t' read -r bx by bz regs smem dyn occ; do
        n=$((n + 1))
        local want_occ
        want_occ=$("$W" occupancy --gpu sm_90 --block $((bx * by * bz)) --regs "$regs" --smem "$smem" --dyn-smem "$dyn" --json |
            jq -r '.occupancy_pct | . + 0.5 | floor')
        [ "$want_occ" = "$occ" ] || { bad=1; echo "  $name: block ${bx}x${by}x${bz} regs $regs smem $smem+$dyn: JFR $occ, calculator $want_occ"; }
    done < <(grep '^kernel' java.txt | awk -F'\t' '{print $6"\t"$7"\t"$8"\t"$9"\t"$10"\t"$11"\t"$14}' | sort -u)
    check "[ $bad = 0 ] && [ $n -gt 0 ]" "$name: occupancy differs from the calculator ($n configurations)"
    # backend: what `warplens kernels` says of the same kernel name
    "$W" kernels "$s" --json | jq -r '.[] | [.name, .backend] | @tsv' | sort -u >want_backend.txt
    grep '^kernel' java.txt | awk -F'\t' '{print $29"\t"$32}' | sort -u >got_backend.txt
    check "[ -s got_backend.txt ] && [ -z \"\$(comm -13 want_backend.txt got_backend.txt)\" ]" \
        "$name: backends differ from warplens kernels: $(comm -13 want_backend.txt got_backend.txt | head -3 | short)"
}

# every session as recorded (no identity: made before it), then upgraded (operation, shape, tier)
for s in "$DATA"/*.wlsession; do
    name=$(basename "$s" .wlsession)
    for v in old upgraded; do
        f=$s
        if [ $v = upgraded ]; then
            f=$name.wlsession
            cp "$s" "$f" && "$W" import --upgrade "$f" >/dev/null 2>err.txt
            check "[ $? = 0 ]" "$name: import --upgrade failed: $(cat err.txt)"
        elif [ "$name" != demo-h100 ]; then
            continue # one session read without identity is enough
        fi
        "$W" export "$f" -o "$name.jfr" >out.txt 2>err.txt
        check "[ $? = 0 ]" "$name: export failed: $(cat err.txt)"
        check "grep -q '(JFR): ' out.txt" "$name: no JFR summary line: $(cat out.txt)"
        read_all "$f" "$name.jfr" "$name ($v)" 0
    done
done
# operations reach the events: the demo's batches run inside NVTX "batch" ranges
ops=$(jq '[.recording.events[] | select(.type == "warplens.GpuKernelEvent" and .values.operation == "batch")] | length' \
    <(jfr print --json --events GpuKernelEvent demo-h100.jfr))
check "[ '$ops' = 48 ]" "demo: kernels with operation batch: $ops, want 48"
# --format jfr and the .jfr default agree; a failed export leaves nothing behind
"$W" export -q "$DATA/demo-h100.wlsession" --format jfr -o explicit.out && "$W" export -q "$DATA/demo-h100.wlsession" -o default.jfr
check "cmp -s explicit.out default.jfr" "--format jfr and the .jfr default differ"
"$W" export "$DATA/demo-h100.wlsession" --format jfx -o x.jfr 2>err.txt
check "[ $? = 2 ] && grep -q 'perfetto, json or jfr' err.txt && [ ! -e x.jfr ]" "unknown format: $(cat err.txt)"

# ---- several chunks: a synthetic session larger than one chunk (8 MiB of events) -------------
"$WARPLENS_BUILD_DIR/bin/bench_export" --make-session synth.wlsession --kernels 100000 >/dev/null 2>&1
"$W" export -q synth.wlsession -o synth.jfr 2>err.txt
check "[ $? = 0 ]" "synthetic export failed: $(cat err.txt)"
jfr summary synth.jfr >summary.txt 2>err.txt
chunks=$(awk '/Chunks:/ {print $2}' summary.txt)
check "[ '${chunks:-0}' -ge 2 ]" "the 100k-kernel session should take several chunks: ${chunks:-?} ($(head -2 err.txt))"
java -cp jc JfrCheck synth.jfr --kernels >java.txt 2>err.txt
check "[ $? = 0 ]" "RecordingFile on several chunks: $(head -3 err.txt)"
for t in $TYPES; do
    want=$(sqlite3 synth.wlsession "$(count_sql "$t")")
    got=$(awk -v t="$t" '$1 == "type" && $2 == t {print $3}' java.txt)
    got_sum=$(awk -v t="$t" '$1 == t {print $2}' summary.txt)
    check "[ '$want' = '$got' ] && [ '$want' = '$got_sum' ]" "synthetic: $t: session $want, RecordingFile $got, summary $got_sum"
done
# every chunk re-declares the kernel names and threads it uses (and keys keep their meaning)
unnamed=$(grep '^kernel' java.txt | awk -F'\t' '$29 == "-"' | wc -l)
check "[ $unnamed = 0 ]" "$unnamed kernels without a name (chunk boundaries)"
expected_kernels synth.wlsession >want.txt
grep '^kernel' java.txt | drop_occ >got.txt
check "cmp -s want.txt got.txt" "synthetic: kernel fields differ: $(diff want.txt got.txt | head -4 | short)"

# ---- hostile sessions -------------------------------------------------------------------------
cp "$DATA/demo-h100.wlsession" hostile.wlsession
# a file written by anything: the tables lose their NOT NULL constraints (and indexes) first
sqlite3 hostile.wlsession "DROP VIEW kernels"
# (their indexes made again: a session without them is refused as damaged, test_damaged_cli)
for t in kernel kernel_name api_call memcpy memset scope thread nvtx_range device; do
    idx=$(sqlite3 hostile.wlsession "SELECT group_concat(sql, '; ') FROM sqlite_master WHERE type = 'index' AND tbl_name = '$t' AND sql IS NOT NULL")
    sqlite3 hostile.wlsession "CREATE TABLE h AS SELECT * FROM $t; DROP TABLE $t; ALTER TABLE h RENAME TO $t; $idx"
done
sqlite3 hostile.wlsession "
  UPDATE thread SET name = CAST(x'e28093ff00fe0a09225c6b' AS TEXT) WHERE rowid = 1;
  UPDATE thread SET name = NULL WHERE rowid = 2;
  UPDATE kernel_name SET demangled = CAST(x'c328ff41e2809c0d0a225c7b7d' AS TEXT) || hex(randomblob(100)) WHERE id = 1;
  UPDATE kernel_name SET demangled = '', mangled = '' WHERE id = 2;
  UPDATE kernel SET grid_x = 2147483647, grid_y = 65535, grid_z = 65535, block_x = 1024, registers_per_thread = 1000000000,
    static_smem = 9223372036854775807, dynamic_smem = -5, local_mem_per_thread = 9223372036854775807 WHERE id = 1;
  UPDATE kernel SET queue_delay_ns = NULL, submit_delay_ns = -100, stream_id = NULL, scope_id = 987654321, tid = NULL,
    grid_x = NULL, registers_per_thread = NULL, correlation_id = NULL, device_id = NULL WHERE id = 2;
  UPDATE kernel SET name_id = 999999 WHERE id = 7;
  UPDATE kernel SET grid_x = -3, block_x = -1, grid_y = 0 WHERE id = 8;
  UPDATE kernel SET end_ns = start_ns - 1000 WHERE id = 3;
  UPDATE kernel SET start_ns = 9000000000000000000, end_ns = 9000000000000000001 WHERE id = 4;
  UPDATE kernel SET has_timestamps = 0 WHERE id = 5;
  UPDATE kernel SET api_id = NULL, tid = 424242 WHERE id = 6;
  UPDATE scope SET name = replace(hex(zeroblob(32768)), '00', 'ab') || CAST(x'ff' AS TEXT) WHERE rowid = 1;
  UPDATE scope SET name = NULL, end_ns = NULL WHERE rowid = 2;
  UPDATE nvtx_range SET name = CAST(x'00' AS TEXT), tid = NULL WHERE rowid = 1;
  UPDATE nvtx_range SET name = '', domain = CAST(x'f0908d88' AS TEXT), end_ns = NULL WHERE rowid = 2;
  UPDATE api_call SET name = NULL, category = NULL, return_value = -9223372036854775808 WHERE rowid = 1;
  UPDATE api_call SET return_value = 9223372036854775807, correlation_id = 4294967295 WHERE rowid = 2;
  UPDATE api_call SET tid = 99999, start_ns = NULL, end_ns = NULL WHERE rowid = 3;
  UPDATE memcpy SET bytes = -1, bandwidth_gbps = 1e308, kind = NULL, device_id = NULL WHERE rowid = 1;
  UPDATE memcpy SET bandwidth_gbps = NULL, src_kind = NULL, dst_kind = NULL, tid = 77 WHERE rowid = 3;
  UPDATE memcpy SET bytes = 9223372036854775807, src_kind = CAST(x'ff' AS TEXT) WHERE rowid = 2;
  UPDATE device SET sm_count = 0, warp_size = 0, max_threads_per_sm = -1 WHERE rowid = 1;
  UPDATE process SET cmdline = CAST(x'2f2f2f00' AS TEXT);"
"$W" export -q hostile.wlsession -o hostile.jfr 2>err.txt
check "[ $? = 0 ]" "hostile export failed: $(cat err.txt)"
read_all hostile.wlsession hostile.jfr hostile 1
# an empty session (schema only) still gives a recording with its metadata
sqlite3 hostile.wlsession "DELETE FROM kernel; DELETE FROM api_call; DELETE FROM memcpy; DELETE FROM memset;
  DELETE FROM nvtx_range; DELETE FROM scope; DELETE FROM nvtx_mark;"
"$W" export -q hostile.wlsession -o empty.jfr 2>err.txt
check "[ $? = 0 ]" "empty export failed: $(cat err.txt)"
read_all hostile.wlsession empty.jfr empty 1

summary jfr_cli
