#!/usr/bin/env bash
# `warplens merge` and `warplens ranks` on synthetic multi-host jobs (bench_merge --make: ranks
# spread over hosts with planted clock offsets and a planted straggler): every host's offset
# recovered within 5 us, the straggler named by `ranks` (on the ranks' own sessions and on the
# merged one, text, JSON and CSV), --clock-offset overriding; malformed inputs (one process
# twice, a newer schema, a truncated file, a damaged row) give one line and no output.
set -u
W=${WARPLENS_BIN:?}
B=${WARPLENS_BUILD_DIR:?}
MK=$B/bin/bench_merge
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

"$MK" --make job --ranks 6 --hosts 3 --kernels 400 --offset-us 1234.567 --straggler 4 --slowdown 0.25 >planted.txt \
    || { echo "bench_merge failed"; exit 1; }
"$W" merge -o all.wlsession job >out.txt 2>err.txt; rc=$?
[ $rc = 0 ] && [ -s all.wlsession ] && [ ! -s err.txt ] && ok || bad "merge: rc $rc $(cat err.txt)"
grep -q "merged 6 sessions into all.wlsession: 6 processes on 3 hosts, 2400 kernels" out.txt && ok || bad "summary: $(cat out.txt)"
# each host's estimate is minus its planted clock offset, within 5 us
while read -r host planted; do
    got=$(awk -v h="$host" '$1 == h {print $2}' out.txt)
    [ -n "$got" ] && [ $(( (got + planted) < 0 ? -(got + planted) : got + planted )) -le 5000 ] && ok \
        || bad "$host: planted $planted, estimated '$got'"
done <planted.txt
grep -q "host0 .* reference" out.txt && ok || bad "reference host"
"$W" info all.wlsession >info.txt 2>&1 && grep -q "2400 kernels" info.txt && grep -q "6 processes" info.txt && ok \
    || bad "merged info: $(head -5 info.txt)"
# the same pids on every host: renumbered, none lost
[ "$(grep -c '^process ' info.txt)" = 6 ] && grep -q "^process 4195304 " info.txt && ok || bad "pids: $(grep '^process' info.txt)"
# the straggler, on the ranks' own sessions and on the merged one
for src in job all.wlsession; do
    "$W" ranks $src >r.txt 2>err.txt || bad "ranks $src: $(cat err.txt)"
    awk '$1 == "4" {print $NF}' r.txt | grep -q "^4/4" && ok || bad "ranks $src: straggler: $(cat r.txt)"
    grep -q "step 'step': 6 ranks, 4 steps on every rank" r.txt && ok || bad "ranks $src header"
done
"$W" ranks --json job >r.json && python3 -c "
import json,sys; d=json.load(open('r.json'))
assert d['step']=='step' and len(d['ranks'])==6, d['step']
assert all(s['straggler_rank']==4 for s in d['steps']), [s['straggler_rank'] for s in d['steps']]
assert all(18 < s['imbalance_pct'] < 25 for s in d['steps']), [s['imbalance_pct'] for s in d['steps']]
r4=[r for r in d['ranks'] if r['rank']==4][0]; r0=[r for r in d['ranks'] if r['rank']==0][0]
assert all(s['wait_ns'] < 2000 for s in r4['steps']) and all(s['wait_ns'] > 100000 for s in r0['steps'])
assert all(s['copies']==1 and s['copy_bytes']==200000 for s in r0['steps'])
" && ok || bad "ranks --json"
"$W" ranks --csv --step step all.wlsession >r.csv && [ "$(wc -l <r.csv)" = 25 ] && \
    [ "$(awk -F, 'NR > 1 && $13 == 1 {print $1}' r.csv | sort -u)" = 4 ] && ok || bad "ranks --csv: $(head -3 r.csv)"
"$W" ranks --step nosuch job 2>err.txt; [ $? = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "no rank has a range named 'nosuch'" err.txt \
    && ok || bad "--step nosuch: $(cat err.txt)"
# --clock-offset overrides the estimate; an unknown host is refused
"$W" merge -o given.wlsession --clock-offset host1=-7 job >out.txt 2>err.txt && grep -q "^host1 .* -7 .* given" out.txt \
    && ok || bad "--clock-offset: $(cat out.txt err.txt)"
"$W" merge -o x.wlsession --clock-offset nohost=5 job 2>err.txt; [ $? = 1 ] && grep -q "no session was recorded on host 'nohost'" err.txt \
    && [ ! -e x.wlsession ] && ok || bad "unknown host"
"$W" merge -o x.wlsession --clock-offset host1=abc job 2>err.txt; [ $? = 2 ] && ok || bad "bad offset"
# a quoted glob
"$W" merge -q -o glob.wlsession 'job/rank00[0-2].wlsession' && "$W" info glob.wlsession | grep -q "3 processes" && ok || bad "glob"

# malformed inputs: one line, no output, no temporary left
no_output() { [ ! -e x.wlsession ] && [ -z "$(ls -a | grep '\.tmp\.')" ]; }
"$W" merge -o x.wlsession job/rank000.wlsession job/rank000.wlsession 2>err.txt; rc=$?
[ $rc = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "both hold process 1000 on host host0" err.txt && no_output && ok \
    || bad "same session twice: $rc $(cat err.txt)"
cp job/rank001.wlsession newer.wlsession
python3 -c "import sqlite3; c=sqlite3.connect('newer.wlsession'); c.execute(\"UPDATE meta SET value='99' WHERE key='schema_version'\"); c.commit()"
"$W" merge -o x.wlsession job/rank000.wlsession newer.wlsession 2>err.txt; rc=$?
[ $rc = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "newer" err.txt && no_output && ok || bad "newer schema: $(cat err.txt)"
head -c 20000 job/rank002.wlsession >cut.wlsession
"$W" merge -o x.wlsession job/rank000.wlsession cut.wlsession 2>err.txt; rc=$?
[ $rc = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "cut.wlsession" err.txt && no_output && ok || bad "truncated: $(cat err.txt)"
cp job/rank003.wlsession damaged.wlsession
python3 -c "import sqlite3; c=sqlite3.connect('damaged.wlsession'); c.execute(\"UPDATE kernel SET pid='x' WHERE id=3\"); c.commit()"
"$W" merge -o x.wlsession job/rank000.wlsession damaged.wlsession 2>err.txt; rc=$?
[ $rc = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "damaged.wlsession is damaged: .*kernel" err.txt && no_output && ok \
    || bad "damaged row: $(cat err.txt)"
"$W" merge job 2>err.txt; [ $? = 2 ] && grep -q "\-o OUT.wlsession is required" err.txt && ok || bad "no -o"
"$W" merge -o x.wlsession empty_dir_missing 2>err.txt; [ $? = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && no_output && ok || bad "missing input: $(cat err.txt)"
echo "merge_ranks_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
