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
# exports of the merged session: one process group per rank named host / rank N / pid holding its
# GPU; each collective linked by one flow from the rank that arrived first to the one that arrived
# last (the planted straggler, rank 4)
"$W" export -o all.json all.wlsession >/dev/null 2>err.txt && python3 - all.json <<'PY' && ok || bad "chrome json: $(cat err.txt)"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
want = {"host%d / rank %d / " % (r % 3, r) for r in range(6)}
got = {n.rsplit("/", 1)[0] + "/ " for n in names.values()}
assert got == want, (sorted(got), sorted(want))
assert all(n.endswith("/ %d" % p) for p, n in names.items()), names
# the streams are threads of their rank's process
streams = [e for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"]["name"].startswith("Stream")]
assert streams and all(e["pid"] in names for e in streams), streams[:2]
coll = {}
for e in ev:
    if e.get("ph") == "X" and e["name"].startswith("ncclDevKernel"):
        coll.setdefault(e["pid"], []).append(e)
assert len(coll) == 6
for v in coll.values():
    v.sort(key=lambda e: e["ts"])
flows = {}
for e in ev:
    if e.get("cat") == "flow" and e["name"] == "collective":
        flows.setdefault(e["id"], {})[e["ph"]] = e
assert len(flows) == 4, len(flows)
straggler = [p for p, n in names.items() if "/ rank 4 /" in n][0]
for k in range(4):
    kth = [v[k] for v in coll.values()]
    first = min(kth, key=lambda e: e["ts"]); last = max(kth, key=lambda e: e["ts"])
    assert last["pid"] == straggler
    f = [f for f in flows.values() if f["s"]["ts"] == first["ts"] and f["s"]["pid"] == first["pid"]]
    assert len(f) == 1 and f[0]["f"]["pid"] == last["pid"] and f[0]["f"]["ts"] == last["ts"], (k, f)
PY
"$W" export -o all.pftrace all.wlsession >/dev/null 2>err.txt && \
    protoc --decode=warplens_trace.Trace -I "$WARPLENS_SOURCE_DIR/tests/proto" "$WARPLENS_SOURCE_DIR/tests/proto/warplens_trace.proto" \
        <all.pftrace >all.pf.txt 2>>err.txt && python3 - all.pf.txt <<'PY' && ok || bad "perfetto: $(cat err.txt)"
import re, sys
t = open(sys.argv[1]).read()
procs = re.findall(r'process_name: "([^"]*)"', t)
assert sorted(p.rsplit(" / ", 1)[0] for p in procs) == sorted("host%d / rank %d" % (r % 3, r) for r in range(6)), procs
# each track descriptor: uuid, parent, process pid or name
tracks = {}
for m in re.finditer(r"track_descriptor \{(.*?)\n    \}", t, re.S):
    b = m.group(1)
    u = int(re.search(r"uuid: (\d+)", b).group(1))
    par = re.search(r"parent_uuid: (\d+)", b)
    nm = re.search(r'(?:process_name|name): "([^"]*)"', b)
    tracks[u] = (int(par.group(1)) if par else 0, nm.group(1) if nm else "")
def process_of(u):
    while tracks.get(u, (0, ""))[0]:
        u = tracks[u][0]
    return tracks.get(u, (0, ""))[1]
gpus = [u for u, (p, n) in tracks.items() if n.startswith("GPU ")]
assert len(gpus) == 6 and all(" / rank " in process_of(u) for u in gpus), [process_of(u) for u in gpus]
out = re.findall(r"(?<!terminating_)flow_ids: (\d+)", t)
end = re.findall(r"terminating_flow_ids: (\d+)", t)
coll_out = [int(x) for x in out if int(x) >= 1 << 62]
coll_end = [int(x) for x in end if int(x) >= 1 << 62]
assert len(coll_out) == 4 and sorted(coll_out) == sorted(coll_end), (coll_out, coll_end)
# every flow ends on the straggler's GPU
for m in re.finditer(r"track_event \{(.*?)\n    \}", t, re.S):
    b = m.group(1)
    e = [int(x) for x in re.findall(r"terminating_flow_ids: (\d+)", b) if int(x) >= 1 << 62]
    if e:
        u = int(re.search(r"track_uuid: (\d+)", b).group(1))
        assert "/ rank 4 /" in process_of(u), process_of(u)
PY
"$W" report -o all.html all.wlsession >/dev/null 2>err.txt && python3 - all.html <<'PY' && ok || bad "report: $(cat err.txt)"
import json, re, sys
h = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script type="application/json" id="wl-data">(.*?)</script>', h, re.S).group(1))
r = d["ranks"]
assert r["step"] == "step" and sorted(x["rank"] for x in r["ranks"]) == [str(i) for i in range(6)]
assert len(r["steps"]) == 4 and all(s["straggler"] == "4" and 18 < s["imbalance_pct"] < 25 for s in r["steps"]), r["steps"]
assert [x["straggler_steps"] for x in r["ranks"] if x["rank"] == "4"] == [4]
assert "ranks-table" in h and "imbalance-svg" in h
PY
# a single-process session has no ranks section and keeps its GPU process
"$W" report -o one.html job/rank000.wlsession >/dev/null && ! grep -q '"ranks":{' one.html && ok || bad "report of one rank"

# --clock-offset overrides the estimate; an unknown host is refused
"$W" merge -o given.wlsession --clock-offset host1=-7 job >out.txt 2>err.txt && grep -q "^host1 .* -7 .* given" out.txt \
    && ok || bad "--clock-offset: $(cat out.txt err.txt)"
"$W" merge -o x.wlsession --clock-offset nohost=5 job 2>err.txt; [ $? = 1 ] && grep -q "no session was recorded on host 'nohost'" err.txt \
    && [ ! -e x.wlsession ] && ok || bad "unknown host"
"$W" merge -o x.wlsession --clock-offset host1=abc job 2>err.txt; [ $? = 2 ] && ok || bad "bad offset"
# a quoted glob
"$W" merge -q -o glob.wlsession 'job/rank00[0-2].wlsession' && "$W" info glob.wlsession | grep -q "3 processes" && ok || bad "glob"

# real H100 sessions with different kernel names, stall reasons and metrics: every kernel keeps
# its name, every stall row its reason and kernel, every metric value its metric (ids remapped)
D=$WARPLENS_SOURCE_DIR/tests/data
# (torch-ops first: the stall session's first kernel names keep their ids, its later ones change)
"$W" merge -q -o real.wlsession "$D/torch-ops-h100.wlsession" "$D/demo-h100.wlsession" "$D/torch-h100.wlsession" \
    "$D/stalls-torch-h100.wlsession" "$D/metrics-h100.wlsession" 2>err.txt && python3 - "$D" real.wlsession <<'PY' && ok || bad "real sessions: $(cat err.txt)"
import sqlite3, sys
out = sqlite3.connect(sys.argv[2])
Q = {"kernel": "SELECT k.correlation_id, k.start_ns, n.mangled FROM kernel k LEFT JOIN kernel_name n ON n.id = k.name_id WHERE k.pid IN (%s)",
     "kernel_stall": "SELECT s.correlation_id, r.name, s.samples, (SELECT n.mangled FROM kernel k JOIN kernel_name n ON n.id = k.name_id"
                     " WHERE k.id = s.kernel_id) FROM kernel_stall s JOIN stall_reason r ON r.id = s.reason_id WHERE s.pid IN (%s)",
     "kernel_metric": "SELECT m.name, v.value, (SELECT k.correlation_id FROM kernel k WHERE k.id = v.kernel_id) FROM kernel_metric v"
                      " JOIN metric m ON m.id = v.metric_id WHERE v.pid IN (%s)"}
for f in ("torch-ops-h100", "demo-h100", "torch-h100", "stalls-torch-h100", "metrics-h100"):
    c = sqlite3.connect("%s/%s.wlsession" % (sys.argv[1], f))
    pids = ",".join(str(r[0]) for r in c.execute("SELECT pid FROM process"))
    for t, q in Q.items():
        if not c.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]:
            continue
        a, b = sorted(c.execute(q % pids), key=repr), sorted(out.execute(q % pids), key=repr)
        assert a and a == b or not a and not b, (f, t, len(a), len(b))
PY

# a real NCCL job: torchrun, 2 ranks on 2 H200s, rank 1 planted slow (tests/gpu/torch_ddp.py under
# tests/gpu/test_multirank.sh, tests/data/ranks/). `ranks` names rank 1 on every step; rank 1's
# session moved to host "hostB" with its clock 1.5 ms ahead, merge recovers that within 5 us from the
# 20 all-reduces' ends (a planted offset on real collectives: the estimate's bias is NCCL's own)
for r in 0 1; do gzip -dc "$D/ranks/ddp-nccl-h200-rank$r.wlsession.gz" >nccl$r.wlsession; done
"$W" ranks nccl0.wlsession nccl1.wlsession >nr.txt 2>&1 && awk '$1 == "1" {print $NF}' nr.txt | grep -q "^20/20" \
    && awk '$1 == "0" {print $NF}' nr.txt | grep -q "^0/20" && ok || bad "real NCCL ranks: $(cat nr.txt)"
# the same ranks without their NCCL kernels (as a job over gloo records them): nothing shows a rank
# waiting, and ranks says so rather than present the longest step as a straggler
for r in 0 1; do
    cp nccl$r.wlsession gloo$r.wlsession
    sqlite3 gloo$r.wlsession "DELETE FROM kernel WHERE name_id IN (SELECT id FROM kernel_name WHERE short_name LIKE 'nccl%')"
done
"$W" ranks gloo0.wlsession gloo1.wlsession >gr.txt 2>&1 && grep -q "^no collective kernels were recorded" gr.txt \
    && ! grep -q "no collective kernels" nr.txt && ok || bad "ranks without collective kernels: $(cat gr.txt)"
cp nccl1.wlsession nccl1b.wlsession
python3 "$WARPLENS_SOURCE_DIR/tests/cli/move_host.py" nccl1b.wlsession hostB 1500000
"$W" merge -o nccl.wlsession nccl0.wlsession nccl1b.wlsession >nm.txt 2>&1 \
    && awk '$1 == "hostB" {d = $2 + 1500000; exit !(d <= 5000 && d >= -5000)}' nm.txt \
    && "$W" ranks nccl.wlsession | awk '$1 == "1" {print $NF}' | grep -q "^20/20" && ok || bad "real NCCL two-host merge: $(cat nm.txt)"

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
# the survey reads the inputs unchecked (their rows are checked beside the copy): a failure it meets
# after the opens (here two inputs with one process, one of them damaged) names the damaged input
cp job/rank000.wlsession damaged0.wlsession
python3 -c "import sqlite3; c=sqlite3.connect('damaged0.wlsession'); c.execute(\"UPDATE process SET start_ns='y'\"); c.commit()"
"$W" merge -o x.wlsession job/rank000.wlsession damaged0.wlsession 2>err.txt; rc=$?
[ $rc = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "damaged0.wlsession is damaged: .*process" err.txt && no_output && ok \
    || bad "damaged and a duplicate process: $(cat err.txt)"
# a damaged input first: the copy stops, nothing written
"$W" merge -o x.wlsession damaged.wlsession job/rank000.wlsession job/rank001.wlsession 2>err.txt; rc=$?
[ $rc = 1 ] && grep -q "damaged.wlsession is damaged" err.txt && no_output && ok || bad "damaged first: $(cat err.txt)"
"$W" merge job 2>err.txt; [ $? = 2 ] && grep -q "\-o OUT.wlsession is required" err.txt && ok || bad "no -o"
"$W" merge -o x.wlsession empty_dir_missing 2>err.txt; [ $? = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && no_output && ok || bad "missing input: $(cat err.txt)"
echo "merge_ranks_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
