# Sourced by the CLI tests: PASS/FAIL counting (check CMD WHAT: CMD evaluated, WHAT told when it
# fails), a scratch folder ($tmp) that becomes the working directory and goes at exit, a one-value
# SQL query, and the closing summary line (its status is the test's).
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
q() { sqlite3 "$1" "$2"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
summary() { echo "$1: $pass passed, $fail failed"; [ "$fail" = 0 ]; }
