#!/usr/bin/env bash
# Hardware metrics without a GPU: the recorder's range-profiler modules (src/capture/range_profiler.c,
# metric_calls.c, metric_filter.c, metric_match.c) run for real in tests/rangeprof/range_profiler_driver
# against a fake CUPTI range profiler, then capture -> import -> metric_range -> views. Each piece of
# fake GPU work reads its identity in its values (correlation id x 10 + part), so every check below
# is "each range sits on the activity it measured": kernels, copies and sets interleaved on several
# streams and threads, copies of 0, 1 and 2 ranges, the driver's own work inside a launch, work no
# call accounts for (placed by CTA counts, or kept untied and counted without them), graph launches
# in the three --metrics-graphs modes and when CUPTI refuses them, the filters, batches decoded as
# they go (a killed run keeps them), a denied profiler, and the recorder's use of the API.
set -u
W=${WARPLENS_BIN:?}
B=${WARPLENS_BUILD_DIR:?}
DRV=$B/bin/range_profiler_driver
. "$(dirname "$0")/checks.sh"
export WARPLENS_METRICS=occupancy
unset WARPLENS_METRICS_KERNEL WARPLENS_METRICS_SKIP WARPLENS_METRICS_COUNT WARPLENS_METRICS_NVTX WARPLENS_METRICS_GRAPHS

run() { # name scenario [N]: driver + import; leaves $1.wlsession, $1.out, $1.err
    local name=$1; shift
    "$DRV" "$@" "$name.wlcap" >"$name.out" 2>"$name.err"
    local rc=$?
    # the driver takes the capture path second
    [ "$rc" = 0 ] && ok || bad "$name: driver exit $rc: $(cat "$name.err" "$name.out" | tail -5)"
    grep -q "misuse=0" "$name.out" && ok || bad "$name: the recorder misused the API: $(cat "$name.out")"
    "$W" import -o "$name.wlsession" "$name.wlcap" >/dev/null 2>"$name.imp" && ok || bad "$name: import: $(cat "$name.imp")"
}
# every range tied to an activity reads that activity's identity
IDENT="SELECT count(*) FROM metric_range r JOIN kernel_metric km USING (pid, device_id, range_index) JOIN metric m
  ON m.id = km.metric_id WHERE m.name = 'gpu__time_duration.sum' AND r.kind IS NOT NULL AND km.value !=
  r.correlation_id * 10 + CASE r.kind WHEN 'internal' THEN 5 ELSE r.part END"
LINKED_WRONG="SELECT count(*) FROM metric_range r JOIN kernel k ON k.id = r.kernel_id WHERE k.correlation_id != r.correlation_id"
untied() { q "$1" "SELECT count(*) FROM metric_range WHERE kind IS NULL"; }

# --- the issue's program shape, batches of 8 ----------------------------------------------------------
WARPLENS_METRICS_BATCH=8 "$DRV" mixed mixed.wlcap >mixed.out 2>mixed.err && ok || bad "mixed: driver: $(cat mixed.err)"
grep -q "misuse=0" mixed.out && ok || bad "mixed: misuse: $(cat mixed.out)"
"$W" import -o mixed.wlsession mixed.wlcap >/dev/null 2>&1 && ok || bad "mixed: import"
s=mixed.wlsession
check '[ "$(q $s "SELECT count(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM metric_range r WHERE r.kernel_id = k.id)")" = 0 ]' \
    "mixed: kernels without their range: $(q $s 'SELECT count(*) FROM kernel')"
check '[ "$(q $s "SELECT count(*) FROM kernel")" = 112 ]' "mixed: kernel records"
check '[ "$(q $s "$IDENT")" = 0 ]' "mixed: ranges on the wrong activity"
check '[ "$(q $s "$LINKED_WRONG")" = 0 ]' "mixed: kernel links"
check '[ "$(untied $s)" = 0 ]' "mixed: untied ranges: $(q $s 'SELECT * FROM metric_range WHERE kind IS NULL')"
# the copies: one range each for x.copy_(z), none, two parts, and a copy split into two records
check '[ "$(q $s "SELECT group_concat(n, \" \") FROM (SELECT count(*) AS n FROM metric_range WHERE kind = '\''memcpy'\''
    GROUP BY correlation_id ORDER BY correlation_id)")" = "1 1 1 2 1" ]' "mixed: copy ranges per call: $(q $s "SELECT correlation_id, part, parts FROM metric_range WHERE kind = 'memcpy'")"
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kind = '\''memcpy'\'' AND memcpy_id IS NULL")" = 1 ]' \
    "mixed: the split copy keeps its range on its call"
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kind = '\''memset'\'' AND memset_id IS NOT NULL")" = 1 ]' "mixed: set"
# the driver's work inside gemm's first launch: its own kind; the kernel placed by its CTA count
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kind = '\''internal'\''")" = 1 ]' "mixed: internal work"
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE matched = '\''signature'\''")" = 1 ]' "mixed: gemm by signature"
check '[ "$(q $s "SELECT count(*) FROM metric_range r JOIN kernel_metric km USING (pid, device_id, range_index) JOIN metric m ON
    m.id = km.metric_id JOIN kernel k ON k.id = r.kernel_id WHERE m.name = '\''sm__ctas_launched.sum'\'' AND k.grid_x = 64 AND km.value = 64")" = 2 ]' \
    "mixed: the grid of cuLaunchKernelEx and cuLaunchKernel launches"
check '[ "$(q $s "SELECT count(*) FROM lost WHERE source LIKE '\''metric%'\''")" = 0 ]' "mixed: losses: $(q $s 'SELECT * FROM lost')"
# batches of at most 8, first launches and copies alone: at least 117 calls / 8 decodes
check '[ "$(sed -n "s/.* decodes=\([0-9]*\).*/\1/p" mixed.out)" -ge 15 ]' "mixed: decodes: $(cat mixed.out)"
# the views
"$W" stats $s >stats.txt 2>&1
check 'grep -q "Hardware metrics of copies and sets" stats.txt' "stats: copies table: $(cat stats.txt | tail -20)"
check 'grep -Eq "^ +4 .*memcpy DtoD" stats.txt' "stats: 4 DtoD copy calls with records: $(grep memcpy stats.txt)"
check 'grep -Eq "^ +1 .*memcpy cuMemcpyDtoDAsync" stats.txt' "stats: the split copy by its call: $(grep memcpy stats.txt)"
"$W" kernels $s >kernels.txt 2>&1
check 'grep -q "Hardware metrics per kernel name" kernels.txt' "kernels: metric table"
check '! grep -q "could not be tied" kernels.txt' "kernels: nothing untied"

# --- work no call accounts for, in the middle of batches -----------------------------------------------
run hidden hidden
s=hidden.wlsession
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kernel_id IS NOT NULL")" = 18 ]' "hidden: kernels placed by CTA count"
check '[ "$(q $s "$IDENT")" = 0 ]' "hidden: identity"
check '[ "$(untied $s)" = 5 ]' "hidden: the 5 extra ranges kept untied"
check '[ "$(q $s "SELECT count FROM lost WHERE source = '\''metric_unattributed'\''")" = 5 ]' "hidden: counted"
check 'grep -q "ranges for 15 calls in one batch" hidden.err' "hidden: one line about the batch: $(cat hidden.err)"
# without the CTA counter nothing in that batch is certain: kept and counted, never guessed; the
# next calls are profiled one at a time and tied again
FAKE_RP_NO_CTA=1 run nocta hidden
s=nocta.wlsession
check '[ "$(q $s "SELECT count(*) FROM metric WHERE name = '\''sm__ctas_launched.sum'\''")" = 0 ]' "nocta: no CTA metric"
check '[ "$(q $s "$IDENT")" = 0 ]' "nocta: identity"
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kernel_id IS NOT NULL")" = 3 ]' "nocta: only the first launches: $(q $s 'SELECT kind, matched, count(*) FROM metric_range GROUP BY 1, 2')"
check '[ "$(untied $s)" = 20 ]' "nocta: the batch kept"
check '[ "$(q $s "SELECT count FROM lost WHERE source = '\''metric_no_range'\''")" = 15 ]' "nocta: launches without a range counted"
# a CTA counter that would cost a pass is left out
FAKE_RP_CTA_PASS=1 run ctapass mixed
check '[ "$(q ctapass.wlsession "SELECT count(*) FROM metric WHERE name = '\''sm__ctas_launched.sum'\''")" = 0 ]' "ctapass: left out"
check 'grep -q "passes=1" ctapass.out' "ctapass: still one pass"

# --- four threads, each on its own stream, kernels and copies interleaved -------------------------------
DRIVER_N=300 run threads threads
s=threads.wlsession
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kernel_id IS NOT NULL")" = 1080 ]' "threads: kernels tied: $(q $s 'SELECT kind, matched, count(*) FROM metric_range GROUP BY 1, 2')"
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE memcpy_id IS NOT NULL")" = 120 ]' "threads: copies tied"
check '[ "$(q $s "$IDENT")" = 0 ]' "threads: identity"
check '[ "$(q $s "$LINKED_WRONG")" = 0 ]' "threads: links"

# --- a graph captured on another stream: the profiler is left alone meanwhile ---------------------------
run capture capture
s=capture.wlsession
check '[ "$(q $s "SELECT count(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM metric_range r WHERE r.kernel_id = k.id)")" = 0 ]' \
    "capture: every kernel that ran has its range: $(q $s 'SELECT kind, matched, count(*) FROM metric_range GROUP BY 1, 2')"
check '[ "$(q $s "SELECT count(*) FROM kernel")" = 7 ] && [ "$(q $s "SELECT count(*) FROM metric_range WHERE memset_id IS NOT NULL")" = 2 ]' \
    "capture: the 7 kernels and 2 sets that ran are tied"
check '[ "$(q $s "$IDENT")" = 0 ] && [ "$(untied $s)" = 0 ]' "capture: identity"
check 'grep -q "while a CUDA graph is being captured" capture.err' "capture: said once"

# --- kernel replay (a set of two passes) -------------------------------------------------------------
WARPLENS_METRICS=dram__bytes_read.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum run replay mixed
check 'grep -q "kernel_replay=[1-9]" replay.out && grep -q "passes=2" replay.out' "replay: kernel replay for two passes: $(cat replay.out)"
check '[ "$(q replay.wlsession "$IDENT")" = 0 ] && [ "$(untied replay.wlsession)" = 0 ]' "replay: identity"
check '[ "$(q replay.wlsession "SELECT replay FROM metric_config")" = kernel ]' "replay: metric_config"

# --- graph launches ----------------------------------------------------------------------------------
GRAPH_IDENT="SELECT count(*) FROM metric_range r JOIN kernel_metric km USING (pid, device_id, range_index) JOIN metric m
  ON m.id = km.metric_id WHERE m.name = 'gpu__time_duration.sum' AND r.kind = 'graph_launch' AND km.value != r.correlation_id * 30 + 3"
WARPLENS_METRICS_GRAPHS=off run goff graphs
check 'grep -q "unprofiled=6" goff.out' "graphs off: the graphs' work ran unprofiled: $(cat goff.out)"
check '[ "$(q goff.wlsession "SELECT count(*) FROM metric_range")" = 4 ]' "graphs off: the kernels only"
# (node: kernel replay, as on the H100; without replay graph launches are left unprofiled)
WARPLENS_METRICS_REPLAY=kernel WARPLENS_METRICS_GRAPHS=node run gnode graphs
s=gnode.wlsession
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kind = '\''graph_node'\'' AND kernel_id IS NOT NULL")" = 4 ]' "graphs node: node kernels: $(q $s 'SELECT kind, part, parts, kernel_id, memset_id FROM metric_range')"
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kind = '\''graph_node'\'' AND memset_id IS NOT NULL")" = 2 ]' "graphs node: set nodes"
check '[ "$(q $s "SELECT count(*) FROM metric_range r JOIN kernel k ON k.id = r.kernel_id JOIN kernel_metric km USING (pid, device_id, range_index)
    JOIN metric m ON m.id = km.metric_id WHERE m.name = '\''sm__ctas_launched.sum'\'' AND km.value != k.grid_x")" = 0 ]' "graphs node: each node's own range"
check '[ "$(q $s "$IDENT")" = 0 ]' "graphs node: identity"
WARPLENS_METRICS_GRAPHS=launch run glaunch graphs
s=glaunch.wlsession
check 'grep -q "pushes=2 pops=2" glaunch.out' "graphs launch: user ranges: $(cat glaunch.out)"
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kind = '\''graph_launch'\''")" = 2 ]' "graphs launch: two whole launches"
check '[ "$(q $s "$GRAPH_IDENT")" = 0 ]' "graphs launch: one range sums its three nodes"
check '[ "$(q $s "SELECT count(*) FROM metric_range WHERE kind = '\''kernel'\''")" = 4 ]' "graphs launch: kernels around"
# CUPTI refusing to stop after a graph launch: graphs off from then on, everything else still profiled
WARPLENS_METRICS_REPLAY=kernel WARPLENS_METRICS_GRAPHS=node FAKE_GRAPH_STOP_FAILS=1 run gfail graphs
check 'grep -q "after a graph launch failed on GPU 0" gfail.err' "graphs refused: one line: $(cat gfail.err)"
check '[ "$(q gfail.wlsession "SELECT count(*) FROM metric_range WHERE kind = '\''kernel'\''")" = 4 ]' "graphs refused: kernels still profiled"
check '[ "$(q gfail.wlsession "SELECT count(*) FROM metric_config WHERE status IS NOT NULL")" = 0 ]' "graphs refused: metrics stay on"
# node without replay: graph launches left unprofiled with one line (CUPTI 13.0 fails the Stop after one)
WARPLENS_METRICS_GRAPHS=node run gnode1 graphs
check 'grep -q "node needs kernel replay" gnode1.err' "graphs node, one pass: said why: $(cat gnode1.err)"
check '[ "$(q gnode1.wlsession "SELECT count(*) FROM metric_range WHERE kind = '\''graph_node'\''")" = 0 ]' "graphs node, one pass: no node ranges"
check '[ "$(q gnode1.wlsession "SELECT count(*) FROM metric_range WHERE kind = '\''kernel'\'' AND kernel_id IS NOT NULL")" = 4 ]' "graphs node, one pass: kernels still profiled"
# a graph launch as one range needs one pass
WARPLENS_METRICS=smsp__sass_thread_inst_executed_op_ffma_pred_on.sum WARPLENS_METRICS_GRAPHS=launch run glaunch2 graphs
check 'grep -q "needs a one-pass set" glaunch2.err' "graphs launch with two passes: said why"

# --- filters -----------------------------------------------------------------------------------------
names() { q "$1" "SELECT coalesce(group_concat(k.name || ':' || k.correlation_id, ' '), '') FROM (SELECT k.* FROM metric_range r JOIN kernels k ON k.id = r.kernel_id ORDER BY k.correlation_id) k"; }
kinds() { q "$1" "SELECT coalesce(group_concat(kind, ' '), '') FROM (SELECT kind FROM metric_range ORDER BY correlation_id)"; }
WARPLENS_METRICS_KERNEL='^gemm' run fk filters
check '[ "$(q fk.wlsession "SELECT count(*) FROM metric_range WHERE kernel_id IS NOT NULL")" = 6 ] && [ "$(kinds fk.wlsession | tr " " "\n" | sort -u | tr -d "\n")" = kernel ]' \
    "filter -k ^gemm (demangled names): $(names fk.wlsession)"
WARPLENS_METRICS_KERNEL='add|elementwise' WARPLENS_METRICS_SKIP=2 WARPLENS_METRICS_COUNT=3 run fsc filters
check '[ "$(q fsc.wlsession "SELECT group_concat(name, \" \") FROM (SELECT k.name FROM metric_range r JOIN kernels k ON k.id = r.kernel_id ORDER BY k.correlation_id)")" = "elementwise_kernel add() elementwise_kernel" ]' \
    "filter -k -s 2 -c 3: $(names fsc.wlsession)"
WARPLENS_METRICS_NVTX=step run fn filters
check '[ "$(kinds fn.wlsession)" = "kernel kernel memcpy kernel kernel memcpy kernel kernel memcpy" ]' \
    "filter --nvtx-include step: gemm, add and the copy inside, nested: $(kinds fn.wlsession)"
WARPLENS_METRICS_NVTX=$'nope\ninner' run fn2 filters
check '[ "$(kinds fn2.wlsession)" = "kernel memcpy kernel memcpy kernel memcpy" ]' "filter --nvtx-include inner: $(kinds fn2.wlsession)"
check 'grep -q "unprofiled=9" fn2.out' "filter: left-out work ran unprofiled: $(cat fn2.out)"

# --- decoded as it goes: a run killed mid-way keeps every decoded batch --------------------------------
( WARPLENS_METRICS_FLUSH_MS=0 exec "$DRV" long long.wlcap 40 >long.out 2>long.err ) &
pid=$!
for _ in $(seq 100); do grep -q READY long.out 2>/dev/null && break; sleep 0.1; done
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
"$W" import -o long.wlsession long.wlcap >/dev/null 2>&1 && ok || bad "killed: import"
check '[ "$(q long.wlsession "SELECT count(*) FROM metric_range WHERE kernel_id IS NOT NULL")" = 39 ]' \
    "killed: the 39 batches decoded before the last launch are kept: $(q long.wlsession 'SELECT count(*) FROM metric_range')"
check '[ -s long.wlprogress ]' "killed: progress side file written"
check '[ "$(q long.wlsession "SELECT complete FROM process")" = 0 ]' "killed: the session says incomplete"

# SIGTERM with the recorder's signal handling (--metrics): the open batch is decoded, the capture
# completed, and the process still ends by SIGTERM
( DRIVER_KEEP_SIGNALS=1 exec "$DRV" long term.wlcap 40 >term.out 2>term.err ) &
pid=$!
for _ in $(seq 100); do grep -q READY term.out 2>/dev/null && break; sleep 0.1; done
kill -TERM $pid 2>/dev/null; wait $pid; rc=$?
check '[ "$rc" = 143 ]' "SIGTERM: the process ends by the signal (exit $rc): $(cat term.err)"
"$W" import -o term.wlsession term.wlcap >/dev/null 2>&1 && ok || bad "SIGTERM: import"
check '[ "$(q term.wlsession "SELECT count(*) FROM metric_range WHERE kernel_id IS NOT NULL")" = 40 ]' \
    "SIGTERM: all 40 ranges, the open batch too: $(q term.wlsession 'SELECT count(*) FROM metric_range')"
check '[ "$(q term.wlsession "SELECT complete FROM process")" = 1 ]' "SIGTERM: capture completed"

# --- no permission: one line, no metrics, nothing else changes ----------------------------------------
FAKE_RP_DENY=1 run deny deny
check 'grep -q "hardware metrics are off on GPU 0: enabling the range profiler" deny.err' "deny: line: $(cat deny.err)"
check '[ "$(q deny.wlsession "SELECT count(*) FROM metric_range")" = 0 ]' "deny: no ranges"
check '[ "$(q deny.wlsession "SELECT count(*) FROM metric_config WHERE status LIKE '\''%INSUFFICIENT_PRIVILEGES%'\''")" = 1 ]' "deny: status"
summary metrics_attrib_cli
