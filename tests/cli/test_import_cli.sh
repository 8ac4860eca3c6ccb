#!/usr/bin/env bash
# Real H100 capture -> session: `warplens import` of tests/data/demo-h100.wlcap (kept by
# `warplens run --keep-capture` in the GPU suite) must give the same session as the one
# `warplens run` wrote from it; cutting the capture anywhere still imports (marked incomplete);
# garbage is rejected with the offset. Also `warplens occupancy-check` on a real PyTorch run.
set -u
W=${WARPLENS_BIN:?}
D=${WARPLENS_TEST_DATA:?}
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$W" import -o "$tmp/demo.wlsession" "$D/demo-h100.wlcap" && ok || bad "import of the real capture"
for t in kernels copies api nvtx scopes sync lost; do
    a=$("$W" stats --csv --only $t "$tmp/demo.wlsession")
    b=$("$W" stats --csv --only $t "$D/demo-h100.wlsession")
    [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "imported capture differs from the run's session in '$t'"
done
"$W" info "$tmp/demo.wlsession" | grep -q "INCOMPLETE" && bad "complete capture marked incomplete" || ok

size=$(stat -c %s "$D/demo-h100.wlcap")
for cut in 40 1000 $((size / 3)) $((size / 2)) $((size - 1)); do
    head -c "$cut" "$D/demo-h100.wlcap" >"$tmp/cut.wlcap"
    if "$W" import -o "$tmp/cut.wlsession" "$tmp/cut.wlcap" 2>"$tmp/err"; then
        "$W" info "$tmp/cut.wlsession" | grep -q "INCOMPLETE" && ok || bad "capture cut at $cut not marked incomplete"
    else
        bad "capture cut at $cut not imported: $(cat "$tmp/err")"
    fi
done
head -c 5000 /dev/urandom >"$tmp/garbage.wlcap"
"$W" import -o "$tmp/g.wlsession" "$tmp/garbage.wlcap" 2>"$tmp/err" && bad "garbage imported" || ok
grep -q "bad magic at offset 0" "$tmp/err" && ok || bad "garbage message: $(cat "$tmp/err")"
[ ! -e "$tmp/g.wlsession" ] && ok || bad "a session file was left behind after a failed import"
{ head -c 32 "$D/demo-h100.wlcap"; head -c 3000 /dev/urandom; } >"$tmp/badrec.wlcap"
"$W" import -o "$tmp/b.wlsession" "$tmp/badrec.wlcap" 2>"$tmp/err"
grep -q "offset" "$tmp/err" && ok || { [ -e "$tmp/b.wlsession" ] && ok || bad "random records: neither imported nor an offset error"; }

"$W" occupancy-check "$D/torch-occ-h100.wlsession" >"$tmp/occ" && ok || bad "occupancy-check on the PyTorch run"
grep -q "11 distinct launch configurations: 11 agree with the driver, 0 differ" "$tmp/occ" && ok \
    || bad "occupancy-check summary: $(tail -1 "$tmp/occ")"
"$W" occupancy-check "$D/demo-h100.wlsession" 2>"$tmp/err" && bad "occupancy-check without checks succeeded" || ok
grep -q "record with \`warplens run --check-occupancy\`" "$tmp/err" && ok || bad "no-checks message: $(cat "$tmp/err")"

# timer API side files travel with the captures: imported into the timer tables, shown by stats
printf '# warplens timers\nwltimers\t1\npid\t777\nbackend\tcuda\ncategory\t2\truntime\ncategory\t3\tsolver\n' >"$tmp/777.wltimers"
printf 'interval\t0\tgpu\t2\tdone\t0\t1700000000000000000\t2500000\t777\t0x1f\th2d_transfer_chunk_0\n' >>"$tmp/777.wltimers"
printf 'interval\t1\tgpu\t2\tdone\t0\t1700000000003000000\t10300000\t777\t0x1f\tkernel_chunk_0\n' >>"$tmp/777.wltimers"
printf 'interval\t2\tspan\t2\tdone\t0\t1700000000000000000\t13000000\t777\t0x1f\tgpu_workload\n' >>"$tmp/777.wltimers"
printf 'interval\t3\thost\t3\tdone\t0\t1700000000000000000\t14000000\t777\t0x0\tsolve\n' >>"$tmp/777.wltimers"
printf 'interval\t4\tgpu\t2\tpending\t0\t1700000000020000000\t0\t777\t0x1f\tkernel_chunk_1\noverflow\t0\nerrors\t0\nend\t5\n' >>"$tmp/777.wltimers"
"$W" import -o "$tmp/t.wlsession" "$D/demo-h100.wlcap" "$tmp/777.wltimers" && ok || bad "import with a timer file"
"$W" stats --csv --only timers "$tmp/t.wlsession" >"$tmp/timers.csv"
grep -q '^"kernel_chunk_0",runtime gpu,1,10300000,' "$tmp/timers.csv" && grep -q '^"solve",solver host,1,14000000,' "$tmp/timers.csv" \
    && ok || bad "timers table: $(cat "$tmp/timers.csv")"
[ "$(sqlite3 "$tmp/t.wlsession" "SELECT count(*) FROM timer WHERE status = 'pending' AND duration_ns IS NULL")" = 1 ] && ok || bad "pending interval"
"$W" stats "$tmp/t.wlsession" | grep -q "Timers (warplens timer API" && ok || bad "stats shows the timers table"
"$W" stats "$D/demo-h100.wlsession" | grep -q "Timers (warplens" && bad "timers table shown for a session without timers" || ok
# ... and drawn on the timeline (on the thread that timed them) in both export formats
"$W" export "$tmp/t.wlsession" --format json -o "$tmp/t.json" >/dev/null && ok || bad "export with timers"
[ "$(jq '[.traceEvents[] | select(.cat == "timer" and .ph == "X")] | length' "$tmp/t.json")" = 4 ] && ok \
    || bad "JSON timer slices: $(jq -c '[.traceEvents[] | select(.cat == "timer")]' "$tmp/t.json" | head -c 300)"
jq -e '[.traceEvents[] | select(.name == "kernel_chunk_0" and .args.timer == "gpu runtime" and .dur == 10300)] | length == 1' \
    "$tmp/t.json" >/dev/null && ok || bad "JSON timer slice fields"
"$W" export "$tmp/t.wlsession" --format perfetto -o "$tmp/t.pftrace" >/dev/null && ok || bad "perfetto export with timers"
if command -v protoc >/dev/null; then
    n=$(protoc --decode=warplens_trace.Trace -I "${WARPLENS_SOURCE_DIR:-$(dirname "$0")/../..}/tests/proto" \
        "${WARPLENS_SOURCE_DIR:-$(dirname "$0")/../..}/tests/proto/warplens_trace.proto" <"$tmp/t.pftrace" | grep -c 'kernel_chunk_0\|gpu_workload\|"solve"')
    [ "$n" -ge 3 ] && ok || bad "Perfetto timer slices ($n)"
fi
head -c 300 "$tmp/777.wltimers" >"$tmp/888.wltimers"   # truncated: the session is still written
"$W" import -o "$tmp/t2.wlsession" "$D/demo-h100.wlcap" "$tmp/888.wltimers" 2>"$tmp/err" && ok || bad "truncated timer file fails the session"
grep -q "timers not imported: .*888.wltimers" "$tmp/err" && ok || bad "truncated timer file message: $(cat "$tmp/err")"

echo "import_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
