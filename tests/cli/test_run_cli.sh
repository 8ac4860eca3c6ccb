#!/usr/bin/env bash
# `warplens run` without a GPU driver (as in CI): argument handling, the one-line notice, exit
# status and signal pass-through, missing programs, arguments passed verbatim (execvp, no shell).
# On a machine with a driver the no-GPU checks are skipped (the GPU suite covers that path).
set -u
W=${WARPLENS_BIN:?}
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
expect_rc() { # want cmd...
    local want=$1; shift
    "$@" >/tmp/wl_run_out.$$ 2>/tmp/wl_run_err.$$; local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$* -> exit $rc, want $want: $(head -3 /tmp/wl_run_err.$$)"; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp" /tmp/wl_run_out.$$ /tmp/wl_run_err.$$' EXIT
cd "$tmp"

expect_rc 2 "$W" run
grep -q "no program given" /tmp/wl_run_err.$$ && ok || bad "no program message"
expect_rc 2 "$W" run --bogus -- true
grep -q "unknown option '--bogus'" /tmp/wl_run_err.$$ && ok || bad "unknown option message"
expect_rc 2 "$W" run --record kernels,bogus -- true
grep -q "unknown item 'bogus'" /tmp/wl_run_err.$$ && ok || bad "bad --record message"
expect_rc 2 "$W" run --buffer-size 1K -- true
grep -q "between 64K and 256M" /tmp/wl_run_err.$$ && ok || bad "bad --buffer-size message"
expect_rc 2 "$W" run --max-buffers 0 -- true
expect_rc 2 "$W" run -o
expect_rc 2 "$W" run --capture-range nvtx -- true
grep -q "unknown range 'nvtx' (use profiler-api" /tmp/wl_run_err.$$ && ok || bad "bad --capture-range message"
expect_rc 2 "$W" run --capture-range profiler-api --metrics default -- true
grep -q "cannot be combined with --metrics" /tmp/wl_run_err.$$ && ok || bad "--capture-range with --metrics"
expect_rc 2 "$W" run --capture-range profiler-api --pm-sampling default -- true
grep -q "cannot be combined with --pm-sampling" /tmp/wl_run_err.$$ && ok || bad "--capture-range with --pm-sampling"
expect_rc 2 "$W" run --capture-range
grep -q -- "--capture-range needs a value" /tmp/wl_run_err.$$ && ok || bad "--capture-range without a value"
# the --metrics filters: with --metrics only, values checked before anything runs
expect_rc 2 "$W" run -k gemm -- true
grep -q "\-\-metrics-kernel goes with --metrics" /tmp/wl_run_err.$$ && ok || bad "-k without --metrics"
expect_rc 2 "$W" run --metrics occupancy -k 'regex:(' -- true
grep -q "metrics-kernel 'regex:('" /tmp/wl_run_err.$$ && ok || bad "bad -k regex message"
expect_rc 2 "$W" run --metrics occupancy --launch-count 0 -- true
grep -q "needs a whole number of at least 1, got '0'" /tmp/wl_run_err.$$ && ok || bad "bad -c message"
expect_rc 2 "$W" run --metrics occupancy -s x -- true
expect_rc 2 "$W" run --metrics occupancy --metrics-graphs all -- true
grep -q "unknown mode 'all' (off, node or launch)" /tmp/wl_run_err.$$ && ok || bad "bad --metrics-graphs message"
expect_rc 2 "$W" run --metrics occupancy --nvtx-include
grep -q -- "--nvtx-include needs a value" /tmp/wl_run_err.$$ && ok || bad "--nvtx-include without a value"
expect_rc 0 "$W" run --help
grep -q "\-k, --metrics-kernel REGEX" /tmp/wl_run_out.$$ && ok || bad "help lists -k"
expect_rc 0 "$W" run --help
grep -q "usage: warplens run" /tmp/wl_run_out.$$ && ok || bad "help text"
expect_rc 2 "$W" bogus-verb

if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
    expect_rc 0 "$W" run -- true
    [ "$(wc -l </tmp/wl_run_err.$$)" = 1 ] && grep -q "no NVIDIA driver" /tmp/wl_run_err.$$ && ok \
        || bad "no-GPU notice is not exactly one line: $(cat /tmp/wl_run_err.$$)"
    expect_rc 7 "$W" run -- sh -c 'exit 7'
    expect_rc 143 "$W" run -- sh -c 'kill -TERM $$'
    expect_rc 127 "$W" run -- ./no-such-program
    grep -q "cannot run './no-such-program'" /tmp/wl_run_err.$$ && ok || bad "missing program message"
    # arguments reach the program verbatim: spaces, quotes, globs, $(...) are not interpreted
    "$W" run -q -- printf '[%s]' 'a b' '$(echo no)' '*' "it's" >out.txt 2>/dev/null
    [ "$(cat out.txt)" = "[a b][\$(echo no)][*][it's]" ] && ok || bad "arguments not verbatim: $(cat out.txt)"
    # the program's stdout/stderr are untouched; no session file without a GPU
    [ ! -e printf.wlsession ] && ok || bad "a session was written without a GPU"
    # `--` is optional when the program does not start with '-'
    expect_rc 3 "$W" run sh -c 'exit 3'
else
    echo "run_cli: a CUDA driver is present; no-GPU checks skipped"
fi
echo "run_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
