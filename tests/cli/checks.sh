# Sourced by the CLI tests that drive the recorder against a fake (NVML, PC sampling, PM sampling):
# PASS/FAIL counting, a scratch folder that becomes the working directory and goes at exit, a
# one-value SQL query, and the closing summary line (its status is the test's).
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
q() { sqlite3 "$1" "$2"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
summary() { echo "$1: $pass passed, $fail failed"; [ "$fail" = 0 ]; }
