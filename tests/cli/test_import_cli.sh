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

echo "import_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
