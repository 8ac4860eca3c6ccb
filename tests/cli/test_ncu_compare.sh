#!/usr/bin/env bash
# bench/ncu_compare.py without a GPU (--offline): a session from the fake range profiler
# (tests/rangeprof) against ncu CSV files written here in both of ncu's layouts (one row per metric;
# --page raw with a units row), with thousands separators and scaled units. Checks kernel matching by
# base name in launch order, exact counters, the DRAM rule (2 % above 16 MiB, informational below)
# and that what is out of tolerance is reported and fails the run.
set -u
W=${WARPLENS_BIN:?}
B=${WARPLENS_BUILD_DIR:?}
SRC=${WARPLENS_SOURCE_DIR:?}
. "$(dirname "$0")/checks.sh"
WARPLENS_METRICS=occupancy "$B/bin/range_profiler_driver" hidden h.wlcap >/dev/null 2>&1 && ok || bad "driver"
"$W" import -o h.wlsession h.wlcap >/dev/null 2>&1 && ok || bad "import"
# the session's kernels in launch order with their values, as ncu would print them
python3 - h.wlsession <<'PY'
import csv, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT k.name, m.name, km.value FROM kernel_metric km JOIN kernels k ON k.id = km.kernel_id"
                  " JOIN metric m ON m.id = km.metric_id ORDER BY k.correlation_id, m.name").fetchall()
ids, kernels = {}, []
for name, metric, value in rows:
    if name + str(len(ids)) not in ids and (not kernels or kernels[-1][0] != name or metric in kernels[-1][1]):
        kernels.append([name, {}])
        ids[name + str(len(ids))] = 1
    kernels[-1][1][metric] = value
hdr = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
       "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
for variant in ("all", "none"):
    with open(f"ncu-{variant}.csv", "w", newline="") as f:
        f.write("==PROF== Connected to process 1 (driver)\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(hdr)
        for i, (name, m) in enumerate(kernels):
            for metric, value in sorted(m.items()):
                unit, shown = "", value
                if metric == "gpu__time_duration.sum":
                    unit, shown = "usecond", value / 1000           # scaled unit
                if metric == "sm__ctas_launched.sum" and i == 4 and variant == "all":
                    shown = value + 1                                 # one counter off in one run only
                if metric == "dram__bytes_read.sum" and i == 5:
                    unit, shown = "Mbyte", 100.0                      # a large read warplens does not see
                w.writerow([i, 1, "driver", "host", f"void {name}", 1, 7, "(128, 1, 1)", "(10, 1, 1)", 0, "9.0", "",
                            metric, unit, f"{shown:,.3f}" if unit else f"{shown:,.0f}"])
    # the wide layout of --page raw, for the parser
    with open("ncu-raw.csv", "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        metrics = sorted(kernels[0][1])
        w.writerow(hdr[:11] + metrics)
        w.writerow([""] * 11 + ["" for _ in metrics])
        for i, (name, m) in enumerate(kernels):
            w.writerow([i, 1, "driver", "host", name, 1, 7, "", "", 0, "9.0"] + [f"{m.get(x, 0):,.0f}" for x in metrics])
print(len(kernels))
PY
python3 "$SRC/bench/ncu_compare.py" --offline h.wlsession ncu-all.csv ncu-none.csv --warplens "$W" --out out >run.txt 2>&1
rc=$?
check '[ "$rc" = 1 ]' "one DRAM read out of tolerance fails the run (exit $rc): $(cat run.txt)"
check 'grep -q "outside tolerance" out/metrics-ncu.md' "report written"
n=$(python3 -c "import csv; r=list(csv.DictReader(open('out/metrics-ncu.csv'))); print(len({x['kernel_index'] for x in r}))")
check '[ "$n" = 18 ]' "all 18 kernels matched by name in order (got $n)"
check '[ "$(grep -c ",FAIL," out/metrics-ncu.csv)" = 1 ]' "exactly the large DRAM read fails: $(grep FAIL out/metrics-ncu.csv)"
check 'grep -q "dram__bytes_read.sum,.*,100000000.0,100000000.0,FAIL" out/metrics-ncu.csv' "the failing row shows both runs"
check 'grep -q "sm__ctas_launched.sum,.*,ok," out/metrics-ncu.csv' "a counter off in one cache-control run only still matches the other"
check '[ "$(grep -c "gpu__time_duration.sum.*,info," out/metrics-ncu.csv)" = 18 ]' "durations shown, not judged (usecond scaled back)"
check '! grep -q "gpu__time_duration.sum,[^,]*,[0-9.]*,0.0[0-9]*," out/metrics-ncu.csv' "units scaled to nanoseconds"
python3 "$SRC/bench/ncu_compare.py" --offline h.wlsession ncu-raw.csv ncu-raw.csv --warplens "$W" --out raw >raw.txt 2>&1
check '[ "$?" = 0 ] && grep -q "0 outside tolerance" raw.txt' "the raw layout parses and agrees: $(cat raw.txt)"
# --rejudge: the tolerances for what ncu itself does not pin down, on rows of an earlier report
cat >old.csv <<'CSV'
workload,kernel_index,kernel,metric,warplens,ncu_cache_all,ncu_cache_none,verdict,note
w,0,persist,smsp__inst_executed.sum,406568.0,406504.0,406336.0,FAIL,
w,1,persist,smsp__inst_executed.sum,410000.0,406504.0,406336.0,FAIL,
w,2,steady,smsp__inst_executed.sum,1001.0,1000.0,1000.0,FAIL,
w,3,k,lts__t_sector_hit_rate.pct,90.0,80.0,98.0,FAIL,
w,3,k,lts__t_sectors_lookup_hit.sum,90000.0,80000.0,98000.0,info,
w,3,k,lts__t_sectors_lookup_miss.sum,10000.0,20000.0,2000.0,info,
w,4,tiny,l1tex__t_sector_hit_rate.pct,1.4,16.7,16.7,FAIL,
w,4,tiny,l1tex__t_sectors_lookup_hit.sum,2.0,24.0,24.0,info,
w,4,tiny,l1tex__t_sectors_lookup_miss.sum,142.0,120.0,120.0,info,
w,5,k,lts__t_sector_hit_rate.pct,70.0,80.0,98.0,FAIL,
w,5,k,lts__t_sectors_lookup_hit.sum,70000.0,80000.0,98000.0,info,
w,5,k,lts__t_sectors_lookup_miss.sum,30000.0,20000.0,2000.0,info,
w,6,gemm,occupancy limiter,registers,registers+shared_memory,,FAIL,
w,7,gemm,occupancy limiter,registers,warps,,FAIL,
w,8,fma,lts__t_sector_hit_rate.pct,138.1,150.37,228.11,FAIL,
w,8,fma,lts__t_sectors_lookup_hit.sum,4132.0,6218.0,6232.0,info,
w,8,fma,lts__t_sectors_lookup_miss.sum,31.0,353.0,39.0,info,
w,9,gemm,dram__bytes_write.sum,25247200.0,2337540.0,2401540.0,FAIL,
w,9,gemm,dram__bytes_read.sum,33662500.0,33629700.0,33670700.0,ok,
CSV
python3 "$SRC/bench/ncu_compare.py" --rejudge old.csv --warplens "$W" --out rj >rj.txt 2>&1
verdict() { python3 -c "import csv,sys; print([r['verdict'] for r in csv.DictReader(open('rj/metrics-ncu.csv')) if r['kernel_index']==sys.argv[1] and r['metric']==sys.argv[2]][0])" "$1" "$2"; }
check '[ "$(verdict 0 smsp__inst_executed.sum)" = ok ]' "a count ncu's own runs disagree on: within 0.5 % of one is ok"
check '[ "$(verdict 1 smsp__inst_executed.sum)" = FAIL ]' "... 0.9 % off is not"
check '[ "$(verdict 2 smsp__inst_executed.sum)" = FAIL ]' "a count ncu reproduces stays exact"
check '[ "$(verdict 3 lts__t_sector_hit_rate.pct)" = ok ]' "a hit rate between ncu's two cache policies is ok"
check '[ "$(verdict 5 lts__t_sector_hit_rate.pct)" = FAIL ]' "... outside both and 10 points off is not"
check '[ "$(verdict 4 l1tex__t_sector_hit_rate.pct)" = info ]' "a hit rate over 144 sectors is shown, not judged"
check '[ "$(verdict 6 "occupancy limiter")" = explained ]' "ncu's shared-memory tie is explained, not ok"
check '[ "$(verdict 7 "occupancy limiter")" = FAIL ]' "another limiter is a failure"
check '[ "$(verdict 8 lts__t_sector_hit_rate.pct)" = info ]' "a hit rate ncu itself gives above 100 % is shown, not judged"
check '[ "$(verdict 9 dram__bytes_write.sum)" = FAIL ]' "DRAM bytes 10x ncu's without kernel replay fail"
check '[ "$(verdict 9 dram__bytes_read.sum)" = ok ]' "... those within 2 % stay ok"
check 'grep -q "5 outside tolerance, 1 explained" rj/metrics-ncu.md' "the report counts explained apart: $(grep comparisons rj/metrics-ncu.md)"
# the same rows measured under kernel replay: the L2-state class is explained, the rest unchanged
python3 "$SRC/bench/ncu_compare.py" --rejudge old.csv --replayed --warplens "$W" --out rj >rj.txt 2>&1
check '[ "$(verdict 9 dram__bytes_write.sum)" = explained ] && [ "$(verdict 5 lts__t_sector_hit_rate.pct)" = explained ]' \
    "--replayed: DRAM bytes and L2 hit rates outside tolerance are explained"
check '[ "$(verdict 1 smsp__inst_executed.sum)" = FAIL ] && [ "$(verdict 7 "occupancy limiter")" = FAIL ]' \
    "--replayed explains nothing else"
check 'grep -q "3 outside tolerance, 3 explained" rj/metrics-ncu.md' "... counted: $(grep comparisons rj/metrics-ncu.md)"
summary ncu_compare
